"""The allocation check (``models/formulation.md``, "Exact over every valid allocation").

The model offers finitely many per-GPU allocations (the inner grid,
:mod:`sensaopt.allocations`); a valid schedule may take any amount in between. Its
optimum is therefore an optimum of the problem only when a relaxation that covers every
allocation cannot do better:

* **dominated**: for every job, each outer option has an inner one with no more CPU and
  memory and at least its speed (and the job fits one node): the inner model is itself a
  relaxation and its own proof stands;
* otherwise the **allocation relaxation** (the outer grid) is solved for a bound, over
  the horizon the JCT argument of :mod:`~sensaopt.exact.phases.horizon` needs at the
  relaxation's solo speeds and loss floor (:func:`loss_floor`): no schedule better
  than the incumbent ends later, so the bound (capped at the incumbent) covers every
  schedule. OPTIMAL
  stays only when the incumbent meets that bound (to the objective's granularity);
  otherwise OPTIMAL becomes FEASIBLE ("optimal over the grid only"), INFEASIBLE is no
  longer claimed, and the bound is the relaxation's.

``Result.allocations`` (:class:`~sensaopt.result.AllocationReport`) records which case
applied, the grid's refinement, the model's own (restricted) bound and the relaxation's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from sensaopt.allocations import ExactAllocations, JobGrid, model_grids
from sensaopt.bounds import jct_bound, miss_bound
from sensaopt.errors import SensaoptError
from sensaopt.exact.common import MIN_EXTEND_S, SolveSettings, adopt, hopeless_loss, trivial_bound
from sensaopt.exact.model.builder import BuildTimeout, HorizonTooShort, floor_loss, objective_step, round_bound, to_objective, to_scaled
from sensaopt.exact.model.data import ModelData, build_data, hard_data, open_tiers
from sensaopt.exact.outcome import Engine, ModelBuild, highs_partner
from sensaopt.exact.phases.dantzig_wolfe import DW_FIRST_MAX_JOBS, DW_FIRST_SHARE, DantzigWolfe
from sensaopt.exact.phases.horizon import horizon_needed, outside_bound
from sensaopt.exact.phases.lift import Lifted, lift
from sensaopt.exact.phases.shortfall import solve_shortfall
from sensaopt.instance import Instance
from sensaopt.result import STAGE_BOTH, STAGE_ROOT_LP, STAGE_SEARCH, AllocationReport, LossProof, RelaxationStage, Result, Status
from sensaopt.solvers import SolveOutcome, TimeBudget, resolve
from sensaopt.solvers.highs import HighsBackend, lp_bound

RELAX_SHARE = 0.25  # time-limit share of the relaxations up to RELAX_SMALL_JOBS jobs (kept for them when the grid is not dominated)
RELAX_SHARE_LARGE = 0.6  # ... from RELAX_LARGE_JOBS jobs on (linear in between): their root LP needs it (models/formulation.md)
RELAX_SMALL_JOBS = 20
RELAX_LARGE_JOBS = 40


def relax_share(n_jobs: int) -> float:
    """The share of the time limit that the allocation relaxations get at most, by the
    instance's size: :data:`RELAX_SHARE` up to :data:`RELAX_SMALL_JOBS` jobs,
    :data:`RELAX_SHARE_LARGE` from :data:`RELAX_LARGE_JOBS` on, linear in between.

    Why (``models/measurements.md``): on 20-job Philly windows the relaxation's root LP
    ends within 25 % of 60 s, while on 40-job windows it takes about 23 CPU seconds, so a
    15-s share leaves their certified bound at the instance's; 35 s lowered SensaScale's
    mean certified gap there from 14.16 % to 10.16 % and the inner search, which never
    improved the start on those windows in 45 s, lost nothing.

    Args:
        n_jobs: jobs in the instance.

    Returns:
        The share, in (0, 1).
    """
    if n_jobs <= RELAX_SMALL_JOBS:
        return RELAX_SHARE
    if n_jobs >= RELAX_LARGE_JOBS:
        return RELAX_SHARE_LARGE
    frac = (n_jobs - RELAX_SMALL_JOBS) / (RELAX_LARGE_JOBS - RELAX_SMALL_JOBS)
    return RELAX_SHARE + frac * (RELAX_SHARE_LARGE - RELAX_SHARE)


ROOT_LP, SEARCH, BOTH = STAGE_ROOT_LP, STAGE_SEARCH, STAGE_BOTH  # what a relaxation stage runs (relaxation_bound)


def ladder(refine: int) -> list[int]:
    """The relaxations tried, coarse (cheap) first: 1, 2, 4, ... up to ``refine``."""
    out, r = [], 1
    while r < refine:
        out.append(r)
        r *= 2
    return out + [refine]


@dataclass
class Climb:
    """Where the relaxations of :func:`ladder` stand: the best ``bound`` (metrics units,
    valid over every allocation), ``how`` it was found, the loss ``floor`` (metrics units),
    the objective's granularity ``step`` (metrics units: a bound within ``step``/2 of the
    incumbent proves it), the ``stages`` run, the refinements whose root LP is done
    (``lp_done``) and whether a relaxation has no schedule within its horizon
    (``infeasible``: no finer one can change that, so the climb is over). :func:`root_lps`
    starts it before the inner solve; :func:`certify` goes on from it."""

    bound: float
    how: str
    floor: float
    step: float
    stages: list[RelaxationStage] = field(default_factory=list)
    lp_done: set[int] = field(default_factory=set)
    infeasible: bool = False
    lifted: list[Lifted] = field(default_factory=list)  # the searches' schedules that lift to valid ones (lift.py)
    searched: set[int] = field(default_factory=set)  # the refinements whose search ran (search_first)

    def meets(self, objective: float | None) -> bool:
        """Whether the bound proves ``objective`` (metrics units) optimal, to the granularity."""
        return objective is not None and objective - self.bound < self.step / 2


def _begin(instance: Instance, allocs: ExactAllocations) -> Climb:
    """A climb at the instance's own bounds (:func:`instance_bound`), no relaxation run yet."""
    bound, floor = instance_bound(instance, np.asarray(allocs.best_speeds, dtype=float))
    how = "the instance's bounds (sensaopt.bounds: forced lost value, pooled SRPT)"
    return Climb(bound, how, floor, grain(instance, allocs.relaxed[1]))


