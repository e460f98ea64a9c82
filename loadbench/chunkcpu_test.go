package loadbench

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/prober/dataset"
	"github.com/inferprobe/inferprobe/record"
)

var (
	chunkStreams = flag.String("chunk.streams", "100,400", "concurrent streams, closed loop, for TestChunkCPU")
	chunkRun     = flag.Duration("chunk.run", 10*time.Second, "measured time per client, stream count and round in TestChunkCPU")
	chunkRounds  = flag.Int("chunk.rounds", 3, "rounds in TestChunkCPU: each runs every client in turn, and the figures sum the rounds")
	chunkITL     = flag.String("chunk.itl", "20ms", "the simulator's inter-token latency in TestChunkCPU")
	chunkBins    = flag.String("chunk.bins", "", "comma-separated inferprobe binaries whose workers TestChunkCPU measures too (e.g. a build of the previous commit), after the one under test")
)

// TestChunkCPU is the client CPU per streamed chunk of inferprobe's worker
// path against a bare reader written for the benchmark (net/http, a line
// scanner and one timestamp per data line), against the same simulator
// process in the same run, at each of -chunk.streams closed-loop streams of
// 64 tokens. inferprobe's figure is its workers' CPU plus this process's (the
// pool's parent side: credits out, records in); the bare reader's is this
// process's alone. The clients take turns, each after a warm-up, so that
// the machine's load drifts into all of them alike.
func TestChunkCPU(t *testing.T) {
	enabled(t)
	sim := startSimulator(t, "--sim.ttft=20ms", "--sim.itl="+*chunkITL, "--sim.max-concurrency=0")
	tg := target(t, sim.url)
	req, err := prober.NewRequest(tg, dataset.Prompt{Text: strings.Repeat("word ", 128), InputTokens: 128, OutputTokens: 64},
		map[string]any{"ignore_eos": true})
	if err != nil {
		t.Fatal(err)
	}
	type client struct {
		name string
		run  func(ctx context.Context, streams int, chunks *atomic.Int64) (pids []int, done func())
	}
	clients := []client{{"bare reader", func(ctx context.Context, streams int, chunks *atomic.Int64) ([]int, func()) {
		return nil, bareReaders(ctx, t, sim.url+"/chat/completions", req.Body, streams, chunks)
	}}, {"prober.Client in process", func(ctx context.Context, streams int, chunks *atomic.Int64) ([]int, func()) {
		return nil, closedLoop(ctx, prober.NewClient(), tg, req, streams, chunks)
	}}}
	bins := []string{binary(t)}
	if *chunkBins != "" {
		bins = append(bins, strings.Split(*chunkBins, ",")...)
	}
	for i, bin := range bins {
		name := "inferprobe workers"
		if i > 0 {
			name = "workers of " + bin
		}
		clients = append(clients, client{name, func(ctx context.Context, streams int, chunks *atomic.Int64) ([]int, func()) {
			p := newPoolOf(t, bin, numWorkers())
			done := closedLoop(ctx, p, tg, req, streams, chunks)
			return workerPIDs(), func() { done(); _ = p.Close() }
		}})
	}

	fmt.Printf("\nClient CPU per chunk: closed loops of 64-token streams, simulator ttft=20ms itl=%s, %d workers, %d rounds of %s per client\n\n", *chunkITL, numWorkers(), *chunkRounds, *chunkRun)
	tb := &table{w: os.Stdout}
	tb.row("streams", "client", "chunks/s", "client CPU", "of it workers", "sim CPU", "client µs/chunk", "ratio to bare")
	for _, s := range strings.Split(*chunkStreams, ",") {
		var streams int
		if _, err := fmt.Sscan(s, &streams); err != nil || streams <= 0 {
			t.Fatalf("-chunk.streams: %q is not a stream count", s)
		}
		type sum struct {
			chunks            int64
			client, work, sim time.Duration
		}
		sums := make([]sum, len(clients))
		for round := range *chunkRounds {
			for i, c := range clients {
				var chunks atomic.Int64
				ctx, cancel := context.WithCancel(context.Background())
				pids, done := c.run(ctx, streams, &chunks)
				time.Sleep(2 * time.Second) // connections, buffers, GC pacing
				stop := startProfile(t, fmt.Sprintf("chunkcpu-%d-%d-%d.pprof", streams, i, round))
				n0, w0, p0, s0 := chunks.Load(), sumCPU(pids), selfCPU(), cpuTime(sim.pid())
				time.Sleep(*chunkRun)
				n, w, p, sc := chunks.Load()-n0, sumCPU(pids)-w0, selfCPU()-p0, cpuTime(sim.pid())-s0
				stop()
				cancel()
				done()
				if n == 0 {
					t.Fatalf("%s, %d streams: no chunk in %s", c.name, streams, *chunkRun)
				}
				sums[i].chunks += n
				sums[i].client += w + p
				sums[i].work += w
				sums[i].sim += sc
			}
		}
		over := *chunkRun * time.Duration(*chunkRounds)
		perChunk := func(s sum) float64 { return float64(s.client.Nanoseconds()) / 1e3 / float64(s.chunks) }
		for i, c := range clients {
			s := sums[i]
			tb.row(streams, c.name, fmt.Sprintf("%.0f", float64(s.chunks)/over.Seconds()), cores(s.client, over), cores(s.work, over),
				cores(s.sim, over), fmt.Sprintf("%.1f", perChunk(s)), fmt.Sprintf("%.2f×", perChunk(s)/perChunk(sums[0])))
		}
	}
	tb.flush()
}

