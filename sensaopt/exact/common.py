"""What every backend shares: horizon choice and the SensaScale warm start
(:func:`prepare`), hint values, solution extraction into a :class:`Schedule`, and the
one flow :func:`solve_exact` ending in the common, validated :class:`Result`.

The validator runs once per exact solve, on the returned schedule; hint values and
extraction replay the validator's progress arithmetic (:func:`finish_minutes`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from sensaopt.errors import SensaoptError
from sensaopt.exact.branch_price import BranchOutcome, branch_and_price
from sensaopt.exact.builder import (
    BUILTIN_FAMILIES,
    FAMILIES,
    BuildTimeout,
    HorizonTooShort,
    Strength,
    objective_parts,
    round_bound,
    to_objective,
)
from sensaopt.exact.complete import complete_schedule
from sensaopt.exact.data import (
    DEFAULT_MAX_VARS,
    DEFAULT_WORK_SCALE,
    ModelData,
    build_data,
    extra_options_from,
    hard_data,
    precheck_size,
)
from sensaopt.exact.horizon import proof_of
from sensaopt.exact.lexicographic import DEFAULT_PHASE1_SHARE, ObjectiveFloors, check_phase1_share, solve_lexicographic
from sensaopt.exact.numeric import check_numbers, precheck_numbers
from sensaopt.exact.outcome import Engine, ModelBuild, SolveOutcome
from sensaopt.exact.shortfall import ShortfallOutcome, solve_shortfall
from sensaopt.exact.values import extract_schedule, finish_minutes, hint_values, relabel_identical_nodes
from sensaopt.instance import Instance
from sensaopt.metrics import compute_metrics
from sensaopt.result import Result, Status, package_versions
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget
from sensaopt.solvers.interrupt import terminate_interrupts
from sensaopt.validator import check_schedule

DEFAULT_HORIZON_SLACK = 2  # rounds added to the heuristic's makespan



@dataclass(frozen=True)
class SolveSettings:
    """The keyword arguments of ``solve_cpsat`` / ``solve_milp`` (seconds, threads, rounds)."""

    time_limit: float = 60.0
    workers: int = 2
    seed: int = 0
    warm_start: bool = True
    horizon: int | None = None
    horizon_slack: int = DEFAULT_HORIZON_SLACK
    strength: Strength | dict | None = None
    work_scale: int = DEFAULT_WORK_SCALE
    max_vars: int = DEFAULT_MAX_VARS
    lexicographic: bool = True
    phase1_share: float = DEFAULT_PHASE1_SHARE
    partner: Engine | None = None  # cooperating backend of the deadline-hard phase (None: the primary alone)
    branch_price: bool = False  # deadline-hard phase: branch and price after the solver(s), :mod:`sensaopt.exact.branch_price`

    @property
    def model_strength(self) -> Strength:
        return strength_from(self.strength)


@dataclass(frozen=True)
class Prepared:
    """The model data (horizon chosen), the heuristic run it came from, and the warm-start
    schedule (the heuristic's, nodes relabelled; None without warm start or when it does
    not fit the horizon)."""

    data: ModelData
    heuristic: Result
    hint: Schedule | None


def prepare(instance: Instance, horizon: int | None, horizon_slack: int, warm_start: bool, work_scale: int,
            max_vars: int, heuristic: str = "sensascale") -> Prepared:
    """Run the heuristic, pick the horizon, extract the model data (refusing models of
    more than about ``max_vars`` variables)."""
    from sensaopt.simulator import simulate

    heur = simulate(instance, heuristic)
    R = instance.round_minutes
    mk = int(round(heur.metrics.makespan / R)) if heur.metrics else 0
    H = horizon if horizon is not None else mk + horizon_slack
    hint = relabel_identical_nodes(instance, heur.schedule) if warm_start and mk <= H and heur.schedule else None
    data = build_data(instance, H, work_scale=work_scale, extra_options=extra_options_from(heur.schedule), max_vars=max_vars)
    return Prepared(data=data, heuristic=heur, hint=hint)


def make_result(solver: str, mb: ModelBuild, out: SolveOutcome, runtime_s: float, params: dict,
                fallback: dict | None = None) -> Result:
    """Common Result: the METRICS objective of the extracted schedule (validated here,
    once: its evaluation is ``Result.evaluation``), the solver bound converted to the
    same units (without one: :func:`trivial_bound`), and the honest status.

    ``fallback``: known feasible model values (warm start or phase-1 solution). When
    the solver returns no incumbent they become the incumbent; when it claims the model
    infeasible the claim contradicts them (CBC does so when its preprocessing is cut
    by the time limit), so the status becomes TIME_LIMIT."""
    data, v = mb.data, mb.vars
    status, value, message, scaled_objective = out.status, out.value, out.message, out.objective
    if fallback:
        if status == Status.INFEASIBLE:
            status = Status.TIME_LIMIT
            message += "; solver claimed infeasibility although the warm start is feasible (interrupted presolve?)"
        if value is None:
            known = fallback

            def value(var: Any) -> float:
                return known.get(var, 0)

            scaled_objective = None
            message += "; incumbent = warm start (solver found none)"
    schedule = metrics = objective = ev = None
    if value is not None:
        schedule = extract_schedule(data, v, value)
        ev = check_schedule(data.instance, schedule)
        if ev.errors:
            status = Status.ERROR
            message = (message + "; " if message else "") + f"extracted schedule invalid: {ev.errors[0]}"
        else:
            metrics = compute_metrics(data.instance, ev)
            objective = metrics.objective
    rounded = round_bound(data, out.bound) if out.bound is not None else None
    if rounded is not None:
        status, message = _granular_proof(status, message, out.objective, rounded)
    bound = to_objective(data, rounded) if rounded is not None else None
    if bound is not None:
        bound = max(bound, 0.0)  # the objective (lost value, average JCT) is never negative
    elif status != Status.INFEASIBLE:
        bound = trivial_bound(data)  # the solver proved nothing: what is known without solving
    if scaled_objective is not None:
        params["model_objective"] = to_objective(data, scaled_objective)
    if bound is not None and objective is not None and status == Status.OPTIMAL:
        bound = min(bound, objective)
    return Result(solver=solver, status=status, objective=objective, bound=bound, runtime_s=runtime_s, schedule=schedule,
                  metrics=metrics, params=params, versions=package_versions(), message=message, evaluation=ev,
                  truth=data.instance)


def strength_from(kw: Strength | dict | None) -> Strength:
    if isinstance(kw, Strength):
        return kw
    return Strength(**(kw or {}))


def base_params(backend: str, settings: SolveSettings, mb: ModelBuild, extra: dict | None = None) -> dict:
    data, v = mb.data, mb.vars
    p = {
        "backend": backend,
        "time_limit": settings.time_limit,
        "workers": settings.workers,
        "seed": settings.seed,
        "warm_start": settings.warm_start,
        "partner": settings.partner.name if settings.partner else None,  # deadline-hard phase (cooperate)
        "branch_price": settings.branch_price,
        "horizon": data.H,
        "work_scale": data.work_scale,
        "mem_scale": data.mem_scale,
        "obj_scale": data.obj_scale,
        "strength": asdict(settings.model_strength),
        "model_size": {"x_vars": len(v.x), "constraints": sum(v.families.values()), "families": dict(v.families)},
    }
    if extra:
        p.update(extra)
    return p


def _granular_proof(status: Status, message: str, objective: float | None, bound: float) -> tuple[Status, str]:
    """TIME_LIMIT becomes OPTIMAL when the incumbent (scaled) is below the bound rounded
    up to the objective's granularity (:func:`~sensaopt.exact.builder.round_bound`) plus
    half a unit: no schedule can lie strictly between them."""
    if status == Status.TIME_LIMIT and objective is not None and objective - bound < INTEGRAL_GAP:
        return Status.OPTIMAL, message + "; proven: the incumbent meets the bound rounded up to the objective's granularity"
    return status, message


def trivial_bound(data: ModelData) -> float:
    """The objective no schedule beats, known without building or solving (metrics
    units): every job done at its earliest solo finish (:attr:`JobData.earliest_done`),
    only its hopeless deadlines missed."""
    n = max(data.n, 1)
    wv = data.instance.objective.violation_weight
    jct = sum((max(jd.earliest_done, 0) + 1 + data.start_round) * data.R - jd.job.arrival for jd in data.jobs) / n
    loss = 0.0
    for jd in data.jobs:
        vals = [val for _, val in jd.deadlines] + [0.0]
        loss += sum(vals[d] - vals[d + 1] for d, (last, _) in enumerate(jd.deadlines) if last < jd.earliest_done)
    return max(wv * loss + jct, 0.0)


def _early_result(solver: str, data: ModelData, status: Status, budget: TimeBudget, params: dict, message: str,
                  incumbent: Result | None = None) -> Result:
    """A Result decided before any solver run: no schedule, or ``incumbent``'s; the
    bound known without solving (:func:`trivial_bound`), none when infeasible."""
    instance = data.instance
    bound = None if status == Status.INFEASIBLE else trivial_bound(data)
    if bound is not None and incumbent is not None and incumbent.objective is not None:
        bound = min(bound, incumbent.objective)
    return Result(solver=solver, status=status, objective=incumbent.objective if incumbent else None, bound=bound,
                  runtime_s=budget.elapsed(), schedule=incumbent.schedule if incumbent else None,
                  metrics=incumbent.metrics if incumbent else None, params=params, versions=package_versions(),
                  message=message, evaluation=incumbent.evaluation if incumbent else None,
                  truth=(incumbent.truth or instance) if incumbent else instance)


def solve_exact(solver: str, instance: Instance, engine: Engine, settings: SolveSettings) -> Result:
    """The flow every backend shares: checks → data → model → warm-start hint → solve →
    validated Result. A model too large (:func:`sensaopt.exact.data.precheck_size`) or
    outside the backend's numeric range ``limits`` (:mod:`sensaopt.exact.numeric`) is
    refused with a :class:`SensaoptError` before the heuristic warm start runs
    (``engine.limits``).
    ``settings.time_limit`` seconds bound the whole call: a model still being built
    when they run out is abandoned (TIME_LIMIT, the SensaScale schedule as incumbent,
    the bound known without solving). ``settings.lexicographic``: deadline loss first,
    then the whole objective (:mod:`sensaopt.exact.lexicographic`). SIGTERM during the
    call stops it like Ctrl-C (:mod:`sensaopt.solvers.interrupt`)."""
    budget = TimeBudget.start(settings.time_limit)
    if settings.lexicographic:
        check_phase1_share(settings.phase1_share)  # before the heuristic run and the build
    precheck_size(instance, settings.horizon, settings.horizon_slack, settings.max_vars)
    precheck_numbers(instance, settings.work_scale, engine.limits)
    with terminate_interrupts():
        res = _solve_exact(solver, instance, engine, settings, budget)
        if settings.horizon is None and "optimal_within_horizon" in res.params:
            res = _extended(res, solver, instance, engine, settings, budget)
        return res


MIN_EXTEND_S = 1.0  # seconds left at least to try the horizon the proof needs


def _extended(res: Result, solver: str, instance: Instance, engine: Engine, settings: SolveSettings,
              budget: TimeBudget) -> Result:
    """An optimum within the default horizon that the horizon proof does not cover:
    solve again, in the time left, with the horizon the proof needs; its OPTIMAL is
    then global. Kept only if proven (otherwise ``res``, its message saying so)."""
    needed = res.params["horizon_proof"]["needed"]
    why = ""
    if budget.left() < MIN_EXTEND_S:
        why = "no time left"
    else:
        try:
            again = _solve_exact(solver, instance, engine, replace(settings, horizon=needed), budget)
        except SensaoptError as e:
            why = str(e)
        else:
            if again.status == Status.OPTIMAL and "optimal_within_horizon" not in again.params:
                again.params["horizon_extended_from"] = res.params["horizon"]
                return again
            why = f"{again.status.value}: {again.message}"
    return replace(res, message=res.message + f"; a solve with the {needed} rounds the proof needs did not prove it ({why})")


def _solve_exact(solver: str, instance: Instance, engine: Engine, settings: SolveSettings, budget: TimeBudget) -> Result:
    s = settings.model_strength
    prep = prepare(instance, settings.horizon, settings.horizon_slack, settings.warm_start, settings.work_scale, settings.max_vars)
    data = prep.data
    check_numbers(data, engine.limits)
    short = None
    if settings.lexicographic and set(FAMILIES) == BUILTIN_FAMILIES:
        short = solve_shortfall(data, s, engine.build, engine.run, budget.split(settings.phase1_share), prep.hint, settings.max_vars)
        if short is not None and short.schedule is not None:
            hard = hard_data(data, grow=settings.horizon is None)
            too_big = hard.estimate_vars() > settings.max_vars  # deadlines far beyond the horizon
            whole = None if too_big else complete_schedule(hard, short.schedule)
            if whole is not None:  # a zero-miss schedule within the hard model's horizon exists
                return _solve_deadline_hard(solver, prep, hard, whole, engine, settings, budget, short)
    mb = _build(solver, prep, prep.data, engine, settings, budget)
    if isinstance(mb, Result):
        return mb
    hinted, vals = False, {}
    start = _better_start(data, prep, short)
    if start is not None:
        vals = hint_values(data, mb.vars, start)
        if not vals and prep.hint is not None and start is not prep.hint:
            start = prep.hint
            vals = hint_values(data, mb.vars, start)
        if vals:
            mb.backend.hint(vals)
            hinted = True
    if set(FAMILIES) != BUILTIN_FAMILIES:
        vals = {}  # a user-added family may cut off the warm start: it is no fallback incumbent
    lex: dict | bool = False
    loss_lower = ObjectiveFloors.of(mb.vars).loss
    if settings.lexicographic:
        lo = solve_lexicographic(mb, engine.run, budget, settings.phase1_share, short.report if short else None)
        out, lex, loss_lower = lo.final, lo.params(), lo.loss_lower
        if lo.start_values:
            vals = lo.start_values  # feasible for the phase-2 model (the warm start may not be)
    else:
        out = engine.run(mb, budget)
    params = base_params(solver, settings, mb, {"hinted": hinted, "heuristic_objective": prep.heuristic.objective, "lexicographic": lex,
                                                "start": "none" if not hinted else "sensascale" if start is prep.hint else "shortfall"})
    res = make_result(solver, mb, out, budget.elapsed(), params, vals)
    return _with_horizon_proof(res, data, loss_lower)


def _better_start(data: ModelData, prep: Prepared, short: ShortfallOutcome | None) -> Schedule | None:
    """The warm start of the loss phases: the shortfall run's incumbent completed
    greedily (:func:`complete_schedule`) when it is valid and its objective beats the
    SensaScale schedule's, else the SensaScale schedule (None without warm start)."""
    if prep.hint is None or short is None or short.best is None:
        return prep.hint
    cand = complete_schedule(data, short.best)
    heur = prep.heuristic.objective
    if cand is None or heur is None:
        return prep.hint
    cand = relabel_identical_nodes(data.instance, cand)
    ours = compute_metrics(data.instance, check_schedule(data.instance, cand)).objective
    return cand if ours is not None and ours < heur else prep.hint


