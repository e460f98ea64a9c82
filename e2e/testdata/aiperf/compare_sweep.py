"""Compare inferprobe's sweep summary with AIPerf 0.13's own, of the same sweep.

Usage: compare_sweep.py BENCH_DIR AIPERF_DIR. Both are a one-trial sweep's
artifact directory. sweep_aggregate/profile_export_aiperf_sweep.json must
have AIPerf's keys at every level (inferprobe may add artifact_directory, and
fills best_configurations and pareto_optimal, which AIPerf 0.13 leaves empty
for one trial), each metric cell AIPerf's statistics, and only metric tags
AIPerf writes; the CSV AIPerf's columns and sections. Prints what was
compared as one JSON object; any difference exits non-zero.
"""

import csv
import json
import sys
from pathlib import Path

bench_dir, aiperf_dir = Path(sys.argv[1]), Path(sys.argv[2])


def load(d):
    return json.loads((d / "sweep_aggregate" / "profile_export_aiperf_sweep.json").read_text())


def fail(msg):
    sys.exit(msg)


b, a = load(bench_dir), load(aiperf_dir)
if list(b) != list(a):
    fail(f"top-level keys {list(b)}, AIPerf's {list(a)}")
if list(b["metadata"]) != list(a["metadata"]):
    fail(f"metadata keys {list(b['metadata'])}, AIPerf's {list(a['metadata'])}")
for k in ("sweep_parameters", "num_combinations", "sweep_mode", "num_trials_per_value", "aggregation_type"):
    if b["metadata"][k] != a["metadata"][k]:
        fail(f"metadata.{k} {b['metadata'][k]}, AIPerf's {a['metadata'][k]}")
for k in ("aggregation_type", "num_profile_runs", "num_successful_runs", "failed_runs"):
    if b[k] != a[k]:
        fail(f"{k} {b[k]}, AIPerf's {a[k]}")

cells = 0
tags_a = set()
for cb, ca in zip(b["per_combination_metrics"], a["per_combination_metrics"], strict=True):
    if set(ca) - set(cb) or set(cb) - set(ca) - {"artifact_directory"}:
        fail(f"cell keys {list(cb)}, AIPerf's {list(ca)}")
    if cb["parameters"] != ca["parameters"]:
        fail(f"parameters {cb['parameters']}, AIPerf's {ca['parameters']}")
    tags_a |= set(ca["metrics"])
    extra = set(cb["metrics"]) - set(ca["metrics"])
    if extra:
        fail(f"metrics AIPerf does not write: {sorted(extra)}")
    for tag, stats in cb["metrics"].items():
        if list(stats) != list(ca["metrics"][tag]):
            fail(f"{tag}: statistics {list(stats)}, AIPerf's {list(ca['metrics'][tag])}")
        if stats["unit"] != ca["metrics"][tag]["unit"]:
            fail(f"{tag}: unit {stats['unit']}, AIPerf's {ca['metrics'][tag]['unit']}")
        cells += 1
for k in ("best_configurations", "pareto_optimal"):
    if a[k] and list(b[k]) != list(a[k]):
        fail(f"{k} {b[k]}, AIPerf's {a[k]}")


def sections(d):
    with open(d / "sweep_aggregate" / "profile_export_aiperf_sweep.csv", newline="") as f:
        rows = list(csv.reader(f))
    titles = [r[0] for i, r in enumerate(rows) if r and i > 0 and not rows[i - 1]]
    return rows, titles


rb, tb = sections(bench_dir)
ra, ta = sections(aiperf_dir)
if tb != ta:
    fail(f"CSV sections {tb}, AIPerf's {ta}")
head_b, head_a = rb[0], ra[0]
if head_b[0] != head_a[0] or not set(head_b) <= set(head_a):
    fail(f"CSV header {head_b[:6]}…, AIPerf's {head_a[:6]}…; not AIPerf's: {sorted(set(head_b) - set(head_a))}")
meta_b, meta_a = rb[rb.index(["Metadata"]):], ra[ra.index(["Metadata"]):]
if [r[0] for r in meta_b] != [r[0] for r in meta_a] or meta_b[2:] != meta_a[2:]:
    fail(f"CSV metadata {meta_b}, AIPerf's {meta_a}")

print(json.dumps({"cells": cells, "bench_tags": len(b["per_combination_metrics"][0]["metrics"]),
                  "aiperf_tags": len(tags_a), "csv_columns": len(head_b), "sections": tb}))
