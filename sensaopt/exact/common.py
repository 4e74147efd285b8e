"""What the phases of the exact solve (:mod:`sensaopt.exact.pipeline`) share: the
backends of a solve (:func:`engine_of`, :func:`partner_of`; the settings are
:class:`~sensaopt.exact.settings.SolveSettings`), the validated warm start
(:class:`WarmStart`, from a schedule the caller gives: the exact layer simulates no
policy; the public entries simulate it: :func:`sensaopt.warm_start.choose_start`), the model data
prepared from it (:func:`prepare`: horizon, data, hint), building a model or the Result
decided when it cannot be built (:func:`build_or_result`), and packaging an outcome
into the common, validated :class:`Result` (:func:`make_result`, :func:`early_result`,
the bound arithmetic :func:`granular_proof`, :func:`trivial_bound`).

The validator runs on the warm start and on the returned schedule; hint values and
extraction replay the validator's progress arithmetic (:func:`finish_minutes`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from sensaopt.allocations import ExactAllocations, schedule_points
from sensaopt.errors import SensaoptError
from sensaopt.exact.model.builder import (
    BuildTimeout,
    HorizonTooShort,
    round_bound,
    to_objective,
)
from sensaopt.exact.model.data import (
    DEFAULT_MAX_VARS,
    DEFAULT_WORK_SCALE,
    ModelData,
    build_data,
)
from sensaopt.exact.model.values import extract_schedule, finish_minutes, hint_values, relabel_identical_nodes
from sensaopt.exact.outcome import PARTNER_OPTIONS, Engine, ModelBuild, SolveOutcome, cpsat_partner, exact_params, highs_partner
from sensaopt.exact.settings import DEFAULT_HORIZON_SLACK, MODEL_REFINE, SolveSettings, strength_from
from sensaopt.instance import Instance
from sensaopt.metrics import Metrics, compute_metrics
from sensaopt.result import ModelSize, Result, Status, package_versions
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget, resolve
from sensaopt.solvers.base import known_values
from sensaopt.validator import Evaluation, check_schedule

INTEGRAL_GAP = 0.5  # scaled units: the model objective is integral, so a smaller gap is a proof
MIN_EXTEND_S = 1.0  # seconds (work units under a work budget) left at least for a later step (the horizon extension, branch and price)


def engine_of(backend: str, settings: SolveSettings, label: str = "") -> Engine:
    """The primary backend of a solve (a :mod:`sensaopt.solvers` name) with the settings'
    workers, seed, log and raw ``solver_options``; ``label``: the Result's solver name."""
    workers = settings.cpsat_threads if resolve(backend) == "cpsat" else settings.workers
    return Engine(backend, exact_params(backend, workers, settings.seed, settings.log, settings.solver_options), label=label)


def partner_of(engine: Engine, settings: SolveSettings) -> Engine | None:
    """The cooperating backend of the deadline-hard phase when ``settings.cooperate``:
    HiGHS for CP-SAT, CP-SAT for a MILP solver (None: the primary alone), with its
    :data:`~sensaopt.exact.outcome.PARTNER_OPTIONS` and ``settings.partner_options``."""
    if not settings.cooperate:
        return None
    if engine.backend == "cpsat":
        return highs_partner(settings.workers, settings.seed, partner_options("highs", settings))
    return cpsat_partner(settings.cpsat_threads, settings.seed, partner_options("cpsat", settings))


def partner_options(backend: str, settings: SolveSettings) -> dict[str, Any]:
    """The raw options of ``backend`` as a cooperating partner: its defaults, then the settings' own."""
    return {**PARTNER_OPTIONS[backend], **(settings.partner_options or {})}


@dataclass(frozen=True)
class WarmStart:
    """The warm start as the phases use it: a valid ``schedule`` of ``instance``, the
    validator's ``evaluation`` of it and its ``metrics`` (minutes; objective in metrics units)."""

    instance: Instance
    schedule: Schedule
    evaluation: Evaluation
    metrics: Metrics

    @property
    def objective(self) -> float | None:
        return self.metrics.objective

    @property
    def makespan_rounds(self) -> int:
        """The schedule's makespan in rounds."""
        return int(round(self.metrics.makespan / self.instance.round_minutes))

    @classmethod
    def of(cls, instance: Instance, schedule: Schedule) -> WarmStart:
        """``schedule`` validated (:class:`SensaoptError`, one line, when the validator rejects it)."""
        ev = check_schedule(instance, schedule)
        if ev.errors:
            raise SensaoptError(f"start: the warm-start schedule is invalid: {ev.errors[0]}")
        return cls(instance, schedule, ev, compute_metrics(instance, ev))


def inner_horizon(start: WarmStart, horizon: int | None, horizon_slack: int) -> int:
    """The inner model's horizon (rounds): ``horizon`` if given, else the warm start's
    makespan + ``horizon_slack``."""
    return horizon if horizon is not None else start.makespan_rounds + horizon_slack