def root_lps(objective: float | None, instance: Instance, horizon: int, engine: Engine, settings: SolveSettings,
             budget: TimeBudget, allocs: ExactAllocations) -> Climb | None:
    """The relaxations' root LPs before the inner solve (``settings.lp_first``), coarse to
    fine while each ends within ``budget`` and until one's Dantzig–Wolfe bound converged
    (:func:`_lp_pass`; the finer ones are left to :func:`certify`), from the warm start's ``objective`` (metrics
    units) and the inner ``horizon`` (rounds): their bounds are valid over every schedule
    better than that objective, so over every schedule better than any later incumbent.
    None when ``allocs.dominated`` (no relaxation is needed) or none ran (the weighted
    relaxation has no root LP of its own: it needs a loss floor first)."""
    if allocs.dominated:
        return None
    climb = _begin(instance, allocs)
    _lp_pass(objective, instance, horizon, engine, settings, budget, allocs, climb, finer_after_colgen=False)
    return climb if climb.lp_done else None


def certify(res: Result, instance: Instance, engine: Engine, settings: SolveSettings, budget: TimeBudget,
            allocs: ExactAllocations, early: Climb | None = None) -> Result:
    """``res`` (the inner model's Result) with a status and bound valid over every
    allocation the validator accepts (module doc): ``allocs.dominated``
    (:func:`~sensaopt.allocations.grids_dominate`; ``allocs``: what the pipeline asked
    :mod:`sensaopt.allocations` once, up front) keeps it as it is; otherwise the
    relaxations of :func:`ladder` (their grids ``allocs.relaxed``) in turn, each bound
    valid, the best one kept, until one meets the incumbent: with more than one
    refinement, first every root LP (coarse to fine, while each ends in time), then
    the searches in the time left. A finer root LP proves more than a coarser search:
    on 20-job Philly windows the refine-1 search never lifted its root LP, while the
    refine-2 root LP lifted 4 of 13 unproven windows' bounds (``models/measurements.md``).
    ``early``: what :func:`root_lps` proved before the inner solve (its root LPs are not
    solved again)."""
    settled = _settled(res, instance, settings, allocs)
    if settled is not None or res.horizon is None:
        res.allocations = AllocationReport(settled or "skipped: no horizon", settings.refine, res.bound)
        return res
    climb = early if early is not None else _begin(instance, allocs)
    _climb(res.objective, instance, res.horizon, engine, settings, budget, allocs, climb)
    res = adopt_lifted(res, climb.lifted)
    bound, how, floor, stages, step = climb.bound, climb.how, climb.floor, climb.stages, climb.step
    res.allocations = AllocationReport("relaxation", settings.refine, res.bound, bound, floor, tuple(stages))
    res.loss_proof = LossProof(bound=floor)
    if res.objective is not None:
        bound = min(bound, res.objective)
        if res.objective - bound < step / 2 and res.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE):
            prover = (f"the allocation relaxation (refine {stages[-1].refine})" if stages
                      else "the instance's bounds (sensaopt.bounds)")
            note = f"; optimal over every valid allocation: {prover} proves {bound:.6g}"
            return replace(res, status=Status.OPTIMAL, bound=bound, message=res.message + note)
    if res.status == Status.OPTIMAL:
        note = (f"; optimal over the model's allocation grid only; over every valid allocation "
                f"the bound is {bound:.6g} ({how})")
        return replace(res, status=Status.FEASIBLE, bound=bound, message=res.message + note)
    if res.status == Status.INFEASIBLE:
        if any(st.within_horizon_bound == float("inf") for st in stages):
            return res  # the relaxation has no schedule within the horizon either: neither has the problem
        note = "; infeasible over the model's allocation grid only: the allocation relaxation is not"
        return replace(res, status=Status.TIME_LIMIT, bound=bound, message=res.message + note)
    # the relaxation's bound is valid over every allocation on its own (Theorem, models/formulation.md); the inner
    # model's own bound is not, and may be lower only because its solver stopped before its root (w9: 392.3 < 399.3)
    return replace(res, bound=bound,
                   message=res.message + f"; bound over every valid allocation from the allocation relaxation ({how})")


