package loadbench

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// soakEnv must be 1 for TestSoak to run; soakDurationEnv sets its length
// (default 1h). The method is in BENCHMARKS.md, "Soak".
const (
	soakEnv         = "INFERPROBE_SOAK"
	soakDurationEnv = "INFERPROBE_SOAK_DURATION"
	soakOutEnv      = "INFERPROBE_SOAK_OUT"
)

// soakScenario is steady probes of every loop kind plus a burst every five
// minutes, so that both the never-ending and the finite paths age together.
const soakScenario = `global: {seed: 7}
targets:
  sim:
    url: %[1]s
    model: inferprobe-simulator
  sim-completions:
    url: %[1]s
    endpoint: completions
    model: inferprobe-simulator
probes:
  chat-poisson:
    target: sim
    arrival: {pattern: poisson, rate: 5}
    dataset: {synthetic: {input_tokens: {mean: 256, stddev: 64}, output_tokens: {mean: 48, stddev: 16}}}
    slo: {time_to_first_token: 500ms}
  completions-gamma:
    target: sim-completions
    arrival: {pattern: gamma, rate: 2, smoothness: 0.5}
    dataset: {synthetic: {input_tokens: {mean: 128, stddev: 0}, output_tokens: {mean: 32, stddev: 0}}}
  chat-closed:
    target: sim-completions
    arrival: {pattern: concurrency, concurrency: 2}
    dataset: {synthetic: {input_tokens: {mean: 64, stddev: 0}, output_tokens: {mean: 16, stddev: 0}}}
bursts:
  periodic:
    target: sim
    every: 5m
    duration: 30s
    arrival: {pattern: poisson, rate: 20, max_concurrency: 64}
    dataset: {synthetic: {input_tokens: {mean: 512, stddev: 128}, output_tokens: {mean: 64, stddev: 0}}}
`

// soakSample is one sampling instant.
type soakSample struct {
	at                     time.Duration // since the daemon started
	daemonRSS, workerRSS   int64
	goroutines, heapInuse  float64
	workers                int
	maxBuckets, histograms int
}

