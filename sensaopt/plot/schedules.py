"""Schedule Gantt charts: GPU lanes or node rows, bars by model class, deadline markers
(:func:`gantt`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sensaopt.instance import Instance
from sensaopt.palette import MISSED, class_color
from sensaopt.result import Result
from sensaopt.schedule import Schedule
from sensaopt.validator import Evaluation

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
from .base import LEGEND_OUTSIDE, SENSITIVE_HATCH, Lane, _axes, _class_order, job_colors


# ---- Gantt --------------------------------------------------------------------------------------
def gpu_lanes(instance: Instance, schedule: Schedule, nodes: Sequence[int] | None = None) -> list[Lane]:
    """Assign GPU lanes (0 .. node GPUs − 1) to every placement.

    Returns ``(job, node, start round, end round, lanes)`` per placement. A job that
    continues on the same node right after its previous segment keeps its lanes where
    it can; otherwise it gets free lanes by best fit (the smallest run of adjacent free
    lanes that holds it, so that a job's lanes stay together). On a schedule that overfills a
    node, extra lanes beyond the node's GPUs are used (visible above the node).

    Args:
        instance: the instance scheduled.
        schedule: the schedule (rounds of ``instance.round_minutes``).
        nodes: node indices to lay out (None: all).

    Returns:
        One ``(job, node, start round, end round, lanes)`` per placement, in start order.
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


def gantt_height(lanes: float) -> float:
    """Height of a Gantt chart: 0.22 inches per lane plus 1.4 for the axis and title, within [2.2, 24].

    Args:
        lanes: the chart's height in GPU-lane units (lanes and node gaps).

    Returns:
        The figure height in inches.
    """
    return min(max(2.2, 0.22 * lanes + 1.4), 24)


LANE_MODES = ("auto", "gpu", "node")
"""Gantt rows: ``gpu`` one lane per GPU, ``node`` one row per node (a bar's height its share of
the node's GPUs), ``auto`` per GPU up to :data:`GPU_LANES_MAX` drawn GPUs, else per node."""
GPU_LANES_MAX = 64  # every packaged instance (up to 64 GPUs) per GPU; a trace's cluster per node
NODE_ROW = 2.0  # height of a node's row in lanes="node", in GPU-lane units
NODE_GAP = 0.6  # gap between nodes, in GPU-lane units


def gantt_lanes(instance: Instance, nodes: Sequence[int] | None = None, lanes: str = "auto") -> str:
    """The row mode a Gantt chart draws.

    Args:
        instance: the instance scheduled.
        nodes: the node indices drawn (None: all).
        lanes: ``"gpu"``, ``"node"`` or ``"auto"`` (``"gpu"`` while the nodes hold at most
            :data:`GPU_LANES_MAX` GPUs, else ``"node"``).

    Returns:
        ``"gpu"`` or ``"node"``.

    Raises:
        ValueError: ``lanes`` is not one of :data:`LANE_MODES`.
    """
    if lanes not in LANE_MODES:
        raise ValueError(f"unknown lanes {lanes!r}; known: {', '.join(LANE_MODES)}")
    if lanes != "auto":
        return lanes
    node_list = range(instance.cluster.num_nodes) if nodes is None else nodes
    return "gpu" if sum(instance.cluster.nodes[n].gpus for n in node_list) <= GPU_LANES_MAX else "node"


def gantt_figure_height(instance: Instance, nodes: Sequence[int] | None = None, lanes: str = "auto") -> float:
    """Height of a Gantt chart of ``nodes`` drawn with ``lanes`` (:func:`gantt_lanes`): every GPU
    lane, or :data:`NODE_ROW` lane units per node, plus the gaps, sized by :func:`gantt_height`.

    Args:
        instance: the instance scheduled.
        nodes: the node indices drawn (None: all).
        lanes: ``"gpu"``, ``"node"`` or ``"auto"``.

    Returns:
        The figure height in inches.
    """
    node_list = list(range(instance.cluster.num_nodes)) if nodes is None else list(nodes)
    mode = gantt_lanes(instance, node_list, lanes)
    rows = sum(NODE_ROW if mode == "node" else instance.cluster.nodes[n].gpus for n in node_list)
    return gantt_height(rows + NODE_GAP * max(len(node_list) - 1, 0))


def activity_range(instance: Instance, items: Sequence[Lane], deadlines: Sequence[float] = ()) -> tuple[float, float]:
    """The default x range of a Gantt chart: from the first start to the last end of ``items``,
    stretched to the ``deadlines`` that fall at most a quarter of that span past the last end
    (a later deadline never squeezes the activity).

    Args:
        instance: the instance scheduled (its round length).
        items: the drawn placements, as :func:`gpu_lanes` returns them.
        deadlines: deadlines of the drawn jobs (minutes).

    Returns:
        ``(from, to)`` in minutes; ``(0, round length)`` without items.
    """
    R = instance.round_minutes
    if not items:
        return 0.0, R
    lo, hi = min(it[2] for it in items) * R, max(it[3] for it in items) * R
    reach = hi + 0.25 * (hi - lo)
    return lo, max([hi] + [d for d in deadlines if d <= reach])


def gantt(
    instance: Instance,
    schedule: Schedule | Result,
    ax: Axes | None = None,
    *,
    nodes: Sequence[int] | None = None,
    deadlines: bool = True,
    labels: bool = True,
    legend: bool = True,
    title: str | None = None,
    evaluation: Evaluation | None = None,
    window: tuple[float, float] | None = None,
    lanes: str = "auto",
) -> Axes:
    """Schedule Gantt chart: one row block per node, one lane per GPU (GPU numbers as minor
    ticks) or, for big clusters, one row per node.

    Each placement is a bar over its rounds (x: minutes) on the GPU lanes it holds,
    coloured by its model class (image, language, speech: :func:`sensaopt.palette.class_color`);
    sensitive jobs (``job.profile.is_sensitive()``) are hatched. With ``labels``, each job's id
    is written on its bars where it fits (at the drawn size). With ``deadlines``, each scheduled
    job with a deadline gets a marker at its deadline on its last lanes: a triangle in its
    class colour if met, a vermillion ✕ if missed.

    Args:
        instance: the instance scheduled.
        schedule: a schedule, or a Result with one (its solver names the title).
        ax: axes to draw on (None: a new figure sized for the rows, :func:`gantt_figure_height`).
        nodes: node indices to draw (None: all).
        deadlines: draw the deadline markers.
        labels: write job ids on the bars where they fit.
        legend: explain classes, hatch and markers (right of the axes).
        title: axes title (None: the instance and solver).
        evaluation: the validator's evaluation of the schedule on ``instance``
            (:func:`sensaopt.validator.check_schedule`, ``require_complete=False``) when the
            caller already has it; otherwise the deadline markers validate the schedule.
        window: ``(from, to)`` in minutes: the x range drawn, only the placements overlapping it
            (None: :func:`activity_range`, from the first start to the last end).
        lanes: ``"gpu"`` (a lane per GPU), ``"node"`` (a row per node, a bar as tall as its
            share of the node's GPUs) or ``"auto"`` (:func:`gantt_lanes`).

    Returns:
        The axes.
    """
    if isinstance(schedule, Result):
        if schedule.schedule is None:
            raise ValueError(f"result of {schedule.solver} has no schedule")
        title = title if title is not None else f"{instance.name}: {schedule.solver}"
        schedule = schedule.schedule
    if window is not None and not window[0] < window[1]:
        raise ValueError(f"window must be (from, to) minutes with from < to, got {window}")
    R = instance.round_minutes
    node_list = list(range(instance.cluster.num_nodes)) if nodes is None else list(nodes)
    mode = gantt_lanes(instance, node_list, lanes)
    items = gpu_lanes(instance, schedule, node_list)  # lanes over the whole schedule: a job keeps them across the window's edge
    if window is not None:
        items = [it for it in items if it[3] * R > window[0] and it[2] * R < window[1]]
    lanes_of, unit, height, offset, total = _node_rows(instance, items, node_list, mode)
    ax = _axes(ax, figsize=(10, gantt_height(total)))
    colors = job_colors(instance)
    scheduled = {it[0] for it in items}
    marks = [d for k in scheduled if deadlines and (d := instance.job(k).deadline) is not None]
    x0, x1 = window if window is not None else activity_range(instance, items, marks)
    pad = 0.0 if window is not None else 0.02 * (x1 - x0)
    ax.set_xlim(x0 - pad, x1 + pad)
    ax.set_ylim(total + 0.2, -0.2)  # first node on top
    rows = _Rows(offset, unit, 0.06 if mode == "gpu" else 0.03 * NODE_ROW, 8.0 if mode == "gpu" else 4.5)
    _gantt_bars(ax, instance, items, rows, colors, labels)
    if deadlines:
        _gantt_deadlines(ax, instance, schedule, items, rows, colors, labels, evaluation)
    _gantt_yaxis(ax, instance, node_list, offset, height, lanes_of if mode == "gpu" else None)
    for n in node_list[1:]:
        ax.axhline(offset[n] - NODE_GAP / 2, color="0.6", linewidth=0.6)
    ax.set_xlabel("time (minutes)")
    ax.set_title(title if title is not None else f"{instance.name}: schedule")
    if legend:
        ax.legend(handles=_gantt_legend(instance, scheduled, deadlines), fontsize=7, **LEGEND_OUTSIDE)
    return ax


def _node_rows(instance: Instance, items: list[Lane], node_list: list[int], mode: str
               ) -> tuple[dict[int, int], dict[int, float], dict[int, float], dict[int, float], float]:
    """The rows of :func:`gantt`, per node of ``node_list``: its lanes (its GPUs, more if a
    placement of ``items`` holds a higher lane), a lane's height, the row's height and its
    offset (GPU-lane units; ``mode`` ``"node"``: a row :data:`NODE_ROW` high), then the total height."""
    lanes_of = {n: max([instance.cluster.nodes[n].gpus] + [max(it[4]) + 1 for it in items if it[1] == n]) for n in node_list}
    unit = {n: NODE_ROW / instance.cluster.nodes[n].gpus if mode == "node" else 1.0 for n in node_list}
    height = {n: lanes_of[n] * unit[n] for n in node_list}
    offset: dict[int, float] = {}
    y = 0.0
    for n in node_list:
        offset[n] = y
        y += height[n] + NODE_GAP
    total = y - NODE_GAP if node_list else 1.0
    return lanes_of, unit, height, offset, total


class _Rows:
    """Where GPU lane ``ln`` of node ``n`` is drawn: from ``y(n, ln)``, ``unit[n]`` tall; bars
    are inset by ``pad`` (y units) at each edge; deadline markers are ``marker`` points."""

    def __init__(self, offset: dict[int, float], unit: dict[int, float], pad: float, marker: float) -> None:
        self.offset, self.unit, self.pad, self.marker = offset, unit, pad, marker

    def y(self, node: int, lane: float) -> float:
        return self.offset[node] + lane * self.unit[node]


def _gantt_yaxis(ax: Axes, instance: Instance, node_list: list[int], offset: dict[int, float], height: dict[int, float],
                 gpu_lanes: dict[int, int] | None) -> None:
    """Node names as major ticks (left, padded); with ``gpu_lanes`` (lanes per node), GPU numbers
    as minor ticks on the lanes (every lane, or every 2nd / 4th when lanes are too thin to label)."""
    if gpu_lanes is not None:
        px = _px_per_unit(ax)[1]
        step = 1 if px >= 7 else 2 if px >= 3.5 else 4
        ticks = [(offset[n] + ln + 0.5, str(ln)) for n in node_list for ln in range(gpu_lanes[n]) if ln % step == 0]
        ax.set_yticks([y for y, _ in ticks], [t for _, t in ticks], minor=True)
        ax.tick_params(axis="y", which="minor", labelsize=5, length=1.5, pad=1)
    px_node = _px_per_unit(ax)[1] * min(height.values(), default=1.0)
    every = max(1, int(np.ceil(9 / max(px_node, 1e-9))))  # node names at least ~9 px apart
    major = node_list[::every]
    ax.set_yticks([offset[n] + height[n] / 2 for n in major], [instance.cluster.nodes[n].name for n in major])
    ax.tick_params(axis="y", which="major", length=0, pad=12 if gpu_lanes is not None else 3,
                   labelsize=None if gpu_lanes is not None else 6)
    ax.set_ylabel("node / GPU" if gpu_lanes is not None else "node (bar height: share of its GPUs held)")


def _px_per_unit(ax: Axes) -> tuple[float, float]:
    """Display pixels per data unit along x and y at the axes' current size and limits."""
    box = ax.get_window_extent()
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    return box.width / max(abs(x1 - x0), 1e-9), box.height / max(abs(y1 - y0), 1e-9)


def _label_size(px: tuple[float, float, float], text: str, width: float, lanes: float) -> float | None:
    """The font size (points, 7 or 5.5) at which ``text`` fits in a bar ``width`` minutes
    wide and ``lanes`` lanes tall, or None when it fits at neither; ``px`` = the axes'
    (:func:`_px_per_unit`) pixels per minute and per lane, and pixels per point."""
    px_x, px_y, pt = px
    for size in (7.0, 5.5):  # 0.7 em per character: a margin for the axes shrinking when the layout adds the legend
        if 0.7 * size * pt * len(text) + 4 <= width * px_x and 1.15 * size * pt <= lanes * px_y:
            return size
    return None


def _gantt_bars(ax: Axes, instance: Instance, items: list[Lane], rows: _Rows, colors: dict[str, str], labels: bool) -> None:
    """One bar per placement and run of adjacent lanes (gid ``job:<id>``); with ``labels``, the
    job id centred on each stretch of bars on the same lanes, where it fits (gid ``label:<id>``)."""
    import matplotlib.patches as mpatches

    R = instance.round_minutes
    sensitive = {j.id: j.profile.is_sensitive() for j in instance.jobs}
    px = (*_px_per_unit(ax), ax.figure.dpi / 72)  # the limits are fixed before the bars: once, not per bar
    ends = {(it[0], it[1], it[3], it[4]) for it in items}
    starts = {(it[0], it[1], it[2], it[4]): it[3] for it in items}
    for job, node, st, en, lanes in items:
        continued = (job, node, st, lanes) in ends  # same lanes right before: labelled with the first bar
        stretch_end = en  # the end of the run of bars on the same lanes that this bar starts
        while (job, node, stretch_end, lanes) in starts:
            stretch_end = starts[(job, node, stretch_end, lanes)]
        for first, count in _runs(lanes):
            rect = mpatches.Rectangle(
                (st * R, rows.y(node, first) + rows.pad), (en - st) * R, count * rows.unit[node] - 2 * rows.pad,
                facecolor=colors[job], edgecolor="white", linewidth=0.6,
                hatch=SENSITIVE_HATCH if sensitive[job] else None, gid=f"job:{job}",
            )
            ax.add_patch(rect)
            size = None if continued or not labels else _label_size(px, job, (stretch_end - st) * R, count * rows.unit[node])
            if size is not None:
                ax.text((st + stretch_end) * R / 2, rows.y(node, first + count / 2), job, va="center", ha="center",
                        fontsize=size, clip_on=True, gid=f"label:{job}",
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})


