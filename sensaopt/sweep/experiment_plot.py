"""Figures of the ablation and robustness experiments (:mod:`sensaopt.sweep.experiments`):
each metric's mean over seeds with its 95 % interval as an error bar.

Artists carry gids for tests: ablation bars ``bar:<variant>``, robustness lines
``line:<axis>:<policy>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.sweep.experiments import COLUMNS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROBUSTNESS_FIGURE_COLUMNS = ("violation_rate", "avg_jct", "avg_queueing", "migrations_per_job", "resizes_per_job", "minutes_lost")
"""The robustness figure's panel columns (one row of panels per axis)."""
LABELS = dict(COLUMNS)


def _err(rows: Sequence[dict[str, Any]], name: str) -> tuple[np.ndarray, np.ndarray]:
    """Means and the (below, above) error-bar lengths of column ``name`` (0 where the interval is undefined)."""
    mean = np.array([r[name] for r in rows], dtype=float)
    lo = np.array([r[f"{name}_lo"] for r in rows], dtype=float)
    hi = np.array([r[f"{name}_hi"] for r in rows], dtype=float)
    below = np.where(np.isnan(lo), 0.0, mean - lo)
    above = np.where(np.isnan(hi), 0.0, hi - mean)
    return mean, np.vstack([np.nan_to_num(below), np.nan_to_num(above)])


def ablation_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """One panel per column of :data:`~sensaopt.sweep.experiments.COLUMNS`, one horizontal
    bar per variant (the default in SensaScale's palette colour, the others a lighter
    shade of it) with its 95 % interval; the legend above the panels."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from sensaopt.palette import policy_color, shade

    base = policy_color(rows[0]["policy"] if rows else "sensascale")
    other = shade(base, 0.5)
    labels = [r["value"] for r in rows]
    colors = [base if v == "default" else other for v in labels]
    cols = 4
    n_rows = math.ceil(len(COLUMNS) / cols)
    fig = Figure(figsize=(4.2 * cols, 0.32 * max(len(rows), 4) * n_rows + 1.2), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False, sharey=True)
    y = np.arange(len(rows))
    for ax, (name, label) in zip(axes.flat, COLUMNS):
        mean, err = _err(rows, name)
        bars = ax.barh(y, np.nan_to_num(mean), xerr=err, color=colors, ecolor="black", capsize=2)
        for b, v in zip(bars, labels):
            b.set_gid(f"bar:{v}")
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_xlabel(label)
    axes.flat[0].invert_yaxis()  # the default on top (shared y: inverts every panel)
    for ax in list(axes.flat)[len(COLUMNS):]:
        ax.axis("off")
    fig.legend([Patch(color=base), Patch(color=other)], ["defaults", "one knob changed"], loc="outside upper center", ncol=2,
               frameon=False, title="SensaScale, mean over seeds with 95 % interval")
    return fig


def robustness_figure(rows: Sequence[dict[str, Any]], columns: Sequence[str] = ROBUSTNESS_FIGURE_COLUMNS) -> Figure:
    """One row of panels per axis, one panel per column in ``columns``: the mean over
    seeds against the axis value, one line per policy in its
    :func:`sensaopt.palette.policy_color`, 95 % intervals as error bars; one legend above."""
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color

    axes_order = list(dict.fromkeys(r["axis"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    fig = Figure(figsize=(3.0 * len(columns), 2.6 * max(1, len(axes_order)) + 0.6), layout="constrained")
    grid = fig.subplots(max(1, len(axes_order)), len(columns), squeeze=False)
    shown: dict[str, Any] = {}
    for i, axis in enumerate(axes_order):
        values = list(dict.fromkeys(r["value"] for r in rows if r["axis"] == axis))
        x = np.arange(len(values), dtype=float)
        for j, name in enumerate(columns):
            ax = grid[i][j]
            for k, p in enumerate(policies):
                sel = {r["value"]: r for r in rows if r["axis"] == axis and r["policy"] == p}
                pts = [sel[v] for v in values if v in sel]
                if not pts:
                    continue
                xs = np.array([x[values.index(r["value"])] for r in pts]) + (k - (len(policies) - 1) / 2) * 0.04
                mean, err = _err(pts, name)
                cont = ax.errorbar(xs, mean, yerr=err, color=policy_color(p), marker="o", ms=3, capsize=2, lw=1.2, label=p)
                cont.lines[0].set_gid(f"line:{axis}:{p}")
                shown.setdefault(p, cont)
            ax.set_xticks(x, values, fontsize=8)
            ax.set_xlabel(axis, fontsize=8)
            if i == 0:
                ax.set_title(LABELS.get(name, name), fontsize=9)
    if shown:
        fig.legend(list(shown.values()), list(shown), loc="outside upper center", ncol=len(shown), frameon=False,
                   title="mean over seeds with 95 % interval")
    return fig


def save_figure(fig: Figure, path: str | Path, field: str = "--out") -> Path:
    """Write ``fig`` as PNG atomically, never onto a symlink, FIFO or device (:mod:`sensaopt.outputs`)."""
    from sensaopt.outputs import staged

    p = Path(path)
    with staged(p, field=field) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return p
