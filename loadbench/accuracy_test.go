package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/simulator"
)

var (
	concurrencies = flag.String("concurrency", "1,100,1000", "concurrent streams to measure the timing error at")
	accTTFT       = flag.Duration("acc.ttft", 100*time.Millisecond, "the simulator's mean time to first token for TestTimingError")
	accITL        = flag.Duration("acc.itl", 20*time.Millisecond, "the simulator's mean inter-token latency for TestTimingError")
	accJitter     = flag.Float64("acc.jitter", 0.2, "coefficient of variation of the simulator's lognormal TTFT and ITL draws for TestTimingError")
	accRun        = flag.Duration("acc.run", 15*time.Second, "time new requests are started, per concurrency, after -warmup")
)

// TestTimingError measures how far the times the client records are from the
// times the server sent the bytes. The simulator runs in this process behind a
// ResponseWriter that stamps every Flush; the requests run in the worker
// pool, closed-loop at each -concurrency. For every chunk the client's
// absolute arrival time (Record.Sent, wall clock, plus the chunk's offset) is
// compared with the wall-clock time the server's Flush of that chunk began
// (the write cannot be seen before it starts, so with one clock the error
// is at least 0; it overstates the client's part by up to the Flush's own
// duration, also printed): the TTFT error is that difference for the first
// content chunk, the gap error the client's gap between consecutive chunks
// minus the server's.
func TestTimingError(t *testing.T) {
	enabled(t)
	pinSelf(t, "1") // this process is the simulator
	st := &stamper{byTag: map[string]*serverStamps{}}
	sim, err := simulator.New(simulator.Config{
		Profile: simulator.Profile{TTFT: *accTTFT, ITL: *accITL, Distribution: simulator.LogNormal, Jitter: *accJitter},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.next = sim.Handler()
	srv := httptest.NewServer(st)
	defer srv.Close()
	tg := target(t, srv.URL+"/v1")
	p := newPool(t, numWorkers())
	defer p.Close()

	fmt.Printf("\nTiming error against the simulator's flush times: %d tokens/request, lognormal ttft=%s itl=%s jitter=%g, pinned=%v, workers=%d, %s measured after %s\n\n",
		*tokens, *accTTFT, *accITL, *accJitter, *pin, numWorkers(), *accRun, *warmup)
	tb := &table{w: os.Stdout}
	tb.row("streams", "requests", "chunks/s", "TTFT err p50 µs", "p99", "max", "min",
		"gap err p50 µs", "p99", "max", "min", "flush p50 µs", "flush p99 µs", "worker CPU", "sim+parent CPU", "other CPU")
	for _, c := range strings.Split(*concurrencies, ",") {
		n, err := strconv.Atoi(c)
		if err != nil {
			t.Fatal(err)
		}
		r := measureError(t, p, tg, st, n)
		tb.row(n, r.requests, fmt.Sprintf("%.0f", r.chunksPerSec),
			µs(quantile(r.ttft, .5)), µs(quantile(r.ttft, .99)), µs(r.ttft[len(r.ttft)-1]), µs(r.ttft[0]),
			µs(quantile(r.gap, .5)), µs(quantile(r.gap, .99)), µs(r.gap[len(r.gap)-1]), µs(r.gap[0]),
			µs(quantile(r.flush, .5)), µs(quantile(r.flush, .99)), cores(r.workerCPU, *accRun), cores(r.selfCPU, *accRun), cores(r.otherCPU, *accRun))
	}
	tb.flush()
}

type errorResult struct {
	requests          int
	chunksPerSec      float64
	ttft, gap, flush  []time.Duration // sorted
	workerCPU         time.Duration
	selfCPU, otherCPU time.Duration
}

// measureError runs n closed-loop streams for warmup+run and compares the
// records of the requests sent after the warm-up with the server's stamps.
func measureError(t *testing.T, p prober.Executor, tg *prober.Target, st *stamper, n int) errorResult {
	t.Helper()
	st.reset()
	start := time.Now()
	from, to := start.Add(*warmup), start.Add(*warmup+*accRun)
	var (
		mu      sync.Mutex
		records []*record.Record
		tags    []string
		wg      sync.WaitGroup
	)
	for g := range n {
		wg.Go(func() {
			for i := 0; time.Now().Before(to); i++ {
				tag := fmt.Sprintf("s%d-%d", g, i)
				req, err := prober.NewRequest(tg, dataset.Prompt{Text: "how late is this chunk", InputTokens: 5, OutputTokens: *tokens},
					map[string]any{"ignore_eos": true, "user": tag})
				if err != nil {
					t.Error(err)
					return
				}
				req.Scheduled = time.Now()
				rec := p.Do(context.Background(), tg, req)
				mu.Lock()
				records, tags = append(records, rec), append(tags, tag)
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Until(from))
	pids := workerPIDs()
	w0, s0 := sumCPU(pids), selfCPU()
	m0, _ := machineCPU()
	time.Sleep(time.Until(to))
	w1, s1 := sumCPU(pids), selfCPU()
	m1, _ := machineCPU()
	wg.Wait()

	var r errorResult
	r.workerCPU, r.selfCPU = w1-w0, s1-s0
	r.otherCPU = max(0, m1-m0-r.workerCPU-r.selfCPU)
	mismatched, failed, chunks := 0, 0, 0
	for i, rec := range records {
		if rec.Sent.Before(from) || !rec.Sent.Before(to) {
			continue
		}
		if rec.Outcome != record.OutcomeOK {
			failed++
			continue
		}
		s := st.get(tags[i])
		// The server flushes the headers with the role prelude, then one
		// content chunk per token, then the finish, usage and [DONE] events.
		if s == nil || len(rec.Chunks) != *tokens || len(s.after) != *tokens+4 {
			mismatched++
			continue
		}
		r.requests++
		chunks += len(rec.Chunks)
		sent := time.Unix(0, rec.Sent.UnixNano()) // wall clock only, as it came from the worker
		for j, off := range rec.Chunks {
			flushed := s.before[j+1]
			if j == 0 {
				r.ttft = append(r.ttft, sent.Add(off).Sub(flushed))
			} else {
				r.gap = append(r.gap, (off-rec.Chunks[j-1])-flushed.Sub(s.before[j]))
			}
		}
		for j := range s.after {
			r.flush = append(r.flush, s.after[j].Sub(s.before[j]))
		}
	}
	if failed > 0 || mismatched > 0 {
		t.Logf("%d streams: %d requests failed, %d did not match the server's stamps", n, failed, mismatched)
	}
	if r.requests == 0 {
		t.Fatalf("%d streams: no request to compare", n)
	}
	r.chunksPerSec = float64(chunks) / accRun.Seconds()
	for _, s := range [][]time.Duration{r.ttft, r.gap, r.flush} {
		slices.Sort(s)
	}
	return r
}

// stamper serves the simulator and keeps, per request, the wall-clock times
// just before and just after each Flush. A request is known by the "user"
// field of its body, which the simulator ignores.
type stamper struct {
	next  http.Handler
	mu    sync.Mutex
	byTag map[string]*serverStamps
}

type serverStamps struct{ before, after []time.Time }

func (s *stamper) reset() {
	s.mu.Lock()
	s.byTag = map[string]*serverStamps{}
	s.mu.Unlock()
}

func (s *stamper) get(tag string) *serverStamps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byTag[tag]
}

func (s *stamper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var tagged struct {
		User string `json:"user"`
	}
	_ = json.Unmarshal(body, &tagged)
	r.Body = io.NopCloser(bytes.NewReader(body))
	sw := &stampWriter{ResponseWriter: w, rc: http.NewResponseController(w), stamps: &serverStamps{}}
	s.next.ServeHTTP(sw, r)
	if tagged.User != "" {
		s.mu.Lock()
		s.byTag[tagged.User] = sw.stamps
		s.mu.Unlock()
	}
}

// stampWriter times every Flush of the response. The simulator flushes
// through an http.ResponseController, which finds FlushError here.
type stampWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	stamps *serverStamps
}

func (w *stampWriter) FlushError() error {
	before := time.Now()
	err := w.rc.Flush()
	after := time.Now()
	w.stamps.before = append(w.stamps.before, before)
	w.stamps.after = append(w.stamps.after, after)
	return err
}

func (w *stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