def _gantt_deadlines(ax: Axes, instance: Instance, schedule: Schedule, items: list[Lane], rows: _Rows,
                     colors: dict[str, str], labels: bool, evaluation: Evaluation | None = None) -> None:
    """A deadline marker on each scheduled job's last lanes (met: triangle in its class
    colour, missed: vermillion ✕, with the job id when ``labels``)."""
    from sensaopt.metrics import job_metrics
    from sensaopt.validator import check_schedule

    last: dict[str, Lane] = {}
    for it in items:
        if it[0] not in last or it[3] >= last[it[0]][3]:
            last[it[0]] = it
    ev = evaluation if evaluation is not None else check_schedule(instance, schedule, require_complete=False)
    met_by_job = {r.job: r.met_deadline for r in job_metrics(instance, ev)}
    for job, (_, node, _, _, lanes) in last.items():
        deadline = instance.job(job).deadline
        if deadline is None:
            continue
        met = bool(met_by_job[job])  # sensaopt.metrics' definition (finish within DEADLINE_EPS of the deadline)
        color = colors[job] if met else MISSED
        yc = rows.y(node, (min(lanes) + max(lanes) + 1) / 2)
        ax.vlines(deadline, rows.y(node, min(lanes)), rows.y(node, max(lanes) + 1), colors=color,
                  linewidth=1.2, linestyles="--", zorder=3)
        ax.plot([deadline], [yc], linestyle="none", marker="v" if met else "X", markersize=rows.marker,
                color=color, markeredgecolor="black", zorder=4, gid=f"deadline:{job}")
        if not met and labels:
            ax.annotate(job, (deadline, yc), xytext=(5, -2), textcoords="offset points", fontsize=7, color=MISSED, zorder=4,
                        annotation_clip=True, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})


def _gantt_legend(instance: Instance, scheduled: set[str], deadlines: bool) -> list[Artist]:
    """Legend entries: the model classes present, the sensitive hatch, the deadline markers (``deadlines``)."""
    import matplotlib.lines as mlines
    import matplotlib.patches as mpatches

    tasks = dict.fromkeys(sorted({j.profile.task for j in instance.jobs if j.id in scheduled}, key=_class_order))
    handles: list[Artist] = [mpatches.Patch(facecolor=class_color(t), edgecolor="white", label=f"{t} model") for t in tasks]
    handles.append(mpatches.Patch(facecolor="white", edgecolor="0.3", hatch=SENSITIVE_HATCH, label="sensitive model"))
    if deadlines:
        handles += [mlines.Line2D([], [], color="0.8", marker="v", linestyle="none", markeredgecolor="black", label="deadline met"),
                    mlines.Line2D([], [], color=MISSED, marker="X", linestyle="none", markeredgecolor="black", label="deadline missed")]
    return handles