@dataclass(frozen=True)
class Prepared:
    """The model data (horizon chosen), the warm start it came from, and the hint (the
    warm start's schedule, nodes relabelled; None without warm start or when it does not
    fit the horizon)."""

    data: ModelData
    heuristic: WarmStart
    hint: Schedule | None


def prepare(instance: Instance, horizon: int | None, horizon_slack: int, warm_start: bool, work_scale: int,
            max_vars: int | None, start: WarmStart, allocs: ExactAllocations | None = None) -> Prepared:
    """Pick the horizon from the warm start ``start`` (rounds: its makespan +
    ``horizon_slack`` unless ``horizon`` is given), extract the model data (refusing
    models of more than about ``max_vars`` variables; None: no refusal here, the caller
    checks the model it builds) and the hint. ``allocs``: the
    pipeline's allocations of this warm start (their inner grids; None: asked here)."""
    heur = start
    mk = start.makespan_rounds
    H = inner_horizon(start, horizon, horizon_slack)
    hint = relabel_identical_nodes(instance, heur.schedule) if warm_start and mk <= H else None
    if allocs is None:
        data = build_data(instance, H, work_scale=work_scale, extra_options=schedule_points(heur.schedule),
                          max_vars=max_vars, inner_refine=MODEL_REFINE)
    else:
        data = build_data(instance, H, work_scale=work_scale, max_vars=max_vars, inner_refine=MODEL_REFINE,
                          grids=allocs.inner)
    return Prepared(data=data, heuristic=heur, hint=hint)


def make_result(solver: str, mb: ModelBuild, out: SolveOutcome, runtime_s: float, params: dict,
                fallback: dict | None = None) -> Result:
    """Common Result: the METRICS objective of the extracted schedule (validated here,
    once: its evaluation is ``Result.evaluation``), the solver bound converted to the
    same units (without one: :func:`trivial_bound`), and the honest status.

    ``fallback``: known feasible model values (the solver's start: the warm start, the
    phase-1 solution or the deadline-hard searches' schedule). When
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
            value = known_values(fallback)
            scaled_objective = None
            message += "; incumbent = the solver's start (it found none)"
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
        status, message = granular_proof(status, message, out.objective, rounded)
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
                  truth=data.instance, model_size=model_size(mb), horizon=data.H)


def model_size(mb: ModelBuild) -> ModelSize:
    """The built model's size (placement variables, constraints per family)."""
    v = mb.vars
    return ModelSize(x_vars=len(v.x), constraints=sum(v.families.values()), families=dict(v.families))


def base_params(engine: Engine, settings: SolveSettings, mb: ModelBuild, extra: dict | None = None) -> dict:
    """The settings an exact Result records in ``params`` (its reports are typed fields
    of the Result, written into ``params`` only in JSON: :meth:`Result.json_params`)."""
    data = mb.data
    p = {
        "backend": engine.name,
        "time_limit": settings.time_limit,
        "workers": settings.workers,
        **({"cpsat_workers": settings.cpsat_workers} if settings.cpsat_workers else {}),
        "seed": settings.seed,
        "solver_options": dict(engine.params.extra),  # the primary's raw options: the exact defaults, then the settings' own
        "warm_start": settings.warm_start,
        "partner": partner.name if (partner := partner_of(engine, settings)) else None,  # deadline-hard phase (cooperate)
        **({"partner_options": po} if partner and (po := partner_options(partner.backend, settings)) else {}),
        "branch_price": settings.branch_price,
        "work_scale": data.work_scale,
        "mem_scale": data.mem_scale,
        "obj_scale": data.obj_scale,
        "strength": asdict(settings.model_strength),
        "refine": settings.refine,
        "inner_refine": MODEL_REFINE,
        "relax_time_limit": settings.relax_time_limit,
    }
    if extra:
        p.update(extra)
    return p


def granular_proof(status: Status, message: str, objective: float | None, bound: float) -> tuple[Status, str]:
    """TIME_LIMIT becomes OPTIMAL when the incumbent (scaled) is below the bound rounded
    up to the objective's granularity (:func:`~sensaopt.exact.model.builder.round_bound`) plus
    half a unit: no schedule can lie strictly between them."""
    if status == Status.TIME_LIMIT and objective is not None and objective - bound < INTEGRAL_GAP:
        return Status.OPTIMAL, message + "; proven: the incumbent meets the bound rounded up to the objective's granularity"
    return status, message


def trivial_bound(data: ModelData) -> float:
    """The objective no schedule beats, known without building or solving (metrics
    units): every job done at its earliest solo finish (:attr:`JobData.earliest_done`),
    only its hopeless deadlines missed."""
    n = max(data.n, 1)
    jct = sum((max(jd.earliest_done, 0) + 1 + data.start_round) * data.R - jd.job.arrival for jd in data.jobs) / n
    return max(hopeless_loss(data) + jct, 0.0)


