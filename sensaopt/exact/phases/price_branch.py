"""Price and branch on the deadline-hard model as a primal heuristic before its solver
(``SolveSettings.colgen_share``, 0.8 of the phase's time by default; ``models/formulation.md``,
"Price and branch from the start").

Column generation over whole per-job schedules of the deadline-hard model itself
(:class:`~sensaopt.exact.decompositions.colgen.Master`), seeded with the start
schedule's columns, then its restricted master as a MIP that HiGHS starts from the
start's columns. Every column is a schedule of one job in the model's own allocations,
so the MIP's answer is a schedule of the instance; the validator values it and it
replaces the start only when its objective is lower. Nothing here is a proof: the
master's bounds are bounds of the model's grid, not of the problem, and are not used.

Why before the solver: on the 40-job Philly windows of session 24 the deadline-hard solve
(CP-SAT, then HiGHS) returned its start unimproved on all 20 in the product's minute, while
this search, at the 0.8 default, lowered its start on 15 of 20, by up to 6.0 minutes of
average JCT (``models/measurements.md``, session 25)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sensaopt.exact.decompositions.colgen import MIN_MIP_S, Master, schedule_of_columns
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.phases.lns import score
from sensaopt.exact.settings import COLGEN_MIPS
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget

COLGEN_FRACTION = 0.5  # of the search's seconds at most for column generation; the MIP gets the rest


@dataclass(frozen=True)
class PriceBranchOutcome:
    """What the search did: the best schedule and its objective (metrics units; the
    start's when nothing better was found), the start's objective, the columns
    generated, whether column generation converged, and seconds."""

    schedule: Schedule
    objective: float
    start: float
    columns: int
    converged: bool
    seconds: float

    @property
    def improved(self) -> bool:
        return self.objective < self.start - 1e-9


def price_and_branch(data: ModelData, start: Schedule, budget: TimeBudget, mip: str = "highs+cpsat", seed: int = 0,
                     workers: int = 1) -> PriceBranchOutcome | None:
    """The best of ``start`` (a valid schedule, scored by
    :func:`~sensaopt.exact.phases.lns.score`) and the restricted master MIP's schedule
    after column generation on ``data`` (offline, every job required to finish: the deadline-hard model), within
    ``budget``'s time: column generation for at most :data:`COLGEN_FRACTION` of it, the MIP
    for the rest, by ``mip`` (:data:`COLGEN_MIPS`: ``highs+cpsat``, the default since
    session 26: HiGHS for half of it, then, unless HiGHS proved its answer optimal over
    the columns, CP-SAT with ``seed`` from that answer; ``highs``; ``cpsat``), from the start. CP-SAT
    searches with ``workers`` workers (the solve's ``cpsat_threads``; HiGHS's restricted master keeps one thread).
    None when ``start`` has no objective."""
    start_objective = score(data, start)
    if start_objective is None:
        return None
    t0 = time.monotonic()
    total = budget.left()
    master = Master(data, start)
    node = master.solve(t0 + COLGEN_FRACTION * total, lagrangian=False)  # its bounds are not used here
    best, best_obj = start, start_objective
    left = budget.left()
    seconds = max(left, MIN_MIP_S)
    chosen = None
    if left > 0:
        if mip == "cpsat":
            chosen = master.restricted_cpsat(seconds, from_start=True, seed=seed, workers=workers)
        elif mip == "highs":
            chosen = master.restricted_mip(seconds, from_start=True)
        else:  # highs+cpsat: HiGHS for half; unless it proved its answer, CP-SAT from that answer for the rest
            chosen = master.restricted_mip(seconds / 2, from_start=True)
            if not master.mip_proven and budget.left() > 0:
                other = master.restricted_cpsat(max(budget.left(), MIN_MIP_S), from_start=True, seed=seed, hint=chosen,
                                                 workers=workers)
                if other is not None and (chosen is None or sum(c.cost for c in other) < sum(c.cost for c in chosen)):
                    chosen = other
    if chosen is not None and len(chosen) == data.n:
        schedule = schedule_of_columns(data, chosen)
        obj = score(data, schedule)
        if obj is not None and obj < best_obj - 1e-9:
            best, best_obj = schedule, obj
    return PriceBranchOutcome(best, best_obj, start_objective, len(master.columns), node.stop == "converged",
                              time.monotonic() - t0)


__all__ = ["COLGEN_FRACTION", "COLGEN_MIPS", "PriceBranchOutcome", "price_and_branch"]
