"""The relaxation's search beside the inner solve (``relax_beside``,
:mod:`sensaopt.exact.phases.beside`): each side stops the other when it leaves it
nothing to do, and each gets its share of the threads."""

from __future__ import annotations

from dataclasses import replace

import pytest

import sensaopt
from sensaopt.allocations import exact_allocations
from sensaopt.exact.outcome import Engine, exact_params
from sensaopt.exact.phases import beside
from sensaopt.exact.phases.allocation import Climb
from sensaopt.exact.settings import SolveSettings
from sensaopt.result import Result, Status
from sensaopt.solvers import TimeBudget
from sensaopt.solvers.interrupt import cancel_event

WAIT_S = 120.0  # a hang guard only: the other side returns at once; the test fails rather than hangs


def _setup():
    inst = sensaopt.load_instance("tiny-8gpu")
    start = sensaopt.simulate(inst, "sensascale").schedule
    allocs = exact_allocations(inst, start, refine=1, inner_refine=1, relax_refines=(1,))
    engine = Engine("highs", exact_params("highs", 3, 0))
    return inst, allocs, engine


def _result(inst, objective: float) -> Result:
    """A Result with ``objective`` (the heuristic's, relabelled: only the objective is read)."""
    return replace(sensaopt.simulate(inst, "sensascale"), status=Status.TIME_LIMIT, objective=objective)


@pytest.mark.parametrize("relaxation_proves", [True, False])
def test_each_side_stops_the_other_when_it_is_done(monkeypatch, relaxation_proves):
    """The relaxation's bound meeting the best known schedule stops the inner side; the
    inner side ending at an objective the bound meets stops the relaxation's side. The
    inner side runs on workers - 1 threads, the relaxation's on one."""
    inst, allocs, engine = _setup()
    climb = Climb(bound=10.0, how="test", floor=0.0, step=0.05)
    seen = {}

    def relaxation(objective, instance, H, engine, settings, budget, allocs, climb):
        seen["relax_workers"] = (engine.params.workers, settings.workers)
        if relaxation_proves:
            climb.bound = objective  # proves the warm start optimal
            return None
        seen["relax_stopped"] = cancel_event().wait(WAIT_S)
        return None

    def inner(engine, settings, budget):
        seen["inner_workers"] = (engine.params.workers, settings.workers)
        if relaxation_proves:
            seen["inner_stopped"] = cancel_event().wait(WAIT_S)
            return _result(inst, 20.0)
        climb.bound = 12.0  # what the relaxation's root LP proved meanwhile
        return _result(inst, 12.0)  # met by the bound: the relaxation's side has nothing left to do

    monkeypatch.setattr(beside, "search_first", relaxation)
    settings = SolveSettings(workers=3)
    res = beside.inner_beside_relaxation(inner, 20.0, inst, 10, engine, settings, TimeBudget.start(60), allocs, climb)
    assert res.params["relax_beside"] is True
    assert seen["inner_workers"] == (2, 2) and seen["relax_workers"] == (1, 1)
    key = "inner_stopped" if relaxation_proves else "relax_stopped"
    assert seen[key] is True  # stopped by the other side, not by the wait's timeout
