"""sensaopt: deadline-aware, resource-sensitivity-aware scheduling of DNN training jobs.

Units everywhere: minutes, CPU cores, GB; job work in minutes at speed 1.0.

Every name of :data:`__all__` is importable from here; the pandas views of
:mod:`sensaopt.frames` (``*_frame``) are imported on first use (pandas is slow to
import) and listed by ``dir(sensaopt)`` like the others.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("sensaopt")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+local"

from typing import Any

from sensaopt.compare import Comparison, PartBounds, compare
from sensaopt.instance import Cluster, Instance, Job, NodeType
from sensaopt.io import load_instance, save_instance
from sensaopt.metrics import JobMetrics, Metrics
from sensaopt.result import Result, Status
from sensaopt.schedule import Placement, Schedule, Segment
from sensaopt.simulator import simulate
from sensaopt.solve import solve
from sensaopt.validator import check_schedule, validate

_FRAMES = ("gap_frame", "jobs_frame", "metrics_frame", "outcomes_frame", "usage_frame")


def __getattr__(name: str) -> Any:
    """pandas conversions (:mod:`sensaopt.frames`), imported on first use: pandas is slow to import."""
    if name in _FRAMES:
        from sensaopt import frames

        return getattr(frames, name)
    raise AttributeError(f"module 'sensaopt' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with the lazily imported frame helpers."""
    return sorted(set(globals()) | set(_FRAMES))


__all__ = [
    "Cluster", "Comparison", "Instance", "Job", "JobMetrics", "Metrics", "NodeType", "PartBounds", "Placement", "Result", "Schedule",
    "Segment", "Status", "check_schedule", "compare", "gap_frame", "jobs_frame", "load_instance", "metrics_frame", "outcomes_frame",
    "save_instance", "simulate", "solve", "usage_frame", "validate", "__version__",
]