def _build(solver: str, prep: Prepared, data: ModelData, engine: Engine, settings: SolveSettings,
           budget: TimeBudget) -> ModelBuild | Result:
    """The model of ``data``, or the Result decided when it cannot be built (horizon too
    short: INFEASIBLE; budget spent: TIME_LIMIT with the warm start as incumbent)."""
    stub_params = {"horizon": data.H, "time_limit": settings.time_limit, "workers": settings.workers, "seed": settings.seed,
                   "warm_start": settings.warm_start}
    try:
        return engine.build(data, settings.model_strength, budget)
    except HorizonTooShort as e:
        return _early_result(solver, data, Status.INFEASIBLE, budget, stub_params, str(e))
    except BuildTimeout as e:
        if prep.hint is None or set(FAMILIES) != BUILTIN_FAMILIES:
            return _early_result(solver, data, Status.TIME_LIMIT, budget, stub_params, f"{e}; no solution found")
        return _early_result(solver, data, Status.TIME_LIMIT, budget, stub_params,
                             f"{e}; incumbent = the SensaScale warm start, bound known without solving", incumbent=prep.heuristic)


def _solve_deadline_hard(solver: str, prep: Prepared, data: ModelData, whole: Schedule, engine: Engine,
                         settings: SolveSettings, budget: TimeBudget, short: ShortfallOutcome) -> Result:
    """Phase 2 once the shortfall run found a zero-miss schedule and it could be
    completed (``whole``, valid, within ``data.H``): the deadline-hard, trimmed model
    ``data`` (:func:`sensaopt.exact.data.hard_data`), started from ``whole``. Its optimum is the optimum unless missing the cheapest open
    deadline could pay for itself: the bound is the smaller of the hard model's bound
    and the floor of every schedule with a miss, and OPTIMAL needs the incumbent at or
    below that floor."""
    full = prep.data
    mb = _build(solver, prep, data, engine, settings, budget)
    if isinstance(mb, Result):
        return mb
    vals = hint_values(data, mb.vars, relabel_identical_nodes(data.instance, whole))  # complete and zero-miss
    fallback = vals or None
    if vals:
        mb.backend.hint(vals)
    coop: dict = {}
    solver_budget = budget.split(BRANCH_PRICE_AFTER) if settings.branch_price else budget
    if settings.partner is None:
        out = engine.run(mb, solver_budget)
    else:
        first = mb
        mb, out, coop = _cooperate(mb, engine, settings.partner, settings, solver_budget, whole)
        if mb is not first:  # the partner's incumbent won: the fallback in its variables
            fallback = hint_values(data, mb.vars, relabel_identical_nodes(data.instance, whole)) or None
    bp = None
    if settings.branch_price and out.status != Status.OPTIMAL and budget.left() >= MIN_EXTEND_S:
        out, bp = _branch_and_price(mb, out, whole, budget)
    floors = ObjectiveFloors.of(mb.vars)
    slot_coef = objective_parts(full)[0]
    miss = (floors.loss + short.report.miss_cost
            + slot_coef * sum(max(jd.earliest_done, 0) for jd in full.jobs))  # every schedule with a miss
    bound = round_bound(data, floors.loss + floors.jct if out.bound is None else max(out.bound, floors.loss + floors.jct))
    status, msg = out.status, f"deadline-hard phase 2 (shortfall 0 in {short.report.seconds:.2f} s): {out.message}"
    status, msg = _granular_proof(status, msg, out.objective, bound)
    if status == Status.OPTIMAL and out.objective is not None and out.objective > miss + 0.5:
        status = Status.FEASIBLE
        msg += "; optimal among zero-miss schedules only: missing a deadline might cost less than it saves"
    out = replace(out, status=status, bound=min(bound, miss), message=msg)
    lex = {"phase1_share": settings.phase1_share, "phase1": "skipped (shortfall 0: a zero-miss schedule exists)",
           "shortfall": short.report.to_dict(), "phase2": "deadline-hard, trimmed"}
    if coop:
        lex["cooperation"] = coop
    if bp is not None:
        lex["branch_price"] = bp.to_dict()
    params = base_params(solver, settings, mb, {"hinted": bool(vals), "heuristic_objective": prep.heuristic.objective,
                                                "lexicographic": lex, "complete_start": fallback is not None})
    if out.value is None and fallback is None:  # no incumbent of the hard model: the heuristic's schedule, the bound proven here
        res = _early_result(solver, data, Status.TIME_LIMIT, budget, params, msg + "; incumbent = the SensaScale schedule",
                            incumbent=prep.heuristic)
        b = to_objective(data, out.bound) if out.bound is not None else None
        res = replace(res, bound=res.bound if b is None or res.objective is None else min(max(b, 0.0), res.objective))
    else:
        res = make_result(solver, mb, out, budget.elapsed(), params, fallback)
    within = frozenset(k for k, end in data.ends.items() if end <= data.H)  # deadline slots inside the horizon
    exempt = within if res.objective is not None and res.objective <= to_objective(data, miss) + 1e-9 else frozenset()
    return _with_horizon_proof(res, data, floors.loss, exempt)


