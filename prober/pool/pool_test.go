package pool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/prober/wire"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/scenarios"
)

// The test binary doubles as the worker executable: started with one of these
// arguments, TestMain plays that worker instead of running the tests.
const parentEnv = "INFERPROBE_POOL_TEST_PARENT"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "worker":
			logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
			if err := ServeWorker(context.Background(), os.Stdin, os.Stdout, logger); err != nil {
				logger.Error("worker failed", "err", err)
				os.Exit(1)
			}
			os.Exit(0)
		case "exit": // dies before its hello
			fmt.Fprintln(os.Stderr, "inferprobe: unknown command; try --help")
			os.Exit(2)
		case "other-version":
			enc := wire.NewEncoder(os.Stdout)
			_ = enc.Hello(wire.Hello{Version: wire.Version + 1, PID: os.Getpid()})
			_ = enc.Flush()
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(1)
		case "crash": // says hello, then dies
			enc := wire.NewEncoder(os.Stdout)
			_ = enc.Hello(wire.Hello{Version: wire.Version, PID: os.Getpid()})
			_ = enc.Flush()
			_, _ = wire.NewDecoder(os.Stdin).Next()
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
		}
	}
	if os.Getenv(parentEnv) != "" {
		helperParent()
		return
	}
	// A race-enabled worker would sleep a second at exit, waiting for late
	// race reports; its races are reported while it runs.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// helperParent is a daemon stand-in for TestParentDeath: it starts a pool,
// prints its workers' pids and waits to be killed.
func helperParent() {
	p, err := New(Options{Workers: 2, Args: []string{"worker"}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Trim(fmt.Sprint(pids(p)), "[]"))
	select {}
}

func pids(p *Pool) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, s := range p.slots {
		if s.current != nil {
			out = append(out, s.current.pid)
		}
	}
	return out
}

// current returns slot i's worker, nil while it is down.
func current(p *Pool, i int) *child {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.slots[i].current
}

// logBuffer collects the pool's logs for a test; they are shown if it fails,
// and a data race reported by a worker fails it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newPool(t testing.TB, workers int, args ...string) (*Pool, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if len(args) == 0 {
		args = []string{"worker"}
	}
	p, err := New(Options{Workers: workers, Args: args,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Close()
		if strings.Contains(logs.String(), "DATA RACE") {
			t.Error("a worker reported a data race")
		}
		if t.Failed() {
			t.Logf("pool logs:\n%s", logs)
		}
	})
	return p, logs
}

// upstream is a streaming chat server. A request's prompt says what it does:
// "hold" waits for release after its first chunk, "forever" waits until the
// client goes; anything else streams three chunks at once.
type upstream struct {
	*httptest.Server
	arrived chan string // each request's prompt, as its first chunk is sent
	release chan struct{}
	headers chan http.Header
	once    sync.Once
}

func newUpstream(t testing.TB) *upstream {
	u := &upstream{arrived: make(chan string, 1000), release: make(chan struct{}), headers: make(chan http.Header, 1000)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.headers <- r.Header
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(s string) {
			fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", s)
			w.(http.Flusher).Flush()
		}
		chunk("a")
		prompt := "normal"
		for _, p := range []string{"hold", "forever"} {
			if bytes.Contains(body, []byte(p)) {
				prompt = p
			}
		}
		u.arrived <- prompt
		switch prompt {
		case "hold":
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		case "forever":
			<-r.Context().Done()
			return
		}
		chunk("b")
		chunk("c")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(func() {
		u.releaseAll()
		u.Close()
	})
	return u
}

func (u *upstream) releaseAll() { u.once.Do(func() { close(u.release) }) }

// waitArrivals waits until n requests have reached the server.
func (u *upstream) waitArrivals(t testing.TB, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-u.arrived:
		case <-timeout:
			t.Fatalf("fewer than %d requests reached the server", n)
		}
	}
}

