"""Typed values crossing module boundaries in :mod:`sensaopt.exact`: a built model,
the outcome of one backend run, and the run-function signature every backend offers.

Scaled values are in the model's integer objective units (``n_jobs · obj_scale`` ×
minutes, see :mod:`sensaopt.exact.data`); :func:`sensaopt.exact.builder.to_objective`
converts them to metrics units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sensaopt.exact.budget import TimeBudget
from sensaopt.exact.builder import Backend, Strength, Vars
from sensaopt.exact.data import ModelData
from sensaopt.result import Status

ValueFn = Callable[[Any], float]
"""Value of one model variable (or constant) in a solver's incumbent."""


@dataclass(frozen=True)
class ModelBuild:
    """The exact model built on one backend: its data, the backend holding the
    solver model, and the variables."""

    data: ModelData
    backend: Backend
    vars: Vars


@dataclass(frozen=True)
class SolveOutcome:
    """One backend run. ``status`` is the solver's own proof (OPTIMAL only when
    proven); ``value`` is None without an incumbent; ``objective`` and ``bound`` are
    scaled model units (None: no incumbent / no bound); ``wall_s`` seconds."""

    status: Status
    value: ValueFn | None
    objective: float | None
    bound: float | None
    message: str
    wall_s: float


BuildFn = Callable[[ModelData, Strength, TimeBudget], ModelBuild]
"""Build the exact model on one backend (:class:`BuildTimeout` when the budget runs out)."""


class RunFn(Protocol):
    """Solve a built model within ``budget``; ``hinted``: the backend holds a warm start."""

    def __call__(self, mb: ModelBuild, budget: TimeBudget, hinted: bool) -> SolveOutcome: ...


@dataclass(frozen=True)
class Partner:
    """A second backend cooperating in the deadline-hard phase: ``build``/``run`` as for
    the primary; it starts from the primary's incumbent and both bounds count."""

    name: str
    build: BuildFn
    run: RunFn
