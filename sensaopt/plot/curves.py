"""Curves and bars: resource utilization over time, job-time CDFs, sensitivity
profiles and the optimality-gap bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.allocations import optimal_demand
from sensaopt.instance import Instance
from sensaopt.palette import RESOURCE_COLORS, model_colors, policy_color
from sensaopt.result import Result
from sensaopt.schedule import Schedule
from sensaopt.validator import Evaluation

if TYPE_CHECKING:
    from matplotlib.axes import Axes
from .base import LEGEND_OUTSIDE, MODEL_MARKERS, RESOURCE_LABELS, RESOURCE_STYLES, RESOURCE_WIDTHS, _axes, _class_order


# ---- utilization --------------------------------------------------------------------------------
def utilization(
    instance: Instance,
    result: Result | Evaluation | Schedule,
    ax: Axes | None = None,
    *,
    resources: Sequence[str] = ("gpu", "cpu", "mem"),
    bin_minutes: float | None = None,
    title: str | None = None,
    window: tuple[float, float] | None = None,
) -> Axes:
    """Cluster-wide share of GPUs, CPU cores and memory held over time (0–100 %).

    One step line per resource, from the validator's per-round per-node usage, each in its
    colour, line style and width (:data:`RESOURCE_WIDTHS`: the narrower drawn over the wider),
    so that lines that coincide (proportional shares) stay distinguishable.

    Args:
        instance: the instance scheduled.
        result: a Result, the validator's Evaluation or a Schedule.
        ax: axes to draw on (None: a new figure).
        resources: which of ``gpu``, ``cpu``, ``mem`` to draw.
        bin_minutes: average over bins of this many minutes (e.g. 60 for hourly; useful on traces).
        title: axes title (None: the instance's name).
        window: ``(from, to)`` minutes: the x range drawn (None: from 0 to the last round).

    Returns:
        The axes.
    """
    from sensaopt.frames import evaluate, usage_frame

    bad = [r for r in resources if r not in RESOURCE_LABELS]
    if bad:
        raise ValueError(f"unknown resource {bad[0]!r}; known: {', '.join(RESOURCE_LABELS)}")
    if window is not None and not window[0] < window[1]:
        raise ValueError(f"window must be (from, to) minutes with from < to, got {window}")
    ev = result if isinstance(result, Evaluation) else evaluate(instance, result, require_complete=False)
    df = usage_frame(instance, ev)
    ax = _axes(ax)
    R = instance.round_minutes
    if bin_minutes is not None and bin_minutes > R and len(df):
        k = max(1, int(round(bin_minutes / R)))
        grp = np.arange(len(df)) // k
        df = df.groupby(grp).mean()
        df.index = df.index * k * R
        step = k * R
    else:
        step = R
    for res in resources:  # legend in the given order; the narrower line on top (zorder), whatever the order
        z = sorted(RESOURCE_WIDTHS.values(), reverse=True).index(RESOURCE_WIDTHS[res])
        x = np.append(df.index.to_numpy(dtype=float), (df.index[-1] + step) if len(df) else step)
        yv = 100 * np.append(df[res].to_numpy(), df[res].to_numpy()[-1] if len(df) else 0.0)
        ax.step(x, yv, where="post", label=RESOURCE_LABELS[res], color=RESOURCE_COLORS[res],
                linestyle=RESOURCE_STYLES[res], linewidth=RESOURCE_WIDTHS[res], zorder=2 + 0.1 * z, gid=f"util:{res}")
    ax.set_ylim(0, 105)
    ax.set_xlabel("time (minutes)")
    ax.set_ylabel("cluster share held (%)")
    if window is not None:
        ax.set_xlim(*window)
    else:
        ax.set_xlim(left=0)
    ax.set_title(title if title is not None else f"{instance.name}: utilization")
    ax.legend(fontsize=8, **LEGEND_OUTSIDE)
    return ax


# ---- CDFs ---------------------------------------------------------------------------------------
def stacked_widths(n: int, widest: float = 3.2, narrowest: float = 1.0) -> list[float]:
    """Line widths (points) for ``n`` series drawn in order, each narrower than the one before
    and drawn over it, so that series that coincide stay visible as nested bands.

    Args:
        n: how many series.
        widest: the first series' width.
        narrowest: the last series' width (all equal to it when ``n`` is 1).

    Returns:
        ``n`` widths, decreasing.
    """
    if n <= 1:
        return [narrowest] * n
    return [widest - (widest - narrowest) * k / (n - 1) for k in range(n)]


def cdf(samples: Mapping[str, Sequence[float] | np.ndarray], ax: Axes | None = None, *, xlabel: str = "", log: bool = False,
        title: str | None = None) -> Axes:
    """Empirical CDF per label: one step line each, in the label's
    :func:`sensaopt.palette.policy_color` (gid ``cdf:<label>``), each narrower than the one
    before and drawn over it (:func:`stacked_widths`: coinciding CDFs stay visible); NaNs
    dropped, empty series skipped.

    Args:
        samples: ``{label: values}``.
        ax: axes to draw on (None: a new figure).
        xlabel: the x axis label (name the unit).
        log: symmetric-log x axis (linear below 1).
        title: axes title (None: none).

    Returns:
        The axes.
    """
    ax = _axes(ax)
    series = {}
    for label, vals in samples.items():
        v = np.sort(np.asarray(vals, dtype=float))
        if len(v := v[np.isfinite(v)]):
            series[label] = v
    for k, ((label, v), width) in enumerate(zip(series.items(), stacked_widths(len(series)))):
        y = np.arange(1, len(v) + 1) / len(v)
        ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post", label=str(label),
                color=policy_color(str(label)), linewidth=width, zorder=2 + 0.01 * k, gid=f"cdf:{label}")
    if log:
        ax.set_xscale("symlog", linthresh=1.0)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of jobs")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, **LEGEND_OUTSIDE)
    return ax


def _column_by_label(results: Mapping[str, Any], column: str, instance: Instance | None) -> dict[str, np.ndarray]:
    from sensaopt.frames import outcomes_frame

    out = {}
    for label, r in results.items():
        if isinstance(r, (Result, Schedule)):
            if instance is None:
                raise ValueError("pass instance= to plot Results or Schedules")
            r = outcomes_frame(instance, r)
        out[label] = r[column].to_numpy(dtype=float)
    return out


def jct_cdf(results: Mapping[str, Any], ax: Axes | None = None, *, instance: Instance | None = None, log: bool = True,
            title: str | None = "JCT") -> Axes:
    """CDF of job completion times (minutes) per policy (:func:`cdf`).

    Args:
        results: ``{label: outcomes}``, each an :func:`sensaopt.frames.outcomes_frame` DataFrame,
            a Result or a Schedule (those two need ``instance``).
        ax: axes to draw on (None: a new figure).
        instance: the instance the Results or Schedules are of.
        log: symmetric-log x axis.
        title: axes title.

    Returns:
        The axes.
    """
    return cdf(_column_by_label(results, "jct", instance), ax, xlabel="JCT (minutes)", log=log, title=title)


def queueing_cdf(results: Mapping[str, Any], ax: Axes | None = None, *, instance: Instance | None = None, log: bool = True,
                 title: str | None = "queueing time") -> Axes:
    """CDF of queueing times (first start − arrival, minutes) per policy (:func:`cdf`).

    Args:
        results: ``{label: outcomes}`` as for :func:`jct_cdf`.
        ax: axes to draw on (None: a new figure).
        instance: the instance the Results or Schedules are of.
        log: symmetric-log x axis.
        title: axes title.

    Returns:
        The axes.
    """
    return cdf(_column_by_label(results, "queueing", instance), ax, xlabel="queueing time (minutes)", log=log, title=title)


# ---- sensitivity --------------------------------------------------------------------------------
def sensitivity_curves(
    axis: str = "cpu",
    ax: Axes | None = None,
    *,
    models: Sequence[str] | None = None,
    at: float | None = None,
    demand: bool = True,
    tolerance: float = 0.1,
    legend: bool = True,
    title: str | None = None,
) -> Axes:
    """Training speed vs CPU cores per GPU (``axis="cpu"``) or vs memory GB per GPU
    (``axis="mem"``), one line per catalog model (or ``models``).

    The other resource is held at ``at`` per GPU (default: its largest measured level,
    so only the plotted resource limits the speed). Sensitive models are solid lines,
    insensitive ones dashed; each model has a shade of its class colour
    (:func:`sensaopt.palette.model_colors`) and its own marker. With ``demand``, a dot
    marks each model's optimal demand (:func:`sensaopt.allocations.optimal_demand` with
    ``tolerance``) on the plotted axis.

    Args:
        axis: ``"cpu"`` (x: CPU cores per GPU, log 2) or ``"mem"`` (x: memory GB per GPU).
        ax: axes to draw on (None: a new figure).
        models: catalog model names (None: all).
        at: the other resource per GPU (cores or GB; None: its largest measured level).
        demand: mark each model's optimal demand.
        tolerance: the optimal demand's speed tolerance (fraction below the best speed).
        legend: one entry per model, right of the axes.
        title: axes title (None: what is plotted).

    Returns:
        The axes.

    Raises:
        ValueError: ``axis`` is neither ``"cpu"`` nor ``"mem"``.
    """
    import matplotlib

    from sensaopt.profiles import catalog

    if axis not in ("cpu", "mem"):
        raise ValueError("axis must be 'cpu' or 'mem'")
    cat = catalog()
    names = list(cat) if models is None else list(models)
    ax = _axes(ax)
    fixed_desc = ""
    ordered = sorted(names, key=lambda m: (_class_order(cat[m].task), m))  # shades run within a class
    colors = model_colors({m: cat[m].task for m in ordered})
    for k, name in enumerate(ordered):
        p = cat[name]
        levels = p.cpu_levels if axis == "cpu" else p.mem_levels
        other = (p.mem_levels if axis == "cpu" else p.cpu_levels)[-1] if at is None else at
        x = np.linspace(levels[0], levels[-1], 200)
        x = np.unique(np.concatenate([x, levels]))
        y = [p.speed(v, other) if axis == "cpu" else p.speed(other, v) for v in x]
        sens = p.is_sensitive()
        color = colors[name]
        ax.plot(x, y, linestyle="-" if sens else "--", color=color, linewidth=1.6 if sens else 1.1,
                marker=MODEL_MARKERS[k % len(MODEL_MARKERS)], markevery=(k % 5 * 8, 40), markersize=4,
                label=f"{name} ({cat[name].task}{'' if sens else ', insensitive'})", gid=f"model:{name}")
        if demand:
            d = optimal_demand(p, tolerance)
            dx = d.cpu if axis == "cpu" else d.mem
            dy = p.speed(dx, other) if axis == "cpu" else p.speed(other, dx)
            ax.plot([dx], [dy], marker="o", color=color, markeredgecolor="black", linestyle="none", gid=f"demand:{name}")
        fixed_desc = f"{other:g} GB/GPU" if axis == "cpu" else f"{other:g} cores/GPU"
    ax.set_xlabel("CPU cores per GPU" if axis == "cpu" else "memory GB per GPU")
    ax.set_ylabel("speed (1.0 = proportional share)")
    if axis == "cpu":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_title(title if title is not None else f"speed vs {'CPU' if axis == 'cpu' else 'memory'} (other resource at {fixed_desc})")
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=7, **LEGEND_OUTSIDE)
    return ax


# ---- optimality gap ------------------------------------------------------------------------------
_FRACTION_GAPS = ("gap", "gap_to_bound", "exact_gap")  # fraction columns (sensaopt.compare.Comparison); gap_frame's are *_pct


NOT_COMPARABLE_HATCH = "xx"
NOT_COMPARABLE_LABEL = "n/c"


def gap_bars(gaps: Any, ax: Axes | None = None, *, value: str = "objective_gap_pct", percent: bool = True,
             title: str | None = None) -> Axes:
    """Grouped bars of a :func:`sensaopt.frames.gap_frame` column (concatenated over instances).

    One group per instance, one bar per policy in its :func:`sensaopt.palette.policy_color`
    (gid ``gap:<policy>``). A NaN value (not comparable, e.g. no JCT gap at unequal misses)
    is an empty hatched placeholder in the policy's colour with "n/c" written on it
    (gid ``gap-nc:<policy>``), never a 0 bar. The legend (right of the axes) lists every
    policy in its colour, with or without a finite value, and the placeholder.

    Args:
        gaps: DataFrame with ``instance``, ``policy`` and the ``value`` column.
        ax: axes to draw on (None: a new figure).
        value: the column drawn (default: the weighted objective's gap, percent).
        percent: show a fraction column (``gap``, ``gap_to_bound``, ``exact_gap`` of
            :class:`sensaopt.compare.Comparison` rows) in percent; other columns keep their unit
            (``*_pct`` are already percent), named on the y axis.
        title: axes title (None: "objective gap to the exact schedule").

    Returns:
        The axes.
    """
    import matplotlib.patches as mpatches
    import pandas as pd

    ax = _axes(ax)
    table = gaps.pivot_table(index="instance", columns="policy", values=value, aggfunc="first", sort=False)
    policies = list(pd.unique(gaps["policy"]))
    # a policy whose values are all NaN (e.g. no JCT gap at unequal misses) has no pivot column
    table = table.reindex(index=pd.unique(gaps["instance"]), columns=policies)
    width = 0.8 / max(len(policies), 1)
    xs = np.arange(len(table.index))
    fraction = value in _FRACTION_GAPS
    scale = 100 if percent and fraction else 1
    values = {pol: table[pol].to_numpy(dtype=float) * scale for pol in policies}
    finite = np.concatenate([v[np.isfinite(v)] for v in values.values()] + [np.zeros(1)])
    top, bottom = max(finite.max(), 0.0), min(finite.min(), 0.0)
    placeholder = 0.25 * (top - bottom) if top > bottom else 1.0  # above 0, a quarter of the data's range
    missing = False
    for k, pol in enumerate(policies):
        vals, color = values[pol], policy_color(pol)
        ok = np.isfinite(vals)
        pos = xs + (k - (len(policies) - 1) / 2) * width
        for b in ax.bar(pos[ok], vals[ok], width, color=color):
            b.set_gid(f"gap:{pol}")
        for x in pos[~ok]:
            missing = True
            ax.bar([x], [placeholder], width, facecolor="none", edgecolor=color, hatch=NOT_COMPARABLE_HATCH, linewidth=0.8,
                   gid=f"gap-nc:{pol}")
            ax.text(x, placeholder / 2, NOT_COMPARABLE_LABEL, rotation=90, ha="center", va="center", fontsize=7,
                    gid=f"gap-nc-label:{pol}", bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    ax.set_xticks(xs)
    ax.set_xticklabels(list(table.index), rotation=20, ha="right")
    ax.axhline(0, color="black", linewidth=0.8)
    unit = " (%)" if value.endswith("_pct") or (fraction and percent) else " (fraction)" if fraction else ""
    ax.set_ylabel(value + unit)
    ax.set_title(title if title is not None else "objective gap to the exact schedule")
    handles = [mpatches.Patch(facecolor=policy_color(pol), label=pol) for pol in policies]
    if missing:
        handles.append(mpatches.Patch(facecolor="none", edgecolor="0.3", hatch=NOT_COMPARABLE_HATCH,
                                      label=f"{NOT_COMPARABLE_LABEL}: not comparable (no value)"))
    ax.legend(handles=handles, fontsize=8, **LEGEND_OUTSIDE)
    return ax
