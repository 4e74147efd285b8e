"""One entry point: ``solve(instance, solver=..., **params) -> Result``.

Solvers are found by name in :data:`SOLVERS`: ``heuristic`` (a policy run through the
simulator; pick it with ``policy=``) and the exact backends ``cpsat``, ``highs``,
``cbc`` and ``milp`` (HiGHS, or ``backend="cbc"``), imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sensaopt.arguments import check_arguments
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
    """Add a solver that :func:`solve` and ``sensaopt solve --solver`` know by name.

    Args:
        name: the solver's name.
        target: a function ``(instance, **params) -> Result``, or its ``"module:function"``
            (imported on first use).
    """
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
    from sensaopt.arguments import as_instance

    instance = as_instance(instance, "solve()")
    if not isinstance(solver, str):
        raise ArgumentError("solve()", "solver", f"must be a solver name ({', '.join(solver_names())}), got {type(solver).__name__}")
    fn = SOLVERS.get(solver)
    _check("solve()", solver, fn, params)  # before any work: type, finiteness, range
    return fn(instance, **params)


EXACT = ("cpsat", "milp", "highs", "cbc")  # the built-in exact solvers: keyword options of SolveSettings


def _check(where: str, name: str, fn: SolverFn, params: dict[str, Any]) -> None:
    """Check ``params`` against what the solver takes: the heuristic, the simulator's
    parameters; a built-in exact solver, its own (``start``; the MILP's ``backend``) and
    the fields of :class:`~sensaopt.exact.settings.SolveSettings`; any other, its
    function's."""
    if name == HEURISTIC:
        from sensaopt.simulator import simulate

        check_arguments(where, simulate, params, skip=("instance",))
    elif name in EXACT and SOLVERS.get(name) is fn:
        from sensaopt.exact.milp import solve_milp
        from sensaopt.exact.settings import SolveSettings

        own = ("start", "backend") if name == "milp" else ("start",)
        check_arguments(where, solve_milp, {k: v for k, v in params.items() if k in own})
        check_arguments(where, SolveSettings, {k: v for k, v in params.items() if k not in own})
    else:
        check_arguments(where, fn, params, skip=("instance",))


def solve_heuristic(instance: Instance, policy: str = "sensascale", **params: Any) -> Result:
    """Run a policy (``sensascale``, ``edf``, ``fifo``, …) through the simulator."""
    from sensaopt.simulator import simulate

    return simulate(instance, policy, **params)


def solve_highs(instance: Instance, **options: Any) -> Result:
    """The MILP solved by HiGHS (through highspy): :func:`sensaopt.exact.milp.solve_milp`."""
    from sensaopt.exact.milp import solve_milp

    return solve_milp(instance, "highs", **options)


def solve_cbc(instance: Instance, **options: Any) -> Result:
    """The MILP solved by CBC (through PuLP): :func:`sensaopt.exact.milp.solve_milp`."""
    from sensaopt.exact.milp import solve_milp

    return solve_milp(instance, "cbc", **options)
