package servermetrics

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/stats"
)

// Collection is what the scrapes of one run gave.
type Collection struct {
	Endpoints []Endpoint // in the order configured
	// Start and End are the profiling window: a reading at its start and
	// the last reading, after the last response.
	Start, End time.Time
	// WarmupStart is where the warmup's window begins (it ends at Start);
	// zero without a warmup.
	WarmupStart time.Time
}

// Configured and Successful are the URLs configured and those read.
func (c *Collection) Configured() []string {
	var out []string
	for _, e := range c.Endpoints {
		out = append(out, e.URL)
	}
	return out
}

func (c *Collection) Successful() []string {
	var out []string
	for _, e := range c.Endpoints {
		if e.Off == "" {
			out = append(out, e.URL)
		}
	}
	return out
}

// Metric is one metric over a window, in AIPerf's server_metrics_export
// layout: its type, HELP text, unit (from its name's suffix) and each
// series' statistics.
type Metric struct {
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Unit        string   `json:"unit,omitempty"`
	Series      []Series `json:"series"`
}

// Series is one label set of one endpoint over a window.
type Series struct {
	EndpointURL string            `json:"endpoint_url"`
	Labels      map[string]string `json:"labels,omitempty"`
	Stats       any               `json:"stats"` // GaugeStats, CounterStats or HistogramStats
	Buckets     *Buckets          `json:"buckets,omitempty"`
}

// GaugeStats are a gauge's (and an untyped metric's) readings in a window.
type GaugeStats struct {
	Avg float64 `json:"avg"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	Std float64 `json:"std"`
	P1  float64 `json:"p1"`
	P5  float64 `json:"p5"`
	P10 float64 `json:"p10"`
	P25 float64 `json:"p25"`
	P50 float64 `json:"p50"`
	P75 float64 `json:"p75"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// CounterStats are a counter's increase over a window, and its rate.
type CounterStats struct {
	Total float64 `json:"total"`
	Rate  float64 `json:"rate"`
}

// HistogramStats are a histogram's increase over a window; the
// percentiles are interpolated in the buckets' increase as Prometheus's
// histogram_quantile does (AIPerf estimates them its own way).
type HistogramStats struct {
	Count     int64    `json:"count"`
	CountRate *float64 `json:"count_rate,omitempty"`
	Sum       *float64 `json:"sum,omitempty"`
	SumRate   *float64 `json:"sum_rate,omitempty"`
	Avg       *float64 `json:"avg,omitempty"`
	P1        *float64 `json:"p1_estimate,omitempty"`
	P5        *float64 `json:"p5_estimate,omitempty"`
	P10       *float64 `json:"p10_estimate,omitempty"`
	P25       *float64 `json:"p25_estimate,omitempty"`
	P50       *float64 `json:"p50_estimate,omitempty"`
	P75       *float64 `json:"p75_estimate,omitempty"`
	P90       *float64 `json:"p90_estimate,omitempty"`
	P95       *float64 `json:"p95_estimate,omitempty"`
	P99       *float64 `json:"p99_estimate,omitempty"`
}

// Buckets are a histogram's per-bucket increase over a window (upper bound
// → observations at or under it, cumulative as in Prometheus), ascending.
type Buckets []BucketDelta

// BucketDelta is one bucket's increase.
type BucketDelta struct {
	LE    string
	Count int64
}

// MarshalJSON writes the buckets as AIPerf does, an object keyed by upper
// bound, in ascending order.
func (b Buckets) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, d := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, d.LE)
		out = append(out, ':')
		out = strconv.AppendInt(out, d.Count, 10)
	}
	return append(out, '}'), nil
}

// window is the readings of one endpoint that a window [from, to] uses:
// ref, the last at or before from (the first in the window when none is),
// which counters and histograms count from, and in, those within it.
func window(scrapes []Scrape, from, to time.Time) (ref *Scrape, in []Scrape) {
	for i := range scrapes {
		s := &scrapes[i]
		if !s.At.After(from) {
			ref = s
		}
		if !s.At.Before(from) && !s.At.After(to) {
			in = append(in, *s)
		}
	}
	switch {
	case ref == nil && len(in) > 0:
		ref = &in[0]
	case ref != nil && len(in) == 0:
		in = []Scrape{*ref} // nothing read in a short window: the gauges' last reading
	}
	return ref, in
}

