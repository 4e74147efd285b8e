"""Experiment figures' intervals and captions: seeds, scale, Student-t caps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes


# ---- experiment figures: intervals and captions --------------------------------------------------
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