def adopt_lifted(res: Result, lifted: list[Lifted]) -> Result:
    """``res`` with the best lifted relaxation schedule as its incumbent when that is
    better (every lifted schedule is valid: the validator accepted it; :func:`adopt`)."""
    best = min(lifted, key=lambda x: x.objective, default=None)
    if best is None:
        return res
    return adopt(res, best, "lifted allocation relaxation", "the allocation relaxation's schedule, lifted to valid allocations",
                 {"model_objective": best.model_objective})


def _climb(objective: float | None, instance: Instance, H: int, engine: Engine, settings: SolveSettings,
           budget: TimeBudget, allocs: ExactAllocations, climb: Climb) -> None:
    """The relaxations of :func:`ladder` for :func:`certify`, from ``climb`` (updated in
    place): every root LP not yet done first (coarse to fine, until one does not end),
    then the searches, each stage's bound valid, until the best meets the incumbent
    ``objective`` to within half the granularity or the time runs out."""
    if climb.infeasible:
        return
    if len(ladder(settings.refine)) > 1 and not _lp_pass(objective, instance, H, engine, settings, budget, allocs, climb):
        return
    for refine in ladder(settings.refine):
        if refine in climb.searched:
            continue
        objective = best_known(objective, climb.lifted)
        if not _stage(objective, instance, H, engine, settings, budget, allocs, climb, refine,
                      SEARCH if refine in climb.lp_done else BOTH):
            return
        climb.searched.add(refine)


def best_known(objective: float | None, lifted: list[Lifted]) -> float | None:
    """The lowest of ``objective`` (metrics units; None: no incumbent) and the lifted schedules'."""
    return min([o for o in (objective, *(x.objective for x in lifted)) if o is not None], default=None)


def search_first(objective: float, instance: Instance, H: int, engine: Engine, settings: SolveSettings,
                 budget: TimeBudget, allocs: ExactAllocations, climb: Climb) -> Lifted | None:
    """The relaxations' searches before the inner solve (``settings.search_share``), from
    the warm start's ``objective`` (metrics units) and the inner horizon ``H``, each
    looking only below the best schedule known, into ``climb`` (updated in place; the
    searches run are not run again by :func:`certify`): the best lifted schedule better
    than ``objective`` (the inner solve's start then), or None."""
    for refine in ladder(settings.refine):
        if refine not in climb.lp_done or climb.infeasible:
            break
        if not _stage(best_known(objective, climb.lifted), instance, H, engine, settings, budget, allocs, climb, refine, SEARCH):
            break
        climb.searched.add(refine)
    top = min(climb.lifted, key=lambda x: x.objective, default=None)
    return top if top is not None and top.objective < objective - 1e-9 else None


