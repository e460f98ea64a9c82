// Package export writes a finished run's artifacts in NVIDIA AIPerf 0.13's
// schema, so that AIPerf's own tools (aiperf plot) and scripts written for
// AIPerf read them: profile_export_aiperf.json and .csv, one JSON line per
// request (profile_export.jsonl), the payloads sent (inputs.json), the
// console report and the run's log; and a self-contained HTML report. It also reads such an export back as a
// baseline and compares a run with it under regression rules.
package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/version"

	"github.com/inferprobe/inferprobe/gputelemetry"
	"github.com/inferprobe/inferprobe/record"
	"github.com/inferprobe/inferprobe/report"
	"github.com/inferprobe/inferprobe/scenarios"
	"github.com/inferprobe/inferprobe/servermetrics"
	"github.com/inferprobe/inferprobe/stats"
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
	// GraceExpired says the grace period ended with requests still in
	// flight; GraceCut is how many there were, and were cut.
	GraceExpired bool
	GraceCut     int
	// Baseline is what --compare compares the run with, for the HTML
	// report's comparison; nil without one.
	Baseline *Baseline
	// GPUTelemetry says GPU telemetry was on for the run.
	GPUTelemetry bool
	// GPUEndpoints is what the DCGM exporter endpoints of --gpu-telemetry
	// URL said over the run; nil when none was given.
	GPUEndpoints *gputelemetry.Collection
	// ServerMetrics is what the server's own metrics said over the run; nil
	// when they were not read (--no-server-metrics, a daemon without them).
	ServerMetrics *servermetrics.Collection
	// ConsoleText is what the console showed of the run, and Log what the
	// run logged, for profile_export_console.txt and logs/.
	ConsoleText, Log []byte
}

// Config is the run's input configuration, for AIPerf's input_config and
// run_info. It never holds the API key.
type Config struct {
	Model        string
	EndpointType string
	Streaming    bool
	// URLs are the API bases requests went to: one, or bench's several
	// --url, which sessions took in turn.
	URLs []string
	// ExtraInputs are the parameters merged into every request body.
	ExtraInputs map[string]any
	Seed        uint64
	// Dataset is AIPerf's dataset type: synthetic, with Entries, ISL and
	// OSL, or file, with DatasetPath and DatasetFormat (AIPerf's name of
	// the format: mooncake_trace, single_turn, …).
	Dataset                    string
	DatasetPath, DatasetFormat string
	Entries                    int
	ISLMean, ISLStd            float64
	OSLMean, OSLStd            float64
	// Tokenizer is --tokenizer as given (a path or a model name), and
	// TokenizerRevision its revision when one was given.
	Tokenizer, TokenizerRevision string
	Concurrency                  int
	RequestRate                  float64
	// Users, when > 0, makes RequestRate a user-centric rate shared by
	// that many users.
	Users int
	// PrefillConcurrency caps the requests waiting for their first token;
	// 0 for none.
	PrefillConcurrency int
	ArrivalPattern     string
	// FixedSchedule is set when the run replays its dataset's timestamps.
	FixedSchedule bool
	RequestCount  int
	Duration      float64 // seconds; 0 when limited by count
	ArtifactDir   string
	// RateSeries is the --request-rate-series points the rate followed,
	// instead of RequestRate.
	RateSeries []RatePoint
	// The warmup: its length (requests, sessions, seconds: whichever ends
	// first), its grace period (nil: it waits for every request), and its
	// own load (nil: the run's).
	WarmupRequests, WarmupSessions int
	WarmupDuration                 float64
	WarmupGrace                    *float64
	WarmupLoad                     *Load
	// Command repeats the run (without secrets).
	Command string
	// Trial is the run's index (from 0) among the runs of a multi-run, and
	// RunLabel its label there (run_0001); "" for a single run.
	Trial    int
	RunLabel string
	// ServerMetrics is how the server's metrics were to be read.
	ServerMetrics ServerMetricsConfig
	// AutoPlot and PlotRequired are --auto-plot and --plot-required.
	AutoPlot, PlotRequired bool
	// SliceDuration is --slice-duration in seconds: the run's metrics are
	// also written per window of that length; 0 for none.
	SliceDuration float64
}

