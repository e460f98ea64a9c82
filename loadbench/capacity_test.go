package loadbench

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	capStreams = flag.String("cap.streams", "250,500,750,1000,1250,1500,2000", "streams in flight to step through (the Poisson rate of each step is streams ÷ the stream's duration)")
	capTTFT    = flag.Duration("cap.ttft", 200*time.Millisecond, "the stream server's time to first token")
	capITL     = flag.Duration("cap.itl", 20*time.Millisecond, "the stream server's inter-token latency (20ms: 50 tokens/s per stream)")
	capTokens  = flag.Int("cap.tokens", 256, "output tokens per request (bench --osl, with ignore_eos)")
	capRun     = flag.Duration("cap.run", 20*time.Second, "bench --benchmark-duration of each step")
)

// TestCapacity measures what one inferprobe replica sustains: it runs the
// user's own command, `inferprobe bench`, at a fixed worker count against
// the stream server (serveStreams, built to cost less CPU per chunk than the
// client), stepping the Poisson rate so that -cap.streams streams are in
// flight, and prints per step the streams, chunks/s and requests/s, the
// schedule lag, the client's CPU and memory, the server's CPU, and bench's
// own client-bound verdict (collector.SaturationReason's thresholds). The
// largest step without a verdict is the replica's capacity at that worker
// count. BENCHMARKS.md (Planning: how many replicas) turns it into a table.
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
	}
	tb.flush()
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
