// Package export writes a finished run's artifacts: the aggregate statistics
// in NVIDIA AIPerf's profile_export_aiperf.json and .csv layouts (so scripts
// written for AIPerf read ours), one JSON line per request, and a
// self-contained HTML report. It also reads such an export back as a
// baseline and compares a run with it under regression rules.
package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/inferprobe/inferprobe/prober"
	"github.com/inferprobe/inferprobe/report"
)

// Run is everything the exports describe.
type Run struct {
	Summary  report.Summary
	Requests []report.RequestRecord
	Config   Config
	// SLO is what made a request good; goodput is reported only when one is set.
	SLO report.SLO
	// Digest is the request sequence's digest.
	Digest string
	// ClientBound says why the client may have been the bottleneck; empty
	// when it was not.
	ClientBound string
	// Interrupted is set when the run was stopped before its end.
	Interrupted bool
	// Baseline is what --compare compares the run with, for the HTML
	// report's comparison; nil without one.
	Baseline *Baseline
}

// Config is the run's input configuration, in AIPerf's input_config shape.
// It never holds the API key.
type Config struct {
	Model          string
	EndpointType   string
	Streaming      bool
	URL            string
	Seed           uint64
	Concurrency    int
	RequestRate    float64
	ArrivalPattern string
	RequestCount   int
	Duration       float64 // seconds; 0 when limited by count
	// Command repeats the run (without secrets).
	Command string
}

func (c Config) inputConfig() obj {
	loadgen := obj{}
	if c.RequestRate > 0 {
		loadgen = append(loadgen, kv{"request_rate", c.RequestRate}, kv{"arrival_pattern", c.ArrivalPattern})
	}
	if c.Concurrency > 0 {
		loadgen = append(loadgen, kv{"concurrency", c.Concurrency})
	}
	if c.Duration > 0 {
		loadgen = append(loadgen, kv{"benchmark_duration", c.Duration})
	} else {
		loadgen = append(loadgen, kv{"request_count", c.RequestCount})
	}
	return obj{
		{"endpoint", obj{{"model_names", []string{c.Model}}, {"type", c.EndpointType}, {"streaming", c.Streaming}, {"url", c.URL}}},
		{"input", obj{{"random_seed", c.Seed}}},
		{"loadgen", loadgen},
		{"cli_command", c.Command},
	}
}

// metric is one entry of the AIPerf layout: a tag, a display name for the
// CSV, a unit, and either a distribution or a single value.
type metric struct {
	Tag, Name, Unit string
	Stats           *report.Stats // nil for single values
	Value           float64
}

const ms = 1e3 // seconds to milliseconds

func scaled(st report.Stats, k float64) *report.Stats {
	if st.Count == 0 {
		return nil
	}
	s := st
	for _, f := range []*float64{&s.Avg, &s.Min, &s.Max, &s.Std, &s.P1, &s.P5, &s.P10, &s.P25, &s.P50, &s.P75, &s.P90, &s.P95, &s.P99} {
		*f *= k
	}
	return &s
}

// distributions are the per-request metrics AIPerf reports with statistics,
// under its tags and display names; those without samples are left out, as
// AIPerf leaves out metrics that do not apply.
func distributions(s report.Summary) []metric {
	all := []metric{
		{Tag: "time_to_first_token", Name: "Time to First Token", Unit: "ms", Stats: scaled(s.TTFT, ms)},
		{Tag: "time_to_first_output_token", Name: "Time to First Output Token", Unit: "ms", Stats: scaled(s.TTFOT, ms)},
		{Tag: "time_to_second_token", Name: "Time to Second Token", Unit: "ms", Stats: scaled(s.TTST, ms)},
		{Tag: "request_latency", Name: "Request Latency", Unit: "ms", Stats: scaled(s.Latency, ms)},
		{Tag: "inter_token_latency", Name: "Inter Token Latency", Unit: "ms", Stats: scaled(s.ITL, ms)},
		{Tag: "inter_chunk_latency", Name: "Inter Chunk Latency", Unit: "ms", Stats: scaled(s.InterChunk, ms)},
		{Tag: "output_token_throughput_per_user", Name: "Output Token Throughput Per User", Unit: "tokens/sec/user", Stats: scaled(s.OutputTokenThroughputPerUser, 1)},
		{Tag: "output_sequence_length", Name: "Output Sequence Length", Unit: "tokens", Stats: scaled(s.OutputTokens, 1)},
		{Tag: "input_sequence_length", Name: "Input Sequence Length", Unit: "tokens", Stats: scaled(s.InputTokens, 1)},
	}
	out := all[:0]
	for _, m := range all {
		if m.Stats != nil {
			out = append(out, m)
		}
	}
	return out
}

