"""Plots for schedules, resource use, job-time distributions and sensitivity profiles.

Every function draws on ``ax`` (a new figure when ``ax`` is None) and returns the
axes. Times on the x axes are minutes. matplotlib is imported lazily so that
``import sensaopt`` stays light; pick a backend (e.g. ``MPLBACKEND=Agg``) as usual.

Drawn artists carry a ``gid`` so that callers (and the tests) can find them:
``job:<id>`` on each Gantt bar, ``deadline:<id>`` on each deadline marker,
``model:<name>`` / ``demand:<name>`` on sensitivity curves and optimal-demand points,
``util:<resource>`` on utilization lines, ``cdf:<label>`` on CDF lines and
``gap:<policy>`` on gap bars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.instance import Instance
from sensaopt.result import Result
from sensaopt.schedule import Schedule
from sensaopt.validator import Evaluation

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

RESOURCE_LABELS = {"gpu": "GPU", "cpu": "CPU", "mem": "memory"}
RESOURCE_COLORS = {"gpu": "tab:green", "cpu": "tab:blue", "mem": "tab:orange"}
RESOURCE_STYLES = {"gpu": "-", "cpu": "--", "mem": ":"}  # proportional shares make the lines coincide
SENSITIVE_HATCH = "////"

RGBA = tuple[float, float, float, float]  # a matplotlib colour
Lane = tuple[str, int, int, int, tuple[int, ...]]  # (job, node, start round, end round, GPU lanes): see gpu_lanes


def _axes(ax: Axes | None, figsize: tuple[float, float] = (8, 4)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


# tab20 without its reds (red marks missed deadlines), the dark shades first
_PALETTE_ORDER = tuple(k for k in range(0, 20, 2) if k != 6) + tuple(k for k in range(1, 20, 2) if k != 7)


def palette(k: int) -> RGBA:
    """The k-th of 18 job/model colours (tab20 less red, dark shades first; cycling)."""
    import matplotlib

    return matplotlib.colormaps["tab20"](_PALETTE_ORDER[k % len(_PALETTE_ORDER)])


def job_colors(instance: Instance) -> dict[str, RGBA]:
    """A stable colour per job (by position in the instance; 18 colours, cycling)."""
    return {j.id: palette(k) for k, j in enumerate(instance.jobs)}


# ---- Gantt --------------------------------------------------------------------------------------
def gpu_lanes(instance: Instance, schedule: Schedule, nodes: Sequence[int] | None = None) -> list[Lane]:
    """Assign GPU lanes (0 .. node GPUs − 1) to every placement.

    Returns ``(job, node, start round, end round, lanes)`` per placement. A job that
    continues on the same node right after its previous segment keeps its lanes where
    it can; otherwise it gets free lanes by best fit (the smallest run of adjacent free
    lanes that holds it, so that a job's lanes stay together). On a schedule that overfills a
    node, extra lanes beyond the node's GPUs are used (visible above the node).
    """
    keep = set(range(instance.cluster.num_nodes)) if nodes is None else set(nodes)
    items = [(s.start, s.end, s.job, p.node, p.gpus) for s in schedule.segments for p in s.placements if p.node in keep]
    prev_end: dict[tuple[str, int], tuple[int, tuple[int, ...]]] = {}
    out = []
    busy: dict[int, list[int]] = {}  # node -> busy-until round per lane
    # continuing jobs first at each start round, so that their old lanes are still free
    cont = {(s.job, p.node, s.start) for segs in schedule.by_job().values() for a, s in zip(segs, segs[1:])
            if a.end == s.start for p in s.placements if p.node in a.nodes}
    for st, en, job, node, g in sorted(items, key=lambda t: (t[0], (t[2], t[3], t[0]) not in cont, -t[4], t[2], t[3])):
        lanes_busy = busy.setdefault(node, [0] * instance.cluster.nodes[node].gpus)
        chosen: list[int] = []
        last = prev_end.get((job, node))
        if last is not None and last[0] == st:
            chosen = [ln for ln in last[1] if lanes_busy[ln] <= st][:g]
        free = [ln for ln in range(len(lanes_busy)) if lanes_busy[ln] <= st and ln not in chosen]
        chosen += _pick_lanes(free, g - len(chosen))
        while len(chosen) < g:  # over capacity: invalid schedule, draw above the node
            lanes_busy.append(0)
            chosen.append(len(lanes_busy) - 1)
        for ln in chosen:
            lanes_busy[ln] = en
        lanes = tuple(sorted(chosen))
        prev_end[(job, node)] = (en, lanes)
        out.append((job, node, st, en, lanes))
    return out


def _pick_lanes(free: list[int], n: int) -> list[int]:
    """``n`` of the sorted ``free`` lanes: the first lanes of the smallest contiguous run
    that holds them all (best fit), else the largest runs first."""
    if n <= 0:
        return []
    runs = _runs(free)
    fits = [r for r in runs if r[1] >= n]
    if fits:
        first, _ = min(fits, key=lambda r: (r[1], r[0]))
        return list(range(first, first + n))
    out: list[int] = []
    for first, count in sorted(runs, key=lambda r: (-r[1], r[0])):
        out += list(range(first, first + count))[: n - len(out)]
        if len(out) == n:
            break
    return out


def _runs(lanes: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous runs of sorted lane numbers as (first lane, count)."""
    runs: list[tuple[int, int]] = []
    for ln in lanes:
        if runs and runs[-1][0] + runs[-1][1] == ln:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((ln, 1))
    return runs


def gantt(
    instance: Instance,
    schedule: Schedule | Result,
    ax: Axes | None = None,
    *,
    nodes: Sequence[int] | None = None,
    deadlines: bool = True,
    labels: bool | None = None,
    legend: bool | None = None,
    title: str | None = None,
) -> Axes:
    """Schedule Gantt chart: one row block per node, one lane per GPU.

    Each placement is a bar over its rounds (x: minutes) on the GPU lanes it holds,
    coloured per job; sensitive jobs (``job.profile.is_sensitive()``) are hatched.
    With ``deadlines``, each scheduled job with a deadline gets a marker at its
    deadline on its last lanes: a triangle in the job's colour if met, a red ✕ if
    missed. ``nodes`` restricts the drawing to some node indices; ``labels`` writes
    job ids into bars wide enough (default: on when ≤ 40 jobs); ``legend`` lists the
    job colours (default: on when ≤ 16 jobs).
    """
    if isinstance(schedule, Result):
        if schedule.schedule is None:
            raise ValueError(f"result of {schedule.solver} has no schedule")
        title = title if title is not None else f"{instance.name}: {schedule.solver}"
        schedule = schedule.schedule
    R = instance.round_minutes
    node_list = list(range(instance.cluster.num_nodes)) if nodes is None else list(nodes)
    items = gpu_lanes(instance, schedule, node_list)
    height = {n: max([instance.cluster.nodes[n].gpus] + [max(it[4]) + 1 for it in items if it[1] == n]) for n in node_list}
    gap = 0.6
    offset: dict[int, float] = {}
    y = 0.0
    for n in node_list:
        offset[n] = y
        y += height[n] + gap
    total = y - gap if node_list else 1.0
    ax = _axes(ax, figsize=(10, min(max(2.2, 0.22 * total + 1.4), 24)))
    colors = job_colors(instance)
    n_jobs = len({it[0] for it in items})
    labels = n_jobs <= 40 if labels is None else labels
    legend = n_jobs <= 16 if legend is None else legend
    x_end = max([it[3] * R for it in items] + [R])
    _gantt_bars(ax, instance, items, offset, colors, labels, x_end)
    if deadlines:
        x_end = _gantt_deadlines(ax, instance, schedule, items, offset, colors, labels, x_end)
    ax.set_xlim(0, x_end * 1.02)
    ax.set_ylim(total + 0.2, -0.2)  # first node on top
    ax.set_yticks([offset[n] + height[n] / 2 for n in node_list])
    ax.set_yticklabels([instance.cluster.nodes[n].name for n in node_list])
    for n in node_list[1:]:
        ax.axhline(offset[n] - gap / 2, color="0.6", linewidth=0.6)
    ax.set_xlabel("time (minutes)")
    ax.set_ylabel("node (one lane per GPU)")
    ax.set_title(title if title is not None else f"{instance.name}: schedule")
    handles = _gantt_legend(instance, items, colors, deadlines, legend)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    return ax



def _gantt_bars(ax: Axes, instance: Instance, items: list[Lane], offset: dict[int, float], colors: dict[str, RGBA],
                labels: bool, x_end: float) -> None:
    """One bar per placement and run of adjacent lanes; job ids in bars wide enough (``labels``)."""
    import matplotlib.patches as mpatches

    R = instance.round_minutes
    sensitive = {j.id: j.profile.is_sensitive() for j in instance.jobs}
    ends = {(it[0], it[1], it[3], it[4]) for it in items}
    for job, node, st, en, lanes in items:
        continued = (job, node, st, lanes) in ends  # same lanes right before: label only the first bar
        for first, count in _runs(lanes):
            rect = mpatches.Rectangle(
                (st * R, offset[node] + first + 0.06), (en - st) * R, count - 0.12,
                facecolor=colors[job], edgecolor="white", linewidth=0.6,
                hatch=SENSITIVE_HATCH if sensitive[job] else None, gid=f"job:{job}",
            )
            ax.add_patch(rect)
            if labels and not continued and (en - st) * R >= 0.04 * x_end:
                ax.text(st * R + 0.01 * x_end, offset[node] + first + count / 2, job, va="center", ha="left",
                        fontsize=7, clip_on=True, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})