// Metrics is every metric of every endpoint read over [from, to], keyed by
// name; nil when nothing was read.
func (c *Collection) Metrics(from, to time.Time) map[string]*Metric {
	var out map[string]*Metric
	for _, e := range c.Endpoints {
		ref, in := window(e.Scrapes, from, to)
		if ref == nil || len(in) == 0 {
			continue
		}
		last := in[len(in)-1]
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range last.Families {
				if !yield(n) {
					return
				}
			}
		})
		for _, name := range names {
			f := last.Families[name]
			if out == nil {
				out = map[string]*Metric{}
			}
			m := out[name]
			if m == nil {
				m = &Metric{Type: f.Type, Description: f.Help, Unit: unitOf(name)}
				out[name] = m
			}
			for _, s := range f.Series {
				st, buckets := seriesStats(name, f.Type, s, ref, in)
				if st == nil {
					continue
				}
				ser := Series{EndpointURL: e.URL, Stats: st, Buckets: buckets}
				if len(s.Labels) > 0 {
					ser.Labels = s.Labels
				}
				m.Series = append(m.Series, ser)
			}
		}
	}
	return out
}

// lookup is the series with key in a reading's family, if any.
func lookup(s *Scrape, name, key string) (series, bool) {
	f, ok := s.Families[name]
	if !ok {
		return series{}, false
	}
	i, found := slices.BinarySearchFunc(f.Series, key, func(s series, k string) int { return strings.Compare(s.key, k) })
	if !found {
		return series{}, false
	}
	return f.Series[i], true
}

func seriesStats(name, typ string, last series, ref *Scrape, in []Scrape) (any, *Buckets) {
	switch typ {
	case "gauge", "unknown":
		var vals []float64
		for i := range in {
			if s, ok := lookup(&in[i], name, last.key); ok {
				vals = append(vals, s.Value)
			}
		}
		if len(vals) == 0 {
			return nil, nil
		}
		return gaugeStats(vals), nil
	case "counter":
		base, ok := lookup(ref, name, last.key)
		if !ok {
			base = series{} // appeared during the window: it started at zero
		}
		secs := in[len(in)-1].At.Sub(ref.At).Seconds()
		st := CounterStats{Total: max(last.Value-base.Value, 0)} // a reset counts nothing
		if secs > 0 {
			st.Rate = st.Total / secs
		}
		return st, nil
	case "histogram":
		base, _ := lookup(ref, name, last.key)
		return histogramStats(last, base, in[len(in)-1].At.Sub(ref.At).Seconds())
	}
	return nil, nil
}

func gaugeStats(vals []float64) GaugeStats {
	st := stats.Of(vals, 0)
	g := GaugeStats{Avg: st.Avg, Min: st.Min, Max: st.Max,
		P1: st.P1, P5: st.P5, P10: st.P10, P25: st.P25, P50: st.P50, P75: st.P75, P90: st.P90, P95: st.P95, P99: st.P99}
	if n := float64(st.Count); n > 1 {
		g.Std = st.Std * math.Sqrt(n/(n-1)) // the sample deviation (numpy's ddof=1), as AIPerf's server metrics
	}
	return g
}

// histogramStats is the increase from base to last over secs seconds; the
// buckets are left out when one went down (the server restarted).
func histogramStats(last, base series, secs float64) (HistogramStats, *Buckets) {
	count := int64(max(last.Count-base.Count, 0))
	st := HistogramStats{Count: count}
	var deltas Buckets
	for _, b := range last.Buckets {
		d := b.Count - baseCount(base, b.UpperBound)
		if d < 0 {
			deltas = nil
			break
		}
		deltas = append(deltas, BucketDelta{LE: formatLE(b.UpperBound), Count: int64(d)})
	}
	var buckets *Buckets
	if deltas != nil {
		buckets = &deltas
	}
	if count == 0 {
		return st, buckets
	}
	sum := max(last.Sum-base.Sum, 0)
	avg := sum / float64(count)
	st.Sum, st.Avg = &sum, &avg
	if secs > 0 {
		cr, sr := float64(count)/secs, sum/secs
		st.CountRate, st.SumRate = &cr, &sr
	}
	if buckets != nil {
		q := func(p float64) *float64 { v, _ := quantile(p/100, last.Buckets, base); return &v }
		st.P1, st.P5, st.P10, st.P25, st.P50 = q(1), q(5), q(10), q(25), q(50)
		st.P75, st.P90, st.P95, st.P99 = q(75), q(90), q(95), q(99)
	}
	return st, buckets
}

func baseCount(base series, le float64) float64 {
	for _, b := range base.Buckets {
		if b.UpperBound == le {
			return b.Count
		}
	}
	return 0
}

