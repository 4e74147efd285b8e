"""What every plot shares: resource styles, the legend's place, new axes and the jobs' colours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sensaopt.instance import Instance
from sensaopt.palette import MODEL_CLASSES, class_color

if TYPE_CHECKING:
    from matplotlib.axes import Axes


RESOURCE_LABELS = {"gpu": "GPU", "cpu": "CPU", "mem": "memory"}
RESOURCE_STYLES = {"gpu": "-", "cpu": "--", "mem": ":"}  # proportional shares make the lines coincide
RESOURCE_WIDTHS = {"gpu": 3.4, "cpu": 2.1, "mem": 1.2}
"""Utilization line widths (points): drawn in this order, each narrower line on top of the wider
ones (higher zorder), so that coinciding lines stay visible as a band with a dashed and a dotted core."""
SENSITIVE_HATCH = "////"

Lane = tuple[str, int, int, int, tuple[int, ...]]  # (job, node, start round, end round, GPU lanes): see gpu_lanes
MODEL_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")  # sensitivity curves: models of one class differ by marker
LEGEND_OUTSIDE: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, "frameon": False}
"""Legend placement of every plot: right of the axes, never over the data."""


def _axes(ax: Axes | None, figsize: tuple[float, float] = (8, 4)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def job_colors(instance: Instance) -> dict[str, str]:
    """Each job's Gantt colour: its model class's (:func:`sensaopt.palette.class_color`).

    Args:
        instance: the instance whose jobs are coloured.

    Returns:
        ``{job id: "#rrggbb"}``.
    """
    return {j.id: class_color(j.profile.task) for j in instance.jobs}



def _class_order(task: str) -> tuple[int, str]:
    return (MODEL_CLASSES.index(task) if task in MODEL_CLASSES else len(MODEL_CLASSES), task)

