package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
)

// Labels identify a request stream. All values are bounded: they come from the
// scenario file, never from requests.
type Labels struct {
	Target, Model, Scenario, Phase string
}

func (l Labels) values() []string { return []string{l.Target, l.Model, l.Scenario, l.Phase} }

func (l Labels) match() prometheus.Labels {
	return prometheus.Labels{"target": l.Target, "model": l.Model, "scenario": l.Scenario, "phase": l.Phase}
}

var requestLabels = []string{"target", "model", "scenario", "phase"}

// Requests holds the per-request metrics of docs/metrics.md (Request metrics).
type Requests struct {
	ttft, ttfot, ttst, itl, icl, duration, inTokens, outTokens, lag, capWait *prometheus.HistogramVec
	stages                                                                   *prometheus.HistogramVec
	requests, errors, tokenSources, compressed, connections                  *prometheus.CounterVec
	inTokensTotal, outTokensTotal, reasoningTotal, good, mismatches          *prometheus.CounterVec
	connRetries, keepAliveWithheld, clientPaused                             *prometheus.CounterVec
	inFlight                                                                 *prometheus.GaugeVec
	saturation                                                               *Saturation // fed every request's lag when set
}

// NewRequests registers the request metrics with reg.
func NewRequests(reg prometheus.Registerer) *Requests {
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, append(requestLabels, extra...))
	}
	r := &Requests{
		ttft:      histogramVec("time_to_first_token_seconds", "From just before the request is written to the first content chunk (reasoning counts).", ttftBuckets, requestLabels),
		ttfot:     histogramVec("time_to_first_output_token_seconds", "From just before the request is written to the first chunk with non-reasoning content.", ttftBuckets, requestLabels),
		ttst:      histogramVec("time_to_second_token_seconds", "From the first to the second content chunk.", itlBuckets, requestLabels),
		itl:       histogramVec("inter_token_latency_seconds", "Per request: (last content chunk - first content chunk) / (output tokens - tokens in the first chunk).", itlBuckets, requestLabels),
		icl:       histogramVec("inter_chunk_latency_seconds", "Gap between consecutive content chunks, one observation per gap.", itlBuckets, requestLabels),
		duration:  histogramVec("request_duration_seconds", "From just before the request is written to the end of the response.", durationBuckets, requestLabels),
		inTokens:  histogramVec("input_tokens", "Prompt length of a request, in tokens.", tokenBuckets, requestLabels),
		outTokens: histogramVec("output_tokens", "Generated length of a request, in tokens.", tokenBuckets, requestLabels),
		lag:       histogramVec("schedule_lag_seconds", "Actual send time minus scheduled send time, less any wait for max_concurrency: how far the client fell behind.", lagBuckets, requestLabels),
		// A wait for a slot lasts until a request ahead finishes, so it is on the scale of request durations.
		capWait: histogramVec("concurrency_wait_seconds", "Time a request was held past its scheduled send by max_concurrency or max_prefill_concurrency (0 when a slot was free or there is no cap).", durationBuckets, requestLabels),
		stages:  histogramVec("request_stage_seconds", "The client's timing breakdown of a request, by stage: dns, connect and tls when its connection was dialled for it (requests_by_connection_total counts those that were not), setup (the whole wait for a connection), then sending, waiting (request written to first response byte) and first_token (first byte to first content chunk), which add up to its TTFT.", stageBuckets, append(requestLabels, "stage")),

		requests:          counter("requests_total", "Requests finished, by outcome: ok, error, cancelled, or lost (by inferprobe: the worker holding it died; not the target's failure).", "outcome"),
		errors:            counter("request_errors_total", "Failed requests, by reason.", "reason"),
		tokenSources:      counter("requests_by_token_source_total", "Successful requests by where their token counts came from: usage (the server's), tokenizer (the target's, on the received text) or chunks (one token per content chunk, an estimate).", "token_source"),
		inTokensTotal:     counter("input_tokens_total", "Prompt tokens sent."),
		outTokensTotal:    counter("output_tokens_total", "Output tokens received."),
		reasoningTotal:    counter("reasoning_tokens_total", "Output tokens the server's usage counts as reasoning (completion_tokens_details.reasoning_tokens); part of output_tokens_total."),
		good:              counter("good_requests_total", "Requests that succeeded and met every SLO of their scenario (goodput)."),
		mismatches:        counter("output_length_mismatches_total", "Requests whose output length differed from the length the scenario pinned (min_tokens / ignore_eos)."),
		connRetries:       counter("connection_retries_total", "Requests sent again on a fresh connection because their first attempt, on a reused connection the server had already closed, provably never reached it."),
		keepAliveWithheld: counter("keep_alive_withheld_total", "Requests to a target with keep_alive on that went out on a connection of their own, as its server was seen to close connections right after its responses; a steady rate means the server does not keep connections alive: set keep_alive: false."),
		compressed:        counter("compressed_responses_total", "Replies that came compressed although no compression was asked for (a server or proxy compressed them), by Content-Encoding; they are decoded.", "encoding"),
		clientPaused:      counter("client_paused_requests_total", "Requests left out of every other request metric because a process of inferprobe did not run for longer than its watchdog's threshold while they were due or in flight (stopped, CPU-throttled, paused): their timings are the client's, not the server's."),
		connections:       counter("requests_by_connection_total", "Requests sent, by where their connection came from: dialled for the request, reused (had carried a request before) or opened_ahead (before the probe's timeline started, or as a spare once requests needed new connections); only dialled ones had a DNS lookup and a connect of their own.", "connection"),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "in_flight_requests", Help: "Requests sent and not yet finished.",
		}, requestLabels),
	}
	reg.MustRegister(r.ttft, r.ttfot, r.ttst, r.itl, r.icl, r.duration, r.inTokens, r.outTokens, r.lag, r.capWait, r.stages,
		r.requests, r.errors, r.tokenSources, r.inTokensTotal, r.outTokensTotal, r.reasoningTotal, r.good, r.mismatches,
		r.connRetries, r.keepAliveWithheld, r.clientPaused, r.compressed, r.connections, r.inFlight)
	return r
}

