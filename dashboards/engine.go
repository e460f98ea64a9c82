package dashboards

import (
	"strings"

	"github.com/inferprobe/inferprobe/servermetrics"
)

// engineRow joins the engines' own series with inferprobe's by target: the
// queue, the batch and the KV cache the engine reports, and its TTFT beside
// the client's. The engines' metric names come from servermetrics.Engines,
// the one table of them; an engine's scrape job must give its series the
// target label of inferprobe's target (docs/metrics.md, dashboards/README.md).
func engineRow(clientSel string) row {
	engineSel := matchSet(matchTarget)
	// each joins the engines' series of a concept with `or`: a target is
	// served by one engine, so one of them has its series.
	each := func(c servermetrics.Concept, render func(name string) string) string {
		var parts []string
		for _, e := range servermetrics.Engines {
			for _, name := range e.Names[c] {
				parts = append(parts, render(name))
			}
		}
		return strings.Join(parts, "\nor\n")
	}
	gauge := func(agg string) func(string) string {
		return func(name string) string { return agg + " by (target) (" + name + engineSel + ")" }
	}
	return row{"The engine beside inferprobe (the engine's own metrics, by target)", []*Panel{
		timeseries("Engine queue and batch", "Requests waiting in the engine's queue and running in its batch, from the engine's own metrics (vLLM, SGLang, llama-server --metrics, TGI), for the targets whose engine Prometheus scrapes with their target label.",
			"short", 8, 8,
			q(each(servermetrics.Waiting, gauge("sum")), "{{target}} waiting"),
			q(each(servermetrics.Running, gauge("sum")), "{{target}} running")),
		timeseries("Engine KV-cache use", "Share of the engine's KV cache in use (vLLM, SGLang; llama-server and TGI export none), the fullest of the target's engines.",
			"percentunit", 8, 8, q(each(servermetrics.KVCache, gauge("max")), "{{target}}")),
		timeseries("Time to first token p99: client against engine", "inferprobe's TTFT p99 beside the engine's own (vLLM, SGLang; llama-server and TGI export no TTFT histogram): the gap is the network, queueing outside the engine and the client. The engine's counts every client's requests, not only inferprobe's.",
			"s", 8, 8,
			q(hq(0.99, "inferprobe_time_to_first_token_seconds", clientSel, "target"), "{{target}} client p99"),
			q(each(servermetrics.TTFT, func(name string) string { return hq(0.99, name, engineSel, "target") }), "{{target}} engine p99")),
	}}
}
