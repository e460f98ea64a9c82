"""Check an inferprobe run's GPU telemetry (--gpu-telemetry URL) with AIPerf 0.13's own code.

Usage: check_gpu_telemetry.py RUN_DIR SAMPLE. SAMPLE is the dcgm-exporter
text the endpoint served. Every line of gpu_telemetry_export.jsonl must load
as AIPerf's TelemetryRecord and carry what AIPerf's DCGM collector makes of
SAMPLE (the metadata, and the fields the endpoint did not vary);
profile_export_aiperf.json's telemetry_data must load as AIPerf's
TelemetryExportData and hold, for each GPU, what AIPerf's accumulator
computes from the JSONL's records over the measured span; the CSV's GPU
rows must be AIPerf's. Prints what was checked as one JSON object; any
failure exits non-zero.
"""

import csv
import json
import math
import sys
from datetime import datetime
from pathlib import Path

from aiperf.common.models.export_models import TelemetryExportData
from aiperf.common.models.server_metrics_models import TimeRangeFilter
from aiperf.common.models.telemetry_models import TelemetryHierarchy, TelemetryRecord
from aiperf.exporters.utils import normalize_endpoint_display
from aiperf.gpu_telemetry.constants import GPU_TELEMETRY_COUNTER_METRICS, GPU_TELEMETRY_METRICS_CONFIG
from aiperf.gpu_telemetry.dcgm_collector import DCGMTelemetryCollector

run_dir, sample = Path(sys.argv[1]), Path(sys.argv[2]).read_text()
varied = {"nvidia_power_usage", "nvidia_energy_consumption"}  # the endpoint changes these per scrape


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


records = []
for n, line in enumerate((run_dir / "gpu_telemetry_export.jsonl").read_text().splitlines(), 1):
    try:
        records.append(TelemetryRecord.model_validate_json(line))
    except Exception as e:
        sys.exit(f"gpu_telemetry_export.jsonl line {n} does not load as TelemetryRecord: {e}")
if not records:
    sys.exit("gpu_telemetry_export.jsonl is empty")

expected = {}
for r in DCGMTelemetryCollector(records[0].telemetry_source_url)._parse_metrics_to_records(sample):
    expected[r.gpu_index] = r.model_dump(exclude_none=True, mode="json", exclude={"timestamp_ns"})
for r in records:
    got = r.model_dump(exclude_none=True, mode="json", exclude={"timestamp_ns"})
    want = expected[r.gpu_index]
    if set(got["telemetry_data"]) != set(want["telemetry_data"]):
        sys.exit(f"GPU {r.gpu_index} fields {sorted(got['telemetry_data'])}, AIPerf's {sorted(want['telemetry_data'])}")
    for k, v in want["telemetry_data"].items():
        if k not in varied and not close(got["telemetry_data"][k], v):
            sys.exit(f"GPU {r.gpu_index} {k} = {got['telemetry_data'][k]}, AIPerf's {v}")
    meta = {k: v for k, v in got.items() if k != "telemetry_data"}
    want_meta = {k: v for k, v in want.items() if k != "telemetry_data"}
    if meta != want_meta:
        sys.exit(f"GPU {r.gpu_index} metadata {meta}, AIPerf's {want_meta}")

doc = json.loads((run_dir / "profile_export_aiperf.json").read_text())
telemetry = TelemetryExportData.model_validate(doc["telemetry_data"])
start_ns = round(datetime.fromisoformat(doc["telemetry_data"]["summary"]["start_time"]).timestamp() * 1e6) * 1000
hierarchy = TelemetryHierarchy()
for r in records:
    hierarchy.add_record(r)
checked = 0
for url, gpus in hierarchy.telemetry_source_endpoints.items():
    endpoint = telemetry.endpoints[normalize_endpoint_display(url)]
    for data in gpus.values():
        summary = endpoint.gpus[f"gpu_{data.metadata.gpu_index}"]
        for display, key, unit in GPU_TELEMETRY_METRICS_CONFIG:
            try:
                want = data.get_metric_result(key, key, display, unit, time_filter=TimeRangeFilter(start_ns=start_ns),
                                              is_counter=key in GPU_TELEMETRY_COUNTER_METRICS).to_json_result()
            except Exception:
                if key in summary.metrics:
                    sys.exit(f"{url} GPU {data.metadata.gpu_index}: {key} in telemetry_data, none from AIPerf")
                continue
            got = summary.metrics[key]
            w, g = want.model_dump(exclude_none=True), got.model_dump(exclude_none=True)
            if set(w) != set(g) or any(not close(w[s], g[s]) for s in w if s != "unit") or w["unit"] != g["unit"]:
                sys.exit(f"{url} GPU {data.metadata.gpu_index} {key}: telemetry_data {g}, AIPerf's accumulator {w}")
            checked += 1

with open(run_dir / "profile_export_aiperf.csv", newline="") as f:
    rows = list(csv.reader(f))
head = rows.index(["Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Platform", "Metric", "avg", "min", "max", "sum",
                   "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std", "Hostname"])
gpu_rows = rows[head + 1:]
if len(gpu_rows) != checked:
    sys.exit(f"{len(gpu_rows)} GPU rows in the CSV, {checked} metrics in telemetry_data")

print(json.dumps({"records": len(records), "metrics_checked": checked, "csv_rows": len(gpu_rows),
                  "endpoints": telemetry.summary.endpoints_successful}))