// Series is one label set's metrics, resolved once so that recording a request
// does no label lookups.
type Series struct {
	// ttft, ttfot, itl and duration carry an exemplar naming the request.
	ttft, ttfot, itl, duration                                      prometheus.ExemplarObserver
	ttst, icl, inTokens, outTokens, lag, capWait                    prometheus.Observer
	ok, failed, cancelled, lost                                     prometheus.Counter
	inTokensTotal, outTokensTotal, reasoningTotal, good, mismatches prometheus.Counter
	connRetries, keepAliveWithheld, clientPaused                    prometheus.Counter
	inFlight                                                        prometheus.Gauge
	errors, compressed                                              *prometheus.CounterVec
	tokenSources                                                    [record.NumTokenSources]prometheus.Counter // by record.TokenSource
	stages                                                          [numStages]prometheus.Observer
	connections                                                     [record.NumConnOrigins]prometheus.Counter // by prober.ConnOrigin; none's is nil
	slo                                                             report.SLO
	saturation                                                      *Saturation
}

// FeedSaturation makes every series created afterwards report its requests'
// schedule lag to sat.
func (r *Requests) FeedSaturation(sat *Saturation) { r.saturation = sat }

// Series returns the metrics of one request stream; requests that meet slo
// count as good.
func (r *Requests) Series(l Labels, slo report.SLO) *Series {
	v := l.values()
	s := &Series{
		ttft: exemplarObserver(r.ttft, v), ttfot: exemplarObserver(r.ttfot, v), ttst: r.ttst.WithLabelValues(v...),
		itl: exemplarObserver(r.itl, v), icl: r.icl.WithLabelValues(v...), duration: exemplarObserver(r.duration, v),
		inTokens: r.inTokens.WithLabelValues(v...), outTokens: r.outTokens.WithLabelValues(v...), lag: r.lag.WithLabelValues(v...),
		capWait:           r.capWait.WithLabelValues(v...),
		ok:                r.requests.WithLabelValues(append(v, "ok")...),
		failed:            r.requests.WithLabelValues(append(v, "error")...),
		cancelled:         r.requests.WithLabelValues(append(v, "cancelled")...),
		lost:              r.requests.WithLabelValues(append(v, "lost")...),
		inTokensTotal:     r.inTokensTotal.WithLabelValues(v...),
		outTokensTotal:    r.outTokensTotal.WithLabelValues(v...),
		reasoningTotal:    r.reasoningTotal.WithLabelValues(v...),
		good:              r.good.WithLabelValues(v...),
		mismatches:        r.mismatches.WithLabelValues(v...),
		connRetries:       r.connRetries.WithLabelValues(v...),
		keepAliveWithheld: r.keepAliveWithheld.WithLabelValues(v...),
		clientPaused:      r.clientPaused.WithLabelValues(v...),
		inFlight:          r.inFlight.WithLabelValues(v...),
		errors:            r.errors.MustCurryWith(l.match()),
		compressed:        r.compressed.MustCurryWith(l.match()),
		slo:               slo,
		saturation:        r.saturation,
	}
	// Every source is exported from the start, so a server that stops
	// sending usage shows as a series rising from 0, not one appearing.
	for src := range s.tokenSources {
		s.tokenSources[src] = r.tokenSources.WithLabelValues(append(v, record.TokenSource(src).String())...)
	}
	for o := range s.connections {
		if record.ConnOrigin(o) != record.ConnNone {
			s.connections[o] = r.connections.WithLabelValues(append(v, record.ConnOrigin(o).String())...)
		}
	}
	for st := range s.stages {
		s.stages[st] = r.stages.WithLabelValues(append(v, stageNames[st])...)
	}
	// Every reason too: a failure counter that appears with its first failure hides that
	// failure from rate() and increase(), and so from the error-ratio alert.
	for _, reason := range record.Reasons {
		if reason.ClientLoss() {
			continue // counted as lost, not as an error
		}
		s.errors.WithLabelValues(string(reason))
	}
	for _, e := range record.Encodings {
		s.compressed.WithLabelValues(e.String())
	}
	return s
}

