"""Ruin and recreate over whole job columns (:mod:`sensaopt.exact.decompositions.recreate`)."""

from __future__ import annotations

import inspect
import math
import random
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sensaopt.exact.common import prepare
from sensaopt.exact.decompositions import recreate
from sensaopt.exact.decompositions.colgen import Master, schedule_of_columns
from sensaopt.exact.decompositions.recreate import STALL_PER_PAIR, JobCells, cheapest_fit, ruin_and_recreate, stall_moves
from sensaopt.exact.model.builder import to_objective
from sensaopt.exact.model.data import hard_data
from sensaopt.exact.phases.lns import score
from sensaopt.io import load_instance
from sensaopt.warm_start import policy_warm_start

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def master():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))
    m = Master(hard_data(prep.data, grow=True), prep.heuristic.schedule)
    assert len(m.seeded) == m.data.n
    return m


def _fits(m: Master, cols) -> bool:
    used = np.zeros(m.n_rows)
    for c in cols:
        idx, val = m.use(c)
        np.add.at(used, idx, val)
    return bool(np.all(used <= m.cap + 1e-9))


def _late(m: Master):
    """A valid but needlessly late solution: the start's columns, with job 0 re-inserted
    as its cheapest column in the capacity the others leave when every capacity row of
    the first four slots is priced far above any completion cost."""
    cols = [m.columns[i] for i in m.seeded]
    used = np.zeros(m.n_rows)
    for c in cols[1:]:
        idx, val = m.use(c)
        np.add.at(used, idx, val)
    prices = np.array([1e6 if slot < 4 else 0.0 for (_, slot, _), _ in sorted(m.rows.index.items(), key=lambda kv: kv[1])])
    late = cheapest_fit(m, JobCells(m, 0), used, prices)
    assert late is not None and late.cost > cols[0].cost
    return [late, *cols[1:]]


def test_from_the_start_it_returns_one_fitting_column_per_job_never_dearer(master):
    start = [master.columns[i] for i in master.seeded]
    out = ruin_and_recreate(master, start, math.inf, seed=0, max_moves=300, stall=0)  # 300 moves, never a stall
    assert out.moves == 300
    assert sorted(c.k for c in out.columns) == list(range(master.data.n))
    assert out.cost == sum(c.cost for c in out.columns) <= sum(c.cost for c in start)
    assert _fits(master, out.columns)
    obj = score(master.data, schedule_of_columns(master.data, out.columns))  # the validator accepts it
    assert obj == pytest.approx(to_objective(master.data, out.cost))


@pytest.mark.parametrize("seed", [0, 1])
def test_it_pulls_a_needlessly_late_solution_earlier(master, seed):
    """From jobs pushed past the first four slots, re-inserting any of them in the
    capacity the others leave finds an earlier completion: the cost must drop."""
    late = _late(master)
    assert _fits(master, late)
    out = ruin_and_recreate(master, late, math.inf, seed=seed, max_moves=200, row_prices=master.row_prices())
    assert out.improving >= 1 and out.cost < sum(c.cost for c in late)
    assert _fits(master, out.columns)
    assert score(master.data, schedule_of_columns(master.data, out.columns)) is not None


def test_a_full_row_bans_the_pairs_that_would_overflow_it(master):
    """``cheapest_fit`` never returns a column that overflows the capacity left."""
    k = 0
    used = master.cap.copy()
    used[:] = 0.0
    col = cheapest_fit(master, JobCells(master, k), used, None)
    assert col is not None
    idx, _ = master.use(col)
    used[idx] = master.cap[idx]  # every row that column uses is full now
    other = cheapest_fit(master, JobCells(master, k), used, None)
    assert other is None or not set(master.use(other)[0].tolist()) & set(idx.tolist())


def test_it_stops_on_time_and_refuses_a_partial_solution(master):
    start = [master.columns[i] for i in master.seeded]
    out = ruin_and_recreate(master, start, time.monotonic() - 1.0)
    assert out.moves == 0 and out.cost == sum(c.cost for c in start)
    with pytest.raises(ValueError, match="one column per job"):
        ruin_and_recreate(master, start[1:], math.inf, max_moves=1)


