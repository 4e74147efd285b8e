"""sensaopt: deadline-aware, resource-sensitivity-aware scheduling of DNN training jobs.

Units everywhere: minutes, CPU cores, GB; job work in minutes at speed 1.0.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("sensaopt")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+local"

from sensaopt.instance import Cluster, Instance, Job, NodeType
from sensaopt.io import load_instance, save_instance
from sensaopt.result import Result, Status
from sensaopt.schedule import Placement, Schedule, Segment
from sensaopt.simulator import simulate
from sensaopt.solve import solve
from sensaopt.validator import check_schedule, validate

_FRAMES = ("gap_frame", "jobs_frame", "metrics_frame", "outcomes_frame", "usage_frame")


def __getattr__(name: str):
    """pandas conversions (:mod:`sensaopt.frames`), imported on first use: pandas is slow to import."""
    if name in _FRAMES:
        from sensaopt import frames

        return getattr(frames, name)
    raise AttributeError(f"module 'sensaopt' has no attribute {name!r}")


__all__ = [
    "Cluster", "Instance", "Job", "NodeType", "Placement", "Result", "Schedule", "Segment", "Status",
    "check_schedule", "gap_frame", "jobs_frame", "load_instance", "metrics_frame", "outcomes_frame", "save_instance",
    "simulate", "solve", "usage_frame", "validate", "__version__",
]
