"""The exact solve as one pipeline of phases (``models/formulation.md``, "Flow"):

1. (:func:`begin`, called by the public entries of :mod:`sensaopt.solve` before they
   simulate the default warm start) the clock, and the refusals from the instance alone
   (model too large, numbers outside the backend's exact range), before any work;
2. the warm start, an argument (a schedule; the public entries' default: the best
   registered policy's, :mod:`sensaopt.warm_start`), validated; its makespan also sets
   the default horizon; and what every phase needs about the valid allocations, asked of
   :mod:`sensaopt.allocations` once (:func:`~sensaopt.allocations.exact_allocations`);
3. the model data (:func:`~sensaopt.exact.common.prepare`) and their numeric check;
4. the shortfall phase (:mod:`sensaopt.exact.phases.shortfall`): can every open deadline be met?
5. yes: the deadline-hard phase (:mod:`sensaopt.exact.phases.deadline_hard`); no or unknown:
   the loss phases (:mod:`sensaopt.exact.phases.loss`), each ending in the validated Result
   and its horizon proof (:mod:`sensaopt.exact.phases.horizon`);
6. an optimum the horizon proof does not cover: once more with the horizon it needs;
7. the allocation check (:mod:`sensaopt.exact.phases.allocation`, at most
   ``settings.relax_time_limit`` seconds, default a share of the time limit that grows
   with the number of jobs, :func:`~sensaopt.exact.phases.allocation.relax_share`):
   OPTIMAL only if no allocation between the model's grid points does better. With
   ``settings.lp_first`` (default) its root LPs run before step 4, from the warm start's
   objective (:func:`~sensaopt.exact.phases.allocation.root_lps`); steps 4-6 then get all
   the time they leave, and the check's searches what those leave. The deadline-hard
   relaxation's root-LP stage also runs column generation (its Dantzig–Wolfe bound) and
   its restricted master as a MIP (``settings.relax_colgen``); that schedule, lifted to
   valid allocations, becomes the start of steps 4-6 when it beats the warm start
   (:func:`better_lifted`). With
   ``settings.relax_beside`` and two workers or more, the check's search runs on its own
   thread beside steps 4-6 instead (:mod:`~sensaopt.exact.phases.beside`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sensaopt.allocations import ExactAllocations, exact_allocations
from sensaopt.errors import SensaoptError
from sensaopt.exact.common import MIN_EXTEND_S, WarmStart, inner_horizon, prepare
from sensaopt.exact.model.data import ModelData, check_size, hard_data, precheck_size
from sensaopt.exact.model.numeric import check_numbers, precheck_numbers
from sensaopt.exact.outcome import Engine
from sensaopt.exact.phases.allocation import Climb, certify, ladder, relax_share, root_lps, search_first
from sensaopt.exact.phases.beside import inner_beside_relaxation
from sensaopt.exact.phases.deadline_hard import solve_deadline_hard, zero_miss_start
from sensaopt.exact.phases.lexicographic import check_phase1_share
from sensaopt.exact.phases.lift import Lifted
from sensaopt.exact.phases.loss import solve_loss_phases
from sensaopt.exact.phases.shortfall import solve_shortfall
from sensaopt.exact.settings import MODEL_REFINE, SolveSettings
from sensaopt.instance import Instance
from sensaopt.result import Result, Status, WarmStartReport
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget, budget_spec
from sensaopt.solvers.budget import SAFETY_NET_NOTE
from sensaopt.solvers.interrupt import terminate_interrupts


def solve_exact(instance: Instance, engine: Engine, settings: SolveSettings, start: Schedule,
                budget: TimeBudget | None = None, origin: WarmStartReport | None = None) -> Result:
    """The exact optimum of ``instance`` on ``engine`` (its backend, parameters and
    build; ``engine.name`` is the Result's solver), from the warm start ``start`` (a
    valid schedule; its makespan also sets the default horizon). ``budget``: the
    clock :func:`begin` started (the public entries call it before they simulate the
    default warm start; None: :func:`begin` here, ``settings.time_limit`` seconds from
    now). ``origin``: where ``start`` came from, recorded as ``Result.warm_start_from``
    (None: the caller's schedule). SIGTERM stops it like Ctrl-C (:mod:`sensaopt.solvers.interrupt`).

    What the phases need about the valid allocations (the inner grids with the warm
    start's points, dominance, the relaxations' grids, the best speeds) is asked of
    :mod:`sensaopt.allocations` once, up front (:func:`~sensaopt.allocations.exact_allocations`),
    and handed down."""
    budget = begin(instance, engine, settings, simulate_start=False) if budget is None else budget
    warm = WarmStart.of(instance, start)
    with terminate_interrupts():
        relax_s = (relax_share(len(instance.jobs)) * settings.time_limit if settings.relax_time_limit is None
                   else settings.relax_time_limit)
        allocs = exact_allocations(instance, start, refine=settings.refine, inner_refine=MODEL_REFINE,
                                   relax_refines=ladder(settings.refine))
        relax_work = None if budget.work is None else budget.work.limit * relax_s / settings.time_limit
        early = None
        inner_start = None  # the inner solve's start when it is not the warm start (params["inner_start"])
        if settings.lp_first and relax_s > 0:
            early = root_lps(warm.objective, instance, inner_horizon(warm, settings.horizon, settings.horizon_slack), engine, settings,
                             budget.at_most(relax_s, relax_work), allocs)
        if early is not None and warm.objective is not None and settings.search_share > 0 and not early.meets(warm.objective):
            # the relaxation's searches first, below the warm start; a lifted schedule becomes the start
            share = min(settings.search_share * settings.time_limit / max(budget.left(), 1e-9), 0.95)
            search_first(warm.objective, instance, inner_horizon(warm, settings.horizon, settings.horizon_slack),
                         engine, settings, budget.split(share), allocs, early)
        lifted = better_lifted(early, warm.objective)
        if lifted is not None:  # a relaxation schedule (root-LP stage or search), lifted, beats the start: the inner solve's start
            inner_start = {"from": "lifted allocation relaxation", "objective": lifted.objective, "was": warm.objective}
            start, warm = lifted.schedule, WarmStart.of(instance, lifted.schedule)
            allocs = replace(allocs, inner=exact_allocations(instance, start, refine=settings.refine, inner_refine=MODEL_REFINE,
                                                             relax_refines=()).inner)  # its points in the inner grid
        if allocs.dominated or relax_s <= 0 or early is not None:
            inner = budget  # lp_first: the relaxations' searches get only what the inner solve leaves
        else:
            inner = budget.split(max(1 - relax_s / settings.time_limit, 0.05))

        settled = proven_by(early, warm.objective)

        def run_inner(engine: Engine, settings: SolveSettings, inner: TimeBudget) -> Result:
            res = solve_within_horizon(instance, engine, settings, warm, inner, allocs, settled)
            if settings.horizon is None and res.optimal_within_horizon_only:
                res = extend_horizon(res, instance, engine, settings, warm, inner, allocs)
            return res

        if beside(settings, early, warm.objective):  # the relaxation's search on its own thread from the start
            assert early is not None and warm.objective is not None
            res = inner_beside_relaxation(run_inner, warm.objective, instance,
                                          inner_horizon(warm, settings.horizon, settings.horizon_slack), engine, settings,
                                          inner, allocs, early)
        else:
            res = run_inner(engine, settings, inner)
        # lp_first: the certificate gets what the inner solve left (it may have proven its grid's optimum early);
        # otherwise the share kept from the inner solve
        res = certify(res, instance, engine, settings, budget if early is not None else budget.at_most(relax_s, relax_work),
                      allocs, early)
        res.params["lp_first"] = early is not None  # the root LPs ran before the inner solve, which got the time they left
        if inner_start is not None:
            res.params["inner_start"] = inner_start
        res = replace(res, runtime_s=budget.elapsed(), warm_start_from=origin or WarmStartReport(policy=None))
        res.params["relax_s"] = round(relax_s, 6)  # the relaxations' seconds at most (relax_share by default)
        return with_budget(res, settings, budget)


def better_lifted(early: Climb | None, objective: float | None) -> Lifted | None:
    """The best valid schedule lifted from a relaxation before the inner solve (the
    Dantzig–Wolfe stage's restricted master, or ``search_first``), when it is better than
    the warm start's ``objective`` (metrics units; None: no start), else None."""
    if early is None:
        return None
    top = min(early.lifted, key=lambda x: x.objective, default=None)
    if top is None or (objective is not None and top.objective >= objective - 1e-9):
        return None
    return top


def proven_by(early: Climb | None, objective: float | None) -> Callable[[float], bool] | None:
    """Whether the root LPs' bound (``early``, raised in place by a relaxation search
    beside the inner solve) already makes an objective (metrics units) at most the warm
    start's ``objective`` optimal: the bound is valid over every schedule better than the
    warm start (``models/formulation.md``, "Order"). None without root LPs first."""
    if early is None or objective is None:
        return None
    top = objective + 1e-9
    return lambda obj: obj <= top and early.meets(obj)


def beside(settings: SolveSettings, early: Climb | None, objective: float | None) -> bool:
    """Whether the relaxation's search runs beside the inner solve
    (:mod:`~sensaopt.exact.phases.beside`): ``settings.relax_beside`` with two workers or
    more, the root LPs done (``early``) and leaving a gap to the warm start's ``objective``."""
    return (settings.relax_beside and settings.workers >= 2 and early is not None and objective is not None
            and not early.meets(objective))


def begin(instance: Instance, engine: Engine, settings: SolveSettings, simulate_start: bool) -> TimeBudget:
    """Before the clock: import the backend's solver library and, when the caller will
    simulate the default warm start (``simulate_start``), SciPy's assignment solver (a
    first import in a fresh process, 0.5–3 s on a loaded machine, is start-up, not
    solving). Then the clock of the whole call (``settings.time_limit`` seconds) and the
    refusals from the instance alone (:func:`refuse_early`)."""
    _ = engine.limits  # imports the backend module (ortools, highspy or pulp)
    if simulate_start:
        import scipy.optimize  # noqa: F401  (SensaScale's pairing)
    budget = TimeBudget.start(settings.time_limit, settings.work)
    refuse_early(instance, engine, settings)
    return budget


def with_budget(res: Result, settings: SolveSettings, budget: TimeBudget) -> Result:
    """``res`` with its budget in ``params``: ``budget`` (``"work:N"`` or ``"time"``) and,
    under a work limit, ``work_spent`` (units) and ``safety_net_fired``; a fired safety
    net is named in the message too (the result is then not deterministic)."""
    res.params["budget"] = budget_spec(settings.work)
    if budget.work is None:
        return res
    res.params["work_spent"] = round(budget.work.spent, 6)
    res.params["safety_net_fired"] = budget.work.safety_net
    if budget.work.safety_net:
        return replace(res, message=f"{res.message}; {SAFETY_NET_NOTE} (the {settings.time_limit:g} s time limit)")
    return res


def refuse_early(instance: Instance, engine: Engine, settings: SolveSettings) -> None:
    """SensaoptError, from the instance alone, for a phase-1 share out of range, a model
    too large (:func:`~sensaopt.exact.model.data.precheck_size`) or outside the backend's
    numeric range (:func:`~sensaopt.exact.model.numeric.precheck_numbers`)."""
    if settings.lexicographic:
        check_phase1_share(settings.phase1_share)
    precheck_size(instance, settings.horizon, settings.horizon_slack, settings.max_vars)
    precheck_numbers(instance, settings.work_scale, engine.limits)


def solve_within_horizon(instance: Instance, engine: Engine, settings: SolveSettings, start: WarmStart,
                         budget: TimeBudget, allocs: ExactAllocations | None = None,
                         settled: Callable[[float], bool] | None = None) -> Result:
    """Phases 3-5 within ``settings.horizon`` (None: the warm start's makespan + slack);
    ``allocs``: the allocations of ``start`` the pipeline asked for (None: asked here);
    ``settled``: whether a bound proven before this solve already makes an objective
    (metrics units) optimal (:func:`~sensaopt.exact.phases.deadline_hard.solve_deadline_hard`)."""
    prep = prepare(instance, settings.horizon, settings.horizon_slack, settings.warm_start, settings.work_scale,
                   None, start, allocs)
    refuse_unavoidable(prep.data, settings)
    check_numbers(prep.data, engine.limits)
    short = None
    if settings.lexicographic and settings.model_spec.warm_start_feasible:
        short = solve_shortfall(prep.data, settings.model_spec, engine.build, engine.run,
                                budget.split(settings.phase1_share), prep.hint, settings.max_vars)
        zero = zero_miss_start(prep, short, settings)
        if short is not None and zero is not None:  # a zero-miss schedule within the hard model's horizon exists
            return solve_deadline_hard(prep, *zero, engine, settings, budget, short, settled)
    return solve_loss_phases(prep, short, engine, settings, budget)


def refuse_unavoidable(data: ModelData, settings: SolveSettings) -> None:
    """The size guard (:func:`~sensaopt.exact.model.data.check_size`) where the whole
    model of ``data`` is the only way on: no lexicographic phases, or a deadline-hard
    model (the one built when a zero-miss schedule is known) that is too large as well.
    Otherwise the whole model is checked only if the loss phases need it
    (:func:`~sensaopt.exact.phases.loss.solve_loss_phases`): a 40-job Philly window of
    377 rounds has about 376 k variables in its whole model, 27 k in its deadline-hard one."""
    if data.estimate_vars() <= settings.max_vars:
        return
    lexicographic = settings.lexicographic and settings.model_spec.warm_start_feasible
    if not lexicographic or hard_data(data, grow=settings.horizon is None).estimate_vars() > settings.max_vars:
        check_size(data, settings.max_vars)


def extend_horizon(res: Result, instance: Instance, engine: Engine, settings: SolveSettings, start: WarmStart,
                   budget: TimeBudget, allocs: ExactAllocations | None = None) -> Result:
    """An optimum within the default horizon that the horizon proof does not cover:
    solve again, in the time left, with the horizon the proof needs; its OPTIMAL is
    then global. Kept only if proven (otherwise ``res``, its message saying so).
    ``allocs``: as in :func:`solve_within_horizon`."""
    assert res.horizon_proof is not None
    needed = res.horizon_proof.needed
    why = ""
    if budget.short_of(MIN_EXTEND_S):
        why = "no time left"
    else:
        try:
            again = solve_within_horizon(instance, engine, replace(settings, horizon=needed), start, budget, allocs)
        except SensaoptError as e:
            why = str(e)
        else:
            if again.status == Status.OPTIMAL and not again.optimal_within_horizon_only:
                proof = again.horizon_proof
                return again if proof is None else replace(again, horizon_proof=replace(proof, extended_from=res.horizon_proof.horizon))
            why = f"{again.status.value}: {again.message}"
    return replace(res, message=res.message + f"; a solve with the {needed} rounds the proof needs did not prove it ({why})")
