"""The deadline-hard phase: once the shortfall phase found a schedule meeting every open
deadline (:func:`zero_miss_start`), the model with those deadlines as constraints,
trimmed (:func:`sensaopt.exact.model.data.hard_data`), solved from it — by the primary
backend alone, or cooperating with a partner (:func:`cooperate`), optionally followed by
branch and price (:func:`branch_and_price_after`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from sensaopt.exact.common import (
    INTEGRAL_GAP,
    MIN_EXTEND_S,
    Prepared,
    SolveSettings,
    base_params,
    better_start,
    build_or_result,
    early_result,
    granular_proof,
    make_result,
    model_size,
    partner_of,
)
from sensaopt.exact.decompositions.branch_price import BranchOutcome, branch_and_price, scaled_value
from sensaopt.exact.model.builder import BuildTimeout, objective_parts, round_bound, to_objective
from sensaopt.exact.model.data import ModelData, hard_data
from sensaopt.exact.model.values import extract_schedule, hint_values, relabel_identical_nodes
from sensaopt.exact.outcome import Engine, ModelBuild, SolveOutcome
from sensaopt.exact.phases.complete import complete_schedule
from sensaopt.exact.phases.horizon import with_horizon_proof
from sensaopt.exact.phases.lexicographic import ObjectiveFloors
from sensaopt.exact.phases.lns import improve
from sensaopt.exact.phases.price_branch import colgen_first
from sensaopt.exact.phases.shortfall import ShortfallOutcome
from sensaopt.result import (
    SKIPPED_ZERO_MISS,
    CooperationReport,
    LexicographicReport,
    LnsReport,
    LossProof,
    Result,
    RunReport,
    Status,
)
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget, resolve
from sensaopt.solvers.base import known_values
from sensaopt.solvers.interrupt import cancel_scope

SETTLED_NOTE = "no solver run: price and branch's schedule meets the bound the root LPs proved before this solve"


def zero_miss_start(prep: Prepared, short: ShortfallOutcome | None, settings: SolveSettings) -> tuple[ModelData, Schedule] | None:
    """The deadline-hard model's data and its start: the shortfall run's zero-miss
    schedule completed greedily within the hard model's horizon; None when there is none
    (no zero-miss schedule found, or deadlines so far beyond the horizon that the hard
    model would be too large)."""
    if short is None or short.schedule is None:
        return None
    hard = hard_data(prep.data, grow=settings.horizon is None)
    if hard.estimate_vars() > settings.max_vars:  # deadlines far beyond the horizon
        return None
    whole = complete_schedule(hard, short.schedule)
    return None if whole is None else (hard, whole)


def solve_deadline_hard(prep: Prepared, data: ModelData, whole: Schedule, engine: Engine,
                         settings: SolveSettings, budget: TimeBudget, short: ShortfallOutcome,
                         settled: Callable[[float], bool] | None = None) -> Result:
    """Phase 2 once the shortfall run found a zero-miss schedule and it could be
    completed (``whole``, valid, within ``data.H``): the deadline-hard, trimmed model
    ``data`` (:func:`sensaopt.exact.model.data.hard_data`), started from ``whole``. Its
    optimum is the optimum unless missing the cheapest open deadline could pay for
    itself: the bound is the smaller of the hard model's bound and the floor of every
    schedule with a miss, and OPTIMAL needs the incumbent at or below that floor.
    ``settled`` (the pipeline's root-LP bound, :func:`~sensaopt.exact.pipeline.proven_by`):
    when it already makes price and branch's schedule optimal, no solver runs (the
    caller's certificate proves it; the result here is FEASIBLE with that schedule)."""
    full = prep.data
    whole, lns = search_first(prep, data, whole, settings, budget)
    whole, pb = colgen_first(data, whole, settings, budget, settled)
    lex = LexicographicReport(phase1_share=settings.phase1_share, skipped=SKIPPED_ZERO_MISS, shortfall=short.report,
                              phase2="deadline-hard, trimmed", lns=lns, price_branch=pb)
    mb = build_or_result(prep, data, engine, settings, budget, searched=whole)
    if isinstance(mb, Result):  # not built in time: the better of the warm start and the searches' schedule
        mb.lexicographic = lex
        mb.loss_proof = LossProof(fixed=True)  # phase 1 skipped: a zero-miss schedule exists
        return mb
    vals = hint_values(data, mb.vars, relabel_identical_nodes(data.instance, whole))  # complete and zero-miss
    fallback = vals or None
    if vals:
        mb.backend.hint(vals)
    coop: CooperationReport | None = None
    solver_budget = budget.split(BRANCH_PRICE_AFTER) if settings.branch_price else budget
    partner = partner_of(engine, settings)
    no_solver = bool(vals) and pb is not None and settled is not None and settled(pb.objective)
    if no_solver:
        out = SolveOutcome(Status.FEASIBLE, known_values(vals), scaled_value(data, whole), None, SETTLED_NOTE, 0.0)
    elif partner is None:
        out = engine.run(mb, solver_budget)
    else:
        first = mb
        mb, out, coop = cooperate(mb, engine, partner, settings, solver_budget, whole)
        if mb is not first:  # the partner's incumbent won: the fallback in its variables
            fallback = hint_values(data, mb.vars, relabel_identical_nodes(data.instance, whole)) or None
    bp = None
    if settings.branch_price and out.status != Status.OPTIMAL and not no_solver and not budget.short_of(MIN_EXTEND_S):
        out, bp = branch_and_price_after(mb, out, whole, budget)
    floors = ObjectiveFloors.of(mb.vars)
    slot_coef = objective_parts(full)[0]
    miss = (floors.loss + short.report.miss_cost
            + slot_coef * sum(max(jd.earliest_done, 0) for jd in full.jobs))  # every schedule with a miss
    bound = round_bound(data, floors.loss + floors.jct if out.bound is None else max(out.bound, floors.loss + floors.jct))
    status, msg = out.status, f"deadline-hard phase 2 (shortfall 0 in {short.report.seconds:.2f} s): {out.message}"
    status, msg = granular_proof(status, msg, out.objective, bound)
    if status == Status.OPTIMAL and out.objective is not None and out.objective > miss + 0.5:
        status = Status.FEASIBLE
        msg += "; optimal among zero-miss schedules only: missing a deadline might cost less than it saves"
    out = replace(out, status=status, bound=min(bound, miss), message=msg)
    lex = replace(lex, cooperation=coop, branch_price=None if bp is None else bp.report())
    params = base_params(engine, settings, mb, {"hinted": bool(vals), "heuristic_objective": prep.heuristic.objective,
                                                "complete_start": fallback is not None})
    if out.value is None and fallback is None:  # no incumbent of the hard model: the best schedule known, the bound proven here
        known, note = better_start(prep.heuristic, data, whole)
        res = early_result(engine.name, data, Status.TIME_LIMIT, budget, params, f"{msg}; {note}", incumbent=known)
        res.model_size = model_size(mb)
        b = to_objective(data, out.bound) if out.bound is not None else None
        res = replace(res, bound=res.bound if b is None or res.objective is None else min(max(b, 0.0), res.objective))
    else:
        res = make_result(engine.name, mb, out, budget.elapsed(), params, fallback)
    res.loss_proof = LossProof(fixed=True)  # phase 1 skipped: a zero-miss schedule exists
    res.lexicographic = lex
    within = frozenset(k for k, end in data.ends.items() if end <= data.H)  # deadline slots inside the horizon
    exempt = within if res.objective is not None and res.objective <= to_objective(data, miss) + 1e-9 else frozenset()
    return with_horizon_proof(res, data, floors.loss, exempt)


def search_first(prep: Prepared, data: ModelData, whole: Schedule, settings: SolveSettings, budget: TimeBudget
                 ) -> tuple[Schedule, LnsReport | None]:
    """Large-neighbourhood search (:func:`~sensaopt.exact.phases.lns.improve`) for
    ``settings.lns_share`` of the time left, from the better of ``whole`` (the complete
    zero-miss start) and the warm start where that fits the trimmed model: the schedule
    the solver then starts from, and the search's record (None when it did not run)."""
    lns = None
    if settings.lns_share > 0 and not budget.short_of(MIN_EXTEND_S):
        ws = relabel_identical_nodes(data.instance, prep.heuristic.schedule)
        out = improve(data, [whole, ws], settings.model_spec, budget.split(settings.lns_share), settings.seed)
        whole = out.schedule
        lns = LnsReport(out.start, out.objective, out.rounds, out.improved, out.size, round(out.seconds, 3))
    return whole, lns


BRANCH_PRICE_AFTER = 0.5  # with branch and price: the solver(s) get this share of the deadline-hard phase's time


def branch_and_price_after(mb: ModelBuild, out: SolveOutcome, whole: Schedule, budget: TimeBudget
                      ) -> tuple[SolveOutcome, BranchOutcome]:
    """Branch and price (:func:`branch_and_price`) for the time left, from the solver's
    incumbent (else ``whole``): the larger bound counts, its schedule replaces the
    solver's when better, and OPTIMAL when its search closed."""
    data = mb.data
    start = extract_schedule(data, mb.vars, out.value) if out.value is not None else whole
    bp = branch_and_price(data, budget.left(), start=start)
    bound = max((b for b in (out.bound, bp.bound) if b is not None), default=None)
    msg = (f"{out.message}; then branch and price: {bp.nodes} nodes, {bp.open} open, "
           f"{'optimal' if bp.proven else 'not closed'} in {bp.seconds:.2f} s")
    out = replace(out, bound=bound, message=msg)
    if bp.schedule is not None and (out.value is None or bp.schedule is not start):  # better than the solver's, or it had none
        vals = hint_values(data, mb.vars, relabel_identical_nodes(data.instance, bp.schedule))
        if vals:
            out = replace(out, value=known_values(vals), objective=bp.incumbent)
    if bp.proven:
        out = replace(out, status=Status.OPTIMAL)
    return out, bp


A = TypeVar("A")
B = TypeVar("B")

COOPERATE_SHARE = 0.1  # of the time left: the primary's, the partner gets the rest (measured: models/measurements.md)


def _run_report(out: SolveOutcome) -> RunReport:
    return RunReport(out.status, out.objective, out.bound, out.wall_s)


def cooperate(mb: ModelBuild, engine: Engine, partner: Engine, settings: SolveSettings, budget: TimeBudget,
               whole: Schedule | None) -> tuple[ModelBuild, SolveOutcome, CooperationReport]:
    """The primary for ``COOPERATE_SHARE`` of the time left, then ``partner`` on the same
    data from the primary's incumbent (else from ``whole``) for the rest; with two
    workers or more, both side by side instead (:func:`side_by_side`). Returned: the
    model holding the better incumbent, an outcome with that incumbent and the larger
    bound (OPTIMAL when either proved it or the two meet), and both runs' records."""
    if settings.workers >= 2:
        return side_by_side(mb, engine, partner, settings, budget, whole)
    first = engine.run(mb, budget.split(COOPERATE_SHARE))
    record = CooperationReport(partner.name, _run_report(first))
    if first.status == Status.OPTIMAL or budget.short_of(MIN_EXTEND_S):
        return mb, first, record
    start = extract_schedule(mb.data, mb.vars, first.value) if first.value is not None else whole
    try:
        mb2 = partner.build(mb.data, settings.model_spec, budget)
    except BuildTimeout:
        return mb, first, record
    vals = hint_values(mb.data, mb2.vars, relabel_identical_nodes(mb.data.instance, start)) if start is not None else {}
    if vals:
        mb2.backend.hint(vals)
    second = partner.run(mb2, budget)
    record = replace(record, partner_run=_run_report(second))
    return (*combine(mb, first, mb2, second, f"{first.message}; then {partner.name} from its incumbent: {second.message}"), record)


def combine(mb: ModelBuild, first: SolveOutcome, mb2: ModelBuild, second: SolveOutcome, msg: str
            ) -> tuple[ModelBuild, SolveOutcome]:
    """Two runs on the same data as one: the model holding the better incumbent, that
    incumbent with the larger bound, OPTIMAL when either proved it or the two meet."""
    best_mb, best = (mb2, second) if second.objective is not None and (first.objective is None or second.objective < first.objective) \
        else (mb, first)
    bounds = [b for b in (first.bound, second.bound) if b is not None]
    bound = max(bounds) if bounds else None
    proven = Status.OPTIMAL in (first.status, second.status) or (
        best.objective is not None and bound is not None and best.objective - bound < INTEGRAL_GAP)
    return best_mb, replace(best, status=Status.OPTIMAL if proven else best.status, bound=bound, message=msg)


def side_by_side(mb: ModelBuild, engine: Engine, partner: Engine, settings: SolveSettings, budget: TimeBudget,
                 whole: Schedule | None) -> tuple[ModelBuild, SolveOutcome, CooperationReport]:
    """The portfolio of ``settings.workers`` >= 2: the primary (``workers`` - 1 threads)
    and the partner (one thread) on the same data, both from ``whole``, side by side until
    the budget is spent or one of them proves the optimum, which stops the other
    (:func:`run_both`; each in its own thread, the C++ searches run without the GIL). They
    share their incumbents and bounds when both end (:func:`combine`), not during the
    search. Falls back to the primary alone when the partner's model cannot be built."""
    try:
        mb2 = partner.build(mb.data, settings.model_spec, budget)
    except BuildTimeout:
        out = engine.run(mb, budget)
        return mb, out, CooperationReport(partner.name, _run_report(out), mode="parallel")
    if whole is not None and (vals := hint_values(mb.data, mb2.vars, relabel_identical_nodes(mb.data.instance, whole))):
        mb2.backend.hint(vals)
    own = settings.cpsat_workers if settings.cpsat_workers and resolve(engine.backend) == "cpsat" else max(settings.workers - 1, 1)
    one = replace(engine, params=replace(engine.params, workers=own))
    two = replace(partner, params=replace(partner.params, workers=1))
    # each side its own budget, made before either starts: under a work limit the units left, not what the other spent meanwhile
    mine, theirs = budget.at_most(budget.left()), budget.at_most(budget.left())
    first, second = run_both(lambda: one.run(mb, mine), lambda: two.run(mb2, theirs))
    record = CooperationReport(partner.name, _run_report(first), _run_report(second), mode="parallel")
    return (*combine(mb, first, mb2, second, f"{first.message}; beside it {partner.name}: {second.message}"), record)


def run_both(a: Callable[[], A], b: Callable[[], B]) -> tuple[A, B]:
    """``a()`` and ``b()`` in two threads; both results (an exception in either is raised
    here). Each runs in a :func:`~sensaopt.solvers.interrupt.cancel_scope`: once one
    returns a proof (a result whose ``status`` is OPTIMAL or INFEASIBLE) the other's search is stopped, or its child
    killed, and it returns what it has. Ctrl-C while waiting propagates at once; each
    search still stops by its budget's deadline (its backend stops it from outside then)."""
    box: dict[str, Any] = {}
    done = {k: threading.Event() for k in "ab"}
    cancel = {k: threading.Event() for k in "ab"}

    def target(key: str, fn: Callable[[], SolveOutcome]) -> None:
        try:
            with cancel_scope(cancel[key]):
                box[key] = out = fn()
            if getattr(out, "status", None) in (Status.OPTIMAL, Status.INFEASIBLE):
                cancel["b" if key == "a" else "a"].set()
        except BaseException as e:  # handed to the waiting thread
            box[key + "!"] = e
        finally:
            done[key].set()

    for key, fn in (("a", a), ("b", b)):
        threading.Thread(target=target, args=(key, fn), name=f"sensaopt-portfolio-{key}", daemon=True).start()
    for ev in done.values():
        while not ev.wait(0.05):  # not Thread.join: Ctrl-C must reach this thread
            pass
    for key in "ab":
        if key + "!" in box:
            raise box[key + "!"]
    return box["a"], box["b"]
