"""The paper's tables as data: one row per stored run (:func:`table_rows`), one per cell
(:func:`cell_rows`: mean and Student-t interval over the seeds), and the relative change
of SensaScale versus a baseline (:func:`reductions`, :func:`averages`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from sensaopt.sweep.config import RunConfig
from sensaopt.sweep.stats import mean_interval

from .settings import (
    BOUND_METRICS,
    CONFIDENCE,
    DIFFERENCES,
    METRIC_NAMES,
    OURS,
    REDUCTION_METRICS,
    RUN_METRICS,
    SERVABLE_METRICS,
    Group,
    _group,
    _groups,
    _policies,
    node_of,
    policy_label,
)


def run_values(metrics: dict[str, Any]) -> dict[str, float | None]:
    """The :data:`RUN_METRICS` of one record's metrics (None where the record predates a
    metric or it is undefined, e.g. no finished job)."""
    jobs = metrics.get("jobs") or 0
    out: dict[str, float | None] = {}
    for name, src, per_job in RUN_METRICS:
        v = metrics.get(src)
        out[name] = None if v is None else (float(v) / jobs if jobs else None) if per_job else float(v)
    return out


def _workload_key(cfg: RunConfig) -> str:
    """The key of ``cfg``'s workload (its instance): the same for every policy."""
    from dataclasses import replace

    return replace(cfg, policy="", policy_config=()).key()


def servable_values(record: dict[str, Any], unservable: int | None = None) -> dict[str, float | None]:
    """:data:`SERVABLE_METRICS` of one record: from its ``servable`` counts, or, for a
    record made before they were stored, from ``unservable`` (the count of its instance,
    known from another record of the same workload): every unservable job misses under
    any schedule, so the servable misses are the misses minus that count (exact without
    profile error; the caller passes None otherwise). None when unknown."""
    m = record["metrics"]
    sv = record.get("servable")
    if sv is not None:
        n, bad, viol = sv["servable"], sv["unservable"], sv["violations"]
    elif unservable is not None and m.get("slo_violations") is not None and m.get("slo_jobs") is not None:
        n, bad, viol = m["slo_jobs"] - unservable, unservable, m["slo_violations"] - unservable
    else:
        return dict.fromkeys(SERVABLE_METRICS, None)
    return {"servable_violation_rate": viol / n if n else None, "unservable": float(bad)}


def bound_values(record: dict[str, Any], bounds: dict[str, float] | None) -> dict[str, float | None]:
    """:data:`BOUND_METRICS` of one record from its workload's bounds
    (:meth:`sensaopt.bounds.Bounds.record`: the record's own, or the one of another record
    of its workload, or computed from the instance by :func:`missing_bounds`); None when unknown."""
    if bounds is None:
        return dict.fromkeys(BOUND_METRICS, None)
    viol = record["metrics"].get("slo_violations")
    return {"forced_misses": float(bounds["forced_misses"]), "forced_misses_share": float(bounds["forced_misses_share"]),
            "misses_above_forced": None if viol is None else float(viol - bounds["forced_misses"]),
            "jct_bound": float(bounds["jct_bound"])}


