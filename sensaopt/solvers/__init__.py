"""The solvers layer: every mathematical-programming backend sensaopt uses, below both
the policies (the Chronus lease model) and the exact models, knowing neither.

* :mod:`~sensaopt.solvers.base`: the :class:`Backend` protocol (build *and* solve:
  variables, sums, constraints, objective, hint, ``solve(budget, params)``),
  :class:`SolverParams` (``workers``, ``seed``, ``log``, raw ``extra`` options),
  :class:`SolveOutcome`, the numeric limits of each backend;
* :mod:`~sensaopt.solvers.budget`: the one :class:`TimeBudget` of a solve (wall-clock
  seconds, and optionally a deterministic :class:`WorkMeter`: ``budget="work:N"``);
* :mod:`~sensaopt.solvers.interrupt`, :mod:`~sensaopt.solvers.child`: Ctrl-C/SIGTERM
  and stopping a search from outside; a solver child process that never outlives sensaopt;
* :mod:`~sensaopt.solvers.cpsat`, :mod:`~sensaopt.solvers.highs`,
  :mod:`~sensaopt.solvers.cbc`: the backends, found by name in :data:`BACKENDS`
  (imported on first use); :mod:`~sensaopt.solvers.highs_child`: HiGHS on large
  models in a child process that is killed when it outlives its budget;
  :mod:`~sensaopt.solvers.highs_run`: one HiGHS run, the same in both processes.

Names: ``cpsat``, ``highs``, ``cbc``; :data:`ALIASES` maps the other spellings
(``milp`` is HiGHS) in this one place (:func:`resolve`).
"""

from __future__ import annotations

from collections.abc import Callable

from sensaopt.errors import SensaoptError
from sensaopt.registry import Registry
from sensaopt.solvers.base import Backend, NumericLimits, SolveOutcome, SolverParams, ValueFn, gc_paused
from sensaopt.solvers.budget import TimeBudget, WorkMeter, budget_spec, parse_budget

BackendFactory = Callable[[str], Backend]  # (model name) -> an empty backend

BACKENDS: Registry[BackendFactory] = Registry("solver backend", {
    "cpsat": "sensaopt.solvers.cpsat:CpSatBackend",
    "highs": "sensaopt.solvers.highs:HighsBackend",
    "cbc": "sensaopt.solvers.cbc:PulpBackend",
})
ALIASES = {"milp": "highs", "milp:highs": "highs", "milp:cbc": "cbc", "highspy": "highs", "cp-sat": "cpsat"}


def resolve(name: str) -> str:
    """The registry name of backend ``name`` (aliases resolved); SensaoptError if unknown."""
    key = ALIASES.get(name, name)
    if key not in BACKENDS:
        raise SensaoptError(f"unknown solver backend {name!r}; known: {', '.join(BACKENDS.names())} "
                            f"(aliases: {', '.join(f'{a}={b}' for a, b in ALIASES.items())})")
    return key


def new_backend(name: str, model_name: str = "") -> Backend:
    """An empty backend ``name`` (aliases allowed) to build a model on."""
    return BACKENDS.get(resolve(name))(model_name)


__all__ = ["ALIASES", "BACKENDS", "Backend", "NumericLimits", "SolveOutcome", "SolverParams", "TimeBudget", "ValueFn",
           "WorkMeter", "budget_spec", "gc_paused", "new_backend", "parse_budget", "resolve"]
