"""Figures of the ablation and robustness experiments (:mod:`sensaopt.sweep.experiments`):
each metric's mean over seeds with its 95 % Student-t interval as error caps, drawn only where
there is an interval (two seeds or more: one seed draws no caps, not a zero-length one).
:func:`interval_caps` and :func:`seeds_text` are shared with the paper's figures
(:mod:`sensaopt.sweep.paper`), which say the same in their captions (:data:`INTERVAL_NOTE`).

Artists carry gids for tests: ablation bars ``bar:<variant>``, robustness lines
``line:<axis>:<policy>``, error caps ``ci:<name>`` (``ci:<variant>`` / ``ci:<axis>:<policy>``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.sweep.experiments import COLUMNS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

ROBUSTNESS_FIGURE_COLUMNS = ("violation_rate", "avg_jct", "avg_queueing", "migrations_per_job", "resizes_per_job", "minutes_lost")
"""The robustness figure's panel columns (one row of panels per axis)."""
LABELS = dict(COLUMNS)


INTERVAL_NOTE = "mean over seeds; caps: 95 % Student-t interval (none with one seed)"
"""What the bars / points and the caps of every experiment figure are."""


def seeds_text(counts: Iterable[int]) -> str:
    """How many seeds the cells of a figure have.

    Args:
        counts: seeds per cell.

    Returns:
        ``"3 seeds"``, ``"1 seed"`` or ``"1–3 seeds"`` (a range when the cells differ).
    """
    c = sorted(set(counts))
    if not c:
        return "no seeds"
    span = str(c[0]) if len(c) == 1 else f"{c[0]}–{c[-1]}"
    return f"{span} seed{'' if c == [1] else 's'}"


def scale_text(fractions: Iterable[float]) -> str:
    """The runs' scale from their kept job fractions.

    Args:
        fractions: each run's kept job fraction (``RunConfig.sample``, in (0, 1]).

    Returns:
        ``"full scale"`` or ``"scaled: 1.6 % of the jobs on as large a share of the GPUs"``
        (a range when the runs differ).
    """
    f = sorted({float(x) for x in fractions})
    if not f or f == [1.0]:
        return "full scale"
    span = f"{100 * f[0]:.2g} %" if len(f) == 1 else f"{100 * f[0]:.2g}–{100 * f[-1]:.2g} %"
    return f"scaled: {span} of the jobs on as large a share of the GPUs"


def interval_caps(ax: Axes, pos: np.ndarray, mean: np.ndarray, lo: np.ndarray, hi: np.ndarray, gid: str, *,
                  horizontal: bool = False, color: str = "black") -> Any:
    """Error caps from ``lo`` to ``hi`` at the positions whose mean and both bounds are finite
    (none elsewhere: one seed has no interval).

    Args:
        ax: the axes.
        pos: positions along the category axis (x, or y with ``horizontal``).
        mean: the means (bar tops / points).
        lo: the intervals' lower ends (NaN: none).
        hi: the intervals' upper ends (NaN: none).
        gid: set on the drawn lines (tests find the caps by it).
        horizontal: caps along x (horizontal bars).
        color: the caps' colour.

    Returns:
        The errorbar container, or None when no position has an interval.
    """
    pos, mean, lo, hi = (np.asarray(a, dtype=float) for a in (pos, mean, lo, hi))
    ok = np.isfinite(mean) & np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return None
    err = np.vstack([mean[ok] - lo[ok], hi[ok] - mean[ok]])
    style: dict[str, Any] = {"fmt": "none", "ecolor": color, "elinewidth": 0.8, "capsize": 2}
    cont = (ax.errorbar(mean[ok], pos[ok], xerr=err, **style) if horizontal
            else ax.errorbar(pos[ok], mean[ok], yerr=err, **style))
    for art in (*cont.lines[1], *cont.lines[2]):
        art.set_gid(gid)
    return cont


def _column(rows: Sequence[dict[str, Any]], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means and interval bounds of column ``name`` (NaN where missing)."""
    def col(k: str) -> np.ndarray:
        return np.array([np.nan if r.get(k) is None else r[k] for r in rows], dtype=float)

    return col(name), col(f"{name}_lo"), col(f"{name}_hi")


def ablation_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """One panel per column of :data:`~sensaopt.sweep.experiments.COLUMNS`, one horizontal
    bar per variant (the default in SensaScale's palette colour, the others a lighter
    shade of it) at its mean over seeds, with caps for its 95 % interval where there is one;
    the legend above the panels names the seeds (:func:`seeds_text`).

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
    one legend above, naming the seeds (:func:`seeds_text`).

    Args:
        rows: :func:`sensaopt.sweep.experiments.summarize` rows of the robustness experiment.
        columns: the panel columns, one per panel of each row.

    Returns:
        The figure (not attached to pyplot).
    """
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color
    from sensaopt.plot import stacked_widths

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