def _lp_pass(objective: float | None, instance: Instance, H: int, engine: Engine, settings: SolveSettings,
             budget: TimeBudget, allocs: ExactAllocations, climb: Climb, finer_after_colgen: bool = True) -> bool:
    """The root LPs of :func:`ladder` not yet done, coarse to fine, until one does not end
    (a finer one will not do better) or, unless ``finer_after_colgen``, until a stage's
    Dantzig–Wolfe column generation converged (:func:`root_lps`: the finer root LPs wait for
    :func:`certify`); False when the climb is over (the bound meets the incumbent, no time
    left, or no schedule within the horizon).

    Why not a finer root LP after a converged Dantzig–Wolfe bound, before the inner solve:
    on every window of the session-26 sets (20 and 40 Philly SLO jobs, 20 MIX1, the scaling
    set; 46 windows that ran both) the refine-2 root LP never lifted the refine-1 stage's
    bound, and on 40-job windows it took 7-16 of the 60 s that price and branch then lacked
    (``models/measurements.md``, session 27)."""
    for refine in ladder(settings.refine):
        if refine in climb.lp_done:
            continue
        ran = _stage(objective, instance, H, engine, settings, budget, allocs, climb, refine, ROOT_LP)
        if ran is None:
            break
        if not ran:
            return False
        if not finer_after_colgen and climb.stages[-1].dantzig_wolfe == "converged":
            break
    return True


def _stage(objective: float | None, instance: Instance, H: int, engine: Engine, settings: SolveSettings,
           budget: TimeBudget, allocs: ExactAllocations, climb: Climb, refine: int, steps: str) -> bool | None:
    """One relaxation stage into ``climb``: False when the climb is over before or after it
    (the bound meets ``objective``, no time left, or no schedule within the horizon), None
    when it has no root LP (:func:`relaxation`), else True."""
    if budget.short_of(MIN_EXTEND_S) or climb.meets(objective):
        return False
    started = time.perf_counter()
    got = relaxation(objective, instance, H, refine, engine, settings, budget, climb.floor, allocs.relaxed[refine], steps,
                     climb.lifted)
    if got is None:
        return None
    b, f, h, stage = got
    climb.stages.append(replace(stage, seconds=round(time.perf_counter() - started, 3)))
    climb.lp_done.add(refine)
    if b > climb.bound:
        climb.bound, climb.how = b, h
    climb.floor = max(climb.floor, f)
    climb.infeasible = stage.within_horizon_bound == float("inf")  # a finer relaxation cannot change that
    return not climb.infeasible


def _settled(res: Result, instance: Instance, settings: SolveSettings, allocs: ExactAllocations) -> str | None:
    """The check that settles ``res`` without a relaxation, or None: ``allocs.dominated``, or
    ``static: ...`` for an INFEASIBLE one in which some job cannot finish within the
    horizon at its best speed over every allocation (the problem is infeasible too)."""
    if allocs.dominated:
        return "dominated"
    if res.status == Status.INFEASIBLE and res.horizon is not None:
        late = build_data(instance, res.horizon, work_scale=settings.work_scale, relaxed=True, refine=1,
                          grids=allocs.relaxed[1]).unfinishable()
        if late is not None:
            return f"static: job {late.id} cannot finish within the horizon even at its best speed over every allocation"
    return None


def grain(instance: Instance, grids: Mapping[str, JobGrid] | None = None) -> float:
    """The objective's granularity in metrics units: every schedule's objective is a
    multiple of it up to one constant (:func:`~sensaopt.exact.model.builder.objective_step`).
    ``grids``: the refine-1 relaxation's grids if the caller has them."""
    data = build_data(instance, 1, relaxed=True, refine=1, grids=grids)
    return objective_step(data) / (max(data.n, 1) * data.obj_scale)


def instance_bound(instance: Instance, speeds: np.ndarray | None = None) -> tuple[float, float]:
    """What every valid schedule costs at least, from the instance alone (metrics units):
    the objective (violation weight × the forced lost value + the average-JCT bound with
    deadlines relaxed, at the best speeds, ``speeds`` per job if the caller has them;
    :mod:`sensaopt.bounds`) and its loss part."""
    wv = instance.objective.violation_weight
    loss = wv * miss_bound(instance, "best", speeds=speeds).lost_value
    return loss + jct_bound(instance, "best", lp_max_vars=0, speeds=speeds).avg_jct, loss


