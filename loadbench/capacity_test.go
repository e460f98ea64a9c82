package loadbench

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/inferprobe/inferprobe/report"
)

var (
	capStreams = flag.String("cap.streams", "250,500,750,1000,1250,1500,2000", "streams in flight to step through (the Poisson rate of each step is streams ÷ the stream's duration)")
	capTTFT    = flag.Duration("cap.ttft", 200*time.Millisecond, "the stream server's time to first token")
	capITL     = flag.Duration("cap.itl", 20*time.Millisecond, "the stream server's inter-token latency (20ms: 50 tokens/s per stream)")
	capTokens  = flag.Int("cap.tokens", 256, "output tokens per request (bench --osl, with ignore_eos)")
	capRun     = flag.Duration("cap.run", 20*time.Second, "bench --benchmark-duration of each step")
	capPerCore = flag.Float64("cap.per-worker", 25000, "chunks/s per worker the planning table assumes when no step passed")
)

// TestCapacity measures what one inferprobe replica sustains: it runs the
// user's own command, `inferprobe bench`, at a fixed worker count against
// the stream server (serveStreams, built to cost less CPU per chunk than the
// client), stepping the Poisson rate so that -cap.streams streams are in
// flight, and prints per step the streams, chunks/s and requests/s, the
// schedule lag, the client's CPU and memory, the server's CPU, and bench's
// own client-bound verdict (report.SaturationReason's thresholds). The
// largest step without a verdict is the replica's capacity at that worker
// count; from it and the memory the steps used it prints the planning table
// of BENCHMARKS.md (Planning: how many replicas).
func TestCapacity(t *testing.T) {
	enabled(t)
	bin := binary(t)
	addr := startStreamServer(t)
	n := numWorkers()
	if *workers == 0 && !*pin {
		n = 1 // a fixed count, whatever the machine, unless asked for another
	}
	secs := (*capTTFT + time.Duration(*capTokens-1)**capITL).Seconds()
	fmt.Printf("\nCapacity: bench --workers=%d, %d output tokens/request, server ttft=%s itl=%s (%.0f tokens/s per stream), %s per step, pinned=%v, %d CPUs\n\n",
		n, *capTokens, *capTTFT, *capITL, 1/capITL.Seconds(), *capRun, *pin, runtime.NumCPU())
	tb := &table{w: os.Stdout}
	tb.row("streams", "rate/s", "sent/s", "requests", "errors", "cancelled", "chunks/s", "lag p50 ms", "lag p99 ms",
		"busiest worker CPU", "worker µs/chunk", "parent µs/request", "parent CPU", "server CPU", "other CPU", "steal",
		"worker RSS MiB", "parent RSS MiB", "verdict")
	var steps []capStep
	for s := range strings.SplitSeq(*capStreams, ",") {
		streams, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("-cap.streams: %v", err)
		}
		rate := float64(streams) / secs
		r := runBench(t, bin, addr, n, rate)
		sent := float64(r.requests) / capRun.Seconds()
		verdict := r.verdict
		if verdict == "" {
			verdict = "-"
		}
		tb.row(streams, fmt.Sprintf("%.1f", rate), fmt.Sprintf("%.1f", sent), r.requests, r.errors, r.cancelled,
			fmt.Sprintf("%.0f", sent*float64(*capTokens)),
			fmt.Sprintf("%.2f", r.lagP50), fmt.Sprintf("%.2f", r.lagP99),
			fmt.Sprintf("%.2f", r.workerPeak),
			fmt.Sprintf("%.1f", r.workerCPU.Seconds()*1e6/float64(max(1, r.requests**capTokens))),
			fmt.Sprintf("%.0f", r.parentCPU.Seconds()*1e6/float64(max(1, r.requests))),
			cores(r.parentCPU, r.wall), cores(r.serverCPU, r.wall),
			cores(r.otherCPU, r.wall), cores(r.steal, r.wall),
			mib(r.workerRSS), mib(r.parentRSS), verdict)
		steps = append(steps, capStep{streams, sent * float64(*capTokens), r})
	}
	tb.flush()
	plan(os.Stdout, steps, n)
}

// capStep is one step of TestCapacity.
type capStep struct {
	streams int
	chunks  float64 // per second, at steady state
	benchResult
}

// Pod shape and run length the planning table assumes.
const (
	// reportSamplesBytes is what a report holds per request besides its
	// details: a RequestRecord and 22 float64 samples (report.Report).
	reportSamplesBytes = float64(unsafe.Sizeof(report.RequestRecord{})) + 22*8
	planPodWorkers     = 4
	planRun            = 5 * time.Minute
	planTTFT           = 200 * time.Millisecond
)

