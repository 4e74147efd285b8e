"""The relaxation's search beside the inner solve (``settings.relax_beside``, two workers
or more; ``models/formulation.md``, "The relaxation's search beside the inner solve").

With one thread the time limit is split: the inner solve first, the allocation
relaxation's search in what it leaves (or before it, ``search_share``). With a second
thread both run side by side from the start: the inner solve on ``workers`` − 1 threads,
the deadline-hard relaxation's search (CPU-exact grid, looking only below the warm
start, :func:`~sensaopt.exact.phases.allocation.search_first`) on one, its HiGHS in a
child process (:func:`~sensaopt.solvers.highs.isolated_runs`: the inner side may run
HiGHS in this process). Each side stops the other when what it found leaves the other
nothing to do (:func:`~sensaopt.exact.phases.deadline_hard.run_both`):

* the relaxation's bound meets the best schedule known to it (the warm start's or a
  lifted one): every valid schedule costs at least that schedule's objective, so the
  inner search cannot improve on it;
* the inner solve ends with an objective the relaxation's bound already meets.

Nothing crosses between the sides while they run; :func:`~sensaopt.exact.phases.allocation.certify`
then combines them as in the sequential order (the lifted schedules compete with the
inner incumbent, the relaxation's bound certifies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sensaopt.allocations import ExactAllocations
from sensaopt.exact.common import SolveSettings
from sensaopt.exact.outcome import Engine
from sensaopt.exact.phases.allocation import Climb, best_known, search_first
from sensaopt.exact.phases.deadline_hard import run_both
from sensaopt.instance import Instance
from sensaopt.result import Result, Status
from sensaopt.solvers import TimeBudget
from sensaopt.solvers.highs import isolated_runs


@dataclass(frozen=True)
class _Side:
    """One side's end for :func:`run_both`: ``status`` OPTIMAL stops the other side."""

    status: Status
    result: Result | None = None


def with_workers(engine: Engine, settings: SolveSettings, workers: int) -> tuple[Engine, SolveSettings]:
    """``engine`` and ``settings`` with ``workers`` threads."""
    return replace(engine, params=replace(engine.params, workers=workers)), replace(settings, workers=workers)


def inner_beside_relaxation(run_inner: Callable[[Engine, SolveSettings, TimeBudget], Result], objective: float,
                            instance: Instance, H: int, engine: Engine, settings: SolveSettings, budget: TimeBudget,
                            allocs: ExactAllocations, climb: Climb) -> Result:
    """``run_inner`` (the inner solve, on the engine and settings it is given, within a
    budget) beside the relaxation's search from the warm start's ``objective`` (metrics
    units) over the inner horizon ``H`` (rounds), into ``climb`` (updated in place), both
    within ``budget``; the inner solve's Result. ``settings.workers`` >= 2."""
    inner_engine, inner_settings = with_workers(engine, settings, max(settings.workers - 1, 1))
    relax_engine, relax_settings = with_workers(engine, settings, 1)
    mine, theirs = budget.at_most(budget.left()), budget.at_most(budget.left())

    def inner() -> _Side:
        res = run_inner(inner_engine, inner_settings, mine)
        return _Side(Status.OPTIMAL if climb.meets(res.objective) else res.status, res)

    def relax() -> _Side:
        with isolated_runs():
            search_first(objective, instance, H, relax_engine, relax_settings, theirs, allocs, climb)
        return _Side(Status.OPTIMAL if climb.meets(best_known(objective, climb.lifted)) else Status.TIME_LIMIT)

    got, _ = run_both(inner, relax)
    assert got.result is not None
    got.result.params["relax_beside"] = True
    return got.result
