"""Figures of ``sensaopt experiment gaps`` (the rows of :mod:`sensaopt.sweep.gaps_report`).

* :func:`gaps_figure`: per window size (a column of panels), the distribution over windows
  of each policy's avg-JCT gap to the exact incumbent (top) and certified gap to the bound
  (bottom): a box, every window as a point, the mean as a white diamond with its 95 %
  interval over seeds (caps, only with two seeds or more; :func:`sensaopt.plot.interval_caps`).
* :func:`scaling_figure`: against the window size, the fraction of windows proven, the mean
  certified gaps (the exact incumbent's in black, each policy's in its colour) and the mean
  exact solve time.

Artists carry gids for tests: boxes ``box:<jobs>:<row>:<policy>``, points
``points:<jobs>:<row>:<policy>``, caps ``ci:<jobs>:<row>:<policy>`` (row: ``jct`` or
``bound``), scaling lines ``line:<panel>:<series>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.plot import INTERVAL_NOTE, interval_caps, seeds_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

ROWS = (("jct", "jct_gap", "jct_gap_pct", "avg JCT above the exact incumbent (%)"),
        ("bound", "bound_gap", "jct_gap_to_bound_pct", "avg JCT above the bound, certified (%)"))
"""The figure's panel rows: (gid part, summary column, comparison field, axis label)."""


def _jitter(n: int, width: float = 0.18) -> np.ndarray:
    """Fixed offsets spreading ``n`` points across a box (no random draw: the same figure every run)."""
    return np.linspace(-width, width, n) if n > 1 else np.zeros(n)


def _policy_panel(ax: Axes, records: Sequence[dict[str, Any]], summary: dict[str, dict[str, Any]], policies: Sequence[str],
                  row: tuple[str, str, str, str], jobs: int) -> None:
    """One panel: per policy a box of its values, the windows as points, the mean and its caps."""
    from sensaopt.palette import policy_color

    gid, name, field, label = row
    for k, p in enumerate(policies):
        vals = np.array([c[field] for r in records if (c := r["policies"].get(p)) and c.get(field) is not None], dtype=float)
        color = policy_color(p)
        if len(vals):
            box = ax.boxplot([vals], positions=[k], widths=0.5, whis=0, showcaps=False, showfliers=False, patch_artist=True,
                             manage_ticks=False, medianprops={"color": color})  # the box only: every window is a point
            for patch in box["boxes"]:
                patch.set(facecolor=color, alpha=0.25, edgecolor=color, gid=f"box:{jobs}:{gid}:{p}")
            ax.scatter(k + _jitter(len(vals)), vals, s=9, color=color, zorder=3, gid=f"points:{jobs}:{gid}:{p}")
        s = summary[p]
        mean = np.array([s[f"{name}_mean_pct"]])
        ax.scatter([k], mean, marker="D", s=22, facecolor="white", edgecolor="black", zorder=4)
        interval_caps(ax, np.array([k]), mean, np.array([s[f"{name}_lo_pct"]]), np.array([s[f"{name}_hi_pct"]]),
                      f"ci:{jobs}:{gid}:{p}")
    ticks = [f"{p}\n(+miss: {summary[p]['windows_with_extra_misses']})" if summary[p]["windows_with_extra_misses"] else p
             for p in policies]
    ax.set_xticks(range(len(policies)), ticks, fontsize=8)
    ax.set_xlim(-0.6, len(policies) - 0.4)
    ax.set_ylabel(label, fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def replicates_text(rows: Sequence[dict[str, Any]]) -> str:
    """What the intervals of a gaps figure are over: seeds (:func:`sensaopt.plot.seeds_text`),
    or, with several solver seeds, replicates (a seed's windows solved with one solver seed).

    Args:
        rows: summary or scaling rows (their ``seeds`` and, when there are several, ``solver_seeds``).

    Returns:
        ``"1 seed"``, ``"3 seeds"`` or ``"3 replicates (seeds × solver seeds)"``: the most over the rows."""
    solver_seeds = max((r.get("solver_seeds", 1) for r in rows), default=1)
    replicates = max((r["seeds"] * r.get("solver_seeds", 1) for r in rows), default=1)
    return seeds_text([replicates]) if solver_seeds <= 1 else f"{replicates} replicates (seeds × solver seeds)"


def gaps_figure(records: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]], policies: Sequence[str]) -> Figure:
    """The distribution of each policy's gaps over the windows, one column of panels per
    window size (see the module doc); a policy's windows with extra misses have no gap
    (counted under its name).

    Args:
        records: the window records (a refused window has no comparisons: no point).
        summary: :func:`sensaopt.sweep.gaps_report.summary_rows` of the records.
        policies: the policies, in order.

    Returns:
        The figure (not attached to pyplot)."""
    from matplotlib.figure import Figure

    sizes = sorted({r["jobs"] for r in records}) or [0]
    fig = Figure(figsize=(max(6.0, 1.2 + (0.9 * len(policies) + 0.8) * len(sizes)), 6.6), layout="constrained")
    axes = fig.subplots(len(ROWS), len(sizes), squeeze=False)
    for j, n in enumerate(sizes):
        rs = [r for r in records if r["jobs"] == n]
        by_policy = {s["policy"]: s for s in summary if s["jobs"] == n}
        proven = sum(r["status"] == "OPTIMAL" for r in rs)
        for i, row in enumerate(ROWS):
            ax = axes[i][j]
            if by_policy:
                _policy_panel(ax, rs, by_policy, policies, row, n)
            if i == 0:
                ax.set_title(f"{n} jobs: {proven} of {len(rs)} windows proven", fontsize=9)
    fig.suptitle(f"Gaps over the windows ({replicates_text(summary)})\nbox = quartiles, points = windows, ◇ = mean;\n{INTERVAL_NOTE}",
                 fontsize=9)
    return fig


