"""The common result of every solver: heuristic policies, baselines, CP-SAT, MILP."""

from __future__ import annotations

import enum
import math
import platform
from dataclasses import dataclass, field
from html import escape
from importlib import metadata
from typing import TYPE_CHECKING, Any

from sensaopt.io import check_json_numbers
from sensaopt.metrics import JobMetrics, Metrics
from sensaopt.metrics import job_metrics as _job_metrics
from sensaopt.schedule import Schedule

if TYPE_CHECKING:
    from sensaopt.instance import Instance
    from sensaopt.validator import Evaluation

VALUE_TOL = 1e-6  # deadline value: lost values closer than this are equal (solver round-off)


class Status(str, enum.Enum):
    OPTIMAL = "OPTIMAL"  # proven by an exact solver
    FEASIBLE = "FEASIBLE"  # a valid schedule, optimality not proven (every heuristic)
    INFEASIBLE = "INFEASIBLE"  # proven to have no solution
    TIME_LIMIT = "TIME_LIMIT"  # stopped by the limit; may carry an incumbent
    ERROR = "ERROR"


@dataclass(frozen=True)
class HorizonProof:
    """The horizon proof of an exact solve (:mod:`sensaopt.exact.phases.horizon`):
    ``needed``: slots (rounds from the model's first) within which every optimal
    schedule finishes the jobs not ``exempt`` (None: no incumbent to argue from);
    ``horizon``: the model's; ``contains_optimum``: ``horizon >= needed``."""

    horizon: int
    needed: int | None
    outside_bound: float | None = None  # metrics units: no schedule running past the horizon does better
    bound: float | None = None  # metrics units: the model's bound, valid within the horizon

    @property
    def contains_optimum(self) -> bool:
        return self.needed is not None and self.horizon >= self.needed

    @property
    def global_bound(self) -> float | None:
        """A bound on every schedule: the model's (within the horizon) or, for schedules
        running past it, :attr:`outside_bound` — the model's alone once the horizon is proven."""
        if self.bound is None or self.contains_optimum or self.outside_bound is None:
            return self.bound
        return min(self.bound, self.outside_bound)

    def to_dict(self) -> dict:
        return {"horizon": self.horizon, "needed": self.needed, "contains_optimum": self.contains_optimum,
                "global_bound": self.global_bound}


@dataclass(frozen=True)
class ModelSize:
    """The size of an exact model: placement variables ``x_vars``, ``constraints``, and
    the constraints each family added (``families``). JSON: ``params["model_size"]``."""

    x_vars: int
    constraints: int
    families: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"x_vars": self.x_vars, "constraints": self.constraints, "families": dict(self.families)}


@dataclass(frozen=True)
class LossProof:
    """What an exact solve proved about the lost deadline value, in violation weight ×
    value units (the model's loss part): ``bound``: no schedule loses less (None:
    nothing proven); ``fixed``: no deadline decision was open, so every schedule of the
    model loses the same value as the result's. Set by the exact solvers; the JSON form
    is ``params["lexicographic"]["phase1"]``."""

    bound: float | None = None
    fixed: bool = False


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
    # the exact solve's proof about the loss part (None: a heuristic, or a weighted solve); read by PartBounds
    loss_proof: LossProof | None = field(default=None, repr=False, compare=False)
    # the exact solve's horizon proof (None: a heuristic, or decided before any solve); JSON: params["horizon_proof"]
    horizon_proof: HorizonProof | None = field(default=None, repr=False, compare=False)
    # the exact model's size (None: a heuristic, or no model built); JSON: params["model_size"]
    model_size: ModelSize | None = field(default=None, repr=False, compare=False)

    @property
    def optimal_within_horizon_only(self) -> bool:
        """OPTIMAL among the schedules ending within the model's horizon, not proven beyond it."""
        return self.status == Status.OPTIMAL and self.horizon_proof is not None and not self.horizon_proof.contains_optimum

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
            # proven bounds of the lexicographic parts (PartBounds): lost value, avg JCT minutes
            "part_bounds": {"lost_value": bounds.lost_value, "avg_jct": bounds.avg_jct},
        }
        if with_schedule:
            d["schedule"] = self.schedule.to_dict(instance) if (self.schedule and instance is not None) else None
        check_json_numbers(d, f"result of {self.solver}")
        return d


@dataclass(frozen=True)
class Level:
    """The lexicographic parts of one schedule's objective: SLO violations (misses),
    lost deadline value, average JCT (minutes); None where unknown."""

    misses: int | None
    lost_value: float | None
    avg_jct: float | None

    @classmethod
    def of(cls, result: Result) -> Level:
        m = result.metrics
        if m is None:
            return cls(None, None, None)
        return cls(m.slo_violations, m.weighted_violations, m.avg_jct)


def _weight(result: Result, instance: Instance | None) -> float | None:
    inst = instance if instance is not None else result.truth
    return None if inst is None else inst.objective.violation_weight


@dataclass(frozen=True)
class PartBounds:
    """Proven lower bounds of one exact Result, per part (None: not known): the whole
    objective (``objective``), the lost deadline value (``lost_value``, value units) and
    the average JCT at the result's loss level (``avg_jct``, minutes); see the module
    docstring for when each is valid."""

    objective: float | None
    lost_value: float | None
    avg_jct: float | None

    @classmethod
    def of(cls, result: Result, instance: Instance | None = None) -> PartBounds:
        """Bounds of ``result``; ``instance`` gives the violation weight W (default:
        ``result.truth``, which every solver sets)."""
        w = _weight(result, instance)
        proof = result.loss_proof
        lvl = Level.of(result)
        loss: float | None = None
        if proof is not None and w is not None and w > 0:
            if proof.bound is not None:
                loss = max(float(proof.bound), 0.0) / w
            elif proof.fixed and result.schedule is not None:
                loss = lvl.lost_value  # no open deadline decision: every schedule loses this
        if loss is not None and lvl.lost_value is not None:
            loss = min(loss, lvl.lost_value)  # a bound never above an attained value (round-off)
        jct: float | None = None
        if (result.bound is not None and loss is not None and lvl.lost_value is not None and w is not None
                and math.isclose(loss, lvl.lost_value, rel_tol=1e-9, abs_tol=VALUE_TOL)):
            jct = result.bound - w * lvl.lost_value
        return cls(objective=result.bound, lost_value=loss, avg_jct=jct)


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
