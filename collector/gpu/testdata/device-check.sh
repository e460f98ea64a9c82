#!/usr/bin/env bash
# One-shot GPU check for collector/gpu, for a machine with an NVIDIA GPU.
# Run from the repository root; results go to $OUT (default ./device-check-out).
# It assumes `inferprobe demo` registers the GPU collector, as serve does.
# It takes about 1-2 minutes and never more than 3.
#
# Without Go on that machine, build both binaries beforehand and carry them:
#   go build -o $BIN/inferprobe ./cmd/inferprobe && go test -c -o $BIN/gpu.test ./collector/gpu
set -u
OUT=${OUT:-$PWD/device-check-out}
BIN=${BIN:-$(mktemp -d)}
mkdir -p "$OUT" "$BIN"
export CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" # go-nvml's deprecation warnings
say() { echo "== $*" | tee -a "$OUT/summary.txt"; }

say "host"
{
	uname -a
	nvidia-smi -L
	nvidia-smi --query-gpu=driver_version --format=csv,noheader
	for lib in libdcgm.so.4 libnvidia-ml.so.1; do ldconfig -p | grep -m1 "$lib" || echo "$lib: not found"; done
	command -v nv-hostengine || echo "nv-hostengine: not installed"
} >>"$OUT/summary.txt" 2>&1

if command -v go >/dev/null; then
	say "build"
	timeout 100 go build -o "$BIN/inferprobe" ./cmd/inferprobe >>"$OUT/summary.txt" 2>&1 || say "build of inferprobe FAILED"
	timeout 60 go test -c -o "$BIN/gpu.test" ./collector/gpu >>"$OUT/summary.txt" 2>&1 || say "build of gpu.test FAILED"
fi

# Standalone DCGM too, when the machine has DCGM.
HE=""
if command -v nv-hostengine >/dev/null; then
	nv-hostengine -n --port 5555 >"$OUT/nv-hostengine.log" 2>&1 &
	HE_PID=$!
	sleep 2
	HE=localhost:5555
fi

say "backends and collector against the real libraries (go test -run TestRealGPU)"
INFERPROBE_GPU_TEST=1 INFERPROBE_GPU_HOSTENGINE=$HE timeout 45 "$BIN/gpu.test" -test.run 'TestRealGPU' -test.v >"$OUT/gpu-test.txt" 2>&1
echo "exit $?" >>"$OUT/gpu-test.txt"
tail -n 1 "$OUT/gpu-test.txt" | tee -a "$OUT/summary.txt"
[ -n "$HE" ] && kill "$HE_PID" 2>/dev/null

say "inferprobe demo, /metrics after 12 s"
"$BIN/inferprobe" demo --web.listen-address=127.0.0.1:9470 >"$OUT/demo.log" 2>&1 &
DEMO=$!
sleep 12
curl -sf http://127.0.0.1:9470/metrics >"$BIN/metrics.txt" || say "curl /metrics FAILED"
nvidia-smi -q -d POWER,UTILIZATION,MEMORY,CLOCK,TEMPERATURE >"$OUT/nvidia-smi-at-scrape.txt" 2>&1
kill "$DEMO" 2>/dev/null
wait "$DEMO" 2>/dev/null
grep -E '^(# (HELP|TYPE) )?(DCGM_|inferprobe_gpu_|inferprobe_collector_)' "$BIN/metrics.txt" >"$OUT/metrics-gpu.txt"
grep -E '^(DCGM_FI_DEV_POWER_USAGE|DCGM_FI_DEV_FB_USED|inferprobe_gpu_telemetry)' "$OUT/metrics-gpu.txt" | tee -a "$OUT/summary.txt"
grep -i 'gpu' "$OUT/demo.log" | tee -a "$OUT/summary.txt"

say "nvidia-smi -q for comparison"
timeout 30 nvidia-smi -q >"$OUT/nvidia-smi-q.txt" 2>&1
say "done: $OUT"