def relaxation(objective: float | None, instance: Instance, horizon: int, refine: int, engine: Engine, settings: SolveSettings,
               budget: TimeBudget, known_floor: float = 0.0, grids: Mapping[str, JobGrid] | None = None,
               steps: str = BOTH, lifts: list[Lifted] | None = None) -> tuple[float, float, str, RelaxationStage] | None:
    """One allocation relaxation (outer grid of ``refine`` steps; ``grids``: its grids
    if the caller has them), for an incumbent of ``objective`` (metrics units; None: none):
    its bound over every schedule better than it (metrics units), its loss
    floor (at least ``known_floor``), how the bound was found, and the record.
    ``steps``: :data:`ROOT_LP`, :data:`SEARCH` or :data:`BOTH` (:func:`relaxation_bound`);
    None for :data:`ROOT_LP` when there is none (the weighted relaxation, whose loss floor
    needs a solve, or a prover that is not HiGHS) or it did not end in time."""
    outer = build_data(instance, horizon, work_scale=settings.work_scale, relaxed=True, refine=refine, grids=grids)
    if objective is not None and objective < miss_floor(outer):
        return hard_relaxation(objective, instance, outer, refine, engine, settings, budget, known_floor, grids, steps, lifts)
    if steps == ROOT_LP:
        return None
    floor, floor_how = loss_floor(outer, engine, settings, budget)
    if known_floor > floor:
        floor, floor_how = known_floor, "the instance's forced lost value (sensaopt.bounds)"
    covered = False  # every schedule better than the incumbent ends within the relaxation's horizon
    if objective is not None:
        needed = horizon_needed(outer, objective, floor)
        covered = needed <= outer.H
        if not covered:  # a schedule better than the incumbent may end past H: the relaxation needs that horizon
            try:
                outer = build_data(instance, needed, work_scale=settings.work_scale, relaxed=True, refine=refine,
                                   max_vars=settings.max_vars, grids=grids)
                covered = True
            except SensaoptError:
                pass  # too large: keep H and bound the schedules ending later
    got = relaxation_bound(outer, engine, settings, budget, floor, steps)
    assert got is not None  # only a ROOT_LP stage has none, and it returned above
    bound, how = got
    how = f"refine {refine}: {how} over {outer.H} rounds; loss floor {floor:.6g} ({floor_how})"
    within = bound
    if not covered:
        past = outside_bound(outer, floor)
        if past is not None and past < bound:
            bound, how = past, how + f"; a schedule ending past the {outer.H} rounds costs at least {past:.6g}"
    return bound, floor, how, RelaxationStage(refine, outer.H, within, floor, bound, "weighted", engine.name, _ran(engine, steps))


EXACT_GRID_MAX_VARS = 50_000  # a relaxation larger than this (estimated variables) on the CPU-exact grid takes the coarse one


def hard_model(instance: Instance, outer: ModelData, settings: SolveSettings, refine: int) -> ModelData:
    """The deadline-hard relaxation's data from ``outer`` (:func:`hard_data`), on the coarse
    grids instead when on ``outer``'s (the CPU-exact ones by default) it would have more
    than :data:`EXACT_GRID_MAX_VARS` variables (estimated). Both are valid relaxations; on
    the 40-job Philly windows w14 and w17 (468-486 rounds: 64k and 101k variables against
    33k and 79k) the CPU-exact root LP did not end within the relaxations' share, leaving
    only the instance's bound (``models/measurements.md``, session 22)."""
    hard = hard_data(outer, grow=True)
    if hard.estimate_vars() <= EXACT_GRID_MAX_VARS:
        return hard
    coarse = model_grids(instance, instance.jobs, relaxed=True, refine=refine, inner_refine=0, extra={}, exact_cpu=False)
    return hard_data(build_data(instance, outer.H, work_scale=settings.work_scale, relaxed=True, refine=refine,
                                grids=coarse), grow=True)


def _ran(engine: Engine, steps: str) -> str:
    """What a stage asked to run ``steps`` ran on ``engine``: a root LP only on HiGHS."""
    return steps if resolve(engine.backend) == "highs" else SEARCH