// singles are the run-wide values, AIPerf's summary section.
func singles(r Run) []metric {
	s := r.Summary
	out := []metric{
		{Tag: "output_token_throughput", Name: "Output Token Throughput", Unit: "tokens/sec", Value: s.OutputTokenThroughput},
		{Tag: "total_token_throughput", Name: "Total Token Throughput", Unit: "tokens/sec", Value: s.TotalTokenThroughput},
		{Tag: "request_throughput", Name: "Request Throughput", Unit: "requests/sec", Value: s.RequestThroughput},
		{Tag: "request_count", Name: "Request Count", Unit: "requests", Value: float64(s.OK)},
	}
	if s.Failed > 0 {
		out = append(out, metric{Tag: "error_request_count", Name: "Error Request Count", Unit: "requests", Value: float64(s.Failed)})
	}
	if r.SLO != (report.SLO{}) {
		out = append(out,
			metric{Tag: "good_request_count", Name: "Good Request Count", Unit: "requests", Value: float64(s.Good)},
			metric{Tag: "goodput", Name: "Goodput", Unit: "requests/sec", Value: s.Goodput})
	}
	return append(out,
		metric{Tag: "benchmark_duration", Name: "Benchmark Duration", Unit: "sec", Value: s.DurationSeconds},
		metric{Tag: "total_osl", Name: "Total Output Sequence Length", Unit: "tokens", Value: s.OutputTokensTotal},
		metric{Tag: "total_isl", Name: "Total Input Sequence Length", Unit: "tokens", Value: s.InputTokensTotal},
	)
}

// statistics are a distribution's statistics under AIPerf's names, in its
// order.
func statistics(st *report.Stats) obj {
	return obj{{"avg", st.Avg},
		{"p1", st.P1}, {"p5", st.P5}, {"p10", st.P10}, {"p25", st.P25}, {"p50", st.P50},
		{"p75", st.P75}, {"p90", st.P90}, {"p95", st.P95}, {"p99", st.P99},
		{"min", st.Min}, {"max", st.Max}, {"std", st.Std}}
}

func statsObj(unit string, st *report.Stats) obj {
	return append(obj{{"unit", unit}}, statistics(st)...)
}

// isoTime is AIPerf's start_time/end_time form, with the zone spelled out.
func isoTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000-07:00")
}

// errorGroup is one line of error_summary: requests that failed for the same
// reason with the same status.
type errorGroup struct {
	Reason  prober.Reason
	Status  int
	Message string // the first such request's error
	Count   int
}

func errorGroups(reqs []report.RequestRecord) []errorGroup {
	var groups []errorGroup
	index := map[[2]string]int{}
	for _, q := range reqs {
		if q.Outcome != prober.OutcomeError {
			continue
		}
		k := [2]string{string(q.Reason), fmt.Sprint(q.Status)}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, errorGroup{Reason: q.Reason, Status: q.Status, Message: q.Err})
		}
		groups[i].Count++
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Count > groups[j].Count })
	return groups
}

