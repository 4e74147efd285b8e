"""Figures of the ablation and robustness experiments (:mod:`sensaopt.sweep.experiments`):
each metric's mean over seeds with its 95 % Student-t interval as error caps, drawn only where
there is an interval (two seeds or more: one seed draws no caps, not a zero-length one),
captions saying so (:func:`sensaopt.plot.interval_caps`, :data:`sensaopt.plot.INTERVAL_NOTE`,
shared with the paper's figures).

Artists carry gids for tests: ablation bars ``bar:<variant>``, robustness lines
``line:<axis>:<policy>``, error caps ``ci:<name>`` (``ci:<variant>`` / ``ci:<axis>:<policy>``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.plot import INTERVAL_NOTE, interval_caps, seeds_text, stacked_widths
from sensaopt.sweep.experiments import COLUMNS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROBUSTNESS_FIGURE_COLUMNS = ("violation_rate", "avg_jct", "avg_queueing", "migrations_per_job", "resizes_per_job", "minutes_lost")
"""The robustness figure's panel columns (one row of panels per axis)."""
LABELS = dict(COLUMNS)


def _column(rows: Sequence[dict[str, Any]], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means and interval bounds of column ``name`` (NaN where missing)."""
    def col(k: str) -> np.ndarray:
        return np.array([np.nan if r.get(k) is None else r[k] for r in rows], dtype=float)

    return col(name), col(f"{name}_lo"), col(f"{name}_hi")


def ablation_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """One panel per column of :data:`~sensaopt.sweep.experiments.COLUMNS`, one horizontal
    bar per variant (the default in SensaScale's palette colour, the others a lighter
    shade of it) at its mean over seeds, with caps for its 95 % interval where there is one;
    the legend above the panels names the seeds (:func:`sensaopt.plot.seeds_text`).

    Args:
        rows: :func:`sensaopt.sweep.experiments.summarize` rows of the ablation.

    Returns:
        The figure (not attached to pyplot).
    """
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
        mean, lo, hi = _column(rows, name)
        bars = ax.barh(y, np.nan_to_num(mean), color=colors)
        for b, v in zip(bars, labels):
            b.set_gid(f"bar:{v}")
        for k, v in enumerate(labels):
            interval_caps(ax, y[k:k + 1], mean[k:k + 1], lo[k:k + 1], hi[k:k + 1], f"ci:{v}", horizontal=True)
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_xlabel(label)
    axes.flat[0].invert_yaxis()  # the default on top (shared y: inverts every panel)
    for ax in list(axes.flat)[len(COLUMNS):]:
        ax.axis("off")
    fig.legend([Patch(color=base), Patch(color=other)], ["defaults", "one knob changed"], loc="outside upper center", ncol=2,
               frameon=False, title=f"SensaScale, {seeds_text(r.get('seeds', 1) for r in rows)}: {INTERVAL_NOTE}")
    return fig


def robustness_figure(rows: Sequence[dict[str, Any]], columns: Sequence[str] = ROBUSTNESS_FIGURE_COLUMNS) -> Figure:
    """One row of panels per axis, one panel per column in ``columns``: the mean over
    seeds against the axis value, one line per policy in its
    :func:`sensaopt.palette.policy_color`, caps for the 95 % intervals where there are some;
    one legend above, naming the seeds (:func:`sensaopt.plot.seeds_text`).

    Args:
        rows: :func:`sensaopt.sweep.experiments.summarize` rows of the robustness experiment.
        columns: the panel columns, one per panel of each row.

    Returns:
        The figure (not attached to pyplot).
    """
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color

    axes_order = list(dict.fromkeys(r["axis"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    widths = stacked_widths(len(policies), widest=2.6)
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
                mean, lo, hi = _column(pts, name)
                (line,) = ax.plot(xs, mean, color=policy_color(p), marker="o", ms=3, lw=widths[k], zorder=2 + 0.01 * k, label=p,
                                  gid=f"line:{axis}:{p}")  # narrower over wider: coinciding lines stay visible
                interval_caps(ax, xs, mean, lo, hi, f"ci:{axis}:{p}", color=policy_color(p))
                shown.setdefault(p, line)
            ax.set_xticks(x, values, fontsize=8)
            ax.set_xlabel(axis, fontsize=8)
            if i == 0:
                ax.set_title(LABELS.get(name, name), fontsize=9)
    if shown:
        fig.legend(list(shown.values()), list(shown), loc="outside upper center", ncol=len(shown), frameon=False,
                   title=f"{seeds_text(r.get('seeds', 1) for r in rows)}: {INTERVAL_NOTE}")
    return fig


def save_figure(fig: Figure, path: str | Path, field: str = "--out") -> Path:
    """Write ``fig`` as PNG (110 dpi) atomically, never onto a symlink, FIFO or device (:mod:`sensaopt.outputs`).

    Args:
        fig: the figure.
        path: the PNG file.
        field: the option named in errors.

    Returns:
        The path written.
    """
    from sensaopt.outputs import staged

    p = Path(path)
    with staged(p, field=field) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return p