// ServerMetricsConfig is AIPerf's server_metrics input: on or off, the
// URLs given beside the discovered one, and the formats written.
type ServerMetricsConfig struct {
	Enabled bool
	URLs    []string
	Formats []string
}

// SetDataset sets c's dataset as AIPerf's input_config describes it: synthetic
// with its lengths and, as entries, c.RequestCount (so set that first), or a
// file by AIPerf's name of its format.
func (c *Config) SetDataset(d scenarios.Dataset) {
	switch {
	case d.Synthetic != nil:
		c.Dataset = "synthetic"
		c.ISLMean, c.ISLStd = d.Synthetic.InputTokens.Mean, d.Synthetic.InputTokens.Stddev
		c.OSLMean, c.OSLStd = d.Synthetic.OutputTokens.Mean, d.Synthetic.OutputTokens.Stddev
		c.Entries = c.RequestCount
	case d.File != nil:
		c.Dataset, c.DatasetPath, c.DatasetFormat = "file", d.File.Path, scenarios.AIPerfDatasetType(d.File.Format)
	default:
		c.Dataset = "custom"
	}
}

// RatePoint is one point of AIPerf's request-rate series.
type RatePoint struct {
	TimeS float64 `json:"time_s"`
	QPS   float64 `json:"qps"`
}

// Load is a phase's load: AIPerf's phase type (concurrency, or a rate's
// arrival pattern), its concurrency (a rate's cap; 0: none) and its rate.
type Load struct {
	Type               string
	Concurrency        int
	Rate               float64
	PrefillConcurrency int
}

// phaseType is AIPerf's phase type for the load: a replay's
// fixed_schedule, the arrival pattern of a rate, or concurrency.
func (c Config) phaseType() string {
	switch {
	case c.FixedSchedule:
		return "fixed_schedule"
	case c.Users > 0:
		return "user_centric"
	case c.RequestRate > 0 || len(c.RateSeries) > 0:
		return c.ArrivalPattern
	}
	return "concurrency"
}

// warmupPhase is AIPerf's warmup phase: its limits, then its load — its
// own, or the run's (a rate series' warmup is a closed loop, as AIPerf's).
func (c Config) warmupPhase() obj {
	load := Load{Type: c.phaseType(), Concurrency: c.Concurrency, Rate: c.RequestRate, PrefillConcurrency: c.PrefillConcurrency}
	if len(c.RateSeries) > 0 {
		load = Load{Type: "concurrency", Concurrency: max(c.Concurrency, 1)}
	}
	if c.WarmupLoad != nil {
		load = *c.WarmupLoad
	}
	w := obj{{"name", "warmup"}, {"kind", "warmup"}, {"type", load.Type}}
	if c.WarmupRequests > 0 {
		w = append(w, kv{"requests", c.WarmupRequests})
	}
	if c.WarmupSessions > 0 {
		w = append(w, kv{"sessions", c.WarmupSessions})
	}
	if c.WarmupDuration > 0 {
		w = append(w, kv{"duration", c.WarmupDuration})
	}
	if c.WarmupGrace != nil {
		w = append(w, kv{"grace_period", *c.WarmupGrace})
	}
	if load.Concurrency > 0 {
		w = append(w, kv{"concurrency", load.Concurrency})
	}
	if load.PrefillConcurrency > 0 {
		w = append(w, kv{"prefill_concurrency", load.PrefillConcurrency})
	}
	if load.Rate > 0 {
		w = append(w, kv{"rate", load.Rate})
	}
	return w
}

// inputConfig is AIPerf 0.13's input_config of r.
func (r Run) inputConfig() obj {
	gpu := obj{{"enabled", r.GPUTelemetry || r.GPUEndpoints != nil}}
	if c := r.GPUEndpoints; c != nil {
		gpu = append(gpu, kv{"urls", nonNil(c.Configured)}, kv{"collector", "dcgm"}, kv{"mode", "summary"})
	}
	return r.Config.inputConfig(r.SLO, gpu)
}

