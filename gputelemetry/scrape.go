package gputelemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Interval is how often a run scrapes: AIPerf's default
// (AIPERF_GPU_COLLECTION_INTERVAL, 333 ms).
const Interval = 333 * time.Millisecond

// scrapeTimeout bounds one scrape, so that an exporter that stalls cannot
// hold the end of a run.
const scrapeTimeout = 5 * time.Second

// maxBody is the most of a reply that is read: dcgm-exporter's for eight
// GPUs is tens of kilobytes.
const maxBody = 16 << 20

// Options says what a run scrapes.
type Options struct {
	URLs     []string      // each a /metrics URL
	Interval time.Duration // zero: Interval
	Logger   *slog.Logger  // nil: nothing logged
}

// Collector scrapes the endpoints of one run until Stop.
type Collector struct {
	client   *http.Client
	logger   *slog.Logger
	interval time.Duration

	configured, reachable []string

	mu      sync.Mutex // guards records and failed
	records []Record
	failed  map[string]int

	stop, stopped chan struct{}
}

// Collection is what a run's scrapes gave.
type Collection struct {
	// Configured are the URLs asked for, Reachable those that answered the
	// first scrape (the others were left for the run).
	Configured, Reachable []string
	Records               []Record
	// Start and End are the measured span: Start the profiling phase's
	// first reading, End the last reading.
	Start, End time.Time
}

// Start reads every URL once: one that does not answer (or not in
// Prometheus text) is logged as a warning and left for the rest of the run,
// never an error. The others are scraped every interval until Stop.
func Start(o Options) *Collector {
	c := &Collector{logger: o.Logger, interval: o.Interval, failed: map[string]int{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	c.client = &http.Client{Timeout: scrapeTimeout, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 1}}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.interval <= 0 {
		c.interval = Interval
	}
	for _, u := range o.URLs {
		if slices.Contains(c.configured, u) {
			continue
		}
		c.configured = append(c.configured, u)
		recs, err := c.read(u)
		if err != nil {
			c.logger.Warn("GPU telemetry: "+u+" is not reachable; the run goes on without it", "err", err,
				"hint", "check that dcgm-exporter runs there (its default is :9400/metrics), or drop the URL from --gpu-telemetry")
			continue
		}
		c.reachable = append(c.reachable, u)
		c.records = append(c.records, recs...)
	}
	go c.loop()
	return c
}

func (c *Collector) loop() {
	defer close(c.stopped)
	if len(c.reachable) == 0 {
		<-c.stop
		return
	}
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.round()
		}
	}
}

// Mark scrapes every reachable endpoint now and returns the time it is
// done: a phase that starts then has a reading at or before its start, as
// AIPerf's baseline scrape at a phase boundary.
func (c *Collector) Mark() time.Time {
	c.round()
	return time.Now()
}

func (c *Collector) round() {
	var wg sync.WaitGroup
	for _, u := range c.reachable {
		wg.Go(func() {
			recs, err := c.read(u)
			c.mu.Lock()
			defer c.mu.Unlock()
			if err != nil {
				if c.failed[u] == 0 {
					c.logger.Warn("GPU telemetry: a scrape failed; later ones are tried", "url", u, "err", err)
				}
				c.failed[u]++
				return
			}
			c.records = append(c.records, recs...)
		})
	}
	wg.Wait()
}

// Stop takes a last reading, stops scraping and returns every reading,
// ordered by time, with start as the measured span's start.
func (c *Collector) Stop(start time.Time) *Collection {
	close(c.stop)
	<-c.stopped
	c.round()
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := slices.Clone(c.records)
	slices.SortStableFunc(recs, func(a, b Record) int { return a.At.Compare(b.At) })
	col := &Collection{Configured: c.configured, Reachable: c.reachable, Records: recs, Start: start, End: start}
	if n := len(recs); n > 0 && recs[n-1].At.After(start) {
		col.End = recs[n-1].At
	}
	return col
}

// read scrapes u once.
func (c *Collector) read(u string) ([]Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	at := time.Now()
	mfs, err := Parse(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text: %w", err)
	}
	return records(mfs, u, at), nil
}

// Parse reads one reply in the Prometheus text exposition format.
func Parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation) // it keeps state: one per reply
	return parser.TextToMetricFamilies(r)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