// startProfile starts a CPU profile of this process into -profile's
// directory when it is set, and returns what stops it.
func startProfile(t *testing.T, name string) func() {
	if *profile == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(*profile, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}

// closedLoop keeps streams requests in flight through exec until ctx ends,
// adding each record's content chunks to chunks; the returned func waits for
// the loops to end.
func closedLoop(ctx context.Context, exec prober.Executor, tg *prober.Target, req *prober.Request, streams int, chunks *atomic.Int64) func() {
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			for seq := uint64(i); ctx.Err() == nil; seq += uint64(streams) {
				r := *req
				r.Seq, r.Scheduled = seq, time.Now()
				rec := exec.Do(ctx, tg, &r)
				chunks.Add(int64(len(rec.Chunks)))
			}
		})
	}
	return wg.Wait
}

// lastStamp keeps the bare reader's timestamps from being dead code.
var lastStamp atomic.Int64

// bareReaders keeps streams requests to url in flight with bareStream until
// ctx ends, adding their content chunks to chunks.
func bareReaders(ctx context.Context, t *testing.T, url string, body []byte, streams int, chunks *atomic.Int64) func() {
	hc := bareClient()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range streams {
		wg.Go(func() {
			stamps := make([]time.Time, 0, 80)
			for ctx.Err() == nil {
				content, err := bareStream(ctx, hc, url, body, &stamps)
				if err != nil {
					failed.Add(1)
				}
				chunks.Add(int64(content))
			}
		})
	}
	return func() {
		wg.Wait()
		hc.CloseIdleConnections()
		if n := failed.Load(); n > 0 && ctx.Err() == nil {
			t.Errorf("bare reader: %d requests failed", n)
		}
	}
}

func bareClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, DisableCompression: true}}
}

// bareStream is the least a streaming client must do: net/http, a line
// scanner and one timestamp per data line, into stamps. It returns the
// content chunks, as inferprobe's records count them: the simulator's role
// and finish events are data lines too. Telling them apart costs it two
// short searches a line.
func bareStream(ctx context.Context, hc *http.Client, url string, body []byte, stamps *[]time.Time) (content int, err error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(hreq)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	*stamps = (*stamps)[:0]
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Bytes(); bytes.HasPrefix(line, []byte("data: ")) {
			*stamps = append(*stamps, time.Now())
			if bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`)) {
				content++
			}
		}
	}
	if n := len(*stamps); n > 0 {
		lastStamp.Store((*stamps)[n-1].UnixNano())
	}
	return content, sc.Err()
}

// bareExec runs bareStream as a prober.Executor, for TestStreamMemory.
type bareExec struct {
	hc  *http.Client
	url string
}

func (b bareExec) Do(ctx context.Context, _ *prober.Target, req *prober.Request) *record.Record {
	stamps := make([]time.Time, 0, 80)
	_, err := bareStream(ctx, b.hc, b.url, req.Body, &stamps)
	rec := &record.Record{Seq: req.Seq}
	if err != nil {
		rec.Outcome, rec.Err = record.OutcomeError, err.Error()
	}
	return rec
}