// inputConfig is AIPerf 0.13's input_config (its BenchmarkConfig), keys in
// its order, with gpu its gpu_telemetry; what inferprobe does not have
// (OTel, MLflow) is written as AIPerf writes it off.
func (c Config) inputConfig(slo report.SLO, gpu obj) obj {
	endpoint := obj{{"urls", c.URLs}, {"type", c.EndpointType}, {"streaming", c.Streaming}}
	if len(c.ExtraInputs) > 0 {
		endpoint = append(endpoint, kv{"extra", c.ExtraInputs})
	}
	dataset := obj{{"name", "main"}, {"type", c.Dataset}}
	if c.Dataset == "file" {
		dataset = append(dataset, kv{"path", c.DatasetPath}, kv{"format", c.DatasetFormat})
	}
	if c.Entries > 0 {
		dataset = append(dataset, kv{"entries", c.Entries})
	}
	dataset = append(dataset, kv{"random_seed", c.Seed})
	if c.Dataset == "synthetic" {
		prompts := obj{{"isl", obj{{"mean", c.ISLMean}, {"stddev", c.ISLStd}}}}
		if c.OSLMean > 0 { // none: no output limit was asked for, as AIPerf without --osl
			prompts = append(prompts, kv{"osl", obj{{"mean", c.OSLMean}, {"stddev", c.OSLStd}}})
		}
		dataset = append(dataset, kv{"prompts", prompts})
	}
	var phases []obj
	if c.WarmupRequests > 0 || c.WarmupSessions > 0 || c.WarmupDuration > 0 {
		phases = append(phases, c.warmupPhase())
	}
	profiling := obj{{"name", "profiling"}, {"kind", "profiling"}, {"type", c.phaseType()}}
	if c.Duration > 0 {
		profiling = append(profiling, kv{"duration", c.Duration})
	} else {
		profiling = append(profiling, kv{"requests", c.RequestCount})
	}
	if c.Concurrency > 0 {
		profiling = append(profiling, kv{"concurrency", c.Concurrency})
	}
	if c.PrefillConcurrency > 0 {
		profiling = append(profiling, kv{"prefill_concurrency", c.PrefillConcurrency})
	}
	if c.RequestRate > 0 {
		profiling = append(profiling, kv{"rate", c.RequestRate})
	}
	if c.Users > 0 {
		profiling = append(profiling, kv{"users", c.Users})
	}
	if len(c.RateSeries) > 0 {
		profiling = append(profiling, kv{"rate_series", obj{{"points", c.RateSeries}}})
	}
	phases = append(phases, profiling)
	out := obj{
		{"models", obj{{"items", []obj{{{"name", c.Model}}}}}},
		{"endpoint", endpoint},
		{"datasets", []obj{dataset}},
		{"phases", phases},
		{"artifacts", obj{{"dir", c.ArtifactDir}, {"auto_plot", c.AutoPlot}, {"plot_required", c.PlotRequired}}},
	}
	if slos := sloConfig(slo); len(slos) > 0 {
		out = append(out, kv{"slos", slos})
	}
	if c.Tokenizer != "" {
		tok := obj{{"name", c.Tokenizer}}
		if c.TokenizerRevision != "" {
			tok = append(tok, kv{"revision", c.TokenizerRevision})
		}
		out = append(out, kv{"tokenizer", tok})
	}
	return append(out,
		kv{"gpu_telemetry", gpu},
		kv{"server_metrics", obj{{"enabled", c.ServerMetrics.Enabled}, {"urls", nonNil(c.ServerMetrics.URLs)}, {"formats", nonNil(c.ServerMetrics.Formats)}}},
		kv{"network_latency", obj{{"enabled", false}}},
		kv{"otel", obj{}}, kv{"mlflow", obj{}}, kv{"wandb", obj{}},
		kv{"runtime", obj{{"ui", "none"}}},
	)
}

// sloConfig is AIPerf's slos: metric tag → threshold in the metric's unit.
func sloConfig(s report.SLO) obj {
	var out obj
	add := func(tag string, v float64) {
		if v > 0 {
			out = append(out, kv{tag, v})
		}
	}
	add("time_to_first_token", s.TTFT.Seconds()*ms)
	add("time_to_first_output_token", s.TTFOT.Seconds()*ms)
	add("inter_token_latency", s.ITL.Seconds()*ms)
	add("request_latency", s.RequestLatency.Seconds()*ms)
	add("output_token_throughput_per_user", s.MinTokensPerUser)
	return out
}

