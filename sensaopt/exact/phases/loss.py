"""The loss phases: the whole model (deadlines as indicators) solved from the best known
start — lexicographically (lost deadline value first, then the whole objective,
:mod:`sensaopt.exact.phases.lexicographic`) or as one weighted solve."""

from __future__ import annotations

from sensaopt.exact.common import Prepared, SolveSettings, base_params, build_or_result, make_result
from sensaopt.exact.model.data import ModelData, check_size
from sensaopt.exact.model.values import hint_values, relabel_identical_nodes
from sensaopt.exact.outcome import Engine, ModelBuild
from sensaopt.exact.phases.complete import complete_schedule
from sensaopt.exact.phases.horizon import with_horizon_proof
from sensaopt.exact.phases.lexicographic import ObjectiveFloors, solve_lexicographic
from sensaopt.exact.phases.shortfall import ShortfallOutcome
from sensaopt.metrics import compute_metrics
from sensaopt.result import Result
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget
from sensaopt.validator import check_schedule


def solve_loss_phases(prep: Prepared, short: ShortfallOutcome | None, engine: Engine, settings: SolveSettings,
                      budget: TimeBudget) -> Result:
    """Build the model of ``prep.data``, hint the best start, solve (lexicographic when
    ``settings.lexicographic``; ``short``: the shortfall run's proof raises the loss
    floor), and package the validated Result with its horizon proof. Refused (the one
    size error) when the whole model has more than about ``settings.max_vars``
    variables: only this phase builds it, so an instance whose deadline-hard model fits
    is solved even when the whole model would not."""
    data = prep.data
    check_size(data, settings.max_vars)
    mb = build_or_result(prep, data, engine, settings, budget)
    if isinstance(mb, Result):
        return mb
    start, vals = _hint(mb, prep, short)
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
    extra = {"hinted": hinted, "heuristic_objective": prep.heuristic.objective,
             "start": "none" if not hinted else "warm start" if start is prep.hint else "shortfall"}
    if lex is None:
        extra["lexicographic"] = False  # the setting: a weighted solve
    res = make_result(engine.name, mb, out, budget.elapsed(), base_params(engine, settings, mb, extra), vals)
    res.loss_proof, res.lexicographic = proof, lex
    return with_horizon_proof(res, data, loss_lower)


def _hint(mb: ModelBuild, prep: Prepared, short: ShortfallOutcome | None) -> tuple[Schedule | None, dict]:
    """Hint the best start (:func:`better_start`; the warm start if that one is
    not representable): the start used and its variable values (empty: no hint)."""
    data = mb.data
    start = better_start(data, prep, short)
    vals: dict = {}
    if start is not None:
        vals = hint_values(data, mb.vars, start)
        if not vals and prep.hint is not None and start is not prep.hint:
            start = prep.hint
            vals = hint_values(data, mb.vars, start)
        if vals:
            mb.backend.hint(vals)
    return start, vals


def better_start(data: ModelData, prep: Prepared, short: ShortfallOutcome | None) -> Schedule | None:
    """The warm start of the loss phases: the shortfall run's incumbent completed
    greedily (:func:`complete_schedule`) when it is valid and its objective beats the
    warm start's, else the warm start (None without warm start)."""
    if prep.hint is None or short is None or short.best is None:
        return prep.hint
    cand = complete_schedule(data, short.best)
    heur = prep.heuristic.objective
    if cand is None or heur is None:
        return prep.hint
    cand = relabel_identical_nodes(data.instance, cand)
    ours = compute_metrics(data.instance, check_schedule(data.instance, cand)).objective
    return cand if ours is not None and ours < heur else prep.hint
