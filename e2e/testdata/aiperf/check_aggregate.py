"""Read an inferprobe multi-run directory with AIPerf 0.13's own code.

Usage: check_aggregate.py BASE_DIR. `aiperf plot`'s mode detection must
find the aggregate (and, under profile_runs/, every run); its loader must
read profile_export_aiperf_aggregate.json as AIPerf's aggregate-only run
and each run as a single run; the aggregate JSON and each run's must load
as AIPerf's export model, each run's run_info as its RunInfo; the aggregate CSV must have the header AIPerf's exporter
writes. Prints what was loaded as one JSON object; any failure raises.
"""

import csv
import json
import sys
from pathlib import Path

from aiperf.common.models.export_models import JsonExportData
from aiperf.plot.core.data_loader import DataLoader
from aiperf.plot.core.mode_detector import ModeDetector

base = Path(sys.argv[1])
detector = ModeDetector()
mode, dirs = detector.detect_mode([base])
trial_mode, trial_dirs = detector.detect_mode([base / "profile_runs"])

loader = DataLoader()
aggregate = loader.load_run(dirs[0])
trials = [loader.load_run(d) for d in trial_dirs]

doc = json.loads((base / "aggregate" / "profile_export_aiperf_aggregate.json").read_text())
JsonExportData.model_validate(doc)
run_labels = []
for d in trial_dirs:
    export = JsonExportData.model_validate_json((d / "profile_export_aiperf.json").read_text())
    run_labels.append(export.run_info.run_label)

with open(base / "aggregate" / "profile_export_aiperf_aggregate.csv", newline="") as f:
    header = next(csv.reader(f))
want = ["metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"]
if header != want:
    sys.exit(f"aggregate CSV header {header}, want AIPerf's {want}")

ttft = aggregate.get_metric("time_to_first_token")
print(json.dumps({
    "mode": str(mode),
    "dirs": [str(d.relative_to(base)) for d in dirs],
    "trial_mode": str(trial_mode),
    "trial_dirs": [str(d.relative_to(base)) for d in trial_dirs],
    "aggregation_type": aggregate.aggregated.get("aggregation_type"),
    "ttft_p99": ttft.p99 if ttft else None,
    "trial_requests": [0 if t.requests is None else len(t.requests) for t in trials],
    "run_labels": run_labels,
}))
