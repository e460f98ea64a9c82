#!/bin/sh
# benchlag.sh ROUNDS BINARY... : bench's schedule lag at 200 requests/s (Poisson) against the
# default simulator, the binaries run back to back in each round so that a busy machine weighs on
# all of them alike (BENCHMARKS.md, "Schedule lag in bench itself"). Prints per run the lag p50
# and p99 (bench's own report) and how many requests dialled a connection on their schedule's
# time (a binary that does not record it shows "-").
set -eu
rounds=$1; shift
bin=$1
port=18199
"$bin" simulate --web.listen-address=127.0.0.1:$port >/dev/null 2>&1 &
sim=$!
trap 'kill $sim' EXIT
sleep 1
for round in $(seq 1 "$rounds"); do
	for b in "$@"; do
		dir=$(mktemp -d)
		"$b" bench -m inferprobe-simulator -u http://127.0.0.1:$port --streaming --request-rate 200 \
			--arrival-pattern poisson --request-count 2000 --output-artifact-dir "$dir" >"$dir/out.txt" 2>&1 || true
		dialled=$(grep -c '"connection":"dialled"' "$dir/profile_export.jsonl" || true)
		grep -q '"connection"' "$dir/profile_export.jsonl" || dialled=-
		# Schedule Lag (ms): avg min max p99 p90 p50 std
		awk -v r="$round" -v b="$b" -v d="$dialled" '/^Schedule Lag \(ms\)/ {
			printf "round %s  %-40s lag p50 %6.2f ms  p99 %7.2f ms  dialled on schedule %s\n", r, b, $(NF-1), $(NF-3), d }' "$dir/out.txt"
		rm -rf "$dir"
	done
done
