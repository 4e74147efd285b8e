"""The paper's experiment: {Philly SLO, MIX1, MIX2, Helios-calibrated} ×
{8-GPU, 16-GPU nodes} × policies × seeds, run as a sweep, reported per cell (workload ×
node size × policy) as the mean and 95 % Student-t interval over the seeds
(:func:`sensaopt.sweep.stats.mean_interval`), the relative change of SensaScale versus
Chronus (the paper's form) with its interval over per-seed paired differences, and figures.

Settings (all recorded in each run's stored config):

* Philly workloads: the three Chronus traces (all 14 days, GPU jobs only) on
  ``philly-8`` (120 × 8 GPUs) / ``philly-16`` (60 × 16); Helios: the Helios-calibrated
  generator (``helios_days`` days of Venus arrivals, deadlines by the SPEC rule) on
  ``helios-8`` (96 × 8) / ``helios-16`` (48 × 16);
* nodes: Synergy's ratio, 3 cores and 62.5 GB per GPU (``node="chronus"``: 16 cores
  and 32 GB per GPU); model types: ``sensitive_fraction`` of the jobs sensitive;
  rounds of ``round_minutes``; ``seeds`` (each drives model types, the Helios generator,
  Helios deadlines and the thinning);
* ``scale`` < 1 runs a scaled-down copy: every job kept with probability ``scale``
  (seeded thinning, the timeline unchanged) on a cluster with ``scale`` × the GPUs
  (rounded to a multiple of 16 so both node sizes have the same total), which keeps
  the offered load.

Reported per run (:data:`RUN_METRICS`): misses (SLO violation rate, and the weighted rate,
which differs from it only where jobs have soft deadlines: MIX2) apart from times (average
JCT; queueing both ways: ``avg_queueing_time`` = first start − arrival, and
``avg_pending_time`` = total minutes released but not running, the Chronus artifact's
count), allocation changes per job (restarts, migrations, resizes) and GPU utilisation.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.sweep.config import RunConfig
from sensaopt.sweep.stats import mean_interval

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WORKLOADS = (("Philly SLO", "chronus-slo", "philly"), ("Philly MIX1", "chronus-mix1", "philly"),
             ("Philly MIX2", "chronus-mix2", "philly"), ("Helios", "helios-gen", "helios"),
             ("Helios Venus log", "helios-venus", "helios"))
"""(label, trace source, cluster family) of each workload the experiment can run."""
DEFAULT_WORKLOADS = ("Philly SLO", "Philly MIX1", "Philly MIX2", "Helios")
"""The paper's four workloads (labels); ``--workloads`` picks others (the real Venus log: ``helios-venus``)."""
POLICIES = ("sensascale", "sensascale-paper", "chronus", "synergy-tune", "edf", "edf-demote", "edf-tune", "edf-tune-demote",
            "lst", "fifo")
"""The second edition's policies (the command runs those registered unless ``--policy`` is given)."""
FIRST_EDITION_POLICIES = ("sensascale", "chronus", "synergy-tune", "edf", "fifo")
SHAPES = ("chronus", "alibaba")
"""Node shapes (``sensaopt.traces.presets.NODE_VARIANTS``) of the extra Philly SLO cells."""
SHAPE_WORKLOAD = "Philly SLO"  # the workload (a WORKLOADS label) the extra node shapes run
OURS = ("sensascale", "sensascale-paper")  # SensaScale configurations: never a "baseline"
DECOMPOSITION: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("speed<=1", (("adjust", False), ("fill_spare", False), ("pairing", False))),
    ("ordering", (("adjust", False), ("backfill", "none"), ("fill_spare", False), ("pairing", False), ("repack_limit", 0),
                  ("stay_put", False))),
)
"""The speed-up decomposition (``--decomposition``): SensaScale (its defaults) with no job
above speed 1 (no pairing, no spare filling, no deadline-aware adjustment: every job at
most its proportional share), and "ordering only" (also no backfill reservations, no
repack, no stay-put: its order with greedy proportional placement); rows labelled
``sensascale (speed<=1)``, ``sensascale (ordering)`` on the Philly SLO cell with
8-GPU nodes of the main node shape."""
PAPER_BUDGET = "work:5"
"""The lease MILPs' budget (``--budget``): deterministic work units per solve (HiGHS: 100
nodes a unit, :mod:`sensaopt.solvers.budget`), so the table is the same on any machine load;
"time": Chronus's own 5-s wall-clock limit (the tables made before the budget existed)."""
SAFETY_NET_S = 60.0  # seconds: a lease solve's wall-clock safety net under a work budget (Chronus's time_limit_s)
BUDGET_KNOBS = ("budget", "time_limit_s")  # the knobs budget_knobs sets
FULL_GPUS = {"philly": 960, "helios": 768}
# the paper's average relative change of SensaScale vs Chronus (%); its queueing figure is shown
# under both queueing definitions (the paper does not say which; the Chronus artifact counts pending time)
PAPER_REDUCTION = {"slo_violation_rate": -74.22, "avg_jct": -25.86, "avg_queueing_time": -82.75, "avg_pending_time": -82.75}
# per-run figures: (column, source in the record's metrics, divide by the job count) -- units in RUN_UNITS
RUN_METRICS: tuple[tuple[str, str, bool], ...] = (
    ("slo_violation_rate", "slo_violation_rate", False), ("weighted_violation_rate", "weighted_violation_rate", False),
    ("avg_jct", "avg_jct", False), ("avg_queueing_time", "avg_queueing_time", False), ("avg_pending_time", "avg_pending_time", False),
    ("restarts_per_job", "preemptions", True), ("migrations_per_job", "migrations", True), ("resizes_per_job", "resizes", True),
    ("gpu_utilization", "gpu_utilization", False))