// TestSoak runs the daemon for INFERPROBE_SOAK_DURATION against the simulator,
// sampling memory every 10 s, and checks that nothing grows once warm.
//
// Warm-up is the first sixth of the run; growth compares the median of the
// sixth after warm-up with the median of the last sixth (medians, so a burst
// in flight at one sample does not decide the verdict).
func TestSoak(t *testing.T) {
	if os.Getenv(soakEnv) != "1" {
		t.Skipf("a soak benchmark: set %s=1 (and %s, default 1h) to run it", soakEnv, soakDurationEnv)
	}
	total := time.Hour
	if v := os.Getenv(soakDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", soakDurationEnv, v, err)
		}
		total = d
	}
	sim := startSimulator(t, "--sim.ttft=80ms", "--sim.itl=8ms", "--sim.distribution=lognormal", "--sim.error-rate=0.01")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "soak.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, soakScenario, sim.url), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeLocalAddr(t)
	daemon := exec.Command(binary(t), "serve", "--config.file="+cfg, "--web.listen-address="+addr,
		"--storage.path="+filepath.Join(dir, "history"), "--workers=2", "--log.level=warn")
	daemon.Stderr = os.Stderr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = daemon.Process.Signal(syscall.SIGTERM)
		_ = daemon.Wait()
	})
	started := time.Now()

	out := os.Getenv(soakOutEnv)
	if out == "" {
		out = filepath.Join(dir, "soak.csv")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write([]string{"seconds", "daemon_rss_bytes", "workers_rss_bytes", "workers", "goroutines", "heap_inuse_bytes", "histograms", "max_native_buckets"})

	var samples []soakSample
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for time.Since(started) < total {
		<-tick.C
		s, err := sampleSoak(daemon.Process.Pid, addr)
		if err != nil {
			t.Fatalf("after %v: %v", time.Since(started).Round(time.Second), err)
		}
		s.at = time.Since(started)
		samples = append(samples, s)
		_ = w.Write([]string{strconv.Itoa(int(s.at.Seconds())), strconv.FormatInt(s.daemonRSS, 10), strconv.FormatInt(s.workerRSS, 10),
			strconv.Itoa(s.workers), strconv.FormatFloat(s.goroutines, 'f', 0, 64), strconv.FormatFloat(s.heapInuse, 'f', 0, 64),
			strconv.Itoa(s.histograms), strconv.Itoa(s.maxBuckets)})
		w.Flush()
	}
	t.Logf("samples written to %s", out)

	sixth := len(samples) / 6
	if sixth < 3 {
		t.Fatalf("%d samples are too few to compare; run for at least 3 minutes", len(samples))
	}
	early, late := samples[sixth:2*sixth], samples[len(samples)-sixth:]
	tab := &table{w: testWriter{t}}
	tab.row("measure", "after warm-up (median)", "end (median)", "growth")
	check := func(name string, get func(soakSample) float64, limit float64) {
		a, b := median(early, get), median(late, get)
		growth := (b - a) / a
		tab.row(name, strconv.FormatFloat(a, 'f', 0, 64), strconv.FormatFloat(b, 'f', 0, 64), fmt.Sprintf("%+.2f%%", 100*growth))
		if growth >= limit {
			defer t.Errorf("%s grew %.2f%% (limit %.0f%%)", name, 100*growth, 100*limit)
		}
	}
	check("daemon RSS (bytes)", func(s soakSample) float64 { return float64(s.daemonRSS) }, 0.05)
	check("workers RSS (bytes)", func(s soakSample) float64 { return float64(s.workerRSS) }, 0.05)
	// The goroutine count moves with connections and requests in flight, a
	// few at a time, so a percentage says little; a leak shows as the end
	// settling above everything seen early on.
	goroutines := func(s soakSample) float64 { return s.goroutines }
	earlyMax := slices.MaxFunc(early, func(a, b soakSample) int { return int(a.goroutines - b.goroutines) }).goroutines
	tab.row("daemon goroutines", strconv.FormatFloat(median(early, goroutines), 'f', 0, 64)+" (max "+strconv.FormatFloat(earlyMax, 'f', 0, 64)+")",
		strconv.FormatFloat(median(late, goroutines), 'f', 0, 64), "")
	if m := median(late, goroutines); m > earlyMax {
		defer t.Errorf("daemon goroutines settled at %.0f, above the %.0f seen after warm-up: a leak", m, earlyMax)
	}
	heap := func(s soakSample) float64 { return s.heapInuse }
	tab.row("daemon heap in use (bytes)", strconv.FormatFloat(median(early, heap), 'f', 0, 64), strconv.FormatFloat(median(late, heap), 'f', 0, 64),
		fmt.Sprintf("%+.2f%%", 100*(median(late, heap)-median(early, heap))/median(early, heap)))
	tab.flush()
	maxBuckets := 0
	for _, s := range samples {
		maxBuckets = max(maxBuckets, s.maxBuckets)
	}
	t.Logf("largest native histogram: %d buckets (cap 640); %d samples over %v", maxBuckets, len(samples), total)
	if maxBuckets > 640 {
		t.Errorf("a native histogram has %d buckets, over the 640 cap", maxBuckets)
	}
}

// sampleSoak reads the daemon's and its workers' memory and scrapes its metrics.
func sampleSoak(pid int, addr string) (soakSample, error) {
	s := soakSample{daemonRSS: rss(pid)}
	for _, w := range childPIDs(pid) {
		s.workerRSS += rss(w)
		s.workers++
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("scraping the daemon: %w", err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			return s, fmt.Errorf("decoding the scrape: %w", err)
		}
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "go_goroutines":
				s.goroutines = m.GetGauge().GetValue()
			case "go_memstats_heap_inuse_bytes":
				s.heapInuse = m.GetGauge().GetValue()
			}
			// A native histogram carries a schema; classic-only ones do not.
			if h := m.GetHistogram(); h != nil && h.Schema != nil {
				s.histograms++
				s.maxBuckets = max(s.maxBuckets, spanLen(h.GetPositiveSpan())+spanLen(h.GetNegativeSpan()))
			}
		}
	}
	return s, nil
}

func spanLen(spans []*dto.BucketSpan) int {
	n := 0
	for _, sp := range spans {
		n += int(sp.GetLength())
	}
	return n
}

// childPIDs are the processes whose parent is pid: the daemon's workers.
func childPIDs(parent int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		if len(f) >= 2 && f[1] == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func median(samples []soakSample, get func(soakSample) float64) float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = get(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// freeLocalAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeLocalAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// testWriter sends table lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(p))
	for sc.Scan() {
		w.t.Log(sc.Text())
	}
	return len(p), nil
}