// JSON returns profile_export_inferprobe.json: AIPerf's
// profile_export_aiperf.json layout (metric tag → unit and statistics, then
// the summary, status, error_summary and input_config), plus an "inferprobe"
// object with what AIPerf does not have.
func JSON(r Run) ([]byte, error) {
	var doc obj
	for _, m := range distributions(r.Summary) {
		doc = append(doc, kv{m.Tag, statsObj(m.Unit, m.Stats)})
	}
	for _, m := range singles(r) {
		doc = append(doc, kv{m.Tag, obj{{"unit", m.Unit}, {"avg", m.Value}}})
	}
	if r.SLO == (report.SLO{}) {
		doc = append(doc, kv{"goodput", nil})
	}
	errs := []obj{} // [] rather than null without errors, as AIPerf writes it
	for _, g := range errorGroups(r.Requests) {
		errs = append(errs, obj{{"error_details", obj{{"code", g.Status}, {"type", string(g.Reason)}, {"message", g.Message}}}, {"count", g.Count}})
	}
	reasons := obj{}
	for _, reason := range sortedReasons(r.Summary.Errors) {
		reasons = append(reasons, kv{string(reason), r.Summary.Errors[reason]})
	}
	extras := obj{
		{"sequence_digest", r.Digest},
		{"client_saturated", r.ClientBound != ""},
		{"client_saturation_reason", r.ClientBound},
		{"errors_by_reason", reasons},
		{"cancelled_request_count", r.Summary.Cancelled},
		{"token_counts", tokenSource(r.Summary)},
		{"output_length_mismatches", r.Summary.OutputLengthMismatches},
		{"output_length_note", mismatchNote(r.Summary)},
		{"connection_retries", r.Summary.ConnectionRetries},
		{"keep_alive_withheld", r.Summary.KeepAliveWithheld},
		{"compressed_responses", r.Summary.CompressedResponses},
		{"connection_note", connectionNote(r.Summary)},
	}
	if lag := scaled(r.Summary.ScheduleLag, ms); lag != nil {
		extras = append(extras, kv{"schedule_lag", statsObj("ms", lag)})
	}
	doc = append(doc,
		kv{"was_cancelled", r.Interrupted},
		kv{"start_time", isoTime(r.Summary.Start)},
		kv{"end_time", isoTime(r.Summary.End)},
		kv{"error_summary", errs},
		kv{"input_config", r.Config.inputConfig()},
		kv{"inferprobe", extras},
	)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mismatchNote says how many successful requests came back with another
// output length than they pinned, and what to do about it; "" when none did.
func mismatchNote(s report.Summary) string {
	if s.OutputLengthMismatches == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d successful requests came back with another output length than they pinned (min_tokens, ignore_eos): "+
		"the server did not honour those options, so output lengths and token throughput describe what it chose to generate. "+
		"Check that the server supports min_tokens and ignore_eos (some take them under another name, or need a start-up option) "+
		"and send what it takes with --extra-inputs",
		s.OutputLengthMismatches, s.OK)
}

// connectionNote says how many requests were sent again on a fresh
// connection, how many were kept off reused ones and how many replies came
// compressed, and what each means; "" when none of that happened.
func connectionNote(s report.Summary) string {
	var notes []string
	if n := s.ConnectionRetries; n > 0 {
		notes = append(notes, fmt.Sprintf("%d requests were sent again on a fresh connection, as the reused connection they first went out on "+
			"had been closed by the server and provably never carried them (each is counted once); a server that closes after each response "+
			"is better probed with --no-keep-alive", n))
	}
	if n := s.KeepAliveWithheld; n > 0 {
		notes = append(notes, fmt.Sprintf("%d requests went out on a connection of their own although keep-alive was on, as the server "+
			"closes connections right after its responses (or had not yet been seen keeping one open); --no-keep-alive says so", n))
	}
	if len(s.CompressedResponses) > 0 {
		encs := make([]string, 0, len(s.CompressedResponses))
		for enc := range s.CompressedResponses {
			encs = append(encs, enc)
		}
		sort.Strings(encs)
		for i, enc := range encs {
			encs[i] = fmt.Sprintf("%d %s", s.CompressedResponses[enc], enc)
		}
		notes = append(notes, fmt.Sprintf("replies came compressed although none was asked for (%s): they were decoded and timed at the reads "+
			"of their compressed bytes, but a compressor between server and client may buffer events; turn it off", strings.Join(encs, ", ")))
	}
	return strings.Join(notes, "; ")
}

func tokenSource(s report.Summary) string {
	switch {
	case s.TokensFromChunks:
		return "chunks: the server sent no usage and no tokenizer was configured; one token per content chunk"
	case s.TokensFromTokenizer:
		return "tokenizer: the server sent no usage; output counted with the configured tokenizer"
	}
	return "usage"
}

func sortedReasons(m map[prober.Reason]int) []prober.Reason {
	out := make([]prober.Reason, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// kv and obj encode a JSON object with its keys in the order given, as
// AIPerf's files have them.
type kv struct {
	k string
	v any
}

type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e.v); err != nil {
			return nil, fmt.Errorf("%s: %w", e.k, err)
		}
		b.Write(bytes.TrimSuffix(v.Bytes(), []byte("\n")))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
