"""Plots for schedules, resource use, job-time distributions and sensitivity profiles.

Every function draws on ``ax`` (a new figure when ``ax`` is None) and returns the
axes. Times on the x axes are minutes. matplotlib is imported lazily so that
``import sensaopt`` stays light; pick a backend (e.g. ``MPLBACKEND=Agg``) as usual.

Drawn artists carry a ``gid`` so that callers (and the tests) can find them:
``job:<id>`` on each Gantt bar, ``label:<id>`` on its id written on a bar, ``deadline:<id>`` on each deadline marker,
``model:<name>`` / ``demand:<name>`` on sensitivity curves and optimal-demand points,
``util:<resource>`` on utilization lines, ``cdf:<label>`` on CDF lines and
``gap:<policy>`` on gap bars. Colours come from :mod:`sensaopt.palette` (one per policy in
every figure; Gantt bars by model class); legends sit right of the axes, never over data.

The parts: :mod:`.schedules` (Gantt charts), :mod:`.curves` (utilization, CDFs, sensitivity, gap bars),
:mod:`.captions` (experiment figures' intervals and captions) and :mod:`.base` (what they share).
"""

from .base import LEGEND_OUTSIDE, MODEL_MARKERS, RESOURCE_LABELS, RESOURCE_STYLES, RESOURCE_WIDTHS, SENSITIVE_HATCH, Lane, job_colors
from .captions import INTERVAL_NOTE, interval_caps, scale_text, seeds_text
from .curves import (
    NOT_COMPARABLE_HATCH,
    NOT_COMPARABLE_LABEL,
    cdf,
    gap_bars,
    jct_cdf,
    queueing_cdf,
    sensitivity_curves,
    stacked_widths,
    utilization,
)
from .schedules import (
    GPU_LANES_MAX,
    LANE_MODES,
    NODE_GAP,
    NODE_ROW,
    activity_range,
    gantt,
    gantt_figure_height,
    gantt_height,
    gantt_lanes,
    gpu_lanes,
)

__all__ = [
    "GPU_LANES_MAX", "INTERVAL_NOTE", "LANE_MODES", "LEGEND_OUTSIDE", "Lane", "MODEL_MARKERS", "NODE_GAP", "NODE_ROW",
    "NOT_COMPARABLE_HATCH", "NOT_COMPARABLE_LABEL", "RESOURCE_LABELS", "RESOURCE_STYLES", "RESOURCE_WIDTHS", "SENSITIVE_HATCH",
    "activity_range", "cdf", "gantt", "gantt_figure_height", "gantt_height", "gantt_lanes", "gap_bars", "gpu_lanes",
    "interval_caps", "jct_cdf", "job_colors", "queueing_cdf", "scale_text", "seeds_text", "sensitivity_curves", "stacked_widths",
    "utilization"
]