def _gantt_deadlines(ax: Axes, instance: Instance, schedule: Schedule, items: list[Lane], offset: dict[int, float],
                     colors: dict[str, RGBA], labels: bool, x_end: float) -> float:
    """A deadline marker on each scheduled job's last lanes (met: triangle in its colour,
    missed: red ✕); returns the x extent widened to the latest deadline (minutes)."""
    from sensaopt.validator import check_schedule

    last: dict[str, Lane] = {}
    for it in items:
        if it[0] not in last or it[3] >= last[it[0]][3]:
            last[it[0]] = it
    finish = {k: o.finish for k, o in check_schedule(instance, schedule, require_complete=False).outcomes.items()}
    for job, (_, node, _, _, lanes) in last.items():
        deadline = instance.job(job).deadline
        if deadline is None:
            continue
        done = finish.get(job)
        met = done is not None and done <= deadline + 1e-9
        yc = offset[node] + (min(lanes) + max(lanes) + 1) / 2
        ax.vlines(deadline, offset[node] + min(lanes), offset[node] + max(lanes) + 1, colors=colors[job] if met else "red",
                  linewidth=1.2, linestyles="--", zorder=3)
        ax.plot([deadline], [yc], linestyle="none", marker="v" if met else "X", markersize=8,
                color=colors[job] if met else "red", markeredgecolor="black", zorder=4, gid=f"deadline:{job}")
        if not met and labels:
            ax.annotate(job, (deadline, yc), xytext=(5, -2), textcoords="offset points", fontsize=7, color="red", zorder=4)
    return max([x_end] + [d for k in last if (d := instance.job(k).deadline) is not None])