def missing_bounds(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per workload key (a run's config less its policy) whose stored records predate the
    ``bounds`` field, :meth:`sensaopt.bounds.Bounds.record` computed from its instance now
    (the bounds depend on the instance alone); runs with profile error are left out (their
    bounds are on the true speeds the record does not keep)."""
    from sensaopt.bounds import compute_bounds
    from sensaopt.traces.sources import workload_instance

    have = {_workload_key(cfg) for _, _, cfg in runs if records.get(cfg.key(), {}).get("bounds") is not None}
    out: dict[str, dict[str, float]] = {}
    for _, _, cfg in runs:
        w = _workload_key(cfg)
        if w in have or w in out or cfg.key() not in records or cfg.profile_error != 0:
            continue
        out[w] = compute_bounds(workload_instance(cfg)[0]).record()
    return out


def table_rows(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
               bounds: dict[str, dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """One row per stored run (:data:`RUN_COLUMNS`): workload, node size, node shape
    (:func:`node_of`), policy (:func:`policy_label`), seed, preset, config key, job count,
    :func:`run_values`, :func:`servable_values`, :func:`bound_values` (the records' own
    bounds, else ``bounds`` by workload key: :func:`missing_bounds`) and the simulation's
    wall time (s)."""
    keyed = [(label, g, cfg, cfg.key()) for label, g, cfg in runs]
    wkey = {key: _workload_key(cfg) for _, _, cfg, key in keyed if key in records}
    bad: dict[str, int] = {}
    lbs: dict[str, dict[str, float]] = dict(bounds or {})
    for key, w in wkey.items():
        sv = records[key].get("servable")
        if sv is not None:
            bad[w] = sv["unservable"]
        if records[key].get("bounds") is not None:
            lbs[w] = records[key]["bounds"]
    rows = []
    for label, g, cfg, key in keyed:
        r = records.get(key)
        if r is None:
            continue
        m = r["metrics"]
        rows.append({"workload": label, "node_gpus": g, "node": node_of(cfg), "policy": policy_label(cfg), "seed": cfg.seed,
                     "preset": cfg.preset, "key": key, "jobs": m["jobs"], **run_values(m),
                     **servable_values(r, bad.get(wkey[key]) if cfg.profile_error == 0 else None),
                     **bound_values(r, r.get("bounds", lbs.get(wkey[key]))), "simulate_s": r.get("simulate_s")})
    return rows

def _cell_order(rows: Iterable[dict[str, Any]]) -> list[tuple[str, int, str, str]]:
    """(workload, node size, node shape, policy) cells of ``rows``: :func:`_groups` order, :func:`_policies` order."""
    rows = list(rows)
    pols = _policies(rows)
    present = {(*_group(r), r["policy"]) for r in rows}
    return [(*grp, p) for grp in _groups(rows) for p in pols if (*grp, p) in present]


def cell_rows(rows: list[dict[str, Any]], confidence: float = CONFIDENCE) -> list[dict[str, Any]]:
    """One row per (workload, node size, node shape, policy): ``seeds`` (runs present),
    ``jobs`` (mean) and, per :data:`METRIC_NAMES` column ``k``, ``k`` (mean over seeds),
    ``k_lo`` and ``k_hi`` (Student-t interval; NaN with fewer than two seeds; NaN mean
    when no run has the figure, e.g. servable counts of old records)."""
    by: dict[tuple[str, int, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((*_group(r), r["policy"]), []).append(r)
    out = []
    for cell in _cell_order(rows):
        rs = by[cell]
        row: dict[str, Any] = {"workload": cell[0], "node_gpus": cell[1], "node": cell[2], "policy": cell[3], "seeds": len(rs),
                               "jobs": float(np.mean([r["jobs"] for r in rs]))}
        for k in METRIC_NAMES:
            vals = [r.get(k) for r in rs]
            row[k], row[f"{k}_lo"], row[f"{k}_hi"] = mean_interval([v for v in vals if v is not None], confidence)
        out.append(row)
    return out


def _rel(ours: float | None, base: float | None) -> float | None:
    """100·(ours − base)/base, None when either is missing or the base is not positive."""
    if ours is None or base is None or not base > 0 or math.isnan(ours):
        return None
    return 100.0 * (ours - base) / base


def _change(k: str, ours: dict[str, Any], base: dict[str, Any]) -> float | None:
    """Comparison column ``k`` of one seed's pair of runs: a :data:`DIFFERENCES` column's
    difference (None when either figure is missing), else :func:`_rel`."""
    if k not in DIFFERENCES:
        return _rel(ours.get(k), base.get(k))
    src, mult = DIFFERENCES[k]
    o, b = ours.get(src), base.get(src)
    if o is None or b is None or math.isnan(o) or math.isnan(b):
        return None
    return mult * (o - b)


BaseChoice = str | dict[Group, str]  # one base policy, or the base policy of each cell


def _paired(rows: list[dict[str, Any]], ours: str, base: BaseChoice, confidence: float
            ) -> tuple[list[dict[str, Any]], dict[Group, dict[str, dict[int, float]]]]:
    by = {(*_group(r), r["policy"], r["seed"]): r for r in rows}
    per: list[dict[str, Any]] = []
    changes: dict[Group, dict[str, dict[int, float]]] = {}
    for grp in _groups(rows):
        b = base if isinstance(base, str) else base.get(grp)
        if b is None:
            continue
        seeds = sorted(key[4] for key in by if key[:3] == grp and key[3] == ours and grp + (b, key[4]) in by)
        if not seeds:
            continue
        row: dict[str, Any] = {"workload": grp[0], "node_gpus": grp[1], "node": grp[2], "base": b, "seeds": len(seeds)}
        changes[grp] = {}
        for k in REDUCTION_METRICS:
            ch = {s: _change(k, by[grp + (ours, s)], by[grp + (b, s)]) for s in seeds}
            vals = {s: v for s, v in ch.items() if v is not None}
            row[k], row[f"{k}_lo"], row[f"{k}_hi"] = mean_interval(list(vals.values()), confidence)
            changes[grp][k] = vals
        per.append(row)
    return per, changes


def _average(changes: dict[Group, dict[str, dict[int, float]]], groups: Iterable[Group], confidence: float) -> dict[str, Any]:
    """Per seed the mean of the cells' changes, then (mean, lo, hi) over the seeds that
    every cell has (or, when none is complete, every seed with the cells it has: ``seeds`` 0)."""
    groups = [g for g in groups if g in changes]
    cell_seeds = [set().union(*(set(changes[g][k]) for k in REDUCTION_METRICS)) for g in groups]
    complete = set.intersection(*cell_seeds) if cell_seeds else set()
    avg: dict[str, Any] = {"seeds": len(complete), "cells": len(groups)}
    for k in REDUCTION_METRICS:
        per_seed: dict[int, list[float]] = {}
        for g in groups:
            for s, v in changes[g][k].items():
                per_seed.setdefault(s, []).append(v)
        use = [v for s, v in per_seed.items() if s in complete or not complete]
        avg[k] = mean_interval([float(np.mean(v)) for v in use], confidence)
    return avg


def reductions(rows: list[dict[str, Any]], ours: str = "sensascale", base: BaseChoice = "chronus",
               confidence: float = CONFIDENCE) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The relative change (%) of ``ours`` vs ``base`` (one policy, or one per cell:
    :func:`best_baselines`), 100·(ours − base)/base, per :data:`REDUCTION_METRICS` metric
    (the :data:`DIFFERENCES` columns: an absolute difference instead).

    Per (workload, node size, node shape): the change is computed seed by seed (paired:
    the same seed's instance under both policies) and summarised as (mean, lo, hi) over the
    seeds; row keys ``k``, ``k_lo``, ``k_hi``, ``base`` and ``seeds`` (seeds with both
    runs). Seeds where the base is 0 give no relative change for that metric (a
    difference column still has one). The average (the
    paper's form, a mean over cells, here over every cell present; :func:`averages` gives
    the readings over subsets): per seed the mean of the cells' changes, then ``avg[k]`` =
    (mean, lo, hi) over the seeds. Only seeds that every cell has enter it (a partial
    table's unfinished seed would average other cells); ``avg["seeds"]`` is their number.
    When no seed is complete, every seed enters with the cells it has, and ``avg["seeds"]`` is 0.
    """
    per, changes = _paired(rows, ours, base, confidence)
    return per, _average(changes, list(changes), confidence)


def main_node(rows: Iterable[dict[str, Any]]) -> str:
    """The node shape of the main cells: the one the Helios cells run on (else the most common)."""
    rows = list(rows)
    helios = {r.get("node", "synergy") for r in rows if r["workload"] == "Helios"}
    if len(helios) == 1:
        return helios.pop()
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.get("node", "synergy")] = counts.get(r.get("node", "synergy"), 0) + 1
    return max(counts, key=lambda n: counts[n]) if counts else "synergy"


READINGS: tuple[tuple[str, Any], ...] = (
    ("all", lambda w, g: True),
    ("Philly", lambda w, g: w.startswith("Philly")),
    ("Helios", lambda w, g: w == "Helios"),
    ("Philly on 8-GPU, Helios on 16-GPU nodes", lambda w, g: (w.startswith("Philly") and g == 8) or (w == "Helios" and g == 16)),
)
"""(name, predicate on workload label and GPUs per node) of each average, over the main node
shape's cells (the full table: all = 8 cells, Philly 6, Helios 2, the 4-cell reading)."""


def averages(rows: list[dict[str, Any]], ours: str = "sensascale", base: BaseChoice = "chronus",
             confidence: float = CONFIDENCE) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """Per-cell changes (as :func:`reductions`) and the :data:`READINGS` averages over the
    cells of the main node shape (:func:`main_node`); a reading with no cell is left out."""
    per, changes = _paired(rows, ours, base, confidence)
    node = main_node(rows)
    out = []
    for name, pred in READINGS:
        groups = [g for g in changes if g[2] == node and pred(g[0], g[1])]
        if groups:
            out.append((f"{name} ({len(groups)} cells, {node} nodes)", _average(changes, groups, confidence)))
    return per, out


def best_baselines(cells: list[dict[str, Any]]) -> dict[Group, str]:
    """Per cell (:func:`cell_rows`), the baseline with the fewest violations (mean SLO
    violation rate over seeds), then the lowest mean JCT, among the policies that are not
    a SensaScale configuration (:data:`OURS`, decomposition rows)."""
    best: dict[Group, tuple[float, float, str]] = {}
    for c in cells:
        p = c["policy"]
        if p in OURS or p.startswith("sensascale"):
            continue
        v, j = c["slo_violation_rate"], c["avg_jct"]
        score = (math.inf if v is None or math.isnan(v) else v, math.inf if j is None or math.isnan(j) else j, p)
        grp = _group(c)
        if grp not in best or score < best[grp]:
            best[grp] = score
    return {g: s[2] for g, s in best.items()}