SCALING_PANELS = (("proven", "proven_mean_pct", "windows proven (%)"), ("gap", "exact_gap_mean_pct", "mean certified gap (%)"),
                  ("seconds", "seconds_mean_s", "mean exact solve time (s)"))
"""The scaling figure's panels: (gid part, column, axis label)."""


def scaling_figure(rows: Sequence[dict[str, Any]], policies: Sequence[str], time_limit: float | None = None) -> Figure:
    """Against the window size (jobs, log scale): the fraction of windows proven, the mean
    certified gap of the exact incumbent (black) and of each policy, and the mean exact solve
    time (``time_limit`` seconds dashed), with 95 % intervals over seeds where there are several.

    Args:
        rows: :func:`sensaopt.sweep.gaps_report.scaling_rows`.
        policies: the policies (one certified-gap line each).
        time_limit: the exact solve's limit in seconds (None: not drawn).

    Returns:
        The figure (not attached to pyplot)."""
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color

    x = np.array([r["jobs"] for r in rows], dtype=float)
    fig = Figure(figsize=(11, 3.4), layout="constrained")
    axes = fig.subplots(1, len(SCALING_PANELS))
    for ax, (gid, col, label) in zip(axes, SCALING_PANELS):
        base = col.rsplit("_mean", 1)[0]
        unit = col.rsplit("_", 1)[1]
        mean = np.array([r[col] for r in rows], dtype=float)
        lo, hi = (np.array([r[f"{base}_{k}_{unit}"] for r in rows], dtype=float) for k in ("lo", "hi"))
        ax.plot(x, mean, color=policy_color("exact"), marker="o", label="exact incumbent" if gid == "gap" else None,
                gid=f"line:{gid}:exact")
        interval_caps(ax, x, mean, lo, hi, f"ci:{gid}:exact")
        if gid == "gap":
            for p in policies:
                ax.plot(x, [r[f"{p}_bound_gap_mean_pct"] for r in rows], color=policy_color(p), marker="o", ms=3, label=p,
                        gid=f"line:gap:{p}")
            ax.legend(fontsize=7, frameon=False)
        if gid == "seconds" and time_limit is not None:
            ax.axhline(time_limit, color="grey", ls="--", lw=0.8, gid="line:seconds:limit")
        if gid == "proven":
            ax.set_ylim(-3, 103)
        ax.set_xscale("log")
        ax.set_xticks(x, [str(int(v)) for v in x])
        ax.minorticks_off()
        ax.set_xlabel("jobs per window")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Where exactness ends: {replicates_text(rows)}; {INTERVAL_NOTE}", fontsize=9)
    return fig