// runInfo is AIPerf's run_info: the run's identity, its seed, its trial
// and, in a multi-run, its label, and the command that repeats it.
func (c Config) runInfo(id string) obj {
	info := obj{{"benchmark_id", id}, {"random_seed", c.Seed}, {"trial", c.Trial}}
	if c.RunLabel != "" {
		info = append(info, kv{"run_label", c.RunLabel})
	}
	return append(info, kv{"cli_command", c.Command})
}

// metric is one metric of AIPerf's layout: its tag, its display name
// (AIPerf's header), a unit, and either a distribution or a single value.
type metric struct {
	Tag, Name, Unit string
	Stats           *stats.Stats // nil for single values
	Value           float64
	trace           bool // an HTTP trace metric (distributionTable)
}

const ms = 1e3 // seconds to milliseconds

func scaled(st stats.Stats, k float64) *stats.Stats {
	if st.Count == 0 {
		return nil
	}
	s := st
	for _, f := range []*float64{&s.Avg, &s.Min, &s.Max, &s.Std, &s.Sum, &s.P1, &s.P5, &s.P10, &s.P25, &s.P50, &s.P75, &s.P90, &s.P95, &s.P99} {
		*f *= k
	}
	if st.Intervals != nil {
		iv := *st.Intervals
		for _, i := range []*stats.Interval{&iv.Avg, &iv.P1, &iv.P5, &iv.P10, &iv.P25, &iv.P50, &iv.P75, &iv.P90, &iv.P95, &iv.P99} {
			*i = i.Scaled(k)
		}
		s.Intervals = &iv
	}
	return &s
}

