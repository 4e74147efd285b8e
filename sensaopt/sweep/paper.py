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
             ("Philly MIX2", "chronus-mix2", "philly"), ("Helios", "helios-gen", "helios"))
POLICIES = ("sensascale", "chronus", "synergy-tune", "edf", "fifo")
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
REDUCTION_METRICS = ("slo_violation_rate", "weighted_violation_rate", "avg_jct", "avg_queueing_time", "avg_pending_time")
# the bar figure's panels: (column, axis label, multiplier)
METRICS = (("slo_violation_rate", "SLO violation rate (%)", 100.0), ("avg_jct", "avg JCT (min)", 1.0),
           ("avg_queueing_time", "avg queueing, first start − arrival (min)", 1.0))
RUN_COLUMNS = ("workload", "node_gpus", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
FIGURE_FILES = ("fig_bars.png", "fig_jct_cdf.png")  # what figures() writes into its folder
CONFIDENCE = 0.95


@dataclass(frozen=True)
class PaperSettings:
    scale: float = 1.0
    policies: tuple[str, ...] = POLICIES
    seeds: tuple[int, ...] = (0, 1, 2)
    round_minutes: float = 5.0
    sensitive_fraction: float = 0.5
    node: str = "synergy"  # or "chronus"
    helios_days: float = 14.0


def cluster_for(family: str, node_gpus: int, s: PaperSettings) -> tuple[str, float]:
    """(preset, kept job fraction) for a workload family and node size."""
    suffix = "" if s.node == "synergy" else f"-{s.node}"
    if s.scale >= 1.0:
        return f"{family}-{node_gpus}{suffix}", 1.0
    gpus = max(16, round(FULL_GPUS[family] * s.scale / 16) * 16)
    return f"{gpus // node_gpus}x{node_gpus}{suffix}", gpus / FULL_GPUS[family]


def paper_configs(s: PaperSettings) -> list[tuple[str, int, RunConfig]]:
    """(workload label, GPUs per node, run configuration) of every run of the experiment,
    seed by seed (a sweep stopped early holds whole seeds first when run in this order)."""
    out = []
    for seed in s.seeds:
        for label, trace, family in WORKLOADS:
            for g in (8, 16):
                preset, frac = cluster_for(family, g, s)
                for pol in s.policies:
                    cfg = RunConfig(trace=trace, preset=preset, policy=pol, seed=seed, sensitive_fraction=s.sensitive_fraction,
                                    round_minutes=s.round_minutes, sample=frac, days=s.helios_days if family == "helios" else None)
                    out.append((label, g, cfg))
    return out


def run_values(metrics: dict[str, Any]) -> dict[str, float | None]:
    """The :data:`RUN_METRICS` of one record's metrics (None where the record predates a
    metric or it is undefined, e.g. no finished job)."""
    jobs = metrics.get("jobs") or 0
    out: dict[str, float | None] = {}
    for name, src, per_job in RUN_METRICS:
        v = metrics.get(src)
        out[name] = None if v is None else (float(v) / jobs if jobs else None) if per_job else float(v)
    return out


def table_rows(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per stored run (:data:`RUN_COLUMNS`): workload, node size, policy, seed,
    preset, config key, job count, :func:`run_values` and the simulation's wall time (s)."""
    rows = []
    for label, g, cfg in runs:
        key = cfg.key()
        r = records.get(key)
        if r is None:
            continue
        m = r["metrics"]
        rows.append({"workload": label, "node_gpus": g, "policy": cfg.policy, "seed": cfg.seed, "preset": cfg.preset, "key": key,
                     "jobs": m["jobs"], **run_values(m), "simulate_s": r.get("simulate_s")})
    return rows


def _cell_order(rows: Iterable[dict[str, Any]]) -> list[tuple[str, int, str]]:
    """(workload, node size, policy) cells of ``rows`` in :data:`WORKLOADS`, 8-before-16, :func:`_policies` order."""
    rows = list(rows)
    pols = _policies(rows)
    present = {(r["workload"], r["node_gpus"], r["policy"]) for r in rows}
    return [(w, g, p) for w, g in _groups(rows) for p in pols if (w, g, p) in present]


def cell_rows(rows: list[dict[str, Any]], confidence: float = CONFIDENCE) -> list[dict[str, Any]]:
    """One row per (workload, node size, policy): ``seeds`` (runs present), ``jobs`` (mean)
    and, per :data:`METRIC_NAMES` column ``k``, ``k`` (mean over seeds), ``k_lo`` and
    ``k_hi`` (Student-t interval; NaN with fewer than two seeds)."""
    by: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["workload"], r["node_gpus"], r["policy"]), []).append(r)
    out = []
    for cell in _cell_order(rows):
        rs = by[cell]
        row: dict[str, Any] = {"workload": cell[0], "node_gpus": cell[1], "policy": cell[2], "seeds": len(rs),
                               "jobs": float(np.mean([r["jobs"] for r in rs]))}
        for k in METRIC_NAMES:
            row[k], row[f"{k}_lo"], row[f"{k}_hi"] = mean_interval([r[k] for r in rs], confidence)
        out.append(row)
    return out


