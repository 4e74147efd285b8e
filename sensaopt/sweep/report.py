"""Tables from stored sweep records."""

from __future__ import annotations

import csv
import io

CONFIG_COLUMNS = ("trace", "preset", "policy", "seed", "load", "sensitive_fraction", "mix", "cpu_per_gpu", "mem_per_gpu")
METRIC_COLUMNS = ("jobs", "slo_jobs", "slo_violations", "slo_violation_rate", "weighted_violation_rate", "avg_jct",
                  "avg_queueing_time", "makespan", "gpu_utilization", "preemptions", "migrations", "objective")


def summary_rows(records: list[dict]) -> list[dict]:
    rows = []
    for r in records:
        row = {"key": r["key"]}
        row.update({c: r["config"].get(c) for c in CONFIG_COLUMNS})
        row.update({c: r["metrics"].get(c) for c in METRIC_COLUMNS})
        row["simulate_s"] = r.get("simulate_s")
        rows.append(row)
    return rows


def summary_csv(records: list[dict]) -> str:
    buf = io.StringIO()
    cols = ("key",) + CONFIG_COLUMNS + METRIC_COLUMNS + ("simulate_s",)
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(summary_rows(records))
    return buf.getvalue()
