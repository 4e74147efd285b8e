"""The paper's tables as Markdown and CSV text."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from typing import Any

from .settings import CONFIDENCE, PAPER_REDUCTION, REDUCTION_HEADERS, REDUCTION_METRICS


def _fmt(x: float | None, nd: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _ci(row: dict[str, Any], k: str, nd: int = 2, mult: float = 1.0) -> str:
    """``mean [lo, hi]`` of column ``k`` (times ``mult``); just the mean when the interval is undefined."""
    m, lo, hi = row.get(k), row.get(f"{k}_lo"), row.get(f"{k}_hi")
    if m is None or math.isnan(m):
        return "n/a"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return _fmt(m * mult, nd)
    return f"{m * mult:.{nd}f} [{lo * mult:.{nd}f}, {hi * mult:.{nd}f}]"


# the Markdown tables of the cells: (title, [(column header, metric, decimals, multiplier)])
CELL_TABLES = (
    ("**Misses** (over servable jobs: leaving out the deadline jobs no schedule can serve, `sensaopt.servable`; "
     "unservable: their count)",
     [("SLO violation rate (%)", "slo_violation_rate", 2, 100.0), ("over servable jobs (%)", "servable_violation_rate", 2, 100.0),
      ("unservable jobs", "unservable", 1, 1.0), ("weighted violation rate (%)", "weighted_violation_rate", 2, 100.0),
      ("GPU util.", "gpu_utilization", 2, 1.0)]),
    ("**Forced misses** (no schedule avoids them, from the instance alone: `sensaopt bound`, models/bounds.md; at best "
     "speed, and at the proportional share for policies that never speed a job up; the run's misses beyond the first)",
     [("forced misses", "forced_misses", 1, 1.0), ("forced at share", "forced_misses_share", 1, 1.0),
      ("misses above forced", "misses_above_forced", 1, 1.0)]),
    ("**Times** (minutes; queueing = first start − arrival; pending = all minutes released but not running, the Chronus "
     "artifact's queueing; JCT bound: no schedule's avg JCT is lower, `sensaopt bound`)",
     [("avg JCT", "avg_jct", 1, 1.0), ("JCT bound", "jct_bound", 1, 1.0), ("avg queueing", "avg_queueing_time", 1, 1.0),
                              ("avg pending", "avg_pending_time", 1, 1.0)]),
    ("**Allocation changes per job**", [("restarts", "restarts_per_job", 3, 1.0), ("migrations", "migrations_per_job", 3, 1.0),
                                        ("resizes", "resizes_per_job", 3, 1.0)]),
)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _nodes(r: dict[str, Any]) -> str:
    return f"{r['node_gpus']}-GPU {r.get('node', 'synergy')}"


def _name(base: str) -> str:
    return {"chronus": "Chronus", "edf": "EDF"}.get(base, base)


def cells_markdown(cells: list[dict[str, Any]], confidence: float = CONFIDENCE) -> str:
    """The cells (:func:`cell_rows`) as the Markdown tables :data:`CELL_TABLES` (``nodes``:
    GPUs per node and node shape), each figure ``mean [lo, hi]`` over seeds."""
    pc = f"{100 * confidence:g} %"
    lines = [f"Each figure: mean over seeds [{pc} Student-t interval]; no interval with one seed."]
    for title, cols in CELL_TABLES:
        lines += ["", title, "", _row(["workload", "nodes", "policy", "seeds", "jobs"] + [h for h, _, _, _ in cols]),
                  "| --- | --- | --- |" + " ---: |" * (2 + len(cols))]
        for r in cells:
            lines.append(_row([r["workload"], _nodes(r), r["policy"], str(r["seeds"]), f"{r['jobs']:.0f}"]
                              + [_ci(r, k, nd, mult) for _, k, nd, mult in cols]))
    return "\n".join(lines) + "\n"


def comparison_markdown(base: str, per: list[dict[str, Any]], avg: dict[str, Any] | list[tuple[str, dict[str, Any]]],
                        confidence: float = CONFIDENCE, ours: str = "SensaScale") -> str:
    """One comparison (:func:`reductions` or :func:`averages` of ``ours`` vs ``base``; base
    ``"best"`` or rows with different bases: a ``base`` column) as a Markdown table, the
    averages below the cells; vs Chronus also the paper's row."""
    pc = f"{100 * confidence:g} %"
    readings = [("cells", avg)] if isinstance(avg, dict) else list(avg)
    varies = base == "best" or any(r.get("base") not in (None, base) for r in per)
    name = "the best baseline of each cell" if varies else _name(base)
    short = "base" if varies else name
    extra = [""] if varies else []
    lines = [f"**{ours} vs {name}**, relative change (%) = 100·({ours} − {short})/{short} (n/a where {short} is 0; "
             f"Δ points: 100·({ours} − {short}) of the SLO violation rate, percentage points, defined there too), "
             f"per seed (paired), then mean [{pc} interval] over seeds:", "",
             _row(["workload", "nodes"] + (["base"] if varies else []) + ["seeds", *REDUCTION_HEADERS]),
             "| --- | --- |" + (" --- |" if varies else "") + " ---: |" * (1 + len(REDUCTION_METRICS))]
    for r in per:
        lines.append(_row([r["workload"], _nodes(r)] + ([r["base"]] if varies else []) + [str(r["seeds"])]
                          + [_ci(r, k) for k in REDUCTION_METRICS]))
    for label, a_ in readings:
        a = {k: dict(zip((k, f"{k}_lo", f"{k}_hi"), a_[k])) for k in REDUCTION_METRICS}
        n = str(a_["seeds"]) if a_["seeds"] else "partial"
        title = "**average over cells**" if label == "cells" else f"**average over {label}**"
        lines.append(_row([title, ""] + extra + [n] + [_ci(a[k], k) for k in REDUCTION_METRICS]))
    if base == "chronus":
        lines.append(_row(["paper", "", ""] + [str(PAPER_REDUCTION.get(k, "")) for k in REDUCTION_METRICS]))
    return "\n".join(lines) + "\n"


def table_markdown(cells: list[dict[str, Any]], per: list[dict[str, Any]], avg: dict[str, Any] | list[tuple[str, dict[str, Any]]],
                   confidence: float = CONFIDENCE,
                   others: Sequence[tuple[str, list[dict[str, Any]], Any]] = ()) -> str:
    """:func:`cells_markdown`, then the change vs Chronus (:func:`comparison_markdown` of
    :func:`reductions` or :func:`averages`) and each of ``others`` ((base, per, avg): e.g.
    vs EDF, or ``"best"``: vs the best baseline per cell), without the paper's row."""
    parts = [cells_markdown(cells, confidence)]
    for base, p_rows, p_avg in (("chronus", per, avg), *others):
        parts.append(comparison_markdown(base, p_rows, p_avg, confidence))
    return "\n".join(parts)


def table_csv(rows: Sequence[dict[str, Any]]) -> str:
    """``rows`` (dicts with the same keys: :func:`table_rows`, :func:`cell_rows`, the
    experiments' rows) as CSV text, columns in the rows' order; NaN (undefined) is empty."""
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()})
    return buf.getvalue()


