"""The common result of every solver: heuristic policies, baselines, CP-SAT, MILP."""

from __future__ import annotations

import enum
import platform
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

from sensaopt.metrics import JobMetrics, Metrics
from sensaopt.metrics import job_metrics as _job_metrics
from sensaopt.schedule import Schedule

if TYPE_CHECKING:
    import pandas as pd

    from sensaopt.instance import Instance
    from sensaopt.validator import Evaluation


class Status(str, enum.Enum):
    OPTIMAL = "OPTIMAL"  # proven by an exact solver
    FEASIBLE = "FEASIBLE"  # a valid schedule, optimality not proven (every heuristic)
    INFEASIBLE = "INFEASIBLE"  # proven to have no solution
    TIME_LIMIT = "TIME_LIMIT"  # stopped by the limit; may carry an incumbent
    ERROR = "ERROR"


@dataclass
class Result:
    solver: str  # e.g. "heuristic:sensascale", "cpsat", "milp:highs"
    status: Status
    objective: float | None  # the metrics module's objective of ``schedule``
    bound: float | None  # proven lower bound on the objective, if any
    runtime_s: float  # wall-clock seconds
    schedule: Schedule | None
    metrics: Metrics | None
    params: dict = field(default_factory=dict)  # time limit, workers, seed, policy config
    versions: dict = field(default_factory=dict)
    message: str = ""
    # the validator's evaluation of ``schedule`` (per-job outcomes, resource use) and the
    # instance it was scored on (the truth: hidden speed factors drawn when profile error
    # applies); downstream code reads these instead of re-validating
    evaluation: Evaluation | None = field(default=None, repr=False, compare=False)
    truth: Instance | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        m = self.metrics
        parts = [f"solver={self.solver!r}", f"status={self.status.value}", f"objective={self.objective!r}", f"bound={self.bound!r}",
                 f"runtime_s={self.runtime_s:.3g}"]
        if m is not None:
            parts += [f"jobs={m.jobs}", f"slo_violations={m.slo_violations}", f"avg_jct={m.avg_jct!r}"]
        if self.message:
            parts.append(f"message={self.message!r}")
        return f"Result({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """A one-row HTML table for notebooks: solver, status, objective, bound, misses
        (SLO violations / deadline jobs), lost value, avg JCT and avg queueing (minutes),
        runtime (seconds); an exact solver's bound of each part in parentheses."""
        from html import escape

        from sensaopt.compare import PartBounds

        m, b = self.metrics, PartBounds.of(self)

        def num(x: float | None, fmt: str, bound: float | None = None) -> str:
            text = "–" if x is None else format(x, fmt)
            return text if bound is None else f"{text} (≥ {format(bound, fmt)})"

        cells = {
            "solver": self.solver, "status": self.status.value, "objective": num(self.objective, ".4f"), "bound": num(self.bound, ".4f"),
            "misses": "–" if m is None else f"{m.slo_violations}/{m.slo_jobs}",
            "lost value": num(None if m is None else m.weighted_violations, "g", b.lost_value),
            "avg JCT (min)": num(None if m is None else m.avg_jct, ".1f", b.avg_jct),
            "avg queueing (min)": num(None if m is None else m.avg_queueing_time, ".1f"),
            "runtime (s)": f"{self.runtime_s:.3g}",
        }
        head = "".join(f"<th>{escape(k)}</th>" for k in cells)
        row = "".join(f"<td>{escape(v)}</td>" for v in cells.values())
        note = f"<p>{escape(self.message)}</p>" if self.message else ""
        return f"<table class=\"sensaopt-result\"><thead><tr>{head}</tr></thead><tbody><tr>{row}</tr></tbody></table>{note}"

    def to_frame(self, label: str | None = None) -> pd.DataFrame:
        """This result as a one-row DataFrame (:func:`sensaopt.frames.metrics_frame`'s
        columns: minutes, seconds, fractions), indexed by ``label`` (default: ``solver``)."""
        from sensaopt.frames import metrics_frame

        return metrics_frame({self.solver if label is None else label: self})

    def job_metrics(self) -> list[JobMetrics]:
        """Per-job outcomes (minutes, job order) from the carried evaluation and truth;
        ValueError for a result that carries none (e.g. no schedule)."""
        if self.evaluation is None or self.truth is None:
            raise ValueError(f"result of {self.solver} ({self.status.value}) carries no evaluation")
        return _job_metrics(self.truth, self.evaluation)

    def to_dict(self, instance: Instance | None = None, with_schedule: bool = True) -> dict[str, Any]:
        """JSON-ready form; the schedule needs ``instance`` (else it is written as null).
        Strict JSON: a NaN or infinity anywhere raises :class:`~sensaopt.errors.SensaoptError`
        (one line naming the field) instead of reaching a file as ``NaN``/``Infinity``."""
        from sensaopt.compare import PartBounds
        from sensaopt.io import check_json_numbers

        bounds = PartBounds.of(self)
        d: dict[str, Any] = {
            "solver": self.solver,
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.bound,
            "runtime_s": self.runtime_s,
            "metrics": self.metrics.to_dict() if self.metrics else None,
            "params": self.params,
            "versions": self.versions,
            "message": self.message,
            # proven bounds of the lexicographic parts (sensaopt.compare.PartBounds): lost value, avg JCT minutes
            "part_bounds": {"lost_value": bounds.lost_value, "avg_jct": bounds.avg_jct},
        }
        if with_schedule:
            d["schedule"] = self.schedule.to_dict(instance) if (self.schedule and instance is not None) else None
        check_json_numbers(d, f"result of {self.solver}")
        return d


_PACKAGES = ("sensaopt", "ortools", "pulp", "highspy", "networkx", "numpy", "scipy", "pandas", "pydantic", "matplotlib", "dask",
             "distributed")


def package_versions() -> dict[str, str | None]:
    """Versions of Python and of the packages whose behaviour a result depends on."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out