// distributionTable is every per-request metric AIPerf reports with
// statistics, under its tag and header, in its order, with the summary's
// samples of it and their scale to AIPerf's unit. trace marks AIPerf's HTTP
// trace metrics, which its console shows only with --show-trace-timing.
var distributionTable = []struct {
	tag, name, unit string
	scale           float64
	of              func(*report.Summary) stats.Stats
	trace           bool
}{
	{"time_to_first_token", "Time to First Token", "ms", ms, func(s *report.Summary) stats.Stats { return s.TTFT }, false},
	{"time_to_first_output_token", "Time to First Output Token", "ms", ms, func(s *report.Summary) stats.Stats { return s.TTFOT }, false},
	{"time_to_second_token", "Time to Second Token", "ms", ms, func(s *report.Summary) stats.Stats { return s.TTST }, false},
	{"request_latency", "Request Latency", "ms", ms, func(s *report.Summary) stats.Stats { return s.Latency }, false},
	{"decode_duration", "Decode Duration", "ms", ms, func(s *report.Summary) stats.Stats { return s.DecodeDuration }, false},
	{"inter_token_latency", "Inter Token Latency", "ms", ms, func(s *report.Summary) stats.Stats { return s.ITL }, false},
	{"inter_chunk_latency", "Inter Chunk Latency", "ms", ms, func(s *report.Summary) stats.Stats { return s.InterChunk }, false},
	{"output_token_throughput_per_user", "Output Token Throughput Per User", "tokens/sec/user", 1, func(s *report.Summary) stats.Stats { return s.OutputTokenThroughputPerUser }, false},
	{"e2e_output_token_throughput", "E2E Output Token Throughput", "tokens/sec/user", 1, func(s *report.Summary) stats.Stats { return s.E2EOutputThroughput }, false},
	{"prefill_throughput_per_user", "Prefill Throughput Per User", "tokens/sec/user", 1, func(s *report.Summary) stats.Stats { return s.PrefillThroughputPerUser }, false},
	{"output_sequence_length", "Output Sequence Length", "tokens", 1, func(s *report.Summary) stats.Stats { return s.OutputTokens }, false},
	{"input_sequence_length", "Input Sequence Length", "tokens", 1, func(s *report.Summary) stats.Stats { return s.InputTokens }, false},
	{"output_token_count", "Output Token Count", "tokens", 1, func(s *report.Summary) stats.Stats { return s.OutputTokenCount }, false},
	{"reasoning_token_count", "Reasoning Token Count", "tokens", 1, func(s *report.Summary) stats.Stats { return s.ReasoningTokens }, false},
	{"usage_prompt_tokens", "Usage Prompt Tokens", "tokens", 1, func(s *report.Summary) stats.Stats { return s.UsagePromptTokens }, false},
	{"usage_completion_tokens", "Usage Completion Tokens", "tokens", 1, func(s *report.Summary) stats.Stats { return s.UsageCompletionTokens }, false},
	{"usage_total_tokens", "Usage Total Tokens", "tokens", 1, func(s *report.Summary) stats.Stats { return s.UsageTotalTokens }, false},
	{"usage_prompt_tokens_diff_pct", "Usage Prompt Diff %", "%", 1, func(s *report.Summary) stats.Stats { return s.UsagePromptDiffPct }, false},
	{"usage_completion_tokens_diff_pct", "Usage Completion Diff %", "%", 1, func(s *report.Summary) stats.Stats { return s.UsageCompletionDiffPct }, false},
	{"osl_mismatch_diff_pct", "OSL Mismatch Diff %", "%", 1, func(s *report.Summary) stats.Stats { return s.OSLMismatchDiffPct }, false},
	{"num_images", "Number of Images", "images", 1, func(s *report.Summary) stats.Stats { return s.NumImages }, false},
	{"image_throughput", "Image Throughput", "images/sec", 1, func(s *report.Summary) stats.Stats { return s.ImageThroughput }, false},
	{"image_latency", "Image Latency", "ms/image", ms, func(s *report.Summary) stats.Stats { return s.ImageLatency }, false},
	{"audio_duration", "Audio Duration", "sec", 1, func(s *report.Summary) stats.Stats { return s.AudioDuration }, false},
	{"rtfx", "Inverse Real-Time Factor (RTFx)", "ratio", 1, func(s *report.Summary) stats.Stats { return s.RTFx }, false},
	{"credit_to_start_latency", "Credit-to-Start Latency", "ms", ms, func(s *report.Summary) stats.Stats { return s.CreditToStart }, false},
	{"effective_latency", "Effective Latency (CO-aware)", "ms", ms, func(s *report.Summary) stats.Stats { return s.EffectiveLatency }, false},
	{"http_req_blocked", "HTTP Blocked", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Blocked }, true},
	{"http_req_dns_lookup", "HTTP DNS Lookup", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.DNSLookup }, true},
	{"http_req_connecting", "HTTP Connecting", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Connecting }, true},
	{"http_req_connection_reused", "HTTP Connection Reused", "ratio", 1, func(s *report.Summary) stats.Stats { return s.HTTP.Reused }, true},
	{"http_req_connection_overhead", "HTTP Connection Overhead", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.ConnectionOverhead }, true},
	{"http_req_sending", "HTTP Sending", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Sending }, true},
	{"http_req_waiting", "HTTP Waiting (TTFB)", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Waiting }, true},
	{"http_req_receiving", "HTTP Receiving", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Receiving }, true},
	{"http_req_duration", "HTTP Duration (excl. conn)", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Duration }, true},
	{"http_req_total", "HTTP Total Time", "ms", ms, func(s *report.Summary) stats.Stats { return s.HTTP.Total }, true},
}

// perRequest says tag is a per-request metric, one of distributionTable.
func perRequest(tag string) bool {
	for _, d := range distributionTable {
		if d.tag == tag {
			return true
		}
	}
	return false
}

// distributions are the run's per-request metrics (distributionTable);
// those without samples are left out, as AIPerf leaves out metrics that do
// not apply.
func distributions(s report.Summary) []metric {
	var out []metric
	for _, d := range distributionTable {
		if st := scaled(d.of(&s), d.scale); st != nil {
			out = append(out, metric{Tag: d.tag, Name: d.name, Unit: d.unit, Stats: st, trace: d.trace})
		}
	}
	return out
}

