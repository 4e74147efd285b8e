"""What every solver backend offers, and what one run of it returns.

A backend is both a build target and a solver: the model writers above this layer
(the exact model, :mod:`sensaopt.exact.model`; the Chronus lease model,
:mod:`sensaopt.policies.chronus.lease_model`) create variables and constraints through
it, then call :meth:`Backend.solve` with a :class:`~sensaopt.solvers.budget.TimeBudget`
(wall-clock seconds and, optionally, a deterministic work limit) and :class:`SolverParams`. Nothing here knows any model.
"""

from __future__ import annotations

import contextlib
import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sensaopt.result import Status
from sensaopt.solvers.budget import TimeBudget

ValueFn = Callable[[Any], float]
"""Value of one model variable (or constant) in a solver's incumbent."""


def known_values(values: Mapping[Any, float]) -> ValueFn:
    """A :data:`ValueFn` of known values (a warm start's), 0 for every other variable:
    a dict lookup in C, so a model reading it never calls back into its caller's module."""
    return defaultdict(int, values).__getitem__


@dataclass(frozen=True)
class SolverParams:
    """How a backend runs: ``workers`` search threads, ``seed`` its random seed, ``log``
    its own search log; ``extra``: raw solver options passed through unchanged
    (CP-SAT: ``SatParameters`` fields; HiGHS: option names of ``setOptionValue``; CBC:
    command-line options ``-name value``), set after sensaopt's own."""

    workers: int = 1
    seed: int = 0
    log: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SolveOutcome:
    """One backend run. ``status`` is the solver's own proof (OPTIMAL only when
    proven); ``value`` is None without an incumbent; ``objective`` and ``bound`` are
    in the model's own units (None: no incumbent / no bound); ``wall_s`` seconds;
    ``work``: the work units the run spent (:mod:`sensaopt.solvers.budget`; 0 when
    not measured); ``safety_net``: under a work limit, the wall-clock safety net
    stopped the run (its outcome is then not deterministic)."""

    status: Status
    value: ValueFn | None
    objective: float | None
    bound: float | None
    message: str
    wall_s: float
    work: float = 0.0
    safety_net: bool = False


@dataclass(frozen=True)
class NumericLimits:
    """What one backend computes exactly, in the model's units: ``max_value`` bounds
    every coefficient, variable bound and objective value; ``max_ratio`` bounds the
    ratio of the largest to the smallest nonzero coefficient of the objective and the
    largest constraint coefficient (binaries have coefficient 1); None: no ratio limit
    (exact integer arithmetic)."""

    backend: str
    max_value: float
    max_ratio: float | None


EXACT_INT = 2.0**53  # the largest magnitude up to which every integer is a double
CPSAT_LIMITS = NumericLimits("CP-SAT", EXACT_INT, None)
MILP_LIMITS = NumericLimits("HiGHS/CBC", EXACT_INT / 2, 1e9)  # /2: the objective resolution must stay below the 0.5 gap


class Backend(Protocol):
    """A solver as the model writers see it: variables, linear sums and constraints
    built with ``+ - * <= >= ==``, one objective, a warm start, and :meth:`solve`."""

    name: str  # the registry name (cpsat, highs, cbc)
    integer_only: bool  # True: every coefficient must be an integer (CP-SAT)
    limits: NumericLimits

    def bool_var(self, name: str) -> Any: ...
    def int_var(self, lb: int, ub: int, name: str) -> Any: ...  # MILP: continuous is enough
    def sum(self, terms: Iterable[Any]) -> Any: ...
    def add(self, constraint: Any, family: str) -> None: ...
    def minimize(self, expr: Any) -> None: ...
    def hint(self, values: dict) -> None: ...  # var -> start value, replacing earlier ones

    def solve(self, budget: TimeBudget, params: SolverParams) -> SolveOutcome:
        """Solve the model built so far within ``budget`` (from the hint, if one was given)."""
        ...


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off within the block (as Pyomo's ``PauseGC``), for
    building models: variables and expressions are many small acyclic objects freed by
    reference counting, yet their allocation bursts trigger collections that walk the
    whole heap (measured: Chronus lease models on a 1-day Philly window 6.9 s -> 3.0 s;
    the exact model of medium-16gpu on HiGHS 0.7-1.0 s -> 0.5 s CPU). Re-enabled on the
    way out only if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