def miss_floor(outer: ModelData) -> float:
    """The least objective (metrics units) of a schedule that misses some *open* deadline
    (:func:`~sensaopt.exact.model.data.open_tiers`: one that some schedule meets): the
    hopeless deadlines' loss, which every schedule pays, plus the cheapest open deadline
    step (violation weight × value; every step is positive, since the instance check wants
    deadline values positive and decreasing), plus the relaxation's solo JCT bound; inf
    without open deadlines. Until session 38 the cheapest step of any deadline and no
    hopeless loss: with a hopeless deadline no incumbent was ever below it, so a window
    with a forced miss never had the deadline-hard relaxation."""
    wv = outer.instance.objective.violation_weight
    steps = [outer.jobs[k].step(d) for k, d in open_tiers(outer)]
    if not steps:
        return float("inf")
    return wv * min(steps) + trivial_bound(outer)  # hopeless loss + every job at its solo finish


def hard_relaxation(objective: float, instance: Instance, outer: ModelData, refine: int, engine: Engine,
                    settings: SolveSettings, budget: TimeBudget, known_floor: float = 0.0,
                    grids: Mapping[str, JobGrid] | None = None, steps: str = BOTH, lifts: list[Lifted] | None = None
                    ) -> tuple[float, float, str, RelaxationStage] | None:
    """The deadline-hard allocation relaxation (``models/formulation.md``, "Deadline-hard
    relaxation"), for an incumbent ``objective`` below :func:`miss_floor`: every valid
    schedule better than it meets every deadline, so its relaxed image is a schedule of
    the relaxation with every deadline hard (:func:`~sensaopt.exact.model.data.hard_data`:
    each deadline job trimmed to its earliest deadline slot), and the jobs without a
    deadline end within the horizon argument's rounds. No loss floor to prove (the
    shortfall solve of :func:`loss_floor` is skipped): the whole budget goes to the bound.
    ``grids``: the relaxation's grids if the caller has them; ``steps`` as in
    :func:`relaxation_bound` (None: no root LP); its search looks only below ``objective``
    (``cutoff``) and puts the schedules that lift into ``lifts``."""
    miss = miss_floor(outer)  # solo finishes and deadline values: the same at every horizon
    exempt = frozenset(jd.k for jd in outer.jobs if jd.deadlines)
    paid = hopeless_loss(outer)  # every schedule's loss is at least the hopeless deadlines' (a loss floor for the horizon argument)
    needed = max(horizon_needed(outer, objective, paid, exempt), 1)
    covered = True
    if needed != outer.H:
        try:
            outer = build_data(instance, needed, work_scale=settings.work_scale, relaxed=True, refine=refine,
                               max_vars=settings.max_vars, grids=grids)
        except SensaoptError:
            covered = needed <= outer.H  # too large: keep H and bound the schedules ending later
    hard = hard_model(instance, outer, settings, refine)
    prover = bound_engine(engine, settings)
    colgen: list[str] = []
    got = relaxation_bound(hard, prover, settings, budget, 0.0, steps, cutoff=objective, lifts=lifts, colgen=colgen)
    if got is None:
        return None
    bound, how = got
    how = (f"refine {refine}: deadline-hard {how} on {prover.name} over {hard.H} rounds "
           f"(a miss costs at least {miss:.6g})")
    within = bound
    bound = min(bound, miss)
    if not covered:
        past = outside_bound(outer, paid, exempt)
        if past is not None and past < bound:
            bound, how = past, how + f"; a schedule ending past the {outer.H} rounds costs at least {past:.6g}"
    return bound, known_floor, how, RelaxationStage(refine, hard.H, within, known_floor, bound, "deadline-hard", prover.name,
                                                    _ran(prover, steps), dantzig_wolfe=colgen[0] if colgen else None)


def bound_engine(engine: Engine, settings: SolveSettings) -> Engine:
    """The backend that solves the deadline-hard relaxation for its bound: ``engine`` when
    it is a MILP backend, HiGHS in place of CP-SAT (on a 20-job Philly window, 30 s,
    1 thread: HiGHS 67.05, CP-SAT 64.05; ``models/measurements.md``)."""
    if resolve(engine.backend) != "cpsat":
        return engine
    return highs_partner(settings.workers, settings.seed)


def loss_floor(outer: ModelData, engine: Engine, settings: SolveSettings, budget: TimeBudget) -> tuple[float, str]:
    """A lower bound of every valid schedule's loss part (metrics units, violation
    weight × value), whatever its length: the deadlines missed even alone, plus the
    cheapest open one when the relaxation's shortfall model (horizon-free,
    :mod:`sensaopt.exact.phases.shortfall`) proves that some open deadline is missed."""
    base = hopeless_loss(outer)
    if budget.short_of(MIN_EXTEND_S):
        return base, "hopeless deadlines only: no time left"
    short = solve_shortfall(outer, settings.model_spec, engine.build, engine.run, budget.split(0.5), None, settings.max_vars)
    if short is None:
        return base, "hopeless deadlines only: no open deadline, or the shortfall model is too large"
    if short.report.proves_miss:
        return base + short.report.miss_cost / (max(outer.n, 1) * outer.obj_scale), "hopeless deadlines and one proven miss"
    return base, f"hopeless deadlines; shortfall {short.report.status.value}, no miss proven"