RUN_UNITS = {"slo_violation_rate": "fraction", "weighted_violation_rate": "fraction of deadline value", "avg_jct": "minutes",
             "avg_queueing_time": "minutes (first start - arrival)", "avg_pending_time": "minutes (total pending)",
             "restarts_per_job": "count per job", "migrations_per_job": "count per job", "resizes_per_job": "count per job",
             "gpu_utilization": "fraction"}
METRIC_NAMES = tuple(k for k, _, _ in RUN_METRICS)
# the relative change vs Chronus is computed for these (misses, then times)
REDUCTION_METRICS = ("slo_violation_rate", "servable_violation_rate", "weighted_violation_rate", "avg_jct", "avg_queueing_time",
                     "avg_pending_time")
REDUCTION_HEADERS = ("SLO violation rate", "over servable jobs", "weighted violation rate", "avg JCT", "avg queueing",
                     "avg pending")
# the bar figure's panels: (column, axis label, multiplier)
METRICS = (("slo_violation_rate", "SLO violation rate (%)", 100.0), ("avg_jct", "avg JCT (min)", 1.0),
           ("avg_queueing_time", "avg queueing, first start − arrival (min)", 1.0))
SERVABLE_METRICS = ("servable_violation_rate", "unservable")
"""Per run, from the record's ``servable`` counts (:mod:`sensaopt.servable`): the SLO
violation rate over the servable deadline jobs (fraction) and the number of deadline
jobs no schedule can serve."""
BOUND_METRICS = ("forced_misses", "forced_misses_share", "misses_above_forced", "jct_bound")
"""Per run, from its workload's instance alone (:mod:`sensaopt.bounds`): the deadline misses
no schedule avoids (at best speed, and at the proportional share: for policies that never
speed a job up), the run's misses beyond the first (count), and the average-JCT lower
bound at best speed (minutes, every deadline relaxed)."""
LEGACY_RUN_COLUMNS = ("workload", "node_gpus", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
"""runs.csv columns of tables made before node shapes and servable jobs (results/paper-full, paper-scale-0.05)."""
METRIC_NAMES = METRIC_NAMES + SERVABLE_METRICS
PRE_BOUNDS_RUN_COLUMNS = ("workload", "node_gpus", "node", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
"""runs.csv columns of tables made before the bound columns."""
METRIC_NAMES = METRIC_NAMES + BOUND_METRICS
RUN_COLUMNS = ("workload", "node_gpus", "node", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
FIGURE_FILES = ("fig_bars.png", "fig_jct_cdf.png")  # what figures() writes into its folder
CONFIDENCE = 0.95


@dataclass(frozen=True)
class PaperSettings:
    """What the experiment runs. ``node``: the node shape of the 8 main cells; ``shapes``:
    further node shapes, each running :data:`SHAPE_WORKLOAD` on ``shape_gpus``-GPU nodes;
    ``decomposition``: the :data:`DECOMPOSITION` rows; ``duration_at``: what a trace
    duration means (:data:`sensaopt.traces.trace.DURATION_AT`; None: the default of each
    node shape); ``workloads``: the labels of the :data:`WORKLOADS` run."""

    scale: float = 1.0
    policies: tuple[str, ...] = POLICIES
    seeds: tuple[int, ...] = (0, 1, 2)
    round_minutes: float = 5.0
    sensitive_fraction: float = 0.5
    node: str = "synergy"  # a NODE_VARIANTS name
    helios_days: float = 14.0
    shapes: tuple[str, ...] = SHAPES
    shape_gpus: tuple[int, ...] = (8, 16)
    decomposition: bool = False
    duration_at: str | None = None
    workloads: tuple[str, ...] = DEFAULT_WORKLOADS  # labels of WORKLOADS
    budget: str = PAPER_BUDGET  # the solver-based policies' budget (budget_knobs)


LEGACY_SETTINGS: dict[str, Any] = {"shapes": [], "shape_gpus": [8, 16], "decomposition": False, "duration_at": "reference",
                                   "workloads": list(DEFAULT_WORKLOADS), "budget": "time"}
"""What a provenance record whose settings lack a field did (made before the field existed)."""


def legacy_args(settings: dict[str, Any]) -> list[str]:
    """Arguments that make today's command plan what a recorded command (its provenance
    ``settings``) planned, for the fields its settings lack (:data:`LEGACY_SETTINGS`;
    ``decomposition`` is off by default, then and now)."""
    out: list[str] = []
    if "shapes" not in settings:
        out += ["--shape", "none"]
    if "duration_at" not in settings:
        out += ["--duration-at", "reference"]
    if "budget" not in settings:
        out += ["--budget", "time"]
    return out


RETIRED_OUT_FLAGS = ("-o", "--output")
"""How ``experiment paper`` named its output folder before ``--out-dir`` (commands recorded in provenance.json)."""


def replay_args(args: list[str]) -> list[str]:
    """A recorded ``experiment paper`` argument list (provenance ``args``) in today's
    spelling: the output folder as ``--out-dir`` (recorded before it as ``-o``/``--output``,
    also ``--output=DIR``); everything else unchanged."""
    out: list[str] = []
    for a in args:
        flag, eq, value = a.partition("=")
        if a in RETIRED_OUT_FLAGS:
            out.append("--out-dir")
        elif eq and flag in RETIRED_OUT_FLAGS:
            out.append(f"--out-dir={value}")
        else:
            out.append(a)
    return out


def settings_record(s: PaperSettings) -> dict[str, Any]:
    """``s`` as provenance stores it."""
    from dataclasses import asdict

    return asdict(s)


def node_of(cfg: RunConfig) -> str:
    """The node shape of a run: the preset's variant suffix (``synergy`` without one), or
    ``custom`` when cores or GB per GPU are set."""
    from sensaopt.traces.presets import NODE_VARIANTS

    if cfg.cpu_per_gpu is not None or cfg.mem_per_gpu is not None:
        return "custom"
    return next((v for v in NODE_VARIANTS.names() if cfg.preset.endswith(f"-{v}")), "synergy")


def policy_label(cfg: RunConfig) -> str:
    """The policy column of a run: its policy, or ``sensascale (speed<=1)`` for a
    :data:`DECOMPOSITION` variant, or ``policy [k=v, ...]`` for other knob overrides
    (the knobs of a work budget, :func:`budget_knobs`, are not named: they change how
    long a solve may search, recorded in the run's config and provenance)."""
    own = cfg.policy_config
    if dict(own).get("budget") is not None:
        own = tuple((k, v) for k, v in own if k not in BUDGET_KNOBS)
    if not own:
        return cfg.policy
    for name, knobs in DECOMPOSITION:
        if cfg.policy == "sensascale" and tuple(cfg.policy_config) == knobs:
            return f"sensascale ({name})"
    return f"{cfg.policy} [{', '.join(f'{k}={v}' for k, v in own)}]"


def workload_choice(names: Iterable[str]) -> tuple[str, ...]:
    """The labels of the workloads named (each a :data:`WORKLOADS` trace source or label,
    comma-separated or repeated) in :data:`WORKLOADS` order; ValueError naming an unknown one."""
    by_name = {w[1]: w[0] for w in WORKLOADS} | {w[0].lower(): w[0] for w in WORKLOADS}
    chosen: set[str] = set()
    for n in (x.strip() for name in names for x in name.split(",")):
        if n and n.lower() not in by_name:
            raise ValueError(f"unknown workload {n!r} (known: {', '.join(w[1] for w in WORKLOADS)})")
        if n:
            chosen.add(by_name[n.lower()])
    if not chosen:
        raise ValueError("no workload named")
    return tuple(w[0] for w in WORKLOADS if w[0] in chosen)


def check_decomposition() -> None:
    """Every :data:`DECOMPOSITION` knob is a SensaScale knob (ValueError naming it, before any run)."""
    from dataclasses import fields

    from sensaopt.policies import policy_config_class

    known = {f.name for f in fields(policy_config_class("sensascale"))}
    for name, knobs in DECOMPOSITION:
        bad = [k for k, _ in knobs if k not in known]
        if bad:
            raise ValueError(f"decomposition {name!r}: sensascale has no knob {', '.join(bad)}")


def cluster_for(family: str, node_gpus: int, s: PaperSettings, node: str | None = None) -> tuple[str, float]:
    """(preset, kept job fraction) for a workload family and node size (on ``node``, default ``s.node``)."""
    node = s.node if node is None else node
    suffix = "" if node == "synergy" else f"-{node}"
    if s.scale >= 1.0:
        return f"{family}-{node_gpus}{suffix}", 1.0
    gpus = max(16, round(FULL_GPUS[family] * s.scale / 16) * 16)
    return f"{gpus // node_gpus}x{node_gpus}{suffix}", gpus / FULL_GPUS[family]


def paper_configs(s: PaperSettings) -> list[tuple[str, int, RunConfig]]:
    """(workload label, GPUs per node, run configuration) of every run of the experiment,
    seed by seed (a sweep stopped early holds whole seeds first when run in this order)."""
    from sensaopt.config import as_pairs

    out = []
    chosen = [w for w in WORKLOADS if w[0] in s.workloads]
    cells = [(label, trace, family, g, s.node) for label, trace, family in chosen for g in (8, 16)]
    cells += [(label, trace, family, g, shape) for shape in s.shapes if shape != s.node
              for label, trace, family in chosen if label == SHAPE_WORKLOAD for g in s.shape_gpus]
    for seed in s.seeds:
        for label, trace, family, g, node in cells:
            preset, frac = cluster_for(family, g, s, node)
            variants: list[tuple[str, dict[str, Any]]] = [(pol, budget_knobs(pol, s.budget)) for pol in s.policies]
            if s.decomposition and label == SHAPE_WORKLOAD and g == 8 and node == s.node:
                variants += [("sensascale", dict(knobs)) for _, knobs in DECOMPOSITION]
            for pol, knobs in variants:
                cfg = RunConfig(trace=trace, preset=preset, policy=pol, seed=seed, sensitive_fraction=s.sensitive_fraction,
                                round_minutes=s.round_minutes, sample=frac, days=s.helios_days if family == "helios" else None,
                                duration_at=s.duration_at, policy_config=as_pairs(knobs))
                out.append((label, g, cfg))
    return out


def budget_knobs(policy: str, budget: str) -> dict[str, Any]:
    """The knobs giving ``policy`` the work ``budget`` (a policy with a ``budget`` knob:
    Chronus's lease MILPs; its ``time_limit_s`` becomes the :data:`SAFETY_NET_S` safety
    net); none for "time" (the policy's own wall-clock limit) or a policy without solver."""
    from sensaopt.solvers.budget import WALL_CLOCK

    knobs = policy_defaults(policy) or {}
    if budget == WALL_CLOCK or "budget" not in knobs:
        return {}
    return {"budget": budget, **({"time_limit_s": SAFETY_NET_S} if "time_limit_s" in knobs else {})}


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


Group = tuple[str, int, str]  # (workload, GPUs per node, node shape)


def _group(r: dict[str, Any]) -> Group:
    return (r["workload"], r["node_gpus"], r.get("node", "synergy"))


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
            ch = {s: _rel(by[grp + (ours, s)].get(k), by[grp + (b, s)].get(k)) for s in seeds}
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
    :func:`best_baselines`), 100·(ours − base)/base, per :data:`REDUCTION_METRICS` metric.

    Per (workload, node size, node shape): the change is computed seed by seed (paired:
    the same seed's instance under both policies) and summarised as (mean, lo, hi) over the
    seeds; row keys ``k``, ``k_lo``, ``k_hi``, ``base`` and ``seeds`` (seeds with both
    runs). Seeds where the base is 0 give no change for that metric. The average (the
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
    lines = [f"**{ours} vs {name}**, relative change (%) = 100·({ours} − {short})/{short}, per seed (paired), "
             f"then mean [{pc} interval] over seeds:", "",
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


def _groups(rows: list[dict[str, Any]]) -> list[Group]:
    """(workload, GPUs per node, node shape) cells present in ``rows``: :data:`WORKLOADS`
    order, Synergy nodes then :data:`SHAPES`, 8 before 16."""
    order = [w for w, _, _ in WORKLOADS]
    nodes = ["synergy", *SHAPES]
    return sorted({_group(r) for r in rows},
                  key=lambda x: (nodes.index(x[2]) if x[2] in nodes else len(nodes), x[2],
                                 order.index(x[0]) if x[0] in order else len(order), x[0], x[1]))


def _policies(rows: list[dict[str, Any]]) -> list[str]:
    """Policies present in ``rows``: :data:`POLICIES` order first, then the others sorted."""
    present = {r["policy"] for r in rows}
    return [p for p in POLICIES if p in present] + sorted(present - set(POLICIES))


def bars_figure(cells: list[dict[str, Any]], scale: str | None = None) -> Figure:
    """The three :data:`METRICS` (one panel each) per workload × node size × node shape.

    One bar per policy in its :func:`sensaopt.palette.policy_color` at the mean over seeds
    (:func:`cell_rows`), caps for the 95 % Student-t interval only where there is one (no caps
    with one seed); each group's tick names its seeds. One legend above the panels (never over
    bars), its title saying what bars and caps are and the ``scale``.

    Args:
        cells: :func:`cell_rows` rows (``seeds``, each metric's mean, ``_lo`` and ``_hi``).
        scale: the runs' scale, e.g. :func:`sensaopt.plot.scale_text`'s
            (None: not stated).

    Returns:
        The figure (not attached to pyplot).
    """
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color
    from sensaopt.plot import INTERVAL_NOTE, interval_caps, seeds_text

    groups, pols = _groups(cells), _policies(cells)
    by = {(*_group(r), r["policy"]): r for r in cells}
    fig = Figure(figsize=(max(12, 1.2 * len(groups)), 10), layout="constrained")
    axes = fig.subplots(3, 1)
    x = np.arange(len(groups))
    wdt = 0.8 / max(1, len(pols))
    seeds = {grp: seeds_text(r.get("seeds", 1) for r in cells if _group(r) == grp) for grp in groups}

    def col(rs: list[dict[str, Any] | None], k: str, mult: float) -> np.ndarray:
        return np.array([np.nan if r is None or r.get(k) is None else r[k] * mult for r in rs], dtype=float)

    for ax, (k, title, mult) in zip(axes, METRICS):
        for i, p in enumerate(pols):
            rs = [by.get((*grp, p)) for grp in groups]
            vals = col(rs, k, mult)
            pos = x + (i - (len(pols) - 1) / 2) * wdt
            bars = ax.bar(pos, np.nan_to_num(vals, nan=0.0), wdt, label=p, color=policy_color(p))
            for b in bars:
                b.set_gid(f"bar:{p}")
            interval_caps(ax, pos, vals, col(rs, f"{k}_lo", mult), col(rs, f"{k}_hi", mult), f"ci:{p}")
        ax.set_xticks(x, [f"{w}\n{g}-GPU" + ("" if n == "synergy" else f"\n{n}") + f"\n{seeds[(w, g, n)]}" for w, g, n in groups])
        ax.set_ylabel(title)
    note = f"bars: {INTERVAL_NOTE}" + ("" if scale is None else f"; {scale}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=min(max(1, len(pols)), 6), frameon=False,
               title=note)
    return fig


def jct_cdf_figure(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
                   groups: list[Group]) -> Figure:
    """JCT CDF (minutes, log x) per (workload, node size, node shape) in ``groups``.

    One line per policy in its :func:`sensaopt.palette.policy_color`, the finished jobs of
    all its stored seeds pooled, each narrower than the one before and drawn over it
    (:func:`sensaopt.plot.stacked_widths`: coinciding CDFs stay visible); each panel's title names its cluster preset and seeds, the
    legend above the panels the runs' scale
    (:func:`sensaopt.plot.scale_text`).

    Args:
        runs: :func:`paper_configs` triples (workload label, GPUs per node, run configuration).
        records: stored run records by config key (``jct``: minutes per finished job).
        groups: the panels, as :func:`_groups` returns them.

    Returns:
        The figure (not attached to pyplot).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    from sensaopt.palette import policy_color
    from sensaopt.plot import scale_text, seeds_text, stacked_widths

    n = len(groups)
    cols = min(4, max(1, n))
    n_rows = math.ceil(n / cols) if n else 1
    fig = Figure(figsize=(4 * cols, 3.2 * n_rows + 0.4), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False)
    pooled: dict[Group, dict[str, list[float]]] = {}
    seeds: dict[Group, dict[str, set[int]]] = {}
    presets: dict[Group, set[str]] = {}
    wanted = set(groups)
    for label, g, cfg in runs:
        grp = (label, g, node_of(cfg))
        if grp not in wanted:
            continue
        r = records.get(cfg.key())  # after the cheap filter: key() hashes the whole config
        if r is not None and r.get("jct"):
            pooled.setdefault(grp, {}).setdefault(policy_label(cfg), []).extend(r["jct"])
            seeds.setdefault(grp, {}).setdefault(policy_label(cfg), set()).add(cfg.seed)
            presets.setdefault(grp, set()).add(cfg.preset)
    shown: dict[str, Any] = {}
    for ax, grp in zip(axes.flat, groups):
        lines = pooled.get(grp, {})
        for k, ((pol, jct), width) in enumerate(zip(lines.items(), stacked_widths(len(lines)))):  # coinciding lines stay visible
            v = np.sort(np.asarray(jct, dtype=float))
            (line,) = ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=pol, color=policy_color(pol), gid=f"cdf:{pol}",
                              linewidth=width, zorder=2 + 0.01 * k)
            shown.setdefault(pol, line)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones collide on short ranges
        counts = [len(s) for s in seeds.get(grp, {}).values()]
        ax.set_title(f"{grp[0]}, {grp[1]}-GPU " + ("" if grp[2] == "synergy" else f"{grp[2]} ") + "nodes\n"
                     + f"{', '.join(sorted(presets.get(grp, set()))) or 'no runs'}, {seeds_text(counts)} pooled", fontsize=9)
        ax.set_xlabel("JCT (min), seeds pooled")
        ax.set_ylabel("CDF")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    if shown:
        fig.legend(list(shown.values()), list(shown), loc="outside upper center", ncol=min(len(shown), 6), frameon=False,
                   title=scale_text(cfg.sample for label, g, cfg in runs if (label, g, node_of(cfg)) in wanted))
    return fig


def figures(cells: list[dict[str, Any]], runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
            outdir: str | Path, field: str = "-o") -> list[Path]:
    """Write fig_bars.png (:func:`bars_figure` of :func:`cell_rows`) and fig_jct_cdf.png (:func:`jct_cdf_figure`)
    into ``outdir`` (:data:`FIGURE_FILES`), each atomically and never onto a symlink, FIFO or device (:mod:`sensaopt.outputs`).

    Args:
        cells: :func:`cell_rows` rows.
        runs: :func:`paper_configs` triples; their kept job fractions give the scale the bars state.
        records: stored run records by config key.
        outdir: the folder written into.
        field: the option named in errors.

    Returns:
        The paths written.
    """
    from sensaopt.outputs import staged
    from sensaopt.plot import scale_text

    paths = [Path(outdir) / name for name in FIGURE_FILES]
    scale = scale_text(cfg.sample for _, _, cfg in runs)
    for p, fig in zip(paths, (bars_figure(cells, scale), jct_cdf_figure(runs, records, _groups(cells)))):
        with staged(p, field=field) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    return paths


# ---- which configuration ran -------------------------------------------------------------------
def _jsonable(x: Any) -> Any:
    import json

    return json.loads(json.dumps(x, default=str))


def policy_defaults(policy: str) -> dict[str, Any] | None:
    """The knobs of ``policy``'s default configuration (this code's), JSON-ready; None
    for a policy not registered here."""
    from dataclasses import asdict, is_dataclass

    from sensaopt.policies import POLICIES as REGISTERED
    from sensaopt.policies import make_policy

    if policy not in REGISTERED:
        return None
    cfg = make_policy(policy).config
    return _jsonable(asdict(cfg)) if is_dataclass(cfg) and not isinstance(cfg, type) else {}


def _diff(ran: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    return [f"{k}={_text(v)}" for k, v in sorted(ran.items()) if k not in ref or ref[k] != v] + \
        [f"{k} absent" for k in sorted(set(ref) - set(ran))]


def _text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def configuration_lines(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown bullets naming, per policy row of the table, the configuration that ran,
    read from its stored records' ``params["config"]``: the knobs that differ from the
    policy's defaults (this code's), and for ``sensascale`` rows also those that differ
    from ``sensascale-paper``'s (when that policy is registered). Several configurations
    under one label (records from different code) are each listed."""
    seen: dict[str, list[dict[str, Any] | None]] = {}
    base: dict[str, str] = {}
    for _, _, cfg in runs:
        r = records.get(cfg.key())
        if r is None:
            continue
        label = policy_label(cfg)
        base[label] = cfg.policy
        conf = (r.get("params") or {}).get("config")
        lst = seen.setdefault(label, [])
        if conf not in lst:
            lst.append(conf)
    paper = policy_defaults("sensascale-paper")
    lines = []
    for label in sorted(seen, key=lambda p: (POLICIES.index(p) if p in POLICIES else len(POLICIES), p)):
        pol = base[label]
        defaults = policy_defaults(pol)
        parts = []
        for conf in seen[label]:
            if conf is None:
                parts.append("not recorded (its runs predate `params.config` in the records)")
                continue
            d = "n/a (policy not registered here)" if defaults is None else (", ".join(_diff(conf, defaults)) or "its defaults")
            text = f"vs its defaults: {d}"
            if pol.startswith("sensascale") and pol != "sensascale-paper" and paper is not None:
                text += f"; vs sensascale-paper: {', '.join(_diff(conf, paper)) or 'the same'}"
            parts.append(text)
        lines.append(f"- `{label}`: " + " | ".join(parts))
    return lines


def build_report(s: PaperSettings, runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
                 confidence: float = CONFIDENCE, bounds: dict[str, dict[str, float]] | None = None,
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(runs.csv rows, table.csv cells, table.md) of the stored ``records`` of ``runs``:
    the configurations that ran (:func:`configuration_lines`), the cells, SensaScale vs
    Chronus, vs EDF (when run) and vs the best baseline per cell (:func:`best_baselines`),
    each per cell and with the :data:`READINGS` averages; and the same for
    ``sensascale-paper`` vs the best baseline when it ran. ``bounds``: :func:`table_rows`'s."""
    rows = table_rows(runs, records, bounds)
    cells = cell_rows(rows, confidence)
    per, avgs = averages(rows, base="chronus", confidence=confidence)
    others: list[tuple[str, list[dict[str, Any]], Any]] = []
    pols = {r["policy"] for r in rows}
    if "edf" in pols:
        others.append(("edf", *averages(rows, base="edf", confidence=confidence)))
    best = best_baselines(cells)
    others.append(("best", *averages(rows, base=best, confidence=confidence)))
    md = f"Settings: {s}\n\nConfigurations that ran (from the stored records):\n\n" + "\n".join(configuration_lines(runs, records))
    md += "\n\nBest baseline per cell (fewest violations, then lowest JCT, among the policies that are not SensaScale): " + \
          "; ".join(f"{w} {g}-GPU {n}: `{p}`" for (w, g, n), p in best.items()) + "\n\n"
    md += table_markdown(cells, per, avgs, confidence, others)
    if "sensascale-paper" in pols:
        pp, pa = averages(rows, ours="sensascale-paper", base=best, confidence=confidence)
        md += "\n" + comparison_markdown("best", pp, pa, confidence, ours="sensascale-paper")
    return rows, cells, md


# ---- results with provenance -------------------------------------------------------------------
REPORT_FILES = ("table.md", "table.csv", "runs.csv") + FIGURE_FILES  # what write_report() writes
PARQUET_FILES = ("table.parquet", "runs.parquet")  # and with parquet=True (--format parquet) these beside the CSVs
RESULT_FILES = REPORT_FILES + ("provenance.json",)  # and a --results folder also gets provenance.json


def paper_args(s: PaperSettings, output: str | Path, results: str | Path | None = None) -> list[str]:
    """The ``sensaopt`` arguments of the ``experiment paper`` command that plans exactly
    the runs of ``s`` (every setting spelled out, defaults too; execution options such as
    ``--workers`` left out: they change how, not what). ``s.seeds`` must be consecutive."""
    seeds = list(s.seeds)
    if not seeds or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(f"seeds must be consecutive to be given as --seed/--seeds, got {s.seeds}")
    args = ["experiment", "paper", "--out-dir", str(output), "--scale", repr(s.scale), "--seeds", str(len(seeds)), "--seed", str(seeds[0])]
    for p in s.policies:
        args += ["--policy", p]
    args += ["--round-minutes", repr(s.round_minutes), "--sensitive-fraction", repr(s.sensitive_fraction), "--node", s.node,
             "--helios-days", repr(s.helios_days)]
    for shape in s.shapes or ("none",):
        args += ["--shape", shape]
    for g in s.shape_gpus:
        args += ["--shape-gpus", str(g)]
    args += ["--duration-at", s.duration_at or "none"] + (["--decomposition"] if s.decomposition else [])
    args += ["--workloads", ",".join(s.workloads), "--budget", s.budget]
    if results is not None:
        args += ["--results", str(results)]
    return args


def provenance(s: PaperSettings, args: list[str], runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
               status: dict[str, str], *, git: dict[str, Any], machine: dict[str, Any], wall_s: float,
               execution: dict[str, Any]) -> dict[str, Any]:
    """The provenance record of a results folder: the command (``args``, run from the
    repository root as ``sensaopt ARGS``), the settings, the code (``git``: commit and
    uncommitted changes, taken when the command started), package versions, the machine
    (taken at the start; the load average at the end too), the command's wall time
    (seconds) and, per planned run, its config key (:meth:`RunConfig.key`), its cell, what
    this command did with it (``status``: computed, reused = stored before, failed,
    missing) and its simulation and whole-run wall times (seconds)."""
    import shlex

    from sensaopt.result import package_versions
    from sensaopt.sweep.provenance import load_average

    plan = []
    for label, g, cfg in runs:
        key = cfg.key()
        r = records.get(key) or {}
        plan.append({"key": key, "workload": label, "node_gpus": g, "node": node_of(cfg), "policy": policy_label(cfg), "seed": cfg.seed,
                     "preset": cfg.preset,
                     "status": status.get(key, "missing"), "simulate_s": r.get("simulate_s"), "wall_s": r.get("wall_s"),
                     **({"lease": r["lease"]} if r.get("lease") else {})})
    counts = {k: sum(1 for p in plan if p["status"] == k) for k in ("computed", "reused", "failed", "missing")}
    return {"command": "sensaopt " + shlex.join(args), "args": args, "settings": settings_record(s), "git": git,
            "versions": package_versions(), "machine": {**machine, "loadavg_end": load_average()}, "wall_s": round(wall_s, 1),
            "execution": execution, "runs_total": len(plan), **{f"runs_{k}": v for k, v in counts.items()}, "runs": plan}


def write_report(outdir: str | Path, cells: list[dict[str, Any]], rows: list[dict[str, Any]], md: str,
                 runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]], field: str = "--out-dir",
                 parquet: bool = False) -> list[Path]:
    """Write :data:`REPORT_FILES` into ``outdir``: table.md (``md``), table.csv (``cells``,
    one row per cell: means and interval bounds), runs.csv (``rows``, one per run with its
    config key), with ``parquet`` the same two tables as :data:`PARQUET_FILES`, and, when
    there are cells, the figures (:func:`figures`); ``field`` names the option in errors.
    Returns the paths written."""
    from sensaopt.outputs import write_bytes, write_text
    from sensaopt.tables import table_bytes

    d = Path(outdir)
    write_text(d / "table.md", md, field=field)
    write_text(d / "table.csv", table_csv(cells), field=field)
    write_text(d / "runs.csv", table_csv(rows), field=field)
    paths = [d / "table.md", d / "table.csv", d / "runs.csv"]
    if parquet:
        for name, table in zip(PARQUET_FILES, (cells, rows)):
            write_bytes(d / name, table_bytes(table, list(table[0]) if table else [], "parquet"), field=field)
            paths.append(d / name)
    return paths + (figures(cells, runs, records, d, field) if cells else [])