def _gantt_legend(instance: Instance, items: list[Lane], colors: dict[str, RGBA], deadlines: bool,
                  legend: bool) -> list[Artist]:
    """Legend entries: the sensitive hatch, the deadline markers (``deadlines``), the job colours (``legend``)."""
    import matplotlib.lines as mlines
    import matplotlib.patches as mpatches

    handles: list[Artist] = [mpatches.Patch(facecolor="0.85", edgecolor="white", hatch=SENSITIVE_HATCH, label="sensitive model")]
    if deadlines:
        handles += [mlines.Line2D([], [], color="0.5", marker="v", linestyle="none", markeredgecolor="black", label="deadline met"),
                    mlines.Line2D([], [], color="red", marker="X", linestyle="none", markeredgecolor="black", label="deadline missed")]
    if legend:
        shown = [j for j in instance.jobs if any(it[0] == j.id for it in items)]
        handles += [mpatches.Patch(facecolor=colors[j.id], label=f"{j.id} ({j.gpus} GPU, {j.model})") for j in shown]
    return handles


# ---- utilization --------------------------------------------------------------------------------
def utilization(
    instance: Instance,
    result: Result | Evaluation | Schedule,
    ax: Axes | None = None,
    *,
    resources: Sequence[str] = ("gpu", "cpu", "mem"),
    bin_minutes: float | None = None,
    title: str | None = None,
) -> Axes:
    """Cluster-wide share of GPUs, CPU cores and memory held over time (0–100 %).

    One step line per resource, from the validator's per-round per-node usage.
    ``bin_minutes`` averages over longer bins (e.g. 60 for hourly; useful on traces).
    """
    from sensaopt.frames import evaluate, usage_frame

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
    for res in resources:
        if res not in RESOURCE_LABELS:
            raise ValueError(f"unknown resource {res!r}; known: {', '.join(RESOURCE_LABELS)}")
        x = np.append(df.index.to_numpy(dtype=float), (df.index[-1] + step) if len(df) else step)
        yv = 100 * np.append(df[res].to_numpy(), df[res].to_numpy()[-1] if len(df) else 0.0)
        ax.step(x, yv, where="post", label=RESOURCE_LABELS[res], color=RESOURCE_COLORS[res],
                linestyle=RESOURCE_STYLES[res], linewidth=1.5, gid=f"util:{res}")
    ax.set_ylim(0, 105)
    ax.set_xlabel("time (minutes)")
    ax.set_ylabel("cluster share held (%)")
    ax.set_xlim(left=0)
    ax.set_title(title if title is not None else f"{instance.name}: utilization")
    ax.legend(loc="best", fontsize=8)
    return ax


