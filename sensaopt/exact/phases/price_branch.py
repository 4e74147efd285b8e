"""Price and branch on the deadline-hard model as a primal heuristic before its solver
(``SolveSettings.colgen_share``, 0.8 of the phase's time by default; ``models/formulation.md``,
"Price and branch from the start").

Column generation over whole per-job schedules of the deadline-hard model itself
(:class:`~sensaopt.exact.decompositions.colgen.Master`), seeded with the start
schedule's columns, then its restricted master as a MIP that HiGHS starts from the
start's columns, then ruin and recreate from the MIP's answer
(:mod:`sensaopt.exact.decompositions.recreate`), which re-inserts a few jobs at a time
as their cheapest columns in the capacity the others leave, generated or not. Every
column is a schedule of one job in the model's own allocations, so the answer is a
schedule of the instance; the validator values it and it replaces the start only when
its objective is lower. Nothing here is a proof: the
master's bounds are bounds of the model's grid, not of the problem, and are not used.

Why before the solver: on the 40-job Philly windows of session 24 the deadline-hard solve
(CP-SAT, then HiGHS) returned its start unimproved on all 20 in the product's minute, while
this search, at the 0.8 default, lowered its start on 15 of 20, by up to 6.0 minutes of
average JCT (``models/measurements.md``, session 25). Why ruin and recreate after the MIP:
on eight captured 40-job windows, 10 s of it lowered the MIP's answer on six of them
with seed 0 and seven with seed 1 (by up to 4.0 minutes of average JCT), where 10 s more
of CP-SAT on the restricted master lowered it on three, by at most 1.0 (session 31)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sensaopt.exact.common import MIN_EXTEND_S
from sensaopt.exact.decompositions.colgen import MIN_MIP_S, Master, NodeSolve, schedule_of_columns
from sensaopt.exact.decompositions.pricing import Column
from sensaopt.exact.decompositions.recreate import ruin_and_recreate
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.model.objective import round_bound, to_objective
from sensaopt.exact.phases.lns import score
from sensaopt.exact.settings import COLGEN_MIPS, SolveSettings
from sensaopt.result import PriceBranchReport
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget

COLGEN_FRACTION = 0.5  # of the search's seconds at most for column generation; the MIP and ruin and recreate get the rest
MIP_FRACTION = 0.5  # of the seconds left after column generation for the restricted master MIP; ruin and recreate gets the rest


@dataclass(frozen=True)
class PriceBranchOutcome:
    """What the search did: the best schedule and its objective (metrics units; the
    start's when nothing better was found), the start's objective, the columns
    generated, whether column generation converged, seconds, the restricted master's
    objective (metrics units; None: it found no schedule of every job) and ruin and
    recreate's moves (tried, lowering the cost; 0, 0: it did not run)."""

    schedule: Schedule
    objective: float
    start: float
    columns: int
    converged: bool
    seconds: float
    mip_objective: float | None = None
    moves: int = 0
    improving: int = 0

    @property
    def improved(self) -> bool:
        return self.objective < self.start - 1e-9


def price_and_branch(data: ModelData, start: Schedule, budget: TimeBudget, mip: str = "highs+cpsat", seed: int = 0,
                     workers: int = 1, settled: Callable[[float], bool] | None = None,
                     stall: int | None = None, time_share: float | None = None) -> PriceBranchOutcome | None:
    """The best of ``start`` (a valid schedule, scored by
    :func:`~sensaopt.exact.phases.lns.score`) and the search's schedule on ``data``
    (offline, every job required to finish: the deadline-hard model), within ``budget``'s
    time: column generation for at most :data:`COLGEN_FRACTION` of it; the restricted
    master MIP for :data:`MIP_FRACTION` of what is left, by ``mip``
    (:data:`COLGEN_MIPS`: ``highs+cpsat``, the default since session 26: HiGHS for half
    of it, then, unless HiGHS proved its answer optimal over the columns, CP-SAT with
    ``seed`` from that answer; ``highs``; ``cpsat``), from the start; then, for the rest,
    ruin and recreate (:func:`~sensaopt.exact.decompositions.recreate.ruin_and_recreate`,
    ``seed``) from the MIP's columns (else the start's), until it stalls (``stall`` moves
    in a row without a lower cost, as :func:`~sensaopt.exact.decompositions.recreate.ruin_and_recreate`
    counts them; None: its default per pair of jobs, :func:`~sensaopt.exact.decompositions.recreate.stall_moves`;
    0: never; ``time_share``: its share of moves that ruin by time, None: its default), reaches the
    master LP's bound once column generation converged (nothing in the model's grid is
    cheaper), or ``settled`` (metrics units; the pipeline's bound, as in
    :func:`~sensaopt.exact.phases.deadline_hard.solve_deadline_hard`) says its objective
    needs no more search. CP-SAT searches with ``workers`` workers (the solve's
    ``cpsat_threads``; HiGHS's restricted master and ruin and recreate keep one thread).
    None when ``start`` has no objective."""
    start_objective = score(data, start)
    if start_objective is None:
        return None
    t0 = time.monotonic()
    first = master_and_columns(data, start, budget, mip, seed, workers)
    master, node, prices, chosen, floor = first.master, first.node, first.prices, first.chosen, first.floor
    moves = improving = 0
    if len(chosen) == data.n and budget.left() > 0:

        def enough(cost: int) -> bool:  # a stopping rule only, in model units: the validator values the answer below
            return cost <= floor or (settled is not None and settled(to_objective(data, cost)))

        rr = ruin_and_recreate(master, chosen, time.monotonic() + budget.left(), seed, prices, stall=stall, enough=enough,
                               time_share=time_share)
        chosen, moves, improving = rr.columns, rr.moves, rr.improving
    best, best_obj = start, start_objective
    if len(chosen) == data.n:
        schedule = schedule_of_columns(data, chosen)
        obj = score(data, schedule)
        if obj is not None and obj < best_obj - 1e-9:
            best, best_obj = schedule, obj
    return PriceBranchOutcome(best, best_obj, start_objective, len(master.columns), node.stop == "converged",
                              time.monotonic() - t0, first.mip_objective, moves, improving)


def colgen_first(data: ModelData, whole: Schedule, settings: SolveSettings, budget: TimeBudget,
                 settled: Callable[[float], bool] | None = None) -> tuple[Schedule, PriceBranchReport | None]:
    """Price and branch from ``whole`` (:func:`price_and_branch`) on ``data`` (the deadline-hard
    model, or the whole one before the loss phases) for ``settings.colgen_share`` of the time
    left, on wall-clock budgets only (its search stops early once ``settled`` holds for its
    objective): the schedule the solver then starts from, and the search's record (None when
    it did not run)."""
    if settings.colgen_share <= 0 or settings.work is not None or budget.short_of(MIN_EXTEND_S):
        return whole, None
    out = price_and_branch(data, whole, budget.split(settings.colgen_share), settings.colgen_mip, settings.seed,
                           settings.cpsat_threads, settled, settings.recreate_stall, settings.recreate_time_share)
    if out is None:
        return whole, None
    return out.schedule, PriceBranchReport(out.start, out.objective, out.columns, out.converged, round(out.seconds, 3),
                                           settings.colgen_mip, out.mip_objective, out.moves, out.improving)


@dataclass(frozen=True)
class FirstHalf:
    """Price and branch before its ruin and recreate: the master after column generation
    (``node``: how it stopped, its bound), the LP's row prices (scaled units per capacity
    unit), the restricted master MIP's columns, else the start's (one per job when either
    has them all), the MIP's objective (metrics units; None: no MIP answer) and the floor
    (the LP bound rounded up to the objective's step, scaled units; −inf unless column
    generation converged)."""

    master: Master
    node: NodeSolve
    prices: np.ndarray
    chosen: list[Column]
    mip_objective: float | None
    floor: float


def master_and_columns(data: ModelData, start: Schedule, budget: TimeBudget, mip: str = "highs+cpsat", seed: int = 0,
                       workers: int = 1) -> FirstHalf:
    """Column generation for :data:`COLGEN_FRACTION` of ``budget``'s time, then the
    restricted master MIP by ``mip`` for :data:`MIP_FRACTION` of what is left (at least
    ``MIN_MIP_S``), as :func:`price_and_branch` runs them (also
    ``benchmarks/recreate_probe.py``, which starts every search from this)."""
    colgen_until = time.monotonic() + COLGEN_FRACTION * budget.left()  # building the master counts against it
    master = Master(data, start)
    node = master.solve(colgen_until, lagrangian=False)  # its bounds are not used here
    prices = master.row_prices()  # before the MIP, whose solution replaces the LP's
    chosen = None
    if budget.left() > 0:
        chosen = _restricted_master(master, mip, seed, workers, max(budget.left() * MIP_FRACTION, MIN_MIP_S))
    mip_objective = None
    if chosen is not None and len(chosen) == data.n:
        mip_objective = score(data, schedule_of_columns(data, chosen))
    else:
        chosen = [c for c in (master.columns[i] for i in master.seeded) if c is not None]
    floor = round_bound(data, node.bound, master.step) if node.stop == "converged" else -math.inf
    return FirstHalf(master, node, prices, chosen, mip_objective, floor)


def _restricted_master(master: Master, mip: str, seed: int, workers: int, seconds: float) -> list[Column] | None:
    """The restricted master MIP by ``mip`` for ``seconds`` from the start's columns
    (:func:`price_and_branch`): one column per job, or None."""
    if mip == "cpsat":
        return master.restricted_cpsat(seconds, from_start=True, seed=seed, workers=workers)
    if mip == "highs":
        return master.restricted_mip(seconds, from_start=True)
    stop_at = time.monotonic() + seconds  # highs+cpsat: HiGHS for half; unless it proved its answer, CP-SAT from that answer
    chosen = master.restricted_mip(seconds / 2, from_start=True)
    if master.mip_proven or stop_at - time.monotonic() <= 0:
        return chosen
    other = master.restricted_cpsat(max(stop_at - time.monotonic(), MIN_MIP_S), from_start=True, seed=seed, hint=chosen,
                                     workers=workers)
    if other is not None and (chosen is None or sum(c.cost for c in other) < sum(c.cost for c in chosen)):
        return other
    return chosen


__all__ = ["COLGEN_FRACTION", "COLGEN_MIPS", "MIP_FRACTION", "PriceBranchOutcome", "colgen_first", "price_and_branch"]