// plan prints BENCHMARKS.md's planning table from the steps: the chunks/s
// one worker sustains (the highest step without a verdict, per worker) and
// the memory per stream and per recorded request (least squares over the
// steps without a verdict, or when fewer than two passed, over those not yet
// queueing: lag p50 under 5 ms).
func plan(w io.Writer, steps []capStep, workers int) {
	perWorker, why := *capPerCore, fmt.Sprintf("no step passed: -cap.per-worker=%g is assumed", *capPerCore)
	var fit []capStep
	for _, s := range steps {
		if s.verdict == "" && s.errors == 0 {
			fit = append(fit, s)
			perWorker = s.chunks / float64(workers)
			why = fmt.Sprintf("the highest step without a verdict: %d streams, %.0f chunks/s over %d worker(s)", s.streams, s.chunks, workers)
		}
	}
	fitWhy := "the steps without a verdict"
	if len(fit) < 2 {
		fit, fitWhy = nil, "the steps with lag p50 < 5 ms (fewer than two passed)"
		for _, s := range steps {
			if s.lagP50 < 5 && s.errors == 0 {
				fit = append(fit, s)
			}
		}
	}
	if len(fit) < 2 {
		fmt.Fprintln(w, "\nToo few steps to fit memory; no planning table.")
		return
	}
	perStream, workersBase := lineFit(fit, func(s capStep) (float64, float64) { return float64(s.streams), float64(s.workerRSS) })
	workerBase := workersBase / float64(workers)
	perRequest, parentBase := lineFit(fit, func(s capStep) (float64, float64) { return float64(s.requests), float64(s.parentRSS) })
	// The report keeps each request's body and chunk gaps up to
	// report.MaxKeptBytes, then only its per-request samples; the resident
	// cost of either is the kept bytes inflated by the same factor (garbage,
	// slices grown by doubling) as the fitted one.
	var inputs, requests float64
	for _, s := range fit {
		inputs, requests = inputs+float64(s.inputBytes), requests+float64(s.requests)
	}
	body := inputs / requests
	inflation := perRequest / (body + 4*float64(*capTokens) + reportSamplesBytes)
	// reportCost is, for requests of tokens output tokens, the resident bytes
	// per request while their details fit, how many fit, and the bytes per
	// request after.
	reportCost := func(tokens int) (before, fits, after float64) {
		kept := body + 4*float64(tokens)
		return inflation * (kept + reportSamplesBytes), float64(report.MaxKeptBytes) / kept, inflation * reportSamplesBytes
	}
	_, keptRequests, perRequestAfterCap := reportCost(*capTokens)
	fmt.Fprintf(w, "\nPer worker: %.0f chunks/s (%s).\n", perWorker, why)
	fmt.Fprintf(w, "Memory, fitted over %s: worker %.0f MiB + %.1f KiB per stream; parent %.0f MiB + %.1f KiB per %d-token request for the first %.0f requests of a run (their details reach report.MaxKeptBytes), %.2f KiB per request after; prompts of %.0f bytes.\n\n",
		fitWhy, workerBase/(1<<20), perStream/1024, parentBase/(1<<20), perRequest/1024, *capTokens, keptRequests, perRequestAfterCap/1024, body)
	tb := &table{w: w}
	tb.row("streams", "tokens/s per stream", "output tokens", "chunks/s", "requests/s", "workers (cores)", "replicas × workers",
		"memory per pod, streaming", fmt.Sprintf("+ exact report of a %s run, per pod", planRun))
	for _, shape := range [][3]int{{100, 50, 256}, {500, 50, 256}, {1000, 50, 256}, {2000, 50, 512}, {1000, 100, 1024}, {5000, 50, 256}, {10000, 30, 512}, {20000, 50, 256}} {
		streams, rate, tokens := shape[0], shape[1], shape[2]
		chunks := float64(streams * rate)
		need := int(math.Ceil(chunks / perWorker))
		replicas := (need + planPodWorkers - 1) / planPodWorkers
		podWorkers := (need + replicas - 1) / replicas
		streaming := parentBase + float64(podWorkers)*workerBase + float64(streams)/float64(replicas)*perStream
		recorded := float64(streams) / (planTTFT.Seconds() + float64(tokens)/float64(rate)) * planRun.Seconds() / float64(replicas)
		before, fits, after := reportCost(tokens)
		reportBytes := before*min(recorded, fits) + after*max(0, recorded-fits)
		tb.row(streams, rate, tokens, fmt.Sprintf("%.0f", chunks),
			fmt.Sprintf("%.0f", float64(streams)/(planTTFT.Seconds()+float64(tokens)/float64(rate))),
			need, fmt.Sprintf("%d × %d", replicas, podWorkers), mib(int64(streaming))+" MiB", mib(int64(reportBytes))+" MiB")
	}
	tb.flush()
}