def hopeless_loss(data: ModelData) -> float:
    """violation_weight × the deadline value every schedule of the model loses (metrics
    units): the deadlines missed even alone at the data's best speeds."""
    wv = data.instance.objective.violation_weight
    loss = 0.0
    for jd in data.jobs:
        loss += sum(jd.step(d) for d, (last, _) in enumerate(jd.deadlines) if last < jd.earliest_done)
    return wv * loss


def early_result(solver: str, data: ModelData, status: Status, budget: TimeBudget, params: dict, message: str,
                  incumbent: WarmStart | None = None) -> Result:
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
                  truth=incumbent.instance if incumbent else instance, horizon=data.H)


WARM_NOTE = "incumbent = the warm start"
SEARCHES_NOTE = "incumbent = the searches' schedule before the model (large-neighbourhood search, price and branch)"


def better_start(warm: WarmStart | None, data: ModelData, searched: Schedule) -> tuple[WarmStart, str]:
    """The lower of the warm start ``warm`` (None: not usable) and ``searched`` (a valid
    schedule the searches found before the model was built), validated, with the
    message's note (:data:`WARM_NOTE`, :data:`SEARCHES_NOTE`); ``warm`` on a tie."""
    found = WarmStart.of(data.instance, searched)
    lower = found.objective is not None and (warm is None or warm.objective is None or found.objective < warm.objective - 1e-9)
    return (found, SEARCHES_NOTE) if lower or warm is None else (warm, WARM_NOTE)


def adopt(res: Result, found: Any, source: str, what: str, params: dict[str, Any] | None = None) -> Result:
    """``res`` with ``found`` (a valid schedule with its ``objective``, ``schedule``, ``metrics``
    and ``evaluation``: a :class:`WarmStart` or a lifted relaxation schedule) as its incumbent
    when that is lower; else ``res``. An OPTIMAL that the lower schedule contradicts (optimal
    over the model's grid or phases only) becomes FEASIBLE; a status without an incumbent,
    TIME_LIMIT; the bound stays (a bound of every valid schedule). ``source`` goes to
    ``params["incumbent_from"]``, ``what`` to the message; ``params``: more entries."""
    if found is None or found.objective is None or (res.objective is not None and found.objective >= res.objective - 1e-9):
        return res
    status = res.status if res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT) else Status.TIME_LIMIT
    if status == Status.OPTIMAL:
        status = Status.FEASIBLE
    was = "none" if res.objective is None else f"{res.objective:.6g}"
    return replace(res, status=status, schedule=found.schedule, objective=found.objective, metrics=found.metrics,
                   evaluation=found.evaluation, params={**res.params, **(params or {}), "incumbent_from": source},
                   message=res.message + f"; incumbent {found.objective:.6g} (was {was}): {what}")


def build_or_result(prep: Prepared, data: ModelData, engine: Engine, settings: SolveSettings,
                    budget: TimeBudget, searched: Schedule | None = None) -> ModelBuild | Result:
    """The model of ``data``, or the Result decided when it cannot be built (horizon too
    short: INFEASIBLE; budget spent: TIME_LIMIT with the warm start as incumbent, or
    ``searched``, a valid schedule found before the build, where that is lower:
    :func:`better_start`)."""
    stub_params = {"time_limit": settings.time_limit, "workers": settings.workers, "seed": settings.seed,
                   "warm_start": settings.warm_start}
    try:
        return engine.build(data, settings.model_spec, budget)
    except HorizonTooShort as e:
        return early_result(engine.name, data, Status.INFEASIBLE, budget, stub_params, str(e))
    except BuildTimeout as e:
        budget.charge(0.0, safety_net=True)  # under a work limit the clock is only the safety net
        warm = prep.heuristic if prep.hint is not None and settings.model_spec.warm_start_feasible else None
        if searched is not None:
            warm, note = better_start(warm, data, searched)
        elif warm is None:
            return early_result(engine.name, data, Status.TIME_LIMIT, budget, stub_params, f"{e}; no solution found")
        else:
            note = WARM_NOTE
        return early_result(engine.name, data, Status.TIME_LIMIT, budget, stub_params,
                             f"{e}; {note}, bound known without solving", incumbent=warm)


__all__ = ["DEFAULT_HORIZON_SLACK", "DEFAULT_MAX_VARS", "DEFAULT_WORK_SCALE", "INTEGRAL_GAP", "MIN_EXTEND_S", "Prepared",
           "SEARCHES_NOTE", "SolveSettings", "WARM_NOTE", "WarmStart", "adopt", "base_params", "better_start", "build_or_result",
           "early_result", "engine_of", "extract_schedule",
           "finish_minutes", "granular_proof", "hint_values", "hopeless_loss", "make_result", "partner_of", "prepare",
           "relabel_identical_nodes", "strength_from", "trivial_bound"]
