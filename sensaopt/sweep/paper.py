"""The paper's experiment: {Philly SLO, MIX1, MIX2, Helios-calibrated} ×
{8-GPU, 16-GPU nodes} × policies, run as a sweep, reported as a table, the relative
reduction of SensaScale versus Chronus (the paper's form) and figures.

Settings (all recorded in each run's stored config):

* Philly workloads: the three Chronus traces (all 14 days, GPU jobs only) on
  ``philly-8`` (120 × 8 GPUs) / ``philly-16`` (60 × 16); Helios: the Helios-calibrated
  generator (``helios_days`` days of Venus arrivals, deadlines by the SPEC rule) on
  ``helios-8`` (96 × 8) / ``helios-16`` (48 × 16);
* nodes: Synergy's ratio, 3 cores and 62.5 GB per GPU (``node="chronus"``: 16 cores
  and 32 GB per GPU); model types: ``sensitive_fraction`` of the jobs sensitive;
  rounds of ``round_minutes``; one ``seed``;
* ``scale`` < 1 runs a scaled-down copy: every job kept with probability ``scale``
  (seeded thinning, the timeline unchanged) on a cluster with ``scale`` × the GPUs
  (rounded to a multiple of 16 so both node sizes have the same total), which keeps
  the offered load.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.sweep.config import RunConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WORKLOADS = (("Philly SLO", "chronus-slo", "philly"), ("Philly MIX1", "chronus-mix1", "philly"),
             ("Philly MIX2", "chronus-mix2", "philly"), ("Helios", "helios-gen", "helios"))
POLICIES = ("sensascale", "chronus", "synergy-tune", "edf", "fifo")
FULL_GPUS = {"philly": 960, "helios": 768}
PAPER_REDUCTION = {"slo_violation_rate": -74.22, "avg_jct": -25.86, "avg_queueing_time": -82.75}
# the paper's three metrics (names of sensaopt.metrics.Metrics fields): (name, axis label, multiplier)
METRICS = (("slo_violation_rate", "SLO violation rate (%)", 100.0), ("avg_jct", "avg JCT (min)", 1.0),
           ("avg_queueing_time", "avg queueing (min)", 1.0))
TABLE_METRICS = ("jobs",) + tuple(k for k, _, _ in METRICS) + ("gpu_utilization",)  # the table's Metrics columns
FIGURE_FILES = ("fig_bars.png", "fig_jct_cdf.png")  # what figures() writes into its folder


@dataclass(frozen=True)
class PaperSettings:
    scale: float = 1.0
    policies: tuple[str, ...] = POLICIES
    seed: int = 0
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
    """(workload label, GPUs per node, run configuration) of every run of the experiment."""
    out = []
    for label, trace, family in WORKLOADS:
        for g in (8, 16):
            preset, frac = cluster_for(family, g, s)
            for pol in s.policies:
                cfg = RunConfig(trace=trace, preset=preset, policy=pol, seed=s.seed, sensitive_fraction=s.sensitive_fraction,
                                round_minutes=s.round_minutes, sample=frac, days=s.helios_days if family == "helios" else None)
                out.append((label, g, cfg))
    return out


def table_rows(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per stored run: workload, node size, policy, preset, the
    :data:`TABLE_METRICS` of its record and the simulation's wall time (seconds)."""
    rows = []
    for label, g, cfg in runs:
        r = records.get(cfg.key())
        if r is None:
            continue
        m = r["metrics"]
        rows.append({"workload": label, "node_gpus": g, "policy": cfg.policy, "preset": cfg.preset, **{k: m[k] for k in TABLE_METRICS},
                     "simulate_s": r.get("simulate_s")})
    return rows


def reductions(rows: list[dict[str, Any]], ours: str = "sensascale",
               base: str = "chronus") -> tuple[list[dict[str, Any]], dict[str, float | None]]:
    """Per (workload, nodes): 100·(ours − base)/base per metric; and their averages
    (cells where the base is 0 are left out of the average and shown as n/a)."""
    by = {(r["workload"], r["node_gpus"], r["policy"]): r for r in rows}
    per: list[dict[str, Any]] = []
    acc: dict[str, list[float]] = {k: [] for k, _, _ in METRICS}
    for (w, g, p), r in by.items():
        if p != ours or (w, g, base) not in by:
            continue
        b = by[(w, g, base)]
        row: dict[str, Any] = {"workload": w, "node_gpus": g}
        for k, _, _ in METRICS:
            if b[k] and b[k] > 0 and r[k] is not None:
                row[k] = 100.0 * (r[k] - b[k]) / b[k]
                acc[k].append(row[k])
            else:
                row[k] = None
        per.append(row)
    avg = {k: (float(np.mean(v)) if v else None) for k, v in acc.items()}
    return per, avg