// singles are the run-wide values, AIPerf's summary section; like AIPerf,
// those that do not apply (goodput without an SLO, usage totals without
// usage) are left out.
func singles(r Run) []metric {
	s := r.Summary
	out := []metric{
		{Tag: "request_throughput", Name: "Request Throughput", Unit: "requests/sec", Value: s.RequestThroughput},
		{Tag: "request_count", Name: "Request Count", Unit: "requests", Value: float64(s.OK)},
		{Tag: "output_token_throughput", Name: "Output Token Throughput", Unit: "tokens/sec", Value: s.OutputTokenThroughput},
	}
	if r.SLO != (report.SLO{}) {
		out = append(out,
			metric{Tag: "goodput", Name: "Goodput", Unit: "requests/sec", Value: s.Goodput},
			metric{Tag: "good_request_count", Name: "Good Request Count", Unit: "requests", Value: float64(s.Good)})
		if s.OK+s.Failed > 0 {
			out = append(out, metric{Tag: "good_request_fraction", Name: "GoodRequestFraction", Unit: "ratio", Value: float64(s.Good) / float64(s.OK+s.Failed)})
		}
	}
	out = append(out, metric{Tag: "total_output_tokens", Name: "Total Output Tokens", Unit: "tokens", Value: s.OutputTokenCount.Sum})
	if s.ReasoningTokensTotal > 0 {
		out = append(out, metric{Tag: "total_reasoning_tokens", Name: "Total Reasoning Tokens", Unit: "tokens", Value: s.ReasoningTokensTotal})
	}
	out = append(out,
		metric{Tag: "benchmark_duration", Name: "Benchmark Duration", Unit: "sec", Value: s.DurationSeconds},
		metric{Tag: "total_isl", Name: "Total Input Sequence Length", Unit: "tokens", Value: s.InputTokensTotal},
		metric{Tag: "total_osl", Name: "Total Output Sequence Length", Unit: "tokens", Value: s.OutputTokensTotal})
	if s.Failed > 0 {
		out = append(out, metric{Tag: "error_request_count", Name: "Error Request Count", Unit: "requests", Value: float64(s.Failed)})
	}
	if s.OSLMismatchDiffPct.Count > 0 {
		out = append(out, metric{Tag: "osl_mismatch_count", Name: "OSL Mismatch Count", Unit: "requests", Value: float64(s.OSLMismatches)})
	}
	if s.UsagePromptDiffPct.Count+s.UsageCompletionDiffPct.Count > 0 {
		out = append(out, metric{Tag: "usage_discrepancy_count", Name: "Usage Discrepancy Count", Unit: "requests", Value: float64(s.UsageDiscrepancies)})
	}
	out = append(out,
		metric{Tag: "request_error_rate", Name: "Request Error Rate", Unit: "%", Value: s.RequestErrorRate},
		metric{Tag: "completed_request_count", Name: "Completed Requests (Success + Error)", Unit: "requests", Value: float64(s.OK + s.Failed)})
	for _, u := range []struct {
		tag, name string
		st        stats.Stats
	}{
		{"total_usage_total_tokens", "Total Usage Total Tokens", s.UsageTotalTokens},
		{"total_usage_prompt_tokens", "Total Usage Prompt Tokens", s.UsagePromptTokens},
		{"total_usage_completion_tokens", "Total Usage Completion Tokens", s.UsageCompletionTokens},
	} {
		if u.st.Count > 0 {
			out = append(out, metric{Tag: u.tag, Name: u.name, Unit: "tokens", Value: u.st.Sum})
		}
	}
	return append(out,
		metric{Tag: "total_token_throughput", Name: "Total Token Throughput", Unit: "tokens/sec", Value: s.TotalTokenThroughput},
		metric{Tag: "input_token_throughput", Name: "Input Token Throughput", Unit: "tokens/sec", Value: s.InputTokenThroughput})
}

// declaredOrder are the metrics AIPerf's JsonExportData declares, in its
// order: they come first in profile_export_aiperf.json, before
// telemetry_data and input_config; every other metric follows end_time, in
// extraOrder (the order AIPerf computes them in).
var declaredOrder = []string{
	"request_throughput", "request_latency", "request_count", "time_to_first_token", "time_to_second_token",
	"inter_token_latency", "output_token_throughput", "output_token_throughput_per_user", "output_sequence_length",
	"input_sequence_length", "goodput", "good_request_count", "output_token_count", "reasoning_token_count",
	"inter_chunk_latency", "total_output_tokens", "total_reasoning_tokens", "benchmark_duration", "total_isl",
	"total_osl", "error_request_count",
}

