"""One entry point: ``solve(instance, solver=..., **params) -> Result``.

Solvers are found by name in :data:`SOLVERS`: ``heuristic`` (a policy run through the
simulator; pick it with ``policy=``) and the exact backends ``cpsat``, ``highs``,
``cbc`` and ``milp`` (HiGHS, or ``backend="cbc"``). Every exact solve goes one way: its
keyword options become one :class:`~sensaopt.exact.settings.SolveSettings`
(:meth:`ExactCall.of`, checked before any work), which :func:`run_exact` carries through
the clock, the warm start when none is given (:func:`sensaopt.warm_start.choose_start`:
SensaScale's schedule, another policy's, or the best registered heuristic policy's,
simulated within the time limit) and the exact pipeline (:func:`sensaopt.exact.pipeline.solve_exact`). This module sits above both the
exact layer and the policies; the exact modules are imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sensaopt.arguments import check_arguments
from sensaopt.errors import ArgumentError
from sensaopt.instance import Instance
from sensaopt.registry import Registry
from sensaopt.result import Result
from sensaopt.schedule import Schedule

if TYPE_CHECKING:
    from sensaopt.exact.settings import SolveSettings

SolverFn = Callable[..., Result]  # (instance, **params) -> Result

HEURISTIC = "heuristic"
MILP = "milp"  # the MILP by its backend= argument
MILP_BACKENDS = ("highs", "cbc")
LABELS = {"cpsat": "cpsat", "highs": "milp:highs", "cbc": "milp:cbc"}  # backend -> the Result's solver


@dataclass(frozen=True)
class ExactSolver:
    """A built-in exact solver of :data:`SOLVERS`: ``name`` is ``cpsat``, ``highs``,
    ``cbc`` or ``milp`` (its backend given as ``backend=``); called as
    ``(instance, **params)`` like any solver."""

    name: str

    def __call__(self, instance: Instance, **params: Any) -> Result:
        """Solve ``instance`` with the options ``params`` (:meth:`ExactCall.of`)."""
        return run_exact(instance, ExactCall.of("solve()", self.name, params))


SOLVERS: Registry[SolverFn] = Registry("solver", {
    HEURISTIC: "sensaopt.solve:solve_heuristic",
    **{name: ExactSolver(name) for name in ("cpsat", MILP, *MILP_BACKENDS)},
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
        **params: the solver's own options (``policy=`` for the heuristic; for the exact
            ones, the fields of :class:`~sensaopt.exact.settings.SolveSettings` such as
            ``time_limit`` in seconds, ``workers``, ``seed``, and ``start``,
            ``start_policy`` as in :func:`solve_cpsat`).

    Returns:
        A Result whose schedule has passed the common validator.
    """
    from sensaopt.arguments import as_instance

    instance = as_instance(instance, "solve()")
    if not isinstance(solver, str):
        raise ArgumentError("solve()", "solver", f"must be a solver name ({', '.join(solver_names())}), got {type(solver).__name__}")
    fn = SOLVERS.get(solver)
    if isinstance(fn, ExactSolver):
        return fn(instance, **params)  # checked by ExactCall.of before any work
    if solver == HEURISTIC:
        from sensaopt.simulator import simulate

        check_arguments("solve()", simulate, params, skip=("instance",))  # before any work: type, finiteness, range
    else:
        check_arguments("solve()", fn, params, skip=("instance",))
    return fn(instance, **params)


def solve_heuristic(instance: Instance, policy: str = "sensascale", **params: Any) -> Result:
    """Run a policy (``sensascale``, ``edf``, ``fifo``, …) through the simulator."""
    from sensaopt.simulator import simulate

    return simulate(instance, policy, **params)