// lineFit is the least-squares slope and intercept of the points xy gives.
func lineFit(steps []capStep, xy func(capStep) (float64, float64)) (slope, intercept float64) {
	var sx, sy, sxx, sxy float64
	for _, s := range steps {
		x, y := xy(s)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(steps))
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return slope, (sy - slope*sx) / n
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

// startStreamServer starts this test binary as the stream server (on CPU 1
// with -pin) and returns its address.
func startStreamServer(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name, argv := command(self, "1", streamServerArg, "-ttft="+capTTFT.String(), "-itl="+capITL.String(), "-tokens="+strconv.Itoa(*capTokens))
	cmd := exec.Command(name, argv...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the stream server said no address: %v", err)
	}
	return strings.TrimSpace(line)
}

type benchResult struct {
	requests, errors, cancelled int
	lagP50, lagP99              float64 // ms
	verdict                     string
	// workerPeak is the busiest worker's highest CPU use over one second,
	// as bench samples it for its verdict.
	workerPeak                            float64
	wall                                  time.Duration // the run, start to exit
	parentCPU, serverCPU, otherCPU, steal time.Duration
	workerCPU                             time.Duration // all workers, the whole run
	workerRSS, parentRSS                  int64         // peaks; workers summed
	inputBytes                            int64         // inputs.json: about the bodies the report kept
}

// runBench runs one bench step at rate and samples its processes each second.
func runBench(t *testing.T, bin, addr string, workers int, rate float64) benchResult {
	t.Helper()
	dir := t.TempDir()
	name, argv := command(bin, "0", "bench", "-m", streamServerModel, "-u", "http://"+addr+"/v1",
		"--request-rate", fmt.Sprintf("%.3f", rate), "--benchmark-duration", fmt.Sprintf("%g", capRun.Seconds()),
		"--streaming", "--osl", strconv.Itoa(*capTokens), "--extra-inputs", "ignore_eos:true",
		"--workers", strconv.Itoa(workers), "--artifact-dir", dir, "--progress", "off",
		"--no-collector.gpu", "--log.level=warn")
	cmd := exec.Command(name, argv...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr // the report is read from its JSON
	serverPID := streamServerPID(t)
	s0 := cpuTime(serverPID)
	m0, st0 := machineCPU()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var res benchResult
	pid := cmd.Process.Pid
	ctx, cancel := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		last := map[int]time.Duration{}
		every(ctx, time.Second, func() {
			var rssSum int64
			for _, w := range childPIDs(pid) {
				c := cpuTime(w)
				if prev, ok := last[w]; ok {
					res.workerPeak = max(res.workerPeak, (c - prev).Seconds())
				}
				last[w] = c
				rssSum += rss(w)
			}
			res.workerRSS = max(res.workerRSS, rssSum)
			res.parentRSS = max(res.parentRSS, rss(pid))
			res.parentCPU = max(res.parentCPU, cpuTime(pid)) // 0 once it has exited
		})
	}()
	err := cmd.Wait()
	cancel()
	<-sampled
	res.wall = time.Since(start)
	res.serverCPU = cpuTime(serverPID) - s0
	m1, st1 := machineCPU()
	res.steal = st1 - st0
	tree := benchTreeCPU(cmd)
	res.workerCPU = max(0, tree-res.parentCPU)
	res.otherCPU = max(0, m1-m0-res.serverCPU-tree)
	if err != nil {
		t.Logf("bench at %.1f/s: %v", rate, err)
	}
	readBenchJSON(t, filepath.Join(dir, "profile_export_aiperf.json"), &res)
	if fi, err := os.Stat(filepath.Join(dir, "inputs.json")); err == nil {
		res.inputBytes = fi.Size()
	}
	return res
}

// benchTreeCPU is the CPU bench used, its workers included (it reaps them).
func benchTreeCPU(cmd *exec.Cmd) time.Duration {
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// streamServerPID is the stream server's process: this process's child
// running the stream server argument.
func streamServerPID(t *testing.T) int {
	t.Helper()
	for _, pid := range childPIDs(os.Getpid()) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if strings.Contains(string(cmdline), streamServerArg) {
			return pid
		}
	}
	t.Fatal("no stream server process")
	return 0
}

// readBenchJSON fills res from bench's profile_export_aiperf.json.
func readBenchJSON(t *testing.T, path string, res *benchResult) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type stat struct {
		P50, P99 float64
		Count    int
	}
	var doc struct {
		Inferprobe struct {
			Reason      string         `json:"client_saturation_reason"`
			Errors      map[string]int `json:"errors_by_reason"`
			Cancelled   int            `json:"cancelled_request_count"`
			ScheduleLag stat           `json:"schedule_lag"`
		} `json:"inferprobe"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// Every request sent has a schedule lag; request_count leaves out the
	// ones cut when the run's grace for requests in flight expired.
	res.requests, res.cancelled = doc.Inferprobe.ScheduleLag.Count, doc.Inferprobe.Cancelled
	for _, n := range doc.Inferprobe.Errors {
		res.errors += n
	}
	res.lagP50, res.lagP99 = doc.Inferprobe.ScheduleLag.P50, doc.Inferprobe.ScheduleLag.P99
	res.verdict = doc.Inferprobe.Reason
}