var extraOrder = []string{
	"audio_duration", "http_req_receiving", "http_req_blocked", "usage_total_tokens", "http_req_connecting", "http_req_dns_lookup",
	"usage_prompt_tokens", "http_req_sending", "http_req_waiting", "http_req_duration", "usage_completion_tokens",
	"http_req_connection_reused", "time_to_first_output_token", "num_images", "rtfx", "image_latency", "image_throughput", "decode_duration", "prefill_throughput_per_user",
	"osl_mismatch_diff_pct", "e2e_output_token_throughput", "http_req_connection_overhead", "usage_prompt_tokens_diff_pct",
	"http_req_total", "usage_completion_tokens_diff_pct", "osl_mismatch_count", "usage_discrepancy_count", "request_error_rate",
	"completed_request_count", "total_usage_total_tokens", "total_usage_prompt_tokens", "good_request_fraction",
	"total_usage_completion_tokens", "total_token_throughput", "input_token_throughput", "credit_to_start_latency",
	"effective_latency",
}

// ordered returns r's metrics by tag, in the order of tags.
func ordered(r Run, tags []string) []metric {
	byTag := map[string]metric{}
	for _, m := range append(distributions(r.Summary), singles(r)...) {
		byTag[m.Tag] = m
	}
	var out []metric
	for _, t := range tags {
		if m, ok := byTag[t]; ok {
			out = append(out, m)
		}
	}
	return out
}

// statistics are a distribution's statistics under AIPerf's names, in its
// order.
func statistics(st *stats.Stats) obj {
	return obj{{"avg", st.Avg},
		{"p1", st.P1}, {"p5", st.P5}, {"p10", st.P10}, {"p25", st.P25}, {"p50", st.P50},
		{"p75", st.P75}, {"p90", st.P90}, {"p95", st.P95}, {"p99", st.P99},
		{"min", st.Min}, {"max", st.Max}, {"std", st.Std}, {"count", float64(st.Count)}, {"sum", st.Sum}}
}

func statsObj(unit string, st *stats.Stats) obj {
	s := append(obj{{"unit", unit}}, statistics(st)...)
	s[len(s)-2].v = st.Count // an integer in AIPerf's file
	return s
}

func (m metric) json() obj {
	if m.Stats != nil {
		return statsObj(m.Unit, m.Stats)
	}
	return obj{{"unit", m.Unit}, {"avg", m.Value}}
}

// isoTime is AIPerf's start_time/end_time: Python's isoformat of a local
// time, without a zone.
func isoTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Local().Format("2006-01-02T15:04:05.000000")
}

// errorGroup is one line of error_summary: requests that failed for the same
// reason with the same status.
type errorGroup struct {
	Reason  record.Reason
	Status  int
	Message string // the first such request's error
	Count   int
}

