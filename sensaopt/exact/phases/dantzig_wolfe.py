"""The deadline-hard relaxation's Dantzig–Wolfe bound and price and branch on it
(``SolveSettings.relax_colgen``; ``models/formulation.md``, "The relaxation's
Dantzig–Wolfe bound"): column generation over whole per-job schedules of the relaxation
after its root LP (:mod:`sensaopt.exact.decompositions.colgen`), then its restricted
master as a MIP, whose schedule, lifted to valid allocations
(:func:`~sensaopt.exact.phases.lift.lift_columns`), is a valid schedule."""

from __future__ import annotations

import math
import time

from sensaopt.exact.common import MIN_EXTEND_S, SolveSettings
from sensaopt.exact.decompositions.colgen import ColgenOutcome, column_generation
from sensaopt.exact.model.builder import to_objective
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.phases.lift import Lifted, lift_columns
from sensaopt.solvers import TimeBudget

DW_MAX_S = 30.0  # seconds: at most this for the relaxation's column generation
DW_MIP_S = 5.0  # seconds: at most this (and a quarter of the call's time after the relaxations' share) for its restricted master MIP


def dantzig_wolfe(outer: ModelData, settings: SolveSettings, budget: TimeBudget, lifts: list[Lifted] | None = None
                  ) -> ColgenOutcome | None:
    """The Dantzig–Wolfe bound of the relaxation ``outer`` (column generation over whole
    per-job schedules, :func:`~sensaopt.exact.decompositions.colgen.column_generation`;
    scaled model units, rounded up to the granularity) within ``budget``'s time and at
    most :data:`DW_MAX_S` seconds, when ``settings.relax_colgen``: a bound of the
    relaxation's MIP at every iteration (a Lagrangian bound, whether or not it
    converged). None when off, under a work budget (column generation runs on wall-clock
    seconds), with no time left, or with no bound. On the open 20-job Philly windows it
    lifts the root LP by 0.5-2.0 min on 6 of 8 (1-9 s each; ``models/measurements.md``,
    session 24): the root LP shares a job's slots between schedules that no single
    schedule of that job can take. Run on refine 1 only (the caller): at refine 2 it gave
    the same bounds on w1, w3, w5 and w12, 1.5-2× slower.

    Then, with ``lifts`` given, its restricted master as a MIP for at most :data:`DW_MIP_S`
    seconds and a quarter of what the whole call has beyond ``budget`` (a primal heuristic
    for the inner solve, so its time is the inner solve's, not the relaxations' share,
    which column generation keeps whole: taking the MIP's seconds from the share left w12's
    column generation unconverged, its bound 1.0 lower; price and branch: one generated
    column per job): a schedule
    of the relaxation, which goes into ``lifts`` when it lifts to a valid one
    (:func:`~sensaopt.exact.phases.lift.lift_columns`). On the open 20-job windows, in
    5 s, these schedules are better than any other run's on w1, w3, w12, w16 and w17
    (w12: 80.6 against 83.6)."""
    if not settings.relax_colgen or settings.work is not None or budget.short_of(MIN_EXTEND_S):
        return None
    beyond = max(budget.outer_deadline - time.perf_counter() - budget.left(), 0.0)  # the whole call's seconds after this share
    mip_s = min(DW_MIP_S, beyond / 4) if lifts is not None else 0.0
    got = column_generation(outer, min(budget.left(), DW_MAX_S), mip_s=mip_s)
    if got.chosen is not None and lifts is not None:
        lifted = lift_columns(outer, got.chosen, to_objective(outer, sum(c.cost for c in got.chosen)))
        if lifted is not None:
            lifts.append(lifted)
    return got if got.bound is not None and got.bound > -math.inf else None
