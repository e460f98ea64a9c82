package servermetrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Interval is how often a run scrapes: AIPerf's default
// (AIPERF_SERVER_METRICS_COLLECTION_INTERVAL, 333 ms).
const Interval = 333 * time.Millisecond

// scrapeTimeout bounds one scrape, so that a server that stalls its
// /metrics cannot hold the end of a run.
const scrapeTimeout = 5 * time.Second

// maxBody is the most of a /metrics reply that is read: a vLLM server's is
// tens of kilobytes.
const maxBody = 16 << 20

// Options says what a run scrapes.
type Options struct {
	URLs     []string      // each a /metrics URL (MetricsURL)
	Interval time.Duration // zero: Interval
	// TLS is the TLS settings of the target whose engine is scraped (a
	// private CA, or no verification), so that an https engine the target
	// reaches is read too; nil: Go's defaults.
	TLS    *tls.Config
	Logger *slog.Logger // nil: nothing logged
}

// MetricsURL is AIPerf's normalisation of a server metrics URL: http:// when
// it has no scheme, and /metrics at the end unless it ends so already.
func MetricsURL(raw string) string {
	u := strings.TrimRight(strings.TrimSpace(raw), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		u = "http://" + u
	}
	if !strings.HasSuffix(u, "/metrics") {
		u += "/metrics"
	}
	return u
}

// DiscoveredURL is the metrics URL of a target's API base URL: its origin's
// /metrics, where vLLM, SGLang, llama-server and TGI all serve them (an API
// base such as http://host:8000/v1 has none of its own).
func DiscoveredURL(apiBase string) (string, error) {
	u, err := url.Parse(apiBase)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("no server metrics URL in %q: give one", apiBase)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String(), nil
}

// Collector scrapes the endpoints of one run until Stop.
type Collector struct {
	client   *http.Client
	logger   *slog.Logger
	interval time.Duration

	marking   sync.Mutex // one round of scrapes at a time, so readings stay in order
	mu        sync.Mutex // guards endpoints' scrapes and counts
	endpoints []*Endpoint

	stop, stopped chan struct{}
}

// Endpoint is what one configured URL gave.
type Endpoint struct {
	URL string
	// Off says why nothing was read from it (unreachable, 404, not
	// Prometheus text); empty once its first scrape worked.
	Off     string
	Scrapes []Scrape
	// Fetches counts the scrapes tried, Failed those of them that failed
	// after the first worked; Latency is their total time.
	Fetches, Failed int
	Latency         time.Duration

	latest map[string]family // the last reading, whole
}

// Scrape is one reading of an endpoint.
type Scrape struct {
	At       time.Time
	Families map[string]family
	// Changed says the reading differs from the one before (AIPerf's
	// unique updates).
	Changed bool
	kept    bool // whole; else only its gauges once another follows
}

type family struct {
	Type   string // gauge, counter, histogram or unknown, as AIPerf names them
	Help   string
	Series []series // sorted by labels
}

type series struct {
	Labels map[string]string
	key    string  // the labels, canonical
	Value  float64 // gauge, counter, unknown
	// Count, Sum and Buckets (cumulative, ascending, +Inf last): histogram.
	Count, Sum float64
	Buckets    []bucket
}

type bucket struct {
	UpperBound float64
	Count      float64
}

// Start reads every URL once, so that an endpoint that is not there is off
// from the start (logged once, never an error), and then scrapes the others
// every interval until Stop.
func Start(o Options) *Collector {
	c := &Collector{logger: o.Logger, interval: o.Interval,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	c.client = &http.Client{Timeout: scrapeTimeout, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: o.TLS, MaxIdleConnsPerHost: 1}}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.interval <= 0 {
		c.interval = Interval
	}
	for _, u := range o.URLs {
		if !slices.ContainsFunc(c.endpoints, func(e *Endpoint) bool { return e.URL == u }) {
			c.endpoints = append(c.endpoints, &Endpoint{URL: u})
		}
	}
	for _, e := range c.endpoints {
		fams, took, err := c.read(e.URL)
		e.Fetches, e.Latency = 1, took
		if err != nil {
			e.Off = err.Error()
			c.logger.Warn("server metrics off for this run: "+e.Off, "url", e.URL,
				"hint", "start the server with its metrics on (llama-server --metrics), give the URL with --server-metrics URL, or --no-server-metrics")
			continue
		}
		e.add(Scrape{At: time.Now(), Families: fams}, true)
	}
	go c.loop()
	return c
}

func (c *Collector) loop() {
	defer close(c.stopped)
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.round(false)
		}
	}
}

// Mark scrapes every endpoint that is on now and returns the time it is
// done: a phase that starts then has a reading at or before its start.
func (c *Collector) Mark() time.Time { return c.round(true) }

