"""Read an inferprobe multi-run sweep directory with AIPerf 0.13's own code.

Usage: check_multirun_sweep.py BASE_DIR SUMMARY_PARENT. `aiperf plot`'s
mode detection must find each point's aggregate (and, under the
profile_runs/ directories, every run of every trial); its loader must read each
point's aggregate as AIPerf's aggregate-only run of that sweep cell
(its variation label and concurrency) and each run as a single run; each
point's aggregate and each run's export must load as AIPerf's export
model; AIPerf's reader of a sweep's summary must find its rows in
SUMMARY_PARENT/sweep_aggregate/. Prints what was loaded as one JSON object;
any failure raises.
"""

import json
import sys
from pathlib import Path

from aiperf.common.models.export_models import JsonExportData
from aiperf.operator.runs_index import _load_strategy_sweep_aggregate, _strategy_sweep_rows
from aiperf.plot.core.data_loader import DataLoader
from aiperf.plot.core.mode_detector import ModeDetector

base = Path(sys.argv[1])
detector = ModeDetector()
mode, dirs = detector.detect_mode([base])
trial_mode, trial_dirs = detector.detect_mode(sorted(base.rglob("profile_runs")))

loader = DataLoader()
cells = []
for d in dirs:
    JsonExportData.model_validate_json((d / "profile_export_aiperf_aggregate.json").read_text())
    run = loader.load_run(d)
    ttft = run.get_metric("time_to_first_token")
    cells.append({
        "dir": str(d.relative_to(base)),
        "variation_label": run.metadata.variation_label,
        "concurrency": run.metadata.concurrency,
        "aggregation_type": run.aggregated.get("aggregation_type"),
        "ttft_p99": ttft.p99 if ttft else None,
    })

trials = []
for d in trial_dirs:
    export = JsonExportData.model_validate_json((d / "profile_export_aiperf.json").read_text())
    run = loader.load_run(d)
    trials.append({
        "dir": str(d.relative_to(base)),
        "run_label": export.run_info.run_label,
        "requests": 0 if run.requests is None else len(run.requests),
    })

summary = _load_strategy_sweep_aggregate(base / sys.argv[2])
rows = [] if summary is None else _strategy_sweep_rows(summary)
print(json.dumps({
    "mode": str(mode),
    "cells": cells,
    "trial_mode": str(trial_mode),
    "trials": trials,
    "sweep_rows": [{"parameters": values, "request_throughput": metrics.get("request_throughput", {}).get("avg")}
                   for _, values, metrics, _ in rows],
    "sweep_metadata": None if summary is None else summary.get("metadata"),
}))