def _rel(ours: float | None, base: float | None) -> float | None:
    """100·(ours − base)/base, None when either is missing or the base is not positive."""
    if ours is None or base is None or not base > 0 or math.isnan(ours):
        return None
    return 100.0 * (ours - base) / base


def reductions(rows: list[dict[str, Any]], ours: str = "sensascale", base: str = "chronus",
               confidence: float = CONFIDENCE) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The relative change (%) of ``ours`` vs ``base``, 100·(ours − base)/base, per
    :data:`REDUCTION_METRICS` metric.

    Per (workload, node size): the change is computed seed by seed (paired: the same seed's
    instance under both policies) and summarised as (mean, lo, hi) over the seeds; row keys
    ``k``, ``k_lo``, ``k_hi`` and ``seeds`` (seeds with both runs). Seeds where the base is 0
    give no change for that metric. The average (the paper's form, a mean over cells): per
    seed the mean of the cells' changes, then ``avg[k]`` = (mean, lo, hi) over the seeds.
    Only seeds that every cell has enter it (a partial table's unfinished seed would
    average other cells); ``avg["seeds"]`` is their number. When no seed is complete,
    every seed enters with the cells it has, and ``avg["seeds"]`` is 0.
    """
    by = {(r["workload"], r["node_gpus"], r["policy"], r["seed"]): r for r in rows}
    per: list[dict[str, Any]] = []
    per_seed: dict[str, dict[int, list[float]]] = {k: {} for k in REDUCTION_METRICS}
    cell_seeds: list[set[int]] = []
    for w, g in _groups(rows):
        seeds = sorted(s for (w2, g2, p, s) in by if (w2, g2, p) == (w, g, ours) and (w, g, base, s) in by)
        if not seeds:
            continue
        cell_seeds.append(set(seeds))
        row: dict[str, Any] = {"workload": w, "node_gpus": g, "seeds": len(seeds)}
        for k in REDUCTION_METRICS:
            changes = {s: _rel(by[(w, g, ours, s)][k], by[(w, g, base, s)][k]) for s in seeds}
            vals = [v for v in changes.values() if v is not None]
            row[k], row[f"{k}_lo"], row[f"{k}_hi"] = mean_interval(vals, confidence)
            for s, v in changes.items():
                if v is not None:
                    per_seed[k].setdefault(s, []).append(v)
        per.append(row)
    complete = set.intersection(*cell_seeds) if cell_seeds else set()
    avg: dict[str, Any] = {"seeds": len(complete)}
    for k in REDUCTION_METRICS:
        use = [v for s, v in per_seed[k].items() if s in complete or not complete]
        avg[k] = mean_interval([float(np.mean(v)) for v in use], confidence)
    return per, avg


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
    ("**Misses**", [("SLO violation rate (%)", "slo_violation_rate", 2, 100.0),
                    ("weighted violation rate (%)", "weighted_violation_rate", 2, 100.0), ("GPU util.", "gpu_utilization", 2, 1.0)]),
    ("**Times** (minutes; queueing = first start − arrival; pending = all minutes released but not running, the Chronus "
     "artifact's queueing)", [("avg JCT", "avg_jct", 1, 1.0), ("avg queueing", "avg_queueing_time", 1, 1.0),
                              ("avg pending", "avg_pending_time", 1, 1.0)]),
    ("**Allocation changes per job**", [("restarts", "restarts_per_job", 3, 1.0), ("migrations", "migrations_per_job", 3, 1.0),
                                        ("resizes", "resizes_per_job", 3, 1.0)]),
)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table_markdown(cells: list[dict[str, Any]], per: list[dict[str, Any]], avg: dict[str, Any],
                   confidence: float = CONFIDENCE,
                   others: Sequence[tuple[str, list[dict[str, Any]], dict[str, Any]]] = ()) -> str:
    """The cells (:func:`cell_rows`, tables :data:`CELL_TABLES`) and the change vs Chronus
    (:func:`reductions`) as Markdown: each figure ``mean [lo, hi]`` over seeds (Student-t, ``confidence``).
    ``others``: (base policy, per, avg) of further :func:`reductions` (e.g. vs EDF), each
    its own table after Chronus's, without the paper's row."""
    pc = f"{100 * confidence:g} %"
    lines = [f"Each figure: mean over seeds [{pc} Student-t interval]; no interval with one seed."]
    for title, cols in CELL_TABLES:
        lines += ["", title, "", _row(["workload", "nodes", "policy", "seeds", "jobs"] + [h for h, _, _, _ in cols]),
                  "| --- | --- | --- |" + " ---: |" * (2 + len(cols))]
        for r in cells:
            lines.append(_row([r["workload"], f"{r['node_gpus']}-GPU", r["policy"], str(r["seeds"]), f"{r['jobs']:.0f}"]
                              + [_ci(r, k, nd, mult) for _, k, nd, mult in cols]))
    for base, p_rows, p_avg in (("chronus", per, avg), *others):
        name = {"chronus": "Chronus", "edf": "EDF"}.get(base, base)
        lines += ["", f"**SensaScale vs {name}**, relative change (%) = 100·(SensaScale − {name})/{name}, per seed (paired), "
                  f"then mean [{pc} interval] over seeds:", "",
                  "| workload | nodes | seeds | SLO violation rate | weighted violation rate | avg JCT | avg queueing | avg pending |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in p_rows:
            lines.append(_row([r["workload"], f"{r['node_gpus']}-GPU", str(r["seeds"])] + [_ci(r, k) for k in REDUCTION_METRICS]))
        a = {k: dict(zip((k, f"{k}_lo", f"{k}_hi"), p_avg[k])) for k in REDUCTION_METRICS}
        n = str(p_avg["seeds"]) if p_avg["seeds"] else "partial"
        lines.append(_row(["**average over cells**", "", n] + [_ci(a[k], k) for k in REDUCTION_METRICS]))
        if base == "chronus":
            lines.append(_row(["paper", "", ""] + [str(PAPER_REDUCTION.get(k, "")) for k in REDUCTION_METRICS]))
    return "\n".join(lines) + "\n"


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


def _groups(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(workload, GPUs per node) cells present in ``rows``, in :data:`WORKLOADS` order, 8 before 16."""
    order = [w for w, _, _ in WORKLOADS]
    return sorted({(r["workload"], r["node_gpus"]) for r in rows},
                  key=lambda x: (order.index(x[0]) if x[0] in order else len(order), x[0], x[1]))


def _policies(rows: list[dict[str, Any]]) -> list[str]:
    """Policies present in ``rows``: :data:`POLICIES` order first, then the others sorted."""
    present = {r["policy"] for r in rows}
    return [p for p in POLICIES if p in present] + sorted(present - set(POLICIES))


def bars_figure(cells: list[dict[str, Any]]) -> Figure:
    """The three :data:`METRICS` (one panel each) per workload × node size, one bar per policy
    in its :func:`sensaopt.palette.policy_color` at the mean over seeds (:func:`cell_rows`), with
    the interval as an error bar where there is one; one legend above the panels (never over bars)."""
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color

    groups, pols = _groups(cells), _policies(cells)
    by = {(r["workload"], r["node_gpus"], r["policy"]): r for r in cells}
    fig = Figure(figsize=(12, 10), layout="constrained")
    axes = fig.subplots(3, 1)
    x = np.arange(len(groups))
    wdt = 0.8 / max(1, len(pols))
    for ax, (k, title, mult) in zip(axes, METRICS):
        for i, p in enumerate(pols):
            rs = [by.get((w, g, p)) for w, g in groups]
            vals = np.array([np.nan if r is None or r[k] is None else r[k] * mult for r in rs], dtype=float)
            lo = np.array([np.nan if r is None else (r.get(f"{k}_lo") or np.nan) * mult for r in rs], dtype=float)
            hi = np.array([np.nan if r is None else (r.get(f"{k}_hi") or np.nan) * mult for r in rs], dtype=float)
            err = np.nan_to_num(np.vstack([vals - lo, hi - vals]), nan=0.0)
            bars = ax.bar(x + (i - (len(pols) - 1) / 2) * wdt, np.nan_to_num(vals, nan=0.0), wdt, label=p, color=policy_color(p),
                          yerr=err, capsize=2, error_kw={"elinewidth": 0.8})
            for b in bars:
                b.set_gid(f"bar:{p}")
        ax.set_xticks(x, [f"{w}\n{g}-GPU" for w, g in groups])
        ax.set_ylabel(title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=max(1, len(pols)), frameon=False)
    return fig


def jct_cdf_figure(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
                   groups: list[tuple[str, int]]) -> Figure:
    """JCT CDF (minutes, log x) per (workload, node size) in ``groups``, one line per policy in its
    :func:`sensaopt.palette.policy_color`, the finished jobs of all its stored seeds pooled; one
    legend above the panels."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    from sensaopt.palette import policy_color

    n = len(groups)
    cols = min(4, max(1, n))
    n_rows = math.ceil(n / cols) if n else 1
    fig = Figure(figsize=(4 * cols, 3.2 * n_rows + 0.4), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False)
    pooled: dict[tuple[str, int], dict[str, list[float]]] = {}
    for label, g, cfg in runs:
        if (label, g) not in groups:
            continue
        r = records.get(cfg.key())  # after the cheap filter: key() hashes the whole config
        if r is not None and r.get("jct"):
            pooled.setdefault((label, g), {}).setdefault(cfg.policy, []).extend(r["jct"])
    shown: dict[str, Any] = {}
    for ax, (w, g) in zip(axes.flat, groups):
        for pol, jct in pooled.get((w, g), {}).items():
            v = np.sort(np.asarray(jct, dtype=float))
            (line,) = ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=pol, color=policy_color(pol), gid=f"cdf:{pol}")
            shown.setdefault(pol, line)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones collide on short ranges
        ax.set_title(f"{w}, {g}-GPU nodes", fontsize=9)
        ax.set_xlabel("JCT (min), seeds pooled")
        ax.set_ylabel("CDF")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    if shown:
        fig.legend(list(shown.values()), list(shown), loc="outside upper center", ncol=len(shown), frameon=False)
    return fig


def figures(cells: list[dict[str, Any]], runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
            outdir: str | Path, field: str = "-o") -> list[Path]:
    """Write fig_bars.png (:func:`bars_figure` of :func:`cell_rows`) and fig_jct_cdf.png (:func:`jct_cdf_figure`)
    into ``outdir`` (:data:`FIGURE_FILES`), each atomically and never onto a symlink, FIFO or device (:mod:`sensaopt.outputs`)."""
    from sensaopt.outputs import staged

    paths = [Path(outdir) / name for name in FIGURE_FILES]
    for p, fig in zip(paths, (bars_figure(cells), jct_cdf_figure(runs, records, _groups(cells)))):
        with staged(p, field=field) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    return paths


# ---- results with provenance -------------------------------------------------------------------
REPORT_FILES = ("table.md", "table.csv", "runs.csv") + FIGURE_FILES  # what write_report() writes
RESULT_FILES = REPORT_FILES + ("provenance.json",)  # and a --results folder also gets provenance.json


def paper_args(s: PaperSettings, output: str | Path, results: str | Path | None = None) -> list[str]:
    """The ``sensaopt`` arguments of the ``experiment paper`` command that plans exactly
    the runs of ``s`` (every setting spelled out, defaults too; execution options such as
    ``--workers`` left out: they change how, not what). ``s.seeds`` must be consecutive."""
    seeds = list(s.seeds)
    if not seeds or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(f"seeds must be consecutive to be given as --seed/--seeds, got {s.seeds}")
    args = ["experiment", "paper", "-o", str(output), "--scale", repr(s.scale), "--seeds", str(len(seeds)), "--seed", str(seeds[0])]
    for p in s.policies:
        args += ["--policy", p]
    args += ["--round-minutes", repr(s.round_minutes), "--sensitive-fraction", repr(s.sensitive_fraction), "--node", s.node,
             "--helios-days", repr(s.helios_days)]
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
    from dataclasses import asdict

    from sensaopt.result import package_versions
    from sensaopt.sweep.provenance import load_average

    plan = []
    for label, g, cfg in runs:
        key = cfg.key()
        r = records.get(key) or {}
        plan.append({"key": key, "workload": label, "node_gpus": g, "policy": cfg.policy, "seed": cfg.seed, "preset": cfg.preset,
                     "status": status.get(key, "missing"), "simulate_s": r.get("simulate_s"), "wall_s": r.get("wall_s"),
                     **({"lease": r["lease"]} if r.get("lease") else {})})
    counts = {k: sum(1 for p in plan if p["status"] == k) for k in ("computed", "reused", "failed", "missing")}
    return {"command": "sensaopt " + shlex.join(args), "args": args, "settings": asdict(s), "git": git,
            "versions": package_versions(), "machine": {**machine, "loadavg_end": load_average()}, "wall_s": round(wall_s, 1),
            "execution": execution, "runs_total": len(plan), **{f"runs_{k}": v for k, v in counts.items()}, "runs": plan}


def write_report(outdir: str | Path, cells: list[dict[str, Any]], rows: list[dict[str, Any]], md: str,
                 runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]], field: str = "-o") -> list[Path]:
    """Write :data:`REPORT_FILES` into ``outdir``: table.md (``md``), table.csv (``cells``,
    one row per cell: means and interval bounds), runs.csv (``rows``, one per run with its
    config key) and, when there are cells, the figures (:func:`figures`); ``field`` names the option
    in errors. Returns the paths written."""
    from sensaopt.outputs import write_text

    d = Path(outdir)
    write_text(d / "table.md", md, field=field)
    write_text(d / "table.csv", table_csv(cells), field=field)
    write_text(d / "runs.csv", table_csv(rows), field=field)
    paths = [d / "table.md", d / "table.csv", d / "runs.csv"]
    return paths + (figures(cells, runs, records, d, field) if cells else [])
