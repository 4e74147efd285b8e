"""One entry point: ``solve(instance, solver=..., **params) -> Result``.

Solvers are found by name in :data:`SOLVERS`: ``heuristic`` (a policy run through the
simulator; pick it with ``policy=``) and the exact backends ``cpsat``, ``highs``,
``cbc`` and ``milp`` (HiGHS, or ``backend="cbc"``), imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sensaopt.errors import ArgumentError
from sensaopt.instance import Instance
from sensaopt.registry import Registry
from sensaopt.result import Result

SolverFn = Callable[..., Result]  # (instance, **params) -> Result

HEURISTIC = "heuristic"
SOLVERS: Registry[SolverFn] = Registry("solver", {
    HEURISTIC: "sensaopt.solve:solve_heuristic",
    "cpsat": "sensaopt.exact.cpsat:solve_cpsat",
    "milp": "sensaopt.exact.milp:solve_milp",  # backend= highs (default) or cbc
    "highs": "sensaopt.solve:solve_highs",
    "cbc": "sensaopt.solve:solve_cbc",
})


def register_solver(name: str, target: SolverFn | str) -> None:
    """Add a solver: a function ``(instance, **params) -> Result`` or its ``"module:function"``."""
    SOLVERS.register(name, target)


def solver_names() -> list[str]:
    return SOLVERS.names()


def exact_solver_names() -> list[str]:
    """Every solver but the heuristic one (the ``--exact`` choices of ``sensaopt gap``)."""
    return [n for n in SOLVERS.names() if n != HEURISTIC]


def solve(instance: Instance, solver: str = HEURISTIC, **params: Any) -> Result:
    """Solve ``instance`` with the named solver.

    Args:
        instance: the instance to schedule.
        solver: a registered solver name (``heuristic``, ``cpsat``, ``milp``, ``highs``, ``cbc``).
        **params: the solver's own options (``policy=`` for the heuristic; ``time_limit``
            in seconds, ``workers``, ``seed`` for the exact ones).

    Returns:
        A Result whose schedule has passed the common validator.
    """
    from sensaopt.arguments import as_instance, check_arguments

    instance = as_instance(instance, "solve()")
    if not isinstance(solver, str):
        raise ArgumentError("solve()", "solver", f"must be a solver name ({', '.join(solver_names())}), got {type(solver).__name__}")
    fn = SOLVERS.get(solver)
    check_arguments("solve()", _signature_of(solver, fn), params, skip=("instance",))  # before any work: type, finiteness, range
    return fn(instance, **params)


def _signature_of(name: str, fn: SolverFn) -> SolverFn:
    """The function whose parameters a solver takes (the heuristic: the simulator's;
    HiGHS and CBC: the MILP's)."""
    if name == HEURISTIC:
        from sensaopt.simulator import simulate

        return simulate
    if fn in (solve_highs, solve_cbc):
        from sensaopt.exact.milp import solve_milp

        return solve_milp
    return fn


def solve_heuristic(instance: Instance, policy: str = "sensascale", **params: Any) -> Result:
    """Run a policy (``sensascale``, ``edf``, ``fifo``, …) through the simulator."""
    from sensaopt.simulator import simulate

    return simulate(instance, policy, **params)


def solve_highs(instance: Instance, **params: Any) -> Result:
    """The MILP solved by HiGHS (through highspy)."""
    from sensaopt.exact.milp import solve_milp

    return solve_milp(instance, backend="highs", **params)


def solve_cbc(instance: Instance, **params: Any) -> Result:
    """The MILP solved by CBC (through PuLP)."""
    from sensaopt.exact.milp import solve_milp

    return solve_milp(instance, backend="cbc", **params)