func (u *upstream) target(t testing.TB, headers map[string]string) *prober.Target {
	t.Helper()
	tg, err := prober.NewTarget("sim", &scenarios.Target{URL: u.URL + "/v1", Endpoint: "chat", Model: "m",
		APIKey: "sk-test", Headers: headers,
		Timeout: scenarios.Duration(30 * time.Second), StallTimeout: scenarios.Duration(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func request(t testing.TB, tg *prober.Target, seq uint64, prompt string) *prober.Request {
	t.Helper()
	req, err := prober.NewRequest(tg, dataset.Prompt{Text: prompt, InputTokens: 3, OutputTokens: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Seq, req.Scheduled = seq, time.Now()
	return req
}

// doAll runs one Do per request at once and returns the records by Seq.
func doAll(ctx context.Context, p *Pool, tg *prober.Target, reqs []*prober.Request) chan *record.Record {
	out := make(chan *record.Record, len(reqs))
	for _, req := range reqs {
		go func() { out <- p.Do(ctx, tg, req) }()
	}
	return out
}

func collect(t testing.TB, records <-chan *record.Record, n int) map[uint64]*record.Record {
	t.Helper()
	got := map[uint64]*record.Record{}
	timeout := time.After(20 * time.Second)
	for range n {
		select {
		case r := <-records:
			if got[r.Seq] != nil {
				t.Errorf("request %d returned twice", r.Seq)
			}
			got[r.Seq] = r
		case <-timeout:
			t.Fatalf("only %d of %d requests returned", len(got), n)
		}
	}
	select {
	case r := <-records:
		t.Errorf("an extra record came back: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	return got
}

// eventually polls cond until it holds, failing the test after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// A zombie has died; it waits only for its (new) parent to reap it.
	_, after, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(after, "Z")
}

func TestDo(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 3)
	tg := u.target(t, nil)
	const n = 300
	reqs := make([]*prober.Request, n)
	for i := range reqs {
		reqs[i] = request(t, tg, uint64(i), "normal")
	}
	got := collect(t, doAll(context.Background(), p, tg, reqs), n)
	for _, req := range reqs {
		r := got[req.Seq]
		if r.Outcome != record.OutcomeOK || len(r.Chunks) != 3 || r.OutputTokens != 3 || r.InputTokens != 7 ||
			r.PinnedOutputTokens != 0 || r.Status != 200 || r.FirstOutput != 0 || !r.Scheduled.Equal(req.Scheduled) ||
			r.Sent.Before(req.Scheduled) || r.Duration < r.Chunks[2] || r.Chunks[0] > r.Chunks[1] {
			t.Fatalf("request %d: record %+v", req.Seq, r)
		}
	}
	if h := <-u.headers; h.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("Authorization = %q: the API key did not reach the worker", h.Get("Authorization"))
	}
	for len(u.headers) > 0 {
		<-u.headers
	}

	// A target whose spec changes under the same name is defined anew.
	changed := u.target(t, map[string]string{"X-Spec": "2"})
	if r := p.Do(context.Background(), changed, request(t, changed, n, "normal")); r.Outcome != record.OutcomeOK {
		t.Fatalf("after redefining the target: %+v", r)
	}
	if h := <-u.headers; h.Get("X-Spec") != "2" {
		t.Errorf("X-Spec = %q: the worker kept the old definition", h.Get("X-Spec"))
	}
}

func TestMetrics(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 2)
	tg := u.target(t, nil)
	collect(t, doAll(context.Background(), p, tg, []*prober.Request{request(t, tg, 1, "normal"), request(t, tg, 2, "normal")}), 2)
	eventually(t, 5*time.Second, "no heartbeat from both workers", func() bool {
		return current(p, 0).stats().beaten && current(p, 1).stats().beaten
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	got := gather(t, reg)
	for name, want := range map[string]float64{
		"inferprobe_workers": 2, "inferprobe_workers_up": 2, "inferprobe_worker_restarts_total": 0,
		"inferprobe_worker_crash_looping": 0,
	} {
		if v := got[name]; len(v) != 1 || v[0] != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	if v := got["inferprobe_worker_cpu_seconds_total"]; len(v) != 1 || v[0] <= 0 {
		t.Errorf("inferprobe_worker_cpu_seconds_total = %v, want > 0", v)
	}
	for _, name := range []string{"inferprobe_worker_sched_latency_p99_seconds", "inferprobe_worker_in_flight_requests"} {
		if v := got[name]; len(v) != 2 {
			t.Errorf("%s = %v, want one series per worker", name, v)
		}
	}
	if cpu, _ := p.Utilisation(); cpu < 0 || cpu > 16 {
		t.Errorf("Utilisation cpu = %v", cpu)
	}
}

func gather(t testing.TB, reg *prometheus.Registry) map[string][]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			out[f.GetName()] = append(out[f.GetName()], value(f.GetType(), m))
		}
	}
	return out
}

func value(typ dto.MetricType, m *dto.Metric) float64 {
	if typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func TestCancel(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 1)
	tg := u.target(t, nil)

	ctx, cancel := context.WithCancel(context.Background())
	records := doAll(ctx, p, tg, []*prober.Request{request(t, tg, 1, "forever")})
	u.waitArrivals(t, 1)
	cancel()
	r := collect(t, records, 1)[1]
	if r.Outcome != record.OutcomeCancelled || r.Sent.IsZero() || r.Sent.Equal(r.Scheduled) {
		t.Errorf("cancelled in flight: %+v", r)
	}

	// Never sent, it has no send time, and so no schedule lag.
	if r := p.Do(ctx, tg, request(t, tg, 2, "normal")); r.Outcome != record.OutcomeCancelled || !r.Sent.IsZero() {
		t.Errorf("cancelled before the call: %+v", r)
	}
	if r := p.Do(context.Background(), tg, request(t, tg, 3, "normal")); r.Outcome != record.OutcomeOK {
		t.Errorf("the worker is not usable after a cancel: %+v", r)
	}
	if n := current(p, 0).load(); n != 0 {
		t.Errorf("the worker still holds %d calls", n)
	}
}

// TestDrain checks that draining lets requests in flight finish, refuses new
// ones, cancels what is left at the deadline and stops the workers.
// TestCancelInWorker: a request planned to be cancelled (request
// cancellation) is cancelled by its worker after it was sent, and comes back
// cancelled, saying the client cancelled it.
func TestCancelInWorker(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 1)
	tg := u.target(t, nil)
	req := request(t, tg, 1, "forever")
	req.Cancel, req.CancelAfter = true, 20*time.Millisecond
	r := p.Do(context.Background(), tg, req)
	if r.Outcome != record.OutcomeCancelled || r.Sent.IsZero() || !strings.Contains(r.Err, "cancelled by the client 20ms after") {
		t.Errorf("record %+v, want cancelled by the client after its send", r)
	}
	u.waitArrivals(t, 1)
}

func TestDrain(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 2)
	tg := u.target(t, nil)
	workers := pids(p)
	records := doAll(context.Background(), p, tg, []*prober.Request{
		request(t, tg, 1, "hold"), request(t, tg, 2, "hold"), request(t, tg, 3, "forever"), request(t, tg, 4, "forever")})
	u.waitArrivals(t, 4)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- p.Drain(ctx) }()
	eventually(t, time.Second, "Drain did not start", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.draining
	})
	if r := p.Do(context.Background(), tg, request(t, tg, 5, "normal")); r.Outcome != record.OutcomeCancelled || !strings.Contains(r.Err, "shutting down") {
		t.Errorf("Do while draining: %+v", r)
	}
	u.releaseAll()
	got := collect(t, records, 4)
	for seq, want := range map[uint64]record.Outcome{1: record.OutcomeOK, 2: record.OutcomeOK, 3: record.OutcomeCancelled, 4: record.OutcomeCancelled} {
		if got[seq].Outcome != want {
			t.Errorf("request %d: %+v, want %v", seq, got[seq], want)
		}
	}
	if err := <-drained; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Drain = %v, want the deadline's error", err)
	}
	for _, pid := range workers {
		if !processGone(pid) {
			t.Errorf("worker %d still runs after Drain", pid)
		}
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Errorf("a second Drain: %v", err)
	}
}