// exemplarObserver is h's histogram for label values v; client_golang's
// histograms all take exemplars.
func exemplarObserver(h *prometheus.HistogramVec, v []string) prometheus.ExemplarObserver {
	return h.WithLabelValues(v...).(prometheus.ExemplarObserver)
}

// Forget drops every series of one request stream, so a probe removed by a
// reload stops being exported rather than going silently flat.
func (r *Requests) Forget(l Labels) {
	match := l.match()
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{r.ttft, r.ttfot, r.ttst, r.itl, r.icl, r.duration, r.inTokens, r.outTokens, r.lag, r.capWait, r.stages,
		r.requests, r.errors, r.tokenSources, r.inTokensTotal, r.outTokensTotal, r.reasoningTotal, r.good, r.mismatches,
		r.connRetries, r.keepAliveWithheld, r.clientPaused, r.compressed, r.connections, r.inFlight} {
		v.DeletePartialMatch(match)
	}
}

// Started counts a request as in flight.
func (s *Series) Started() { s.inFlight.Inc() }

// Observe records a finished request that was counted by Started.
func (s *Series) Observe(rec *record.Record) {
	s.inFlight.Dec()
	c := report.Contribute(rec, s.slo)
	if c.ClientPaused > 0 {
		s.clientPaused.Inc()
		if s.saturation != nil {
			s.saturation.observePaused(time.Now())
		}
		return
	}
	if c.HasLag {
		s.lag.Observe(c.Lag.Seconds())
		if s.saturation != nil {
			s.saturation.observeLag(rec.Sent, c.Lag)
		}
	}
	s.capWait.Observe(c.CapWait.Seconds())
	if c.ConnRetried {
		s.connRetries.Inc()
	}
	if c.KeepAliveWithheld {
		s.keepAliveWithheld.Inc()
	}
	if c.Encoding != record.EncodingIdentity {
		s.compressed.WithLabelValues(c.Encoding.String()).Inc()
	}
	s.observeStages(&c)
	switch {
	case c.Outcome == record.OutcomeOK:
		s.ok.Inc()
	case c.Outcome == record.OutcomeCancelled:
		s.cancelled.Inc()
	case c.Reason.ClientLoss():
		s.lost.Inc()
	default:
		s.failed.Inc()
		s.errors.WithLabelValues(string(c.Reason)).Inc()
	}
	// One exemplar label set serves the request's four observations; a
	// record without an ID (never the case for a sent request) gets none.
	var exemplar prometheus.Labels
	if !rec.ID.IsZero() {
		exemplar = prometheus.Labels{ExemplarRequestID: rec.ID.String(), ExemplarTraceID: rec.ID.TraceID()}
	}
	if c.HasTTFT {
		s.ttft.ObserveWithExemplar(c.TTFT.Seconds(), exemplar)
	}
	if c.HasTTFOT {
		s.ttfot.ObserveWithExemplar(c.TTFOT.Seconds(), exemplar)
	}
	if c.HasTTST {
		s.ttst.Observe(c.TTST.Seconds())
	}
	for gap := range c.Gaps() {
		s.icl.Observe(gap.Seconds())
	}
	if c.Outcome != record.OutcomeOK {
		return
	}
	if c.ITL > 0 {
		s.itl.ObserveWithExemplar(c.ITL.Seconds(), exemplar)
	}
	s.duration.ObserveWithExemplar(c.Duration.Seconds(), exemplar)
	s.inTokens.Observe(float64(c.InputTokens))
	s.outTokens.Observe(float64(c.OutputTokens))
	s.inTokensTotal.Add(float64(c.InputTokens))
	s.outTokensTotal.Add(float64(c.OutputTokens))
	s.reasoningTotal.Add(float64(c.ReasoningTokens))
	s.tokenSources[c.TokenSource].Inc()
	if c.Mismatch {
		s.mismatches.Inc()
	}
	if c.Good {
		s.good.Inc()
	}
}

