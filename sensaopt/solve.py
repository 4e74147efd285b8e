"""One entry point: ``solve(instance, solver=..., **params) -> Result``.

Solvers are found by name: ``heuristic`` (a policy run through the simulator; pick it
with ``policy=``) and the exact backends, imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Callable

from sensaopt.instance import Instance
from sensaopt.result import Result

# name -> "module:function"; each function takes (instance, **params) -> Result
_SOLVERS: dict[str, str] = {
    "heuristic": "sensaopt.solve:solve_heuristic",
    "cpsat": "sensaopt.exact.cpsat:solve_cpsat",
    "milp": "sensaopt.exact.milp:solve_milp",
}


def register_solver(name: str, target: str) -> None:
    _SOLVERS[name] = target


def solver_names() -> list[str]:
    return sorted(_SOLVERS)


def _solver(name: str) -> Callable[..., Result]:
    if name not in _SOLVERS:
        raise KeyError(f"unknown solver {name!r}; known: {', '.join(solver_names())}")
    mod, fn = _SOLVERS[name].split(":")
    return getattr(importlib.import_module(mod), fn)


def solve(instance: Instance, solver: str = "heuristic", **params) -> Result:
    """Solve ``instance`` with the named solver; every solver returns a :class:`Result`
    whose schedule has passed the common validator."""
    return _solver(solver)(instance, **params)


def solve_heuristic(instance: Instance, policy: str = "sensascale", **params) -> Result:
    """Run a policy (``sensascale``, ``edf``, ``fifo``, …) through the simulator."""
    from sensaopt.simulator import simulate

    return simulate(instance, policy, **params)
