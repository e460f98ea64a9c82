"""Read an inferprobe artifact directory with AIPerf 0.13's own code.

Usage: check_artifacts.py RUN_DIR. Every line of profile_export.jsonl must
load as AIPerf's per-request record model (MetricRecordInfo);
profile_export_aiperf.json as AIPerf's export model (JsonExportData) and
through the loader `aiperf plot` uses (DataLoader.load_run, which reads the
JSONL too); profile_export_aiperf.csv must have AIPerf's columns (STAT_KEYS).
Prints what was loaded as one JSON object; any failure raises.
"""

import csv
import json
import sys
from pathlib import Path

from aiperf.common.constants import STAT_KEYS
from aiperf.common.models.export_models import JsonExportData
from aiperf.common.models.record_models import MetricRecordInfo
from aiperf.plot.core.data_loader import DataLoader

run_dir = Path(sys.argv[1])

records = []
for n, line in enumerate((run_dir / "profile_export.jsonl").read_text().splitlines(), 1):
    try:
        records.append(MetricRecordInfo.model_validate_json(line))
    except Exception as e:
        sys.exit(f"profile_export.jsonl line {n} does not load as MetricRecordInfo: {e}")

doc = json.loads((run_dir / "profile_export_aiperf.json").read_text())
export = JsonExportData.model_validate(doc)
run = DataLoader().load_run(run_dir)

with open(run_dir / "profile_export_aiperf.csv", newline="") as f:
    rows = list(csv.reader(f))
want = ["Metric", *STAT_KEYS]
if rows[0] != want:
    sys.exit(f"CSV header {rows[0]}, want AIPerf's {want}")

print(json.dumps({
    "jsonl_records": len(records),
    "errors": sum(r.error is not None for r in records),
    "loaded_requests": 0 if run.requests is None else len(run.requests),
    "schema_version": export.schema_version,
    "request_count": export.request_count.avg if export.request_count else None,
    "metrics_per_record": sorted({k for r in records for k in r.metrics}),
    "csv_rows": len(rows),
}))