// round scrapes every endpoint that is on; keep keeps the readings whole,
// as a window's start and end need them.
func (c *Collector) round(keep bool) time.Time {
	c.marking.Lock()
	defer c.marking.Unlock()
	var wg sync.WaitGroup
	for _, e := range c.endpoints {
		if e.Off == "" {
			wg.Go(func() { c.scrape(e, keep) })
		}
	}
	wg.Wait()
	return time.Now()
}

func (c *Collector) scrape(e *Endpoint, keep bool) {
	fams, took, err := c.read(e.URL)
	c.mu.Lock()
	defer c.mu.Unlock()
	e.Fetches++
	e.Latency += took
	if err != nil {
		e.Failed++
		if e.Failed == 1 {
			c.logger.Warn("server metrics scrape failed; later failures are counted, not logged", "url", e.URL, "err", err)
		}
		return
	}
	e.add(Scrape{At: time.Now(), Families: fams}, keep)
}

// add appends a reading. The reading before it keeps only its gauges
// unless it was to be kept whole: a window's counters and histograms are
// read at its start and its end only, while its gauges are read all along,
// so an hour's burst keeps an hour of gauges, not an hour of histograms.
func (e *Endpoint) add(s Scrape, keep bool) {
	s.Changed, s.kept = !reflect.DeepEqual(s.Families, e.latest), keep
	if n := len(e.Scrapes); n > 0 && !e.Scrapes[n-1].kept {
		e.Scrapes[n-1].Families = gaugesOf(e.Scrapes[n-1].Families)
	}
	e.latest = s.Families
	e.Scrapes = append(e.Scrapes, s)
}

func gaugesOf(fams map[string]family) map[string]family {
	out := map[string]family{}
	for name, f := range fams {
		if f.Type == "gauge" || f.Type == "unknown" {
			out[name] = f
		}
	}
	return out
}

// Stop takes a last reading, after the engine had an interval to record the
// last requests (vLLM updates its metrics between steps), stops scraping and
// returns what the endpoints gave, with the profiling window from start to
// the last reading.
func (c *Collector) Stop(start time.Time) *Collection {
	if slices.ContainsFunc(c.endpoints, func(e *Endpoint) bool { return e.Off == "" }) {
		time.Sleep(c.interval)
	}
	close(c.stop)
	<-c.stopped
	end := c.round(true)
	c.client.CloseIdleConnections() // a transport of the run's own
	c.mu.Lock()
	defer c.mu.Unlock()
	col := &Collection{Start: start, End: end}
	for _, e := range c.endpoints {
		col.Endpoints = append(col.Endpoints, *e)
	}
	return col
}

var errNotPrometheus = errors.New("the reply is not Prometheus text")

// read fetches and parses one endpoint.
func (c *Collector) read(u string) (map[string]family, time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, time.Since(start), fmt.Errorf("unreachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, time.Since(start), fmt.Errorf("%s answered %s", u, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation) // it keeps state: one per reply
	mfs, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, maxBody))
	took := time.Since(start)
	if err != nil {
		return nil, took, fmt.Errorf("%w: %v", errNotPrometheus, err)
	}
	if len(mfs) == 0 {
		return nil, took, fmt.Errorf("%w: no metrics in it", errNotPrometheus)
	}
	return convert(mfs), took, nil
}

func convert(mfs map[string]*dto.MetricFamily) map[string]family {
	out := make(map[string]family, len(mfs))
	for name, mf := range mfs {
		f := family{Help: mf.GetHelp()}
		switch mf.GetType() {
		case dto.MetricType_GAUGE:
			f.Type = "gauge"
		case dto.MetricType_COUNTER:
			f.Type = "counter"
		case dto.MetricType_HISTOGRAM:
			f.Type = "histogram"
		case dto.MetricType_UNTYPED:
			f.Type = "unknown"
		default:
			continue // summaries: AIPerf exports none either
		}
		for _, m := range mf.GetMetric() {
			s := series{Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.Labels[l.GetName()] = l.GetValue()
			}
			s.key = labelKey(s.Labels)
			switch f.Type {
			case "gauge":
				s.Value = m.GetGauge().GetValue()
			case "counter":
				s.Value = m.GetCounter().GetValue()
			case "unknown":
				s.Value = m.GetUntyped().GetValue()
			case "histogram":
				h := m.GetHistogram()
				s.Count, s.Sum = float64(h.GetSampleCount()), h.GetSampleSum()
				for _, b := range h.GetBucket() {
					s.Buckets = append(s.Buckets, bucket{b.GetUpperBound(), float64(b.GetCumulativeCount())})
				}
				if len(s.Buckets) == 0 || !math.IsInf(s.Buckets[len(s.Buckets)-1].UpperBound, 1) {
					s.Buckets = append(s.Buckets, bucket{math.Inf(1), s.Count})
				}
			}
			f.Series = append(f.Series, s)
		}
		sort.Slice(f.Series, func(i, j int) bool { return f.Series[i].key < f.Series[j].key })
		out[name] = f
	}
	return out
}

func labelKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "%s=%q,", k, labels[k])
	}
	return b.String()
}