// TestCloseRightAfterNew closes pools as soon as New returns, before their
// supervisors run: New has already put each worker in service, and stopping
// must shut it down once (a second close of its stop channel panicked serve
// when a later start-up step failed and it drained the pool at once).
func TestCloseRightAfterNew(t *testing.T) {
	for range 20 {
		p, _ := newPool(t, 2)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestParentDeath kills a pool's process with SIGKILL: its workers must not
// outlive it.
func TestParentDeath(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), parentEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var workers []int
	for f := range strings.FieldsSeq(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("helper said %q", line)
		}
		workers = append(workers, pid)
	}
	if len(workers) != 2 {
		t.Fatalf("helper said %q", line)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	eventually(t, 5*time.Second, fmt.Sprintf("workers %v outlived their parent", workers), func() bool {
		return processGone(workers[0]) && processGone(workers[1])
	})
}

func TestCrashLoop(t *testing.T) {
	p, logs := newPool(t, 1, "crash")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	eventually(t, 10*time.Second, "crash loop not detected", func() bool {
		return gather(t, reg)["inferprobe_worker_crash_looping"][0] == 1
	})
	if got := gather(t, reg)["inferprobe_worker_restarts_total"][0]; got < crashLoopExits-1 {
		t.Errorf("restarts = %v", got)
	}
	if l := logs.String(); !strings.Contains(l, "worker is crash-looping") || !strings.Contains(l, "crashing on purpose") {
		t.Errorf("the crash loop was not logged with the worker's last output:\n%s", l)
	}
}

func TestNewFails(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"exit", "it exited before its hello; its last output: inferprobe: unknown command; try --help"},
		{"other-version", fmt.Sprintf("wire protocol version mismatch: the peer speaks version %d, this process version %d", wire.Version+1, wire.Version)},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := New(Options{Workers: 2, Args: []string{tc.arg}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := New(Options{Workers: 0}); err == nil {
		t.Error("New with no workers succeeded")
	}
}

// BenchmarkReplaceKilledWorker measures how long a pool is a worker short
// after one is killed: from SIGKILL to the new worker's hello. The first
// restart waits minBackoff.
func BenchmarkReplaceKilledWorker(b *testing.B) {
	var took []time.Duration
	for range b.N {
		b.StopTimer()
		p, _ := newPool(b, 1)
		victim := current(p, 0)
		b.StartTimer()
		killed := time.Now()
		_ = syscall.Kill(victim.pid, syscall.SIGKILL)
		for w := current(p, 0); w == nil || w == victim; w = current(p, 0) {
			time.Sleep(time.Millisecond)
		}
		took = append(took, time.Since(killed))
		b.StopTimer()
		_ = p.Close()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "median-ms")
}

// TestForward checks that worker output reaches the log with the worker's
// index: JSON log records keep their level and attributes, other lines are
// logged as they are, and an overlong line is cut without losing the next.
func TestForward(t *testing.T) {
	logs := &logBuffer{}
	p := &Pool{logger: slog.New(slog.NewTextHandler(logs, nil))}
	out := `{"time":"2026-01-02T03:04:05Z","level":"WARN","source":"childmain.go:1","msg":"cannot write","err":"broken pipe"}` + "\n" +
		"panic: boom\n" + strings.Repeat("x", 3*maxLine) + "\n" + "last line\n"
	tl := &tail{}
	p.forward(3, strings.NewReader(out), tl)
	got := logs.String()
	for _, want := range []string{
		`level=WARN msg="cannot write" worker=3 err="broken pipe"`,
		`level=WARN msg="worker output" worker=3 line="panic: boom"`,
		`level=WARN msg="worker output" worker=3 line="last line"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "childmain.go:1") || strings.Contains(got, strings.Repeat("x", maxLine+1)) {
		t.Errorf("log kept the worker's source or an overlong line whole:\n%.500s", got)
	}
	if d := tl.describe(); !strings.HasSuffix(d, "| last line") {
		t.Errorf("tail = %.200s", d)
	}
}

// firstTokenSlot records when its request's first token was told.
type firstTokenSlot chan struct{}

func (s firstTokenSlot) Release() { close(s) }

// TestFirstToken: a request that holds a prefill slot hears of its first
// token from the worker as it comes, not when the request ends.
func TestFirstToken(t *testing.T) {
	u := newUpstream(t)
	p, _ := newPool(t, 1)
	tg := u.target(t, nil)
	req := request(t, tg, 1, "hold") // the server sends one chunk, then holds
	slot := make(firstTokenSlot)
	req.Prefill = slot
	done := make(chan *record.Record, 1)
	go func() { done <- p.Do(context.Background(), tg, req) }()
	select {
	case <-slot:
	case r := <-done:
		t.Fatalf("the request ended (%v) before its first token was told", r.Outcome)
	case <-time.After(10 * time.Second):
		t.Fatal("the first token was never told")
	}
	u.releaseAll()
	if r := <-done; r.Outcome != record.OutcomeOK {
		t.Errorf("record %+v", r)
	}
}
