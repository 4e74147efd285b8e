"""The exact solve as one pipeline of phases (``models/formulation.md``, "Flow"):

1. refusals from the instance alone (model too large, numbers outside the backend's
   exact range), before any work;
2. the warm start: a heuristic's validated schedule (SensaScale's unless given), whose
   makespan also sets the default horizon;
3. the model data (:func:`~sensaopt.exact.common.prepare`) and their numeric check;
4. the shortfall phase (:mod:`sensaopt.exact.phases.shortfall`): can every open deadline be met?
5. yes: the deadline-hard phase (:mod:`sensaopt.exact.phases.deadline_hard`); no or unknown:
   the loss phases (:mod:`sensaopt.exact.phases.loss`), each ending in the validated Result
   and its horizon proof (:mod:`sensaopt.exact.phases.horizon`);
6. an optimum the horizon proof does not cover: once more with the horizon it needs;
7. the allocation check (:mod:`sensaopt.exact.phases.allocation`, at most
   ``settings.relax_time_limit`` seconds, default ``RELAX_SHARE`` of the time limit):
   OPTIMAL only if no allocation between the model's grid points does better.
"""

from __future__ import annotations

from dataclasses import replace

from sensaopt.errors import SensaoptError
from sensaopt.exact.common import MIN_EXTEND_S, SolveSettings, heuristic_start, prepare
from sensaopt.exact.model.data import precheck_size
from sensaopt.exact.model.numeric import check_numbers, precheck_numbers
from sensaopt.exact.outcome import Engine
from sensaopt.exact.phases.allocation import RELAX_SHARE, certify, grid_dominates
from sensaopt.exact.phases.deadline_hard import solve_deadline_hard, zero_miss_start
from sensaopt.exact.phases.lexicographic import check_phase1_share
from sensaopt.exact.phases.loss import solve_loss_phases
from sensaopt.exact.phases.shortfall import solve_shortfall
from sensaopt.instance import Instance
from sensaopt.result import Result, Status
from sensaopt.solvers import TimeBudget
from sensaopt.solvers.interrupt import terminate_interrupts


def solve_exact(solver: str, instance: Instance, engine: Engine, settings: SolveSettings, start: Result | None = None) -> Result:
    """The exact optimum of ``instance`` on ``engine`` (its backend, parameters and
    build), ``start`` the warm start (a heuristic's validated Result; None: SensaScale's,
    run here after the refusals). ``settings.time_limit`` seconds bound the whole call,
    the warm start's simulation included; SIGTERM stops it like Ctrl-C
    (:mod:`sensaopt.solvers.interrupt`)."""
    preload(engine, start is None)
    budget = TimeBudget.start(settings.time_limit)
    refuse_early(instance, engine, settings)
    start = heuristic_start(instance) if start is None else start
    with terminate_interrupts():
        relax_s = RELAX_SHARE * settings.time_limit if settings.relax_time_limit is None else settings.relax_time_limit
        dominated = grid_dominates(instance, settings.refine, settings.inner_refine)
        inner = budget if dominated or relax_s <= 0 else budget.split(max(1 - relax_s / settings.time_limit, 0.05))
        res = solve_within_horizon(solver, instance, engine, settings, start, inner)
        if settings.horizon is None and res.optimal_within_horizon_only:
            res = extend_horizon(res, solver, instance, engine, settings, start, inner)
        res = certify(res, instance, engine, settings, budget.at_most(relax_s), dominated)
        return replace(res, runtime_s=budget.elapsed())


def preload(engine: Engine, warm_start: bool) -> None:
    """Import the backend's solver library and, for SensaScale's warm start, SciPy's
    assignment solver before the time limit starts: a first import in a fresh process
    (0.5–3 s on a loaded machine) is start-up, not solving."""
    _ = engine.limits  # imports the backend module (ortools, highspy or pulp)
    if warm_start:
        import scipy.optimize  # noqa: F401  (SensaScale's pairing)


def refuse_early(instance: Instance, engine: Engine, settings: SolveSettings) -> None:
    """SensaoptError, from the instance alone, for a phase-1 share out of range, a model
    too large (:func:`~sensaopt.exact.model.data.precheck_size`) or outside the backend's
    numeric range (:func:`~sensaopt.exact.model.numeric.precheck_numbers`)."""
    if settings.lexicographic:
        check_phase1_share(settings.phase1_share)
    precheck_size(instance, settings.horizon, settings.horizon_slack, settings.max_vars)
    precheck_numbers(instance, settings.work_scale, engine.limits)


def solve_within_horizon(solver: str, instance: Instance, engine: Engine, settings: SolveSettings, start: Result,
                         budget: TimeBudget) -> Result:
    """Phases 3-5 within ``settings.horizon`` (None: the warm start's makespan + slack)."""
    prep = prepare(instance, settings.horizon, settings.horizon_slack, settings.warm_start, settings.work_scale,
                   settings.max_vars, start, settings.inner_refine)
    check_numbers(prep.data, engine.limits)
    short = None
    if settings.lexicographic and settings.model_spec.warm_start_feasible:
        short = solve_shortfall(prep.data, settings.model_spec, engine.build, engine.run,
                                budget.split(settings.phase1_share), prep.hint, settings.max_vars)
        zero = zero_miss_start(prep, short, settings)
        if short is not None and zero is not None:  # a zero-miss schedule within the hard model's horizon exists
            return solve_deadline_hard(solver, prep, *zero, engine, settings, budget, short)
    return solve_loss_phases(solver, prep, short, engine, settings, budget)


def extend_horizon(res: Result, solver: str, instance: Instance, engine: Engine, settings: SolveSettings, start: Result,
                   budget: TimeBudget) -> Result:
    """An optimum within the default horizon that the horizon proof does not cover:
    solve again, in the time left, with the horizon the proof needs; its OPTIMAL is
    then global. Kept only if proven (otherwise ``res``, its message saying so)."""
    assert res.horizon_proof is not None
    needed = res.horizon_proof.needed
    why = ""
    if budget.left() < MIN_EXTEND_S:
        why = "no time left"
    else:
        try:
            again = solve_within_horizon(solver, instance, engine, replace(settings, horizon=needed), start, budget)
        except SensaoptError as e:
            why = str(e)
        else:
            if again.status == Status.OPTIMAL and not again.optimal_within_horizon_only:
                again.params["horizon_extended_from"] = res.horizon_proof.horizon
                return again
            why = f"{again.status.value}: {again.message}"
    return replace(res, message=res.message + f"; a solve with the {needed} rounds the proof needs did not prove it ({why})")
