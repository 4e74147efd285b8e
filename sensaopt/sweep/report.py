"""Tables from stored sweep records."""

from __future__ import annotations

from typing import Any

from sensaopt.metrics import METRIC_COLUMNS

CONFIG_COLUMNS = ("trace", "preset", "policy", "seed", "load", "sensitive_fraction", "mix", "cpu_per_gpu", "mem_per_gpu")
SUMMARY_COLUMNS = ("key",) + CONFIG_COLUMNS + METRIC_COLUMNS + ("simulate_s",)


def summary_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per stored record (:data:`SUMMARY_COLUMNS`): its key, the configuration
    axes, every :class:`sensaopt.metrics.Metrics` field (empty when a record predates
    it) and the simulation's wall time in seconds."""
    rows = []
    for r in records:
        row = {"key": r["key"]}
        row.update({c: r["config"].get(c) for c in CONFIG_COLUMNS})
        row.update({c: r["metrics"].get(c) for c in METRIC_COLUMNS})
        row["simulate_s"] = r.get("simulate_s")
        rows.append(row)
    return rows


def summary_table(records: list[dict[str, Any]], fmt: str = "csv") -> bytes:
    """:func:`summary_rows` as a table file in ``fmt`` (:func:`sensaopt.tables.table_bytes`: csv, json, parquet)."""
    from sensaopt.tables import table_bytes

    return table_bytes(summary_rows(records), SUMMARY_COLUMNS, fmt)


def summary_csv(records: list[dict[str, Any]]) -> str:
    """:func:`summary_rows` as CSV text."""
    return summary_table(records).decode()
