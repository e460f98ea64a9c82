"""Drives AIPerf 0.13's SmoothIsotonicSLAPlanner on synthetic targets.

capacity's smooth_isotonic tests hard-code what this prints: run it with
AIPerf's Python (python capacity/testdata/aiperf_smooth_isotonic.py) to
see the steps, reason and boundary fields AIPerf gives for each case.
The planner is built without a BenchmarkConfig: its ask/tell only need the
SLA filters, the bounds and the per-step verdicts and margins, which the
harness hands it directly (the warm-up and request-count injection it skips
are checked separately).
"""

import json
import math
import sys
from types import SimpleNamespace

from aiperf.config.sweep.adaptive import SLAFilter
from aiperf.orchestrator.search_planner import smooth_isotonic as si


def planner(filters, lo, hi, max_iterations=30, replicates=0):
    p = si.SmoothIsotonicSLAPlanner.__new__(si.SmoothIsotonicSLAPlanner)
    cfg = SimpleNamespace(max_iterations=max_iterations, sla_replicates=replicates)
    p._cfg, p._dim = cfg, SimpleNamespace(path="phases.profiling.concurrency")
    p._lo, p._hi = lo, hi
    p._sla_filters = filters
    p._filter_keys = [f"{i}:{f.metric_tag}.{f.stat}.{f.op}.{f.threshold}" for i, f in enumerate(filters)]
    p.feasible_max = p.infeasible_min = None
    p._raw_probes = {}
    p._phase, p._next_value, p._pending_value, p._probe_queue = "bracket", lo, None, []
    p._candidate_x, p._fit_count, p._iter, p._history = None, 0, 0, []
    p._convergence_reason = p.boundary_type = p.boundary_ci_low = p.boundary_ci_high = p.binding_constraint = None
    p.non_monotonic_warning = p._non_monotonic_this_iter = False
    p._first_probe_at = set()
    p._mutate_base = lambda value: None
    p._extract_objective = lambda results: None
    return p


def run(name, filters, lo, hi, metrics, **kw):
    """metrics(x, n) -> {metric_tag: value} for the n-th step at x."""
    p = planner(filters, lo, hi, **kw)
    si.SearchIteration = lambda **k: SimpleNamespace(**k)
    seen, steps = {}, []
    while True:
        asked = p.ask()
        if asked is None:
            break
        x = asked[1].values["phases.profiling.concurrency"]
        m = metrics(x, seen.get(x, 0))
        seen[x] = seen.get(x, 0) + 1
        feasible = all(
            (m[f.metric_tag] < f.threshold if f.op == "lt" else m[f.metric_tag] <= f.threshold if f.op == "le"
             else m[f.metric_tag] > f.threshold if f.op == "gt" else m[f.metric_tag] >= f.threshold)
            for f in filters)
        si.iteration_feasibility = lambda results, fs, v=feasible: v
        p._signed_margins = lambda results, m=m: {
            k: (m[f.metric_tag] - f.threshold if f.op in ("lt", "le") else f.threshold - m[f.metric_tag])
            for k, f in zip(p._filter_keys, filters)}
        p.tell(asked[1], [])
        steps.append(x)
    print(json.dumps({"case": name, "steps": steps, "reason": p.convergence_reason(),
                      "feasible_max": p.feasible_max, "infeasible_min": p.infeasible_min,
                      "boundary_type": p.boundary_type, "binding_constraint": p.binding_constraint,
                      "ci": [p.boundary_ci_low, p.boundary_ci_high]}))


ttft = SLAFilter(metric_tag="time_to_first_token", stat="p95", op="lt", threshold=200.0)
itl = SLAFilter(metric_tag="inter_token_latency", stat="p95", op="lt", threshold=20.0)


def smooth(x, n):
    # TTFT rises smoothly through 200 ms at 37.5; ITL stays low.
    return {"time_to_first_token": 100 + 100 * x / 37.5, "inter_token_latency": 10 + 0.01 * x}


def two_filters(x, n):
    # TTFT crosses 200 at 80, ITL crosses 20 at 50: ITL binds, although
    # TTFT's margin is larger in milliseconds above 80.
    return {"time_to_first_token": 2.5 * x, "inter_token_latency": 0.4 * x}


def cliff(x, n):
    # Rising to 190 ms at 256, a 2200 ms overshoot up to 352, a ~700 ms
    # plateau above: the highest probes sit far below the isotonic fit,
    # which pools them with the overshoot, so AIPerf's cliff guard fires.
    if x <= 256:
        return {"time_to_first_token": 100 + 90 * x / 256, "inter_token_latency": 10}
    if x <= 352:
        return {"time_to_first_token": 2200, "inter_token_latency": 10}
    return {"time_to_first_token": 700 + 0.001 * x, "inter_token_latency": 10}


def noisy(x, n):
    # Smooth, with a replicate-to-replicate wobble that depends on n.
    return {"time_to_first_token": 100 + 100 * x / 37.5 + (7, -5, 3, -2, 6, -4)[n % 6], "inter_token_latency": 10}


def noisy_binding(x, n):
    # A one-concurrency bracket, so AIPerf measures 2 again: TTFT's margin
    # there is the larger (60 ms against 10 ms) but noisy, ITL's steady, so
    # once 2 has two steps the noise-normalized margins make ITL binding.
    if x <= 1:
        return {"time_to_first_token": 150, "inter_token_latency": 10}
    return {"time_to_first_token": 260 + (40, -40, 30, -30)[n % 4], "inter_token_latency": 30}


run("smooth", [ttft, itl], 1, 1000, smooth)
run("two_filters", [ttft, itl], 1, 1000, two_filters)
run("cliff", [ttft], 1, 1000, cliff)
run("replicates", [ttft], 1, 1000, noisy, replicates=4)
run("noisy_binding", [ttft, itl], 1, 1000, noisy_binding)
run("capacity_1", [ttft], 1, 1000, lambda x, n: {"time_to_first_token": 50 if x <= 1 else 250})
