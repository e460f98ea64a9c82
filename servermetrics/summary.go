package servermetrics

import (
	"math"
	"slices"

	"github.com/inferprobe/inferprobe/stats"
)

// Summary is what one engine did over a run's profiling window, in the
// report's concepts (Engines maps each engine's metrics onto them).
type Summary struct {
	Endpoint string `json:"endpoint"`
	// Engine is the engine recognised by its metrics' prefix; empty when
	// none was, and then nothing else is set.
	Engine  string `json:"engine"`
	Waiting *Level `json:"waiting_requests,omitempty"`
	Running *Level `json:"running_requests,omitempty"`
	// KVCache is a fraction, 0 to 1.
	KVCache *Level `json:"kv_cache_usage,omitempty"`
	// TTFT is the engine's own, from its histogram's increase over the run;
	// ClientTTFT the client's over the same requests, and TTFTGap the
	// client's less the engine's (its Count the client's): the network,
	// queueing outside the engine (a proxy, the server's HTTP layer) and the
	// client.
	TTFT       *Latency `json:"ttft_seconds,omitempty"`
	ClientTTFT *Latency `json:"client_ttft_seconds,omitempty"`
	TTFTGap    *Gap     `json:"ttft_gap_seconds,omitempty"`
	// Metrics are the engine's metrics read for each concept, and Lacks the
	// concepts it did not export.
	Metrics map[Concept]string `json:"metrics,omitempty"`
	Lacks   []Concept          `json:"lacks,omitempty"`
}

// Level is a gauge over the run: the average of its readings and the most.
type Level struct {
	Avg float64 `json:"avg"`
	Max float64 `json:"max"`
}

// Latency is a latency histogram's increase over the run, in seconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	// widths are, for an engine's histogram, the widths of the buckets P50,
	// P90 and P99 were interpolated in; zero for exact percentiles.
	widths [3]float64
}

// Gap is a client's latency less an engine's, per percentile, in seconds;
// nil where it is smaller than the width of the engine's bucket that
// percentile was interpolated in: the engine's true percentile is anywhere
// in that bucket, so such a difference is not measured.
type Gap struct {
	Count int64    `json:"count"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P99   *float64 `json:"p99"`
}

// Unresolved says some percentile's difference is within the engine's
// resolution.
func (g *Gap) Unresolved() bool { return g.P50 == nil || g.P90 == nil || g.P99 == nil }

func gap(client, engine *Latency) *Gap {
	diff := func(c, e, width float64) *float64 {
		if d := c - e; math.Abs(d) >= width {
			return &d
		}
		return nil
	}
	return &Gap{Count: client.Count, P50: diff(client.P50, engine.P50, engine.widths[0]),
		P90: diff(client.P90, engine.P90, engine.widths[1]), P99: diff(client.P99, engine.P99, engine.widths[2])}
}

// Report is the server's side of a run, beside the client's: what the
// console, the JSON export, the HTML report and a burst's report show.
type Report struct {
	Configured []string `json:"endpoints_configured"`
	Successful []string `json:"endpoints_successful"`
	// Off says why each endpoint not read was not.
	Off     map[string]string `json:"off,omitempty"`
	Engines []Summary         `json:"engines"`
}

// Report summarises the collection beside clientTTFT, the client's TTFT
// over the same run, in seconds.
func (c *Collection) Report(clientTTFT stats.Stats) *Report {
	var client *Latency
	if t := clientTTFT; t.Count > 0 {
		client = &Latency{Count: int64(t.Count), P50: t.P50, P90: t.P90, P99: t.P99}
	}
	r := &Report{Configured: c.Configured(), Successful: c.Successful(), Engines: c.Summaries()}
	for _, e := range c.Endpoints {
		if e.Off != "" {
			if r.Off == nil {
				r.Off = map[string]string{}
			}
			r.Off[e.URL] = e.Off
		}
	}
	for i := range r.Engines {
		s := &r.Engines[i]
		if s.TTFT == nil || client == nil {
			continue
		}
		s.ClientTTFT = client
		s.TTFTGap = gap(client, s.TTFT)
	}
	return r
}

// Summaries are the summaries of the endpoints read over the profiling
// window, in the order configured.
func (c *Collection) Summaries() []Summary {
	var out []Summary
	for _, e := range c.Endpoints {
		ref, in := window(e.Scrapes, c.Start, c.End)
		if e.Off != "" || ref == nil {
			continue
		}
		last := in[len(in)-1].Families
		s := Summary{Endpoint: e.URL}
		eng := engineOf(last)
		if eng == nil {
			out = append(out, s)
			continue
		}
		s.Engine, s.Metrics = eng.Name, map[Concept]string{}
		for _, concept := range Concepts {
			name, ok := eng.find(concept, last)
			if !ok {
				s.Lacks = append(s.Lacks, concept)
				continue
			}
			s.Metrics[concept] = name
			switch concept {
			case Waiting:
				s.Waiting = level(in, name, false)
			case Running:
				s.Running = level(in, name, false)
			case KVCache:
				s.KVCache = level(in, name, true)
			case TTFT:
				s.TTFT = latency(ref, &in[len(in)-1], name)
			}
		}
		out = append(out, s)
	}
	return out
}

// level is a gauge over the readings: per reading, the sum of its series
// (requests of several models or ranks add up), or their most for a
// fraction (the fullest KV cache).
func level(in []Scrape, name string, fraction bool) *Level {
	var vals []float64
	for _, s := range in {
		f, ok := s.Families[name]
		if !ok || len(f.Series) == 0 {
			continue
		}
		v := 0.0
		for _, ser := range f.Series {
			if fraction {
				v = max(v, ser.Value)
			} else {
				v += ser.Value
			}
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	return &Level{Avg: sum / float64(len(vals)), Max: slices.Max(vals)}
}

// latency is the increase of a histogram's series, added up, from ref to
// last; nil when no request was observed.
func latency(ref, last *Scrape, name string) *Latency {
	now, base := merged(last, name), merged(ref, name)
	st, buckets := histogramStats(now, base, 0)
	if st.Count == 0 || buckets == nil {
		return nil
	}
	l := &Latency{Count: st.Count, P50: *st.P50, P90: *st.P90, P99: *st.P99}
	for i, q := range []float64{0.5, 0.9, 0.99} {
		_, l.widths[i] = quantile(q, now.Buckets, base)
	}
	return l
}

// merged adds up a histogram's series in a reading, bucket by bucket.
func merged(s *Scrape, name string) series {
	var out series
	for _, ser := range s.Families[name].Series {
		out.Count += ser.Count
		out.Sum += ser.Sum
		for _, b := range ser.Buckets {
			i := slices.IndexFunc(out.Buckets, func(o bucket) bool { return o.UpperBound == b.UpperBound })
			if i < 0 {
				out.Buckets = append(out.Buckets, b)
				continue
			}
			out.Buckets[i].Count += b.Count
		}
	}
	slices.SortFunc(out.Buckets, func(a, b bucket) int {
		switch {
		case a.UpperBound < b.UpperBound:
			return -1
		case a.UpperBound > b.UpperBound:
			return 1
		}
		return 0
	})
	return out
}
