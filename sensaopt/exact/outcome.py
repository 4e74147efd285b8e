"""Typed values crossing module boundaries in :mod:`sensaopt.exact`: a built model, and
the backend one exact solve runs (:class:`Engine`: a :mod:`sensaopt.solvers` backend
name, its :class:`~sensaopt.solvers.SolverParams`, how the model is built on it).

Scaled values are in the model's integer objective units (``n_jobs · obj_scale`` ×
minutes, see :mod:`sensaopt.exact.model.data`); :func:`sensaopt.exact.model.builder.to_objective`
converts them to metrics units.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sensaopt.exact.model.builder import ModelSpec, Strength, Vars, build
from sensaopt.exact.model.data import ModelData
from sensaopt.solvers import BACKENDS, Backend, NumericLimits, SolveOutcome, SolverParams, TimeBudget, new_backend, resolve
from sensaopt.solvers.base import ValueFn

__all__ = ["EXACT_OPTIONS", "PARTNER_OPTIONS", "BuildFn", "Engine", "ModelBuild", "RunFn", "SolveOutcome", "ValueFn", "build_model",
           "cpsat_partner", "exact_params", "highs_partner"]


@dataclass(frozen=True)
class ModelBuild:
    """The exact model built on one backend: its data, the backend holding the
    solver model, and the variables."""

    data: ModelData
    backend: Backend
    vars: Vars


BuildFn = Callable[[ModelData, ModelSpec | Strength, TimeBudget], ModelBuild]
"""Build the exact model on one backend (:class:`BuildTimeout` when the budget runs out)."""


class RunFn(Protocol):
    """Solve a built model within ``budget`` (from its hint, if it holds one)."""

    def __call__(self, mb: ModelBuild, budget: TimeBudget) -> SolveOutcome: ...


def build_model(data: ModelData, backend: str, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    """The exact model of ``data`` (``spec``: strength and families) on a new ``backend``
    (a :mod:`sensaopt.solvers` name)."""
    be = new_backend(backend, data.instance.name)
    return ModelBuild(data=data, backend=be, vars=build(data, be, spec, budget))


# the scaled objective is integral: an absolute gap of 0.5 proves optimality; no relative gap.
# CP-SAT: linearization level 2 (its default is 1): the LP of its search holds every constraint's
# linear relaxation, and so its bound rises with the search. Session 41, one thread, 60 s, CP-SAT alone
# at level 2 against the committed runs (cooperating with HiGHS at level 1), every committed window set:
# 6 windows more proven, 3 lost (their schedules had come from HiGHS), the 40-job set 52 of 60 solves
# within 1 % of the bound (48); SLO 20-job w4 needs level 2 (models/measurements.md, "Session 41").
EXACT_OPTIONS: Mapping[str, Mapping[str, Any]] = {
    "cpsat": {"linearization_level": 2},
    "highs": {"mip_rel_gap": 0.0, "mip_abs_gap": 0.5},
    "cbc": {"ratio": 0.0, "allow": 0.5},  # PuLP's gapRel / gapAbs
}


def exact_params(backend: str, workers: int, seed: int, log: bool = False, extra: Mapping[str, Any] | None = None) -> SolverParams:
    """The solver parameters of the exact model on ``backend``: its exact MIP gaps, then ``extra``."""
    return SolverParams(workers=workers, seed=seed, log=log, extra={**EXACT_OPTIONS[resolve(backend)], **(extra or {})})


@dataclass(frozen=True)
class Engine:
    """A backend as an exact solve runs it: ``backend`` (a :mod:`sensaopt.solvers`
    name), ``params``, ``build_fn`` (default :func:`build_model` on ``backend``) and
    ``label`` (the name in messages and ``Result.params``; default ``backend``)."""

    backend: str
    params: SolverParams
    build_fn: BuildFn | None = None
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.backend

    @property
    def limits(self) -> NumericLimits:
        """The numeric range the backend computes exactly (checked before building)."""
        return BACKENDS.get(resolve(self.backend)).limits  # type: ignore[attr-defined]

    def build(self, data: ModelData, spec: ModelSpec | Strength, budget: TimeBudget) -> ModelBuild:
        if self.build_fn is not None:
            return self.build_fn(data, spec, budget)
        return build_model(data, self.backend, spec, budget)

    def run(self, mb: ModelBuild, budget: TimeBudget) -> SolveOutcome:
        return mb.backend.solve(budget, self.params)


# raw options of a cooperating backend over its exact ones (SolveSettings.partner_options adds to them).
# HiGHS beside CP-SAT spends 0.3 of its effort on primal heuristics (its default: 0.05): over three
# sets of 20 twenty-job Philly windows, 60 s, 1 thread, 2 more windows proven, better incumbents on
# 6, worse by one granule on 3; 40-job windows identical (models/measurements.md, "Session 18").
PARTNER_OPTIONS: Mapping[str, Mapping[str, Any]] = {
    "cpsat": {},
    "highs": {"mip_heuristic_effort": 0.3},
}


def cpsat_partner(workers: int, seed: int, extra: Mapping[str, Any] | None = None) -> Engine:
    """CP-SAT as the cooperating backend of another solve's deadline-hard phase
    (``extra``: raw ``SatParameters`` fields)."""
    return Engine("cpsat", exact_params("cpsat", workers, seed, extra=extra), label="cp-sat")


def highs_partner(workers: int, seed: int, extra: Mapping[str, Any] | None = None) -> Engine:
    """HiGHS as the cooperating backend of another solve's deadline-hard phase
    (``extra``: raw HiGHS options)."""
    return Engine("highs", exact_params("highs", workers, seed, extra=extra))
