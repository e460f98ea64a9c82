// Package servermetrics scrapes an inference server's own Prometheus
// endpoint during a finite run (bench, a burst), keeps every scrape, and
// turns the scrapes into AIPerf 0.13's server_metrics_export layout and into
// a summary of what the engine did over the run: its queue, its batch, its
// KV cache and its own TTFT, beside the client's.
package servermetrics

import "strings"

// Concept is what the report shows of an engine, whatever the engine calls it.
type Concept string

// The concepts, in the report's order.
const (
	Waiting Concept = "waiting_requests" // queued in the engine, not yet in a batch
	Running Concept = "running_requests" // in the batch being decoded
	KVCache Concept = "kv_cache_usage"   // fraction of the KV cache in use, 0 to 1
	TTFT    Concept = "ttft"             // the engine's time to first token histogram, seconds
)

// Concepts lists them in order.
var Concepts = []Concept{Waiting, Running, KVCache, TTFT}

// Engine is one engine's names for the concepts: the one table that maps an
// engine's metrics onto the report (docs/metrics.md shows it). A concept the
// engine does not export has no names; several names are tried in order (an
// engine that renamed a metric).
type Engine struct {
	Name   string // as the report names it
	Prefix string // every metric of the engine starts with it
	Names  map[Concept][]string
}

// Engines are the engines whose metrics the report reads.
var Engines = []Engine{
	{Name: "vllm", Prefix: "vllm:", Names: map[Concept][]string{
		Waiting: {"vllm:num_requests_waiting"},
		Running: {"vllm:num_requests_running"},
		KVCache: {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, // V1, then V0
		TTFT:    {"vllm:time_to_first_token_seconds"},
	}},
	{Name: "sglang", Prefix: "sglang:", Names: map[Concept][]string{
		Waiting: {"sglang:num_queue_reqs"},
		Running: {"sglang:num_running_reqs"},
		KVCache: {"sglang:token_usage"},
		TTFT:    {"sglang:time_to_first_token_seconds"},
	}},
	// llama-server --metrics: no KV-cache gauge (kv_cache_usage_ratio went
	// in 2025) and no latency histograms, only totals and averages.
	{Name: "llamacpp", Prefix: "llamacpp:", Names: map[Concept][]string{
		Waiting: {"llamacpp:requests_deferred"},
		Running: {"llamacpp:requests_processing"},
		KVCache: {"llamacpp:kv_cache_usage_ratio"},
	}},
	// TGI exports no KV-cache gauge and no TTFT histogram (its
	// tgi_request_queue_duration is the queue only).
	{Name: "tgi", Prefix: "tgi_", Names: map[Concept][]string{
		Waiting: {"tgi_queue_size"},
		Running: {"tgi_batch_current_size"},
	}},
}

// engineOf is the engine whose metrics the families are, or nil.
func engineOf(families map[string]family) *Engine {
	for i := range Engines {
		for name := range families {
			if strings.HasPrefix(name, Engines[i].Prefix) {
				return &Engines[i]
			}
		}
	}
	return nil
}

// find is the first of the concept's names that the families hold.
func (e *Engine) find(c Concept, families map[string]family) (string, bool) {
	for _, name := range e.Names[c] {
		if _, ok := families[name]; ok {
			return name, true
		}
	}
	return "", false
}
