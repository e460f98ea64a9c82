// Package loadbench holds the load engine's end-to-end measurements: the ones
// that need the real inferprobe binary, its forked worker pool and the
// built-in simulator, as the daemon runs them, rather than one function in a
// loop. BENCHMARKS.md says what each measures, how, and what it gave:
//
//   - TestRateSweep: schedule lag, CPU and CPU per 1,000 chunks against a
//     stepped Poisson rate;
//   - TestChunkCPU: client CPU per streamed chunk of the worker path against
//     a bare reader written for the benchmark, against the same server;
//   - TestStreamMemory: memory per in-flight stream;
//   - TestTimingError: TTFT and inter-chunk timing error against the
//     simulator's own flush times at 1, 100 and 1,000 concurrent streams;
//   - TestCapacity: what one replica sustains (streams, chunks/s, requests/s,
//     memory) before `inferprobe bench`'s own client-bound verdict fires,
//     against a stream server cheaper per chunk than the client;
//   - BenchmarkPoolOverhead: a request through the pool against in-process.
//
// The package has no code of its own outside its tests. Nothing in it runs in
// an ordinary `go test ./...`: the Test functions skip unless
// INFERPROBE_LOADBENCH=1 is set, and the Benchmark functions run only under
// -bench. Each builds the binary once (or uses $INFERPROBE_BIN), starts the
// simulator on 127.0.0.1 (as its own `inferprobe simulate` process, or in
// the test's process behind a stamping handler for TestTimingError) and the
// workers as `inferprobe worker` children, and prints a Markdown table.
// Options go after -args, e.g.
//
//	INFERPROBE_LOADBENCH=1 go test -run TestRateSweep -v -timeout 30m ./loadbench/ \
//	    -args -rates=100,400,1000 -step=15s -pin
package loadbench
