// Package capacity finds the highest load a target carries within its SLO:
// NVIDIA AIPerf 0.13's deterministic SLA-search recipes
// (max-concurrency-under-sla, max-goodput-under-slo, concurrency-ramp) and
// search styles (monotonic, smooth_isotonic, grid), with AIPerf's flag
// semantics and the contents of its search artifacts (search_history.json,
// sla_breach.json, degradation_knee.json).
//
// It plans and judges; it sends nothing. A search asks its caller to
// measure one concurrency at a time (Measure) and reads the AIPerf metrics
// of each step (metric tag → statistic → value, as profile_export_aiperf.json
// holds them), so bench and the daemon run the steps with their own engine.
//
// A recipe (recipe_*.go, registered with registerRecipe) turns AIPerf's flag
// values into a Plan: the SLA filters, the per-request SLOs, the bounds and
// the style. A style (style_*.go, registered with registerStyle) chooses the
// next concurrency from the steps so far, or says why the search is over.
package capacity
