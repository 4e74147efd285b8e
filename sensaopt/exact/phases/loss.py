"""The loss phases: the whole model (deadlines as indicators) solved from the best known
start — lexicographically (lost deadline value first, then the whole objective,
:mod:`sensaopt.exact.phases.lexicographic`) or as one weighted solve. Before the solver,
price and branch searches the whole model from the warm start (its columns' costs carry the
deadlines' values; :func:`~sensaopt.exact.phases.price_branch.colgen_first`), as it does
before the deadline-hard phase's solver."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sensaopt.exact.common import Prepared, SolveSettings, WarmStart, adopt, base_params, build_or_result, make_result
from sensaopt.exact.model.data import ModelData, check_size
from sensaopt.exact.model.values import hint_values, relabel_identical_nodes
from sensaopt.exact.outcome import Engine, ModelBuild
from sensaopt.exact.phases.complete import complete_schedule
from sensaopt.exact.phases.horizon import with_horizon_proof
from sensaopt.exact.phases.lexicographic import ObjectiveFloors, solve_lexicographic
from sensaopt.exact.phases.price_branch import colgen_first
from sensaopt.exact.phases.shortfall import ShortfallOutcome
from sensaopt.metrics import compute_metrics
from sensaopt.result import PriceBranchReport, Result
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
    searched, pb = _search(prep, settings, budget)
    mb = build_or_result(prep, data, engine, settings, budget, searched=None if searched is None else searched.schedule)
    if isinstance(mb, Result):
        if pb is not None:
            mb.params["price_branch"] = pb.to_dict()
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
    label = ("none" if not hinted else "warm start" if start is prep.hint
             else "price and branch" if searched is not None and start is searched.schedule else "shortfall")
    extra: dict[str, Any] = {"hinted": hinted, "heuristic_objective": prep.heuristic.objective, "start": label}
    if lex is None:
        extra["lexicographic"] = False  # the setting: a weighted solve
        if pb is not None:
            extra["price_branch"] = pb.to_dict()  # (lexicographic: in its report)
    res = make_result(engine.name, mb, out, budget.elapsed(), base_params(engine, settings, mb, extra), vals)
    res.loss_proof, res.lexicographic = proof, (replace(lex, price_branch=pb) if lex is not None and pb is not None else lex)
    return with_horizon_proof(keep_searched(res, searched), data, loss_lower)


def _search(prep: Prepared, settings: SolveSettings, budget: TimeBudget) -> tuple[WarmStart | None, PriceBranchReport | None]:
    """Price and branch on the whole model from the warm start
    (:func:`~sensaopt.exact.phases.price_branch.colgen_first`): its schedule, validated once
    and its nodes relabelled as the model's symmetry rows order identical nodes (a hint that
    breaks them is no solution), when it is lower than the warm start (else None), and its report."""
    if prep.hint is None:
        return None, None
    schedule, pb = colgen_first(prep.data, prep.hint, settings, budget)
    if pb is None or pb.objective >= pb.start - 1e-9:
        return None, pb
    return WarmStart.of(prep.data.instance, relabel_identical_nodes(prep.data.instance, schedule)), pb


def keep_searched(res: Result, searched: WarmStart | None) -> Result:
    """``res`` with price and branch's schedule ``searched`` as its incumbent when that is
    lower than the solver's answer (:func:`~sensaopt.exact.common.adopt`): a solver hinted
    with it may still return worse (CP-SAT keeps a hint only when it completes it)."""
    return adopt(res, searched, "price and branch", "price and branch's schedule")


def _hint(mb: ModelBuild, prep: Prepared, short: ShortfallOutcome | None,
          searched: WarmStart | None = None) -> tuple[Schedule | None, dict]:
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
                 searched: WarmStart | None = None) -> Schedule | None:
    """The warm start of the loss phases: the lowest objective of the warm start, price and
    branch's schedule ``searched`` (validated, :func:`_search`) and the shortfall run's
    incumbent completed greedily (:func:`complete_schedule`) when it is valid (None without
    warm start)."""
    if prep.hint is None:
        return None
    best, best_obj = prep.hint, prep.heuristic.objective
    if searched is not None and searched.objective is not None and (best_obj is None or searched.objective < best_obj - 1e-9):
        best, best_obj = searched.schedule, searched.objective
    if short is None or short.best is None or best_obj is None:
        return best
    cand = complete_schedule(data, short.best)
    if cand is None:
        return best
    cand = relabel_identical_nodes(data.instance, cand)
    ours = compute_metrics(data.instance, check_schedule(data.instance, cand)).objective
    return cand if ours is not None and ours < best_obj else best
