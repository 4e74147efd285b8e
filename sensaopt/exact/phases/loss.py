"""The loss phases: the whole model (deadlines as indicators) solved from the best known
start — lexicographically (lost deadline value first, then the whole objective,
:mod:`sensaopt.exact.phases.lexicographic`) or as one weighted solve. Before the solver,
price and branch searches the whole model from the warm start (its columns' costs carry the
deadlines' values; :func:`~sensaopt.exact.phases.price_branch.colgen_first`), as it does
before the deadline-hard phase's solver."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sensaopt.exact.common import Prepared, SolveSettings, WarmStart, base_params, build_or_result, make_result
from sensaopt.exact.model.data import ModelData, check_size
from sensaopt.exact.model.values import hint_values, relabel_identical_nodes
from sensaopt.exact.outcome import Engine, ModelBuild
from sensaopt.exact.phases.complete import complete_schedule
from sensaopt.exact.phases.horizon import with_horizon_proof
from sensaopt.exact.phases.lexicographic import ObjectiveFloors, solve_lexicographic
from sensaopt.exact.phases.lns import score
from sensaopt.exact.phases.price_branch import colgen_first
from sensaopt.exact.phases.shortfall import ShortfallOutcome
from sensaopt.metrics import compute_metrics
from sensaopt.result import Result, Status
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget
from sensaopt.validator import check_schedule


def solve_loss_phases(prep: Prepared, short: ShortfallOutcome | None, engine: Engine, settings: SolveSettings,
                      budget: TimeBudget) -> Result:
    """Price and branch from the warm start (``settings.colgen_share`` of the time left;
    :func:`~sensaopt.exact.phases.price_branch.colgen_first`), then build the model of
    ``prep.data``, hint the best start, solve (lexicographic when
    ``settings.lexicographic``; ``short``: the shortfall run's proof raises the loss
    floor), and package the validated Result, never above the search's schedule
    (:func:`keep_searched`), with its horizon proof. Refused (the one
    size error) when the whole model has more than about ``settings.max_vars``
    variables: only this phase builds it, so an instance whose deadline-hard model fits
    is solved even when the whole model would not."""
    data = prep.data
    check_size(data, settings.max_vars)
    searched, pb = None, None
    if prep.hint is not None:  # price and branch from the warm start: a schedule of the whole model, or the start
        searched, pb = colgen_first(data, prep.hint, settings, budget)
        if pb is None or pb.objective >= pb.start - 1e-9:
            searched = None
        else:  # nodes relabelled as the model's symmetry rows order them: a hint that breaks them is no solution
            searched = relabel_identical_nodes(data.instance, searched)
    mb = build_or_result(prep, data, engine, settings, budget, searched=searched)
    if isinstance(mb, Result):
        if pb is not None and mb.lexicographic is not None:
            mb.lexicographic = replace(mb.lexicographic, price_branch=pb)
        return mb
    start, vals = _hint(mb, prep, short, searched)
    hinted = bool(vals)
    if not settings.model_spec.warm_start_feasible:
        vals = {}  # a family the warm start may break: it is no fallback incumbent
    lex = None
    proof = None
    loss_lower = ObjectiveFloors.of(mb.vars).loss
    if settings.lexicographic:
        lo = solve_lexicographic(mb, engine.run, budget, settings.phase1_share, short.report if short else None)
        out, lex, loss_lower, proof = lo.final, lo.report(), lo.loss_lower, lo.loss_proof()
        if lo.start_values:
            vals = lo.start_values  # feasible for the phase-2 model (the warm start may not be)
    else:
        out = engine.run(mb, budget)
    label = ("none" if not hinted else "warm start" if start is prep.hint else "price and branch" if start is searched
             else "shortfall")
    extra: dict[str, Any] = {"hinted": hinted, "heuristic_objective": prep.heuristic.objective, "start": label}
    if lex is None:
        extra["lexicographic"] = False  # the setting: a weighted solve
        if pb is not None:
            extra["price_branch"] = pb.to_dict()  # (lexicographic: in its report)
    res = make_result(engine.name, mb, out, budget.elapsed(), base_params(engine, settings, mb, extra), vals)
    res.loss_proof, res.lexicographic = proof, (replace(lex, price_branch=pb) if lex is not None and pb is not None else lex)
    return with_horizon_proof(keep_searched(res, data, searched), data, loss_lower)


def keep_searched(res: Result, data: ModelData, searched: Schedule | None) -> Result:
    """``res`` with price and branch's schedule ``searched`` (valid: a schedule of ``data``)
    as its incumbent when that is lower than the solver's answer: a solver hinted with it
    may still return worse (CP-SAT keeps a hint only when it completes it). Its OPTIMAL,
    which the lower schedule contradicts, becomes FEASIBLE; the bound stays (a bound of
    every valid schedule)."""
    if searched is None:
        return res
    found = WarmStart.of(data.instance, searched)
    if found.objective is None or (res.objective is not None and found.objective >= res.objective - 1e-9):
        return res
    status = Status.FEASIBLE if res.status == Status.OPTIMAL else res.status
    if status not in (Status.FEASIBLE, Status.TIME_LIMIT):
        status = Status.TIME_LIMIT
    was = "none" if res.objective is None else f"{res.objective:.6g}"
    return replace(res, status=status, schedule=found.schedule, objective=found.objective, metrics=found.metrics,
                   evaluation=found.evaluation, params={**res.params, "incumbent_from": "price and branch"},
                   message=res.message + f"; incumbent {found.objective:.6g} (was {was}): price and branch's schedule")


def _hint(mb: ModelBuild, prep: Prepared, short: ShortfallOutcome | None,
          searched: Schedule | None = None) -> tuple[Schedule | None, dict]:
    """Hint the best start (:func:`better_start`; the warm start if that one is
    not representable): the start used and its variable values (empty: no hint)."""
    data = mb.data
    start = better_start(data, prep, short, searched)
    vals: dict = {}
    if start is not None:
        vals = hint_values(data, mb.vars, start)
        if not vals and prep.hint is not None and start is not prep.hint:
            start = prep.hint
            vals = hint_values(data, mb.vars, start)
        if vals:
            mb.backend.hint(vals)
    return start, vals


def better_start(data: ModelData, prep: Prepared, short: ShortfallOutcome | None,
                 searched: Schedule | None = None) -> Schedule | None:
    """The warm start of the loss phases: the lowest objective of the warm start, price and
    branch's schedule ``searched`` (a schedule of ``data``, when it beat the warm start) and
    the shortfall run's incumbent completed greedily (:func:`complete_schedule`) when it
    is valid (None without warm start)."""
    if prep.hint is None:
        return None
    best, best_obj = prep.hint, prep.heuristic.objective
    if searched is not None:
        obj = score(data, searched)
        if obj is not None and (best_obj is None or obj < best_obj - 1e-9):
            best, best_obj = searched, obj
    if short is None or short.best is None or best_obj is None:
        return best
    cand = complete_schedule(data, short.best)
    if cand is None:
        return best
    cand = relabel_identical_nodes(data.instance, cand)
    ours = compute_metrics(data.instance, check_schedule(data.instance, cand)).objective
    return cand if ours is not None and ours < best_obj else best