def _fmt(x: float | None, nd: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def table_markdown(rows: list[dict[str, Any]], per: list[dict[str, Any]], avg: dict[str, float | None]) -> str:
    lines = ["| workload | nodes | policy | jobs | SLO violation rate (%) | avg JCT (min) | avg queueing (min) | GPU util. |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['node_gpus']}-GPU | {r['policy']} | {r['jobs']} | {_fmt(100 * r['slo_violation_rate'])} | "
                     f"{_fmt(r['avg_jct'], 1)} | {_fmt(r['avg_queueing_time'], 1)} | {_fmt(r['gpu_utilization'])} |")
    lines += ["", "SensaScale vs Chronus, relative change (%) = 100·(SensaScale − Chronus)/Chronus:", "",
              "| workload | nodes | SLO violation rate | avg JCT | avg queueing |", "| --- | --- | ---: | ---: | ---: |"]
    for r in per:
        lines.append(f"| {r['workload']} | {r['node_gpus']}-GPU | {_fmt(r['slo_violation_rate'])} | {_fmt(r['avg_jct'])} | "
                     f"{_fmt(r['avg_queueing_time'])} |")
    lines.append(f"| **average** | | {_fmt(avg['slo_violation_rate'])} | {_fmt(avg['avg_jct'])} | {_fmt(avg['avg_queueing_time'])} |")
    lines.append(f"| paper | | {PAPER_REDUCTION['slo_violation_rate']} | {PAPER_REDUCTION['avg_jct']} | "
                 f"{PAPER_REDUCTION['avg_queueing_time']} |")
    return "\n".join(lines) + "\n"


def table_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
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


def bars_figure(rows: list[dict[str, Any]]) -> Figure:
    """The three :data:`METRICS` (one panel each) per workload × node size, one bar per policy
    in its :func:`sensaopt.palette.policy_color`; one legend above the panels (never over bars)."""
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color

    groups, pols = _groups(rows), _policies(rows)
    by = {(r["workload"], r["node_gpus"], r["policy"]): r for r in rows}
    fig = Figure(figsize=(12, 10), layout="constrained")
    axes = fig.subplots(3, 1)
    x = np.arange(len(groups))
    wdt = 0.8 / max(1, len(pols))
    for ax, (k, title, mult) in zip(axes, METRICS):
        for i, p in enumerate(pols):
            vals = [((by[(w, g, p)][k] or 0) * mult) if (w, g, p) in by else np.nan for w, g in groups]
            bars = ax.bar(x + (i - (len(pols) - 1) / 2) * wdt, vals, wdt, label=p, color=policy_color(p))
            for b in bars:
                b.set_gid(f"bar:{p}")
        ax.set_xticks(x, [f"{w}\n{g}-GPU" for w, g in groups])
        ax.set_ylabel(title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=max(1, len(pols)), frameon=False)
    return fig


def jct_cdf_figure(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
                   groups: list[tuple[str, int]]) -> Figure:
    """JCT CDF (minutes, log x) per (workload, node size) in ``groups``, one line per policy in its
    :func:`sensaopt.palette.policy_color`; one legend above the panels."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    from sensaopt.palette import policy_color

    n = len(groups)
    cols = min(4, max(1, n))
    n_rows = math.ceil(n / cols) if n else 1
    fig = Figure(figsize=(4 * cols, 3.2 * n_rows + 0.4), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False)
    shown: dict[str, Any] = {}
    for ax, (w, g) in zip(axes.flat, groups):
        for label, gg, cfg in runs:
            if (label, gg) != (w, g):
                continue
            r = records.get(cfg.key())  # after the cheap filter: key() hashes the whole config
            if r is None or not r.get("jct"):
                continue
            v = np.sort(np.asarray(r["jct"], dtype=float))
            (line,) = ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=cfg.policy, color=policy_color(cfg.policy),
                              gid=f"cdf:{cfg.policy}")
            shown.setdefault(cfg.policy, line)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones collide on short ranges
        ax.set_title(f"{w}, {g}-GPU nodes", fontsize=9)
        ax.set_xlabel("JCT (min)")
        ax.set_ylabel("CDF")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    if shown:
        fig.legend(list(shown.values()), list(shown), loc="outside upper center", ncol=len(shown), frameon=False)
    return fig


def figures(rows: list[dict[str, Any]], runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
            outdir: str | Path) -> list[Path]:
    """Write fig_bars.png (:func:`bars_figure`) and fig_jct_cdf.png (:func:`jct_cdf_figure`) into ``outdir``
    (:data:`FIGURE_FILES`), each atomically and never onto a symlink, FIFO or device (:mod:`sensaopt.outputs`)."""
    from sensaopt.outputs import staged

    paths = [Path(outdir) / name for name in FIGURE_FILES]
    for p, fig in zip(paths, (bars_figure(rows), jct_cdf_figure(runs, records, _groups(rows)))):
        with staged(p, field="-o") as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    return paths