LP_OPTIONS = {"solver": "ipm", "run_crossover": "off"}  # the root LP's method (raw HiGHS options; the caller's win)


def root_lp(outer: ModelData, engine: Engine, settings: SolveSettings, budget: TimeBudget, floor: float = 0.0
            ) -> float | None:
    """The LP optimum of the relaxation ``outer`` (model units, loss part raised to
    ``floor`` as in :func:`relaxation_bound`): a bound of its MIP. Solved on its own
    copy of the model, built with min_run_slots as a running count (``run_count``: the
    same constraints, sparse) by HiGHS's interior-point method without crossover
    (:data:`LP_OPTIONS`). On a 40-job Philly window (w2, 186 rounds, one core) that LP
    takes about 5 CPU s where the MIP's own model by simplex took 60 s, at the same optimum
    (``models/measurements.md``). None when the LP does not end optimal in ``budget``."""
    strength = replace(settings.model_strength, run_count=True)
    try:
        mb = engine.build(outer, replace(settings.model_spec, strength=strength), budget)
    except (HorizonTooShort, BuildTimeout):
        return None
    if not isinstance(mb.backend, HighsBackend):
        return None
    floor_loss(outer, mb.backend, mb.vars, floor)
    return lp_bound(mb.backend, budget, replace(engine.params, extra={**LP_OPTIONS, **engine.params.extra}))


def relaxation_bound(outer: ModelData, engine: Engine, settings: SolveSettings, budget: TimeBudget,
                     floor: float = 0.0, steps: str = BOTH, cutoff: float | None = None,
                     lifts: list[Lifted] | None = None, colgen: list[str] | None = None) -> tuple[float, str] | None:
    """The allocation relaxation's proven bound (metrics units) and how it was found:
    its model solved once (weighted objective, its loss part raised to ``floor``, a loss
    every valid schedule pays: :func:`~sensaopt.exact.model.builder.floor_loss`) in the
    time left, or — with no time left
    or no bound from the solver — what is known without solving. A job that cannot
    finish within the horizon even at its best speed over every allocation makes it
    infinite before any build, whatever the time left.

    ``steps``: :data:`BOTH` (on HiGHS its root LP, :func:`root_lp`, then the search;
    the larger bound), :data:`SEARCH` (the search alone: the caller has the root LP) or
    :data:`ROOT_LP` (the root LP alone; None when the engine is not HiGHS or the LP does
    not end within ``budget``).

    ``cutoff`` (metrics units, an incumbent's objective; HiGHS only): the search looks
    only for relaxed schedules below it (HiGHS's ``objective_bound`` at half a granule
    below it): when there is none, every valid schedule better than the incumbent would
    map to one (the Lemma), so the bound is the incumbent's objective. ``lifts``: where
    the search's best schedule goes when it is valid once lifted (:func:`lift`); ``colgen``:
    where the root LP stage's Dantzig–Wolfe stop (``converged``, ``time``, ...) goes when it ran."""
    late = outer.unfinishable()
    if late is not None:
        return float("inf"), f"infeasible: job {late.id} cannot finish within the horizon even at its best speed"
    if steps == ROOT_LP:
        return _root_lp_stage(outer, engine, settings, budget, floor, lifts, colgen)
    if budget.short_of(MIN_EXTEND_S):
        return trivial_bound(outer), "no time left: the relaxation's solo bound"
    try:
        mb = engine.build(outer, settings.model_spec, budget)
    except HorizonTooShort:
        return float("inf"), "infeasible: some job cannot finish within the horizon even in the relaxation"
    except BuildTimeout:
        return trivial_bound(outer), "time ran out while building it: the relaxation's solo bound"
    floored = floor_loss(outer, mb.backend, mb.vars, floor)
    lp = root_lp(outer, engine, settings, budget, floor) if isinstance(mb.backend, HighsBackend) and steps == BOTH else None
    out, cut = _search(outer, mb, engine, budget, cutoff, lifts)
    at = f", loss at least the floor {floor:.6g}" if floored else ""
    if out.status == Status.INFEASIBLE:
        if cut is not None:  # no relaxed schedule below the cutoff: each costs at least the incumbent
            b = max(to_objective(outer, round_bound(outer, cut)), trivial_bound(outer))
            return b, f"relaxation solved: none below the incumbent {cutoff:.6g}, {len(mb.vars.x)} placement variables{at}"
        return float("inf"), "infeasible: the relaxation has no schedule within the horizon"
    proven = [b for b in (lp, out.bound) if b is not None]
    if not proven:
        return trivial_bound(outer), f"{out.status.value} without a bound: the relaxation's solo bound"
    b = max(to_objective(outer, round_bound(outer, max(proven))), trivial_bound(outer))
    root = "" if lp is None else f", root LP {to_objective(outer, lp):.6g}"
    below = "" if cut is None else f", searched below the incumbent {cutoff:.6g}"
    return b, f"relaxation solved: {out.status.value}{root}{below}, {len(mb.vars.x)} placement variables{at}"