def test_it_stops_when_it_stalls_or_has_enough(master):
    start = [master.columns[i] for i in master.seeded]
    out = ruin_and_recreate(master, start, math.inf, seed=0, stall=5)
    assert out.moves - out.last_improving == max(5, out.last_improving)  # a run without a lower cost: ≥ 5, ≥ the moves before
    assert ruin_and_recreate(master, start, math.inf, enough=lambda cost: True).moves == 0
    out = ruin_and_recreate(master, start, math.inf, seed=0)  # the default: 10 moves per pair of jobs
    n = master.data.n
    assert out.moves - out.last_improving == max(STALL_PER_PAIR * n * (n - 1) // 2, 1, out.last_improving)
    late = _late(master)
    first = sum(c.cost for c in late)
    out = ruin_and_recreate(master, late, math.inf, seed=0, max_moves=500, enough=lambda cost: cost < first)
    assert out.improving == 1 and out.moves == out.last_improving and out.cost < first


def test_the_default_stall_grows_with_the_pairs_of_jobs():
    assert [stall_moves(n) for n in (1, 2, 8, 20, 40)] == [1, 10, 280, 1900, 7800]
    assert stall_moves(40, 7) == 7 and stall_moves(40, 0) is None and stall_moves(1, 3) == 3


def _uses(slots_per_job: dict[int, list[int]]) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """Columns using one row per listed slot (row r is slot r) and the rows' slots."""
    uses = {k: (np.asarray(sl, dtype=np.int64), np.ones(len(sl))) for k, sl in slots_per_job.items()}
    return uses, np.arange(12, dtype=np.int64)


def test_the_ruin_by_time_takes_the_anchor_and_the_jobs_running_nearest_one_of_its_slots():
    uses, row_slot = _uses({0: [5], 1: [0, 1], 2: [4], 3: [6, 7], 4: [10, 11], 5: []})
    anchors = set()
    for seed in range(40):
        anchor = random.Random(seed).randrange(len(uses))
        picked = recreate._near_in_time(random.Random(seed), uses, row_slot, 3)
        assert picked[0] == anchor and len(set(picked)) == 3
        anchors.add(anchor)
        if anchor == 0:  # its only slot is 5: jobs 2 (slot 4) and 3 (slot 6) are 1 slot away, every other more
            assert set(picked[1:]) == {2, 3}
        if anchor == 1:  # slot 0 or 1: job 2 (slot 4) then job 0 (slot 5)
            assert picked[1:] == [2, 0]
        if anchor == 4:  # slot 10 or 11: job 3 (slot 7) then job 0 (slot 5)
            assert picked[1:] == [3, 0]
    assert {0, 1, 4} <= anchors


def test_a_column_without_rows_is_the_farthest_in_time():
    uses, row_slot = _uses({0: [3], 1: [], 2: [11]})
    seeds = [seed for seed in range(30) if random.Random(seed).randrange(3) == 0]
    assert seeds
    for seed in seeds:
        assert recreate._near_in_time(random.Random(seed), uses, row_slot, 3) == [0, 2, 1]


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_the_time_share_picks_the_ruin_of_each_move(master, share, monkeypatch):
    """``time_share`` 0: every move ruins related jobs, with no draw for the choice (the
    random stream of the search before the ruin by time); 1: every move ruins by time;
    0.5: both, and the search still returns one fitting column per job."""
    calls: list[str] = []
    near, related = recreate._near_in_time, recreate._related
    monkeypatch.setattr(recreate, "_near_in_time", lambda *a: calls.append("time") or near(*a))
    monkeypatch.setattr(recreate, "_related", lambda *a: calls.append("related") or related(*a))
    start = [master.columns[i] for i in master.seeded]
    out = ruin_and_recreate(master, start, math.inf, seed=3, max_moves=60, stall=0, time_share=share)
    assert out.moves == 60 and len(calls) == 60 and _fits(master, out.columns)
    if share == 0.0:
        assert set(calls) == {"related"}
    else:
        assert set(calls) == ({"time"} if share == 1.0 else {"time", "related"})
    with pytest.raises(ValueError, match="time_share"):
        ruin_and_recreate(master, start, math.inf, max_moves=1, time_share=1.5)


def test_at_time_share_zero_the_ruin_draws_what_the_related_ruin_alone_draws():
    uses, row_slot = _uses({0: [0], 1: [1, 2], 2: [2], 3: [5]})
    for seed in range(10):
        a, b = random.Random(seed), random.Random(seed)
        assert recreate._ruin(a, uses, row_slot, 2, 0.0) == recreate._related(b, uses, len(row_slot), 2)
        assert a.getstate() == b.getstate()


def test_the_default_share_of_moves_ruined_by_time_is_one_half(master, ruin_shares):
    assert recreate.TIME_SHARE == 0.5
    assert inspect.signature(ruin_and_recreate).parameters["time_share"].default is None
    ruin_and_recreate(master, [master.columns[i] for i in master.seeded], math.inf, max_moves=5, stall=0)
    assert ruin_shares == {recreate.TIME_SHARE}


def _without_room(monkeypatch):
    """Ruin and recreate as before its cost cut: every re-inserted job priced to the end."""
    real = recreate._recreate

    def full(master, cells, order, left, prices, room=None, floor=None):
        return real(master, cells, order, left, prices)

    monkeypatch.setattr(recreate, "_recreate", full)


@pytest.mark.parametrize("instance", ["tiny-16gpu", "small-8gpu"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_cost_cut_changes_no_move(instance, seed, monkeypatch):
    """Stopping a move's re-insertion once it cannot be kept (``room``, ``floor``,
    ``cheapest_fit``'s ``most``) leaves every move's outcome as it was: the same columns,
    cost and counts after the same number of moves, from a needlessly late start."""
    inst = load_instance(REPO / "instances" / f"{instance}.json")
    inst = replace(inst, jobs=tuple(replace(j, deadline=None) for j in inst.jobs))  # every start fits the hard model
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst, "lst"))
    m = Master(hard_data(prep.data, grow=True), prep.heuristic.schedule)
    start = [m.columns[i] for i in m.seeded]
    m.solve(time.monotonic() + 5, lagrangian=False)
    prices = m.row_prices()  # moves with tie prices (no cut) and without (the cut) both run
    kwargs = {"seed": seed, "row_prices": prices, "max_moves": 300, "stall": 0}
    cut = ruin_and_recreate(m, start, math.inf, **kwargs)  # no clock: both end after the same 300 moves
    with monkeypatch.context() as mp:
        _without_room(mp)
        full = ruin_and_recreate(m, start, math.inf, **kwargs)
    assert (cut.cost, cut.moves, cut.improving, cut.last_improving) == (full.cost, full.moves, full.improving, full.last_improving)
    assert cut.columns == full.columns
    assert cut.moves == 300 and cut.improving > 0  # the search moved: the comparison is not empty