# ---- CDFs ---------------------------------------------------------------------------------------
def cdf(samples: Mapping[str, Sequence[float] | np.ndarray], ax: Axes | None = None, *, xlabel: str = "", log: bool = False,
        title: str | None = None) -> Axes:
    """Empirical CDF per label (one step line each; NaNs dropped, empty series skipped)."""
    ax = _axes(ax)
    for label, vals in samples.items():
        v = np.sort(np.asarray(vals, dtype=float))
        v = v[np.isfinite(v)]
        if not len(v):
            continue
        y = np.arange(1, len(v) + 1) / len(v)
        ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post", label=str(label), gid=f"cdf:{label}")
    if log:
        ax.set_xscale("symlog", linthresh=1.0)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of jobs")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
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
    """CDF of job completion times (minutes) per policy. ``results`` maps a label to
    an :func:`sensaopt.frames.outcomes_frame` DataFrame or to a Result (with ``instance``)."""
    return cdf(_column_by_label(results, "jct", instance), ax, xlabel="JCT (minutes)", log=log, title=title)


def queueing_cdf(results: Mapping[str, Any], ax: Axes | None = None, *, instance: Instance | None = None, log: bool = True,
                 title: str | None = "queueing time") -> Axes:
    """CDF of queueing times (first start − arrival, minutes) per policy; see :func:`jct_cdf`."""
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
    title: str | None = None,
) -> Axes:
    """Training speed vs CPU cores per GPU (``axis="cpu"``) or vs memory GB per GPU
    (``axis="mem"``), one line per catalog model (or ``models``).

    The other resource is held at ``at`` per GPU (default: its largest measured level,
    so only the plotted resource limits the speed). Sensitive models are solid lines,
    insensitive ones dashed. With ``demand``, a dot marks each model's optimal demand
    (:meth:`SensitivityProfile.optimal_demand` with ``tolerance``) on the plotted axis.
    """
    import matplotlib

    from sensaopt.profiles import catalog

    if axis not in ("cpu", "mem"):
        raise ValueError("axis must be 'cpu' or 'mem'")
    cat = catalog()
    names = list(cat) if models is None else list(models)
    ax = _axes(ax)
    fixed_desc = ""
    for k, name in enumerate(names):
        p = cat[name]
        levels = p.cpu_levels if axis == "cpu" else p.mem_levels
        other = (p.mem_levels if axis == "cpu" else p.cpu_levels)[-1] if at is None else at
        x = np.linspace(levels[0], levels[-1], 200)
        x = np.unique(np.concatenate([x, levels]))
        y = [p.speed(v, other) if axis == "cpu" else p.speed(other, v) for v in x]
        sens = p.is_sensitive()
        color = palette(k)
        ax.plot(x, y, linestyle="-" if sens else "--", color=color, linewidth=1.6 if sens else 1.1,
                label=f"{name}{'' if sens else ' (insensitive)'}", gid=f"model:{name}")
        if demand:
            d = p.optimal_demand(tolerance)
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
    ax.legend(fontsize=7, ncol=2, loc="best")
    return ax


# ---- optimality gap ------------------------------------------------------------------------------
def gap_bars(gaps: Any, ax: Axes | None = None, *, value: str = "gap", percent: bool = True, title: str | None = None) -> Axes:
    """Grouped bars of a :func:`sensaopt.frames.gap_frame` column (concatenated over
    instances): one group per instance, one bar per policy. NaN values get no bar."""
    import pandas as pd

    ax = _axes(ax)
    table = gaps.pivot_table(index="instance", columns="policy", values=value, aggfunc="first", sort=False)
    table = table.reindex(pd.unique(gaps["instance"]))
    policies = list(pd.unique(gaps["policy"]))
    width = 0.8 / max(len(policies), 1)
    xs = np.arange(len(table.index))
    for k, pol in enumerate(policies):
        vals = table[pol].to_numpy(dtype=float) * (100 if percent else 1)
        ok = np.isfinite(vals)
        bars = ax.bar(xs[ok] + (k - (len(policies) - 1) / 2) * width, vals[ok], width, label=pol)
        for b in bars:
            b.set_gid(f"gap:{pol}")
    ax.set_xticks(xs)
    ax.set_xticklabels(list(table.index), rotation=20, ha="right")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel(f"{value} ({'%' if percent else 'fraction'})")
    ax.set_title(title if title is not None else "objective gap to the exact schedule")
    ax.legend(fontsize=8)
    return ax
