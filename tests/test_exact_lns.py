"""Large-neighbourhood search (``sensaopt.exact.phases.lns``; ``models/formulation.md``,
"Large-neighbourhood search"): a primal heuristic on the exact model whose schedules are
validated and never worse than its start, and whose record reaches the Result typed."""

from __future__ import annotations

import random

import pytest

import sensaopt
from sensaopt.allocations import schedule_points
from sensaopt.exact.model.builder import spec_of
from sensaopt.exact.model.data import build_data, hard_data
from sensaopt.exact.phases.lns import improve, neighbourhood, score
from sensaopt.result import Result
from sensaopt.simulator import simulate
from sensaopt.solvers.budget import TimeBudget


def _data(name: str, policy: str = "lst"):
    """The instance, a zero-miss policy's result on it (``lst``: 96.33 on tiny-16gpu, the
    optimum is 78) and the deadline-hard model data of that horizon."""
    inst = sensaopt.load_instance(name)
    h = simulate(inst, policy)
    extra = schedule_points(h.schedule)  # its allocations, as the pipeline adds the warm start's
    return inst, h, hard_data(build_data(inst, h.schedule.num_rounds + 2, inner_refine=1, extra_options=extra), grow=True)


def test_neighbourhood_has_the_size_and_the_anchor_s_node_mates_first():
    _, h, data = _data("small-16gpu", "sensascale")
    ids = {jd.id for jd in data.jobs}
    for seed in range(5):
        free = neighbourhood(data, h.schedule, random.Random(seed), 6)
        assert len(free) == 6 and free <= ids


@pytest.mark.slow  # over 8 s in the default suite (durations, 2026-12-03)
def test_improve_returns_a_valid_schedule_no_worse_than_its_start():
    inst, h, data = _data("tiny-16gpu")
    # a work budget (3 CP-SAT units, 600 s safety net): the rounds run do not depend on the machine's load
    out = improve(data, [h.schedule], spec_of(None), TimeBudget.start(600, work=3), seed=1, size=3)
    assert out.start == pytest.approx(h.objective)
    assert out.objective <= out.start + 1e-9
    assert score(data, out.schedule) == pytest.approx(out.objective)
    assert out.rounds >= 1


def test_improve_takes_the_better_start():
    inst, h, data = _data("tiny-16gpu")
    better = simulate(inst, "sensascale")
    assert better.objective < h.objective
    out = improve(data, [h.schedule, better.schedule], spec_of(None), TimeBudget.start(3), seed=0)
    assert out.start == pytest.approx(better.objective)


def test_improve_refuses_an_invalid_start():
    inst, h, data = _data("tiny-16gpu")
    broken = type(h.schedule)(segments=h.schedule.segments[1:], round_minutes=h.schedule.round_minutes)
    with pytest.raises(ValueError, match="not valid"):
        improve(data, [broken], spec_of(None), TimeBudget.start(2))


def test_lns_report_reaches_the_result_and_round_trips():
    inst = sensaopt.load_instance("tiny-16gpu")
    res = sensaopt.solve(inst, solver="cpsat", time_limit=30, workers=1, lns_share=0.3)
    lns = res.lexicographic.lns
    assert lns is not None and lns.objective <= lns.start + 1e-9
    back = Result.from_dict(res.to_dict())
    assert back.lexicographic.lns == lns
    assert res.objective <= simulate(inst, "sensascale").objective + 1e-9