// The stages of request_stage_seconds, a bounded label: one family, so that
// a query or a stacked panel sets them side by side and sums the last three
// to the TTFT. (Its label is stage: phase is the scenario's.)
const (
	stageDNS = iota
	stageConnect
	stageTLS
	stageSetup
	stageSending
	stageWaiting
	stageFirstToken
	numStages
)

var stageNames = [numStages]string{"dns", "connect", "tls", "setup", "sending", "waiting", "first_token"}

// observeStages observes the stages c's request went through. A stage it
// did not go through is not observed, rather than observed as 0: a reused
// connection had no connect, which is not a connect of 0 s.
func (s *Series) observeStages(c *report.Contribution) {
	p := &c.Phases
	if p.Conn == record.ConnNone {
		return
	}
	s.connections[p.Conn].Inc()
	s.observeStage(stageDNS, p.DNS)
	s.observeStage(stageConnect, p.Connect)
	s.observeStage(stageTLS, p.TLS)
	s.stages[stageSetup].Observe(p.Setup.Seconds())
	s.observeStage(stageSending, p.Written)
	if p.FirstByte > 0 && p.Written > 0 {
		s.stages[stageWaiting].Observe((p.FirstByte - p.Written).Seconds())
	}
	if p.FirstByte > 0 && c.HasTTFT {
		s.stages[stageFirstToken].Observe((c.TTFT - p.FirstByte).Seconds())
	}
}

// observeStage observes stage st when the request went through it.
func (s *Series) observeStage(st int, d time.Duration) {
	if d > 0 {
		s.stages[st].Observe(d.Seconds())
	}
}