@dataclass(frozen=True)
class ExactCall:
    """One exact solve, its options checked: the ``backend`` (a :mod:`sensaopt.solvers`
    name), the ``settings``, the warm ``start`` (None: :func:`~sensaopt.warm_start.choose_start`'s
    of ``start_policy``; None: :data:`~sensaopt.warm_start.DEFAULT_START_POLICY`)."""

    backend: str
    settings: SolveSettings
    start: Schedule | None = None
    start_policy: str | None = None

    @classmethod
    def of(cls, where: str, solver: str, params: Mapping[str, Any]) -> ExactCall:
        """The call of the exact ``solver`` (``cpsat``, ``highs``, ``cbc``, ``milp``)
        with the keyword ``params``; :class:`~sensaopt.errors.ArgumentError` naming
        ``where`` and the argument for a bad one, before any work."""
        from sensaopt.exact.settings import SolveSettings
        from sensaopt.policies import POLICIES
        from sensaopt.warm_start import BEST

        own = ("start", "start_policy", "backend") if solver == MILP else ("start", "start_policy")
        rest = {k: v for k, v in params.items() if k not in own}
        settings = SolveSettings.of(where, rest)
        start, policy = params.get("start"), params.get("start_policy")
        if start is not None and not isinstance(start, Schedule):
            raise ArgumentError(where, "start", f"must be a Schedule (the warm start) or None, got {type(start).__name__}")
        if policy is not None and (not isinstance(policy, str) or (policy != BEST and policy not in POLICIES)):
            raise ArgumentError(where, "start_policy", f"must be a registered policy name, {BEST!r} or None, got {policy!r}")
        if policy is not None and start is not None:
            raise ArgumentError(where, "start_policy", "give a warm start schedule (start=) or a policy to simulate, not both")
        backend = params.get("backend", MILP_BACKENDS[0]) if solver == MILP else solver
        if backend not in LABELS:
            raise ArgumentError(where, "backend", f"must be one of {', '.join(MILP_BACKENDS)}, got {backend!r}")
        return cls(backend, settings, start, policy)


def run_exact(instance: Instance, call: ExactCall) -> Result:
    """Solve ``instance`` as ``call`` says: the clock and the refusals from the instance
    alone first (:func:`~sensaopt.exact.pipeline.begin`), then the default warm start
    when none is given (its simulations count in the time limit), then the exact pipeline.

    Args:
        instance: the instance.
        call: the backend, settings and warm start (:meth:`ExactCall.of`).

    Returns:
        The validated Result (``warm_start_from``: where the warm start came from).
    """
    from sensaopt.exact.common import engine_of
    from sensaopt.exact.pipeline import begin, solve_exact
    from sensaopt.warm_start import DEFAULT_START_POLICY, choose_start

    engine = engine_of(call.backend, call.settings, LABELS[call.backend])
    budget = begin(instance, engine, call.settings, simulate_start=call.start is None)
    if call.start is not None:
        return solve_exact(instance, engine, call.settings, call.start, budget)
    chosen = choose_start(instance, call.start_policy or DEFAULT_START_POLICY)
    return solve_exact(instance, engine, call.settings, chosen.schedule, budget, chosen.report)


def solve_cpsat(instance: Instance, *, start: Schedule | None = None, start_policy: str | None = None,
                **options: Any) -> Result:
    """Exact offline optimum with CP-SAT (within ``horizon`` rounds; default: the warm
    start's makespan + ``horizon_slack``).

    Args:
        instance: the instance.
        start: the warm start, a valid schedule (None: simulated within the time limit).
        start_policy: the registered policy whose schedule is the warm start (None:
            :data:`sensaopt.warm_start.DEFAULT_START_POLICY`, SensaScale; ``"best"``: the
            best of :func:`sensaopt.warm_start.heuristic_policies`).
        **options: the fields of :class:`~sensaopt.exact.settings.SolveSettings`
            (``time_limit`` seconds, ``workers`` search threads, ``seed`` the CP-SAT random
            seed, ``cooperate``: HiGHS continues the deadline-hard phase,
            ``solver_options``: raw ``SatParameters`` fields, ...).

    Returns:
        The validated Result.
    """
    return run_exact(instance, ExactCall.of("solve_cpsat()", "cpsat", {"start": start, "start_policy": start_policy, **options}))


def solve_milp(instance: Instance, backend: str = "highs", *, start: Schedule | None = None, start_policy: str | None = None,
               **options: Any) -> Result:
    """Exact offline optimum with a MILP solver, as :func:`solve_cpsat`.

    Args:
        instance: the instance.
        backend: ``highs`` or ``cbc``.
        start: the warm start, a valid schedule (None: simulated within the time limit).
        start_policy: as for :func:`solve_cpsat` (None: SensaScale's; ``"best"``: the best policy's).
        **options: the fields of :class:`~sensaopt.exact.settings.SolveSettings`
            (``cooperate``: CP-SAT continues the deadline-hard phase; ``solver_options``:
            HiGHS option names, CBC command-line options).

    Returns:
        The validated Result.
    """
    params = {"backend": backend, "start": start, "start_policy": start_policy, **options}
    return run_exact(instance, ExactCall.of("solve_milp()", MILP, params))