func errorGroups(reqs []report.RequestRecord) []errorGroup {
	var groups []errorGroup
	index := map[[2]string]int{}
	for _, q := range reqs {
		if q.Outcome != record.OutcomeError {
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

// Schema of the AIPerf files inferprobe writes.
const (
	aiperfSchemaVersion = "1.4"
	aiperfVersion       = "0.13.0"
)

// JSON returns profile_export_aiperf.json in AIPerf 0.13's schema (schema
// version 1.4): the metrics AIPerf's export model declares, telemetry_data,
// input_config, run_info, the run's status and error_summary, the other
// metrics, and then an "inferprobe" object with what AIPerf does not have.
func JSON(r Run) ([]byte, error) {
	id := r.benchmarkID()
	doc := obj{{"schema_version", aiperfSchemaVersion}, {"aiperf_version", aiperfVersion}, {"benchmark_id", id}}
	for _, m := range ordered(r, declaredOrder) {
		doc = append(doc, kv{m.Tag, m.json()})
	}
	errs := []obj{} // [] rather than null without errors, as AIPerf writes it
	for _, g := range errorGroups(r.Requests) {
		errs = append(errs, obj{{"error_details", obj{{"code", g.Status}, {"type", string(g.Reason)}, {"message", g.Message}}}, {"count", g.Count}})
	}
	start, end := isoTime(r.Summary.Start), isoTime(r.Summary.End)
	doc = append(doc,
		kv{"telemetry_data", r.telemetryData()},
		kv{"input_config", r.inputConfig()},
		kv{"run_info", r.Config.runInfo(id)},
		kv{"was_cancelled", r.Interrupted},
		kv{"is_complete", !r.Interrupted},
		kv{"error_summary", errs},
		kv{"start_time", start},
		kv{"end_time", end},
	)
	for _, m := range ordered(r, extraOrder) {
		doc = append(doc, kv{m.Tag, m.json()})
	}
	doc = append(doc, kv{"inferprobe", r.extras()})
	return indentedJSON(doc)
}

// extras are what inferprobe reports beyond AIPerf, under its own key.
func (r Run) extras() obj {
	reasons := obj{}
	for _, reason := range sortedReasons(r.Summary.Errors) {
		reasons = append(reasons, kv{string(reason), r.Summary.Errors[reason]})
	}
	extras := obj{
		{"version", version.Version},
		{"sequence_digest", r.Digest},
		{"client_saturated", r.ClientBound != ""},
		{"client_saturation_reason", r.ClientBound},
		{"grace_period_expired", r.GraceExpired},
		{"grace_period_cut_requests", r.GraceCut},
		{"client_paused_requests", r.Summary.ClientPaused},
		{"client_lost_requests", r.Summary.Lost},
		{"errors_by_reason", reasons},
		{"cancelled_request_count", r.Summary.Cancelled},
		{"token_counts", tokenSource(r.Summary)},
		{"output_length_mismatches", r.Summary.OutputLengthMismatches},
		{"output_length_note", mismatchNote(r.Summary)},
		{"requests_without_details", r.Summary.DetailsDropped},
		{"connection_retries", r.Summary.ConnectionRetries},
		{"keep_alive_withheld", r.Summary.KeepAliveWithheld},
		{"compressed_responses", r.Summary.CompressedResponses},
		{"connection_note", connectionNote(r.Summary)},
	}
	if lag := scaled(r.Summary.ScheduleLag, ms); lag != nil {
		extras = append(extras, kv{"schedule_lag", statsObj("ms", lag)})
	}
	if wait := scaled(r.Summary.CapWait, ms); wait != nil {
		extras = append(extras, kv{"concurrency_wait", statsObj("ms", wait)})
	}
	if r.confidenceLevel() > 0 {
		extras = append(extras, kv{"confidence_intervals", r.intervalsJSON()})
	}
	if sr := r.ServerSide(); sr != nil {
		extras = append(extras, kv{"server_metrics", sr})
	}
	return extras
}

// benchmarkID is AIPerf's 12-hex-digit run id: here from the sequence and
// the start, so that the files of one run agree and two runs differ.
func (r Run) benchmarkID() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", r.Digest, r.Summary.Start.UnixNano()))
	return hex.EncodeToString(sum[:6])
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
			"closes connections right after its responses; --no-keep-alive says so", n))
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

// tokenSource says where the run's token counts came from; "none" when no
// request succeeded, which counted nothing.
func tokenSource(s report.Summary) string {
	switch {
	case s.OK == 0:
		return "none: no request succeeded, so no tokens were counted"
	case s.TokensFromChunks:
		return "chunks: the server sent no usage and no tokenizer was configured; one token per content chunk"
	case s.TokensFromTokenizer:
		return "tokenizer: the server sent no usage; output counted with the configured tokenizer"
	}
	return "usage"
}

func sortedReasons(m map[record.Reason]int) []record.Reason {
	out := make([]record.Reason, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// kv and obj encode a JSON object with its keys in the order given, as
// AIPerf's files have them.
// indentedJSON is doc as AIPerf writes its JSON files: indented by two
// spaces, HTML unescaped, and without a newline at the end.
func indentedJSON(doc obj) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

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