def _root_lp_stage(outer: ModelData, engine: Engine, settings: SolveSettings, budget: TimeBudget, floor: float,
                   lifts: list[Lifted] | None, colgen: list[str] | None) -> tuple[float, str] | None:
    """:func:`relaxation_bound`'s :data:`ROOT_LP` steps. At refine 1 with no loss floor, the
    Dantzig–Wolfe bound first (:class:`~sensaopt.exact.phases.dantzig_wolfe.DantzigWolfe`: for
    ``DW_FIRST_SHARE`` of the time, up to ``DW_FIRST_MAX_JOBS`` jobs); once it converged the
    compact root LP is not solved (never higher: that class's doc), else the root LP, then
    column generation resumed in the time left; the larger bound. Column generation's stop
    goes into ``colgen``. None when neither gave a bound."""
    if budget.short_of(MIN_EXTEND_S) or resolve(engine.backend) != "highs":
        return None
    dw = DantzigWolfe.begin(outer, settings, budget) if floor == 0 and outer.refine == 1 else None
    if dw is not None and outer.n <= DW_FIRST_MAX_JOBS:
        dw.run(budget, DW_FIRST_SHARE)
    lp = None
    if dw is None or not dw.converged:
        lp = root_lp(outer, engine, settings, budget, floor)
        if dw is not None:
            dw.run(budget)
    got = None if dw is None else dw.outcome(budget, lifts)
    if got is not None and colgen is not None:
        colgen.append(got.stop)
    parts, bounds = [], []
    if lp is not None:
        bounds.append(lp)
        parts.append(f"root LP {to_objective(outer, lp):.6g}")
    elif dw is not None and dw.converged:
        parts.append("root LP not solved")
    if got is not None and got.bound is not None:
        bounds.append(got.bound)
        parts.append(f"Dantzig–Wolfe {to_objective(outer, got.bound):.6g} ({got.stop}, {got.iterations} iterations)")
    if not bounds:
        return None
    how = ", ".join(parts) + (" alone" if len(bounds) == 1 and lp is not None else "")
    return max(to_objective(outer, round_bound(outer, max(bounds))), trivial_bound(outer)), how


def _search(outer: ModelData, mb: ModelBuild, engine: Engine, budget: TimeBudget, cutoff: float | None,
            lifts: list[Lifted] | None) -> tuple[SolveOutcome, float | None]:
    """The relaxation's search (:func:`relaxation_bound`): on HiGHS only below ``cutoff``
    (metrics units; HiGHS ``objective_bound`` half a granule below it, the model's constant
    taken off: HiGHS sees none); its best schedule into ``lifts`` when it lifts
    (:func:`~sensaopt.exact.phases.lift.lift`). Returns the outcome and the scaled cutoff
    (None: none)."""
    cut = None
    if cutoff is not None and isinstance(mb.backend, HighsBackend):
        cut = to_scaled(outer, cutoff) - objective_step(outer) / 2
        extra = {**engine.params.extra, "objective_bound": cut - mb.backend.objective.const}
        engine = replace(engine, params=replace(engine.params, extra=extra))
    out = engine.run(mb, budget)
    if lifts is not None and out.value is not None and out.status != Status.INFEASIBLE:
        lifted = lift(outer, mb.vars, out.value, None if out.objective is None else to_objective(outer, out.objective))
        if lifted is not None:
            lifts.append(lifted)
    return out, cut
