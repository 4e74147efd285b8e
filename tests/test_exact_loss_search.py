"""Price and branch before the loss phases (``models/formulation.md``, "Price and branch from
the start"): on the whole model, whose columns' costs carry the deadlines' values, from the
warm start; the loss phases start from its schedule and never return worse."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from sensaopt.exact.common import WarmStart, prepare
from sensaopt.exact import pipeline
from sensaopt.exact.phases.loss import keep_searched
from sensaopt.exact.phases.price_branch import price_and_branch
from sensaopt.io import load_instance
from sensaopt.result import Status
from sensaopt.simulator import simulate
from sensaopt.solve import solve
from sensaopt.solvers import TimeBudget
from sensaopt.validator import check_schedule
from sensaopt.warm_start import policy_warm_start

REPO = Path(__file__).resolve().parents[1]


def _small8():
    return load_instance(REPO / "instances" / "small-8gpu.json")


def test_price_and_branch_on_the_whole_model_returns_a_valid_schedule_no_worse_than_its_start():
    inst = _small8()  # no zero-miss schedule is known to the policies: SensaScale misses 4
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))
    assert any(jd.deadlines for jd in prep.data.jobs) and prep.hint is not None
    out = price_and_branch(prep.data, prep.hint, TimeBudget(10.0, time.perf_counter()))
    assert out is not None and out.objective <= out.start + 1e-9
    assert not check_schedule(inst, out.schedule).errors


def test_the_loss_phases_start_from_it_and_never_return_worse(monkeypatch):
    monkeypatch.setattr(pipeline, "zero_miss_start", lambda *a: None)  # the loss phases, whatever phase 0 finds
    res = solve(_small8(), "cpsat", time_limit=15, workers=1, seed=0)
    pb = res.lexicographic.price_branch
    assert not res.lexicographic.skipped and pb is not None and pb.objective <= pb.start + 1e-9
    assert res.objective is not None and res.objective <= pb.objective + 1e-9
    assert res.status != Status.OPTIMAL or res.bound >= res.objective - 1e-6


@pytest.mark.parametrize("option", [{"colgen_share": 0}, {"budget": "work:5"}], ids=["off", "work-budget"])
def test_the_loss_phases_run_it_only_when_on_and_on_the_clock(monkeypatch, option):
    monkeypatch.setattr(pipeline, "zero_miss_start", lambda *a: None)
    res = solve(_small8(), "cpsat", time_limit=5, workers=1, seed=0, **option)
    assert res.lexicographic is not None and res.lexicographic.price_branch is None
    assert res.params.get("start") != "price and branch"


def test_a_lower_schedule_of_price_and_branch_replaces_the_solvers_answer():
    inst = _small8()
    worse, better = sorted((simulate(inst, p) for p in ("edf", "sensascale")), key=lambda r: -r.objective)
    assert better.objective < worse.objective
    claimed = dataclasses.replace(worse, status=Status.OPTIMAL, bound=50.0)
    got = keep_searched(claimed, WarmStart.of(inst, better.schedule))
    assert got.objective == WarmStart.of(inst, better.schedule).objective and got.status == Status.FEASIBLE
    assert got.bound == 50.0 and "price and branch" in got.message and got.params["incumbent_from"] == "price and branch"
    assert keep_searched(got, WarmStart.of(inst, worse.schedule)) is got  # a higher schedule changes nothing
    assert keep_searched(got, None) is got