// quantile is Prometheus's histogram_quantile of the buckets' increase
// since base: linear within the bucket that holds the rank, the highest
// finite bound when it falls in +Inf's. width is that bucket's: the true
// quantile is anywhere in it (+Inf above the highest finite bound).
func quantile(q float64, last []bucket, base series) (v, width float64) {
	cum := make([]float64, len(last))
	for i, b := range last {
		cum[i] = b.Count - baseCount(base, b.UpperBound)
	}
	total := cum[len(cum)-1]
	rank := q * total
	for i, c := range cum {
		if c < rank {
			continue
		}
		if math.IsInf(last[i].UpperBound, 1) {
			if i == 0 {
				return 0, math.Inf(1)
			}
			return last[i-1].UpperBound, math.Inf(1)
		}
		lower, below := 0.0, 0.0
		if i > 0 {
			lower, below = last[i-1].UpperBound, cum[i-1]
		} else if last[i].UpperBound <= 0 {
			return last[i].UpperBound, 0
		}
		width = last[i].UpperBound - lower
		if c == below {
			return last[i].UpperBound, width
		}
		return lower + width*(rank-below)/(c-below), width
	}
	return last[len(last)-1].UpperBound, 0
}

func formatLE(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le, 'g', -1, 64)
}

// unitOf is AIPerf's unit of a metric from its name's suffix (the longest
// that matches), as its display name.
func unitOf(name string) string {
	best, unit := 0, ""
	for suffix, u := range unitSuffixes {
		if strings.HasSuffix(name, suffix) && len(suffix) > best {
			best, unit = len(suffix), u
		}
	}
	if unit == "" && strings.Contains(name, "num_requests_") {
		unit = "requests"
	}
	return unit
}

var unitSuffixes = map[string]string{
	"_seconds": "seconds", "_seconds_total": "seconds", "_milliseconds": "milliseconds", "_ms": "milliseconds",
	"_ms_total": "milliseconds", "_nanoseconds": "nanoseconds", "_ns": "nanoseconds", "_ns_total": "nanoseconds",
	"_bytes": "bytes", "_kilobytes": "kilobytes", "_megabytes": "megabytes", "_gigabytes": "gigabytes",
	"_bytes_total": "bytes", "_total": "count", "_count": "count", "_tokens": "tokens", "_tokens_total": "tokens",
	"_requests": "requests", "_requests_total": "requests", "request_success": "requests", "_errors": "errors",
	"_errors_total": "errors", "_error_count": "errors", "_error_count_total": "errors", "_reqs": "requests",
	"_blocks": "blocks", "_blocks_total": "blocks", "_block_count": "blocks", "_gb_s": "gb/s", "_ratio": "ratio",
	"_percent": "percent", "_perc": "percent", "_celsius": "celsius", "_joules": "joule", "_watts": "watt",
}

// Info is AIPerf's endpoint_info: how an endpoint was read.
type Info struct {
	TotalFetches           int      `json:"total_fetches"`
	FirstFetchNs           int64    `json:"first_fetch_ns"`
	LastFetchNs            int64    `json:"last_fetch_ns"`
	AvgFetchLatencyMs      float64  `json:"avg_fetch_latency_ms"`
	UniqueUpdates          int      `json:"unique_updates"`
	FirstUpdateNs          int64    `json:"first_update_ns"`
	LastUpdateNs           int64    `json:"last_update_ns"`
	DurationSeconds        float64  `json:"duration_seconds"`
	AvgUpdateIntervalMs    float64  `json:"avg_update_interval_ms"`
	MedianUpdateIntervalMs *float64 `json:"median_update_interval_ms,omitempty"`
}

// Info is how each endpoint read was read, by URL.
func (c *Collection) Info() map[string]Info {
	out := map[string]Info{}
	for _, e := range c.Endpoints {
		if e.Off != "" || len(e.Scrapes) == 0 {
			continue
		}
		in := Info{TotalFetches: e.Fetches, FirstFetchNs: e.Scrapes[0].At.UnixNano(), LastFetchNs: e.Scrapes[len(e.Scrapes)-1].At.UnixNano()}
		if e.Fetches > 0 {
			in.AvgFetchLatencyMs = float64(e.Latency) / float64(e.Fetches) / float64(time.Millisecond)
		}
		var updates []time.Time
		for _, s := range e.Scrapes {
			if s.Changed {
				updates = append(updates, s.At)
			}
		}
		in.UniqueUpdates = len(updates)
		in.FirstUpdateNs, in.LastUpdateNs = updates[0].UnixNano(), updates[len(updates)-1].UnixNano()
		in.DurationSeconds = updates[len(updates)-1].Sub(updates[0]).Seconds()
		if len(updates) > 1 {
			var gaps []float64
			for i := 1; i < len(updates); i++ {
				gaps = append(gaps, float64(updates[i].Sub(updates[i-1]))/float64(time.Millisecond))
			}
			in.AvgUpdateIntervalMs = in.DurationSeconds * 1000 / float64(len(gaps))
			if len(gaps) >= 2 {
				m := stats.Percentile(slices.Sorted(slices.Values(gaps)), .5)
				in.MedianUpdateIntervalMs = &m
			}
		}
		out[e.URL] = in
	}
	return out
}