BRANCH_PRICE_AFTER = 0.5  # with branch and price: the solver(s) get this share of the deadline-hard phase's time


def _branch_and_price(mb: ModelBuild, out: SolveOutcome, whole: Schedule, budget: TimeBudget
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
            out = replace(out, value=lambda var: vals.get(var, 0), objective=bp.incumbent)
    if bp.proven:
        out = replace(out, status=Status.OPTIMAL)
    return out, bp


COOPERATE_SHARE = 0.1  # of the time left: the primary's, the partner gets the rest (measured: models/measurements.md)
INTEGRAL_GAP = 0.5  # scaled units: the model objective is integral, so a smaller gap is a proof


def _outcome_dict(out: SolveOutcome) -> dict:
    return {"status": out.status.value, "objective": out.objective, "bound": out.bound, "seconds": round(out.wall_s, 3)}


def _cooperate(mb: ModelBuild, engine: Engine, partner: Engine, settings: SolveSettings, budget: TimeBudget,
               whole: Schedule | None) -> tuple[ModelBuild, SolveOutcome, dict]:
    """The primary for ``COOPERATE_SHARE`` of the time left, then ``partner`` on the same
    data from the primary's incumbent (else from ``whole``) for the rest. Returned: the
    model holding the better incumbent, an outcome with that incumbent and the larger
    bound (OPTIMAL when either proved it or the two meet), and both runs' records."""
    first = engine.run(mb, budget.split(COOPERATE_SHARE))
    record: dict = {"partner": partner.name, "primary_run": _outcome_dict(first)}
    if first.status == Status.OPTIMAL or budget.left() < MIN_EXTEND_S:
        return mb, first, record
    start = extract_schedule(mb.data, mb.vars, first.value) if first.value is not None else whole
    try:
        mb2 = partner.build(mb.data, settings.model_strength, budget)
    except BuildTimeout:
        return mb, first, record
    vals = hint_values(mb.data, mb2.vars, relabel_identical_nodes(mb.data.instance, start)) if start is not None else {}
    if vals:
        mb2.backend.hint(vals)
    second = partner.run(mb2, budget)
    record["partner_run"] = _outcome_dict(second)
    best_mb, best = (mb2, second) if second.objective is not None and (first.objective is None or second.objective < first.objective) \
        else (mb, first)
    bounds = [b for b in (first.bound, second.bound) if b is not None]
    bound = max(bounds) if bounds else None
    proven = Status.OPTIMAL in (first.status, second.status) or (
        best.objective is not None and bound is not None and best.objective - bound < INTEGRAL_GAP)
    status = Status.OPTIMAL if proven else best.status
    msg = f"{first.message}; then {partner.name} from its incumbent: {second.message}"
    return best_mb, replace(best, status=status, bound=bound, message=msg), record


def _with_horizon_proof(res: Result, data: ModelData, loss_lower: int, exempt: frozenset[int] = frozenset()) -> Result:
    """``params["horizon_proof"]`` (:mod:`sensaopt.exact.horizon`) and the status
    message: OPTIMAL is the optimum when every optimal schedule provably ends within
    the horizon; otherwise ``params["optimal_within_horizon"] = H`` and the message say
    it is the optimum among schedules ending within H rounds."""
    loss_floor = loss_lower / (max(data.n, 1) * data.obj_scale)
    proof = proof_of(data, res.objective, res.bound, loss_floor, exempt)
    res.params["horizon_proof"] = proof.to_dict()
    if res.status != Status.OPTIMAL:
        return res
    if proof.contains_optimum:
        note = f"; globally optimal: every optimal schedule ends within the horizon of {data.H} rounds (needs {proof.needed})"
    else:
        res.params["optimal_within_horizon"] = data.H
        note = f"; optimal within a horizon of {data.H} rounds (not proven beyond: an optimal schedule may need {proof.needed})"
    return replace(res, message=res.message + note)


__all__ = ["solve_exact", "trivial_bound", "SolveSettings", "Prepared", "DEFAULT_HORIZON_SLACK",
            "DEFAULT_MAX_VARS", "DEFAULT_WORK_SCALE", "prepare",
           "hint_values", "extract_schedule", "finish_minutes", "make_result", "strength_from", "base_params",
           "relabel_identical_nodes"]
