"""Shortfall-first phase 1, the deadline-hard phase 2 and the horizon proof
(``models/formulation.md``: "Shortfall first", "Horizon with a proof")."""

from __future__ import annotations

from pathlib import Path

import pytest

from sensaopt.exact.common import finish_minutes, prepare
from sensaopt.exact.cpsat import build_cpsat
from sensaopt.exact.model.builder import Strength
from sensaopt.exact.model.data import hard_data, open_tiers, shortfall_data
from sensaopt.exact.phases.horizon import horizon_needed
from sensaopt.exact.phases.shortfall import solve_shortfall
from sensaopt.io import load_instance
from sensaopt.result import Status
from sensaopt.solvers import SolverParams, TimeBudget
from sensaopt.solvers.cpsat import run_cpsat
from sensaopt.validator import check_schedule
from sensaopt.warm_start import policy_warm_start

from .conftest import PROOF_S
from .util import grid_optimal

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def _shortfall(name: str, warm: bool = False):
    inst = load_instance(INSTANCES / f"{name}.json")
    prep = prepare(inst, None, 2, True, 10_000, 10**6, policy_warm_start(inst))
    run = lambda mb, b: run_cpsat(mb.backend, b, SolverParams(workers=2))  # noqa: E731
    return prep, solve_shortfall(prep.data, Strength(), build_cpsat, run, TimeBudget.start(20), prep.hint if warm else None)


@pytest.mark.parametrize("warm", [False, True])
def test_shortfall_bound_proves_a_miss(warm):
    """tiny-8gpu's optimum misses one deadline (100115.4): the shortfall bound is > 0."""
    _, out = _shortfall("tiny-8gpu", warm)
    r = out.report
    assert r.status == Status.OPTIMAL and r.bound > 0 and r.proves_miss and not r.zero_miss
    assert out.schedule is None


def test_shortfall_zero_gives_a_zero_miss_schedule():
    prep, out = _shortfall("tiny-16gpu", warm=True)
    assert out.report.zero_miss and out.report.incumbent == 0
    fin = finish_minutes(prep.data.instance, out.schedule)
    for k, d in open_tiers(prep.data):
        jd = prep.data.jobs[k]
        assert fin[jd.id] is not None and fin[jd.id] <= jd.job.deadlines()[d][0] + 1e-9


def test_trimmed_data():
    """Shortfall model: deadline jobs up to their last open deadline slot, others
    without slots; hard model: deadline jobs up to their first open deadline slot."""
    inst = load_instance(INSTANCES / "small-8gpu.json")
    prep = prepare(inst, None, 2, False, 10_000, 10**6, policy_warm_start(inst))
    data = prep.data
    sd, hd = shortfall_data(data), hard_data(data)
    tiers = open_tiers(data)
    assert tiers and sd.tiers == tiers and sd.shortfall and not hd.shortfall
    assert max(data.jobs[k].deadlines[d][0] for k, d in tiers) + 1 == sd.H
    for jd in data.jobs:
        lasts = [jd.deadlines[d][0] for k, d in tiers if k == jd.k]
        if lasts:
            assert sd.end(jd) == max(lasts) + 1 and hd.end(jd) == min(lasts) + 1
        else:
            assert len(sd.slots(jd)) == 0 and hd.end(jd) == data.H


def test_deadline_hard_phase2_reproduces_optimum(exact_backend):
    """tiny-16gpu meets every deadline: shortfall 0, then the deadline-hard trimmed
    model proves the optimum 78.0, globally (no job runs past its deadline slot)."""
    inst = load_instance(INSTANCES / "tiny-16gpu.json")
    res = exact_backend(inst, time_limit=PROOF_S, workers=2)
    assert res.status == Status.OPTIMAL, res.message
    assert res.objective == pytest.approx(78.0, abs=1e-6) and res.bound == pytest.approx(78.0, abs=1e-6)
    assert check_schedule(inst, res.schedule).errors == []
    lex = res.lexicographic
    assert lex is not None and lex.shortfall is not None and lex.shortfall.zero_miss and lex.phase2 == "deadline-hard, trimmed"
    assert res.horizon_proof is not None and res.horizon_proof.contains_optimum and not res.horizon_proof.optimal_within_horizon


@pytest.mark.slow  # over 8 s in the default suite (durations, 2026-12-03)
def test_optimal_within_horizon_flagged():
    """A user-given horizon shorter than the proof needs: OPTIMAL, flagged as optimal
    within that horizon only (no re-solve: the horizon was given)."""
    from sensaopt.solve import solve_cpsat

    inst = load_instance(INSTANCES / "tiny-8gpu.json")
    # SensaScale's warm start: the numbers below are of its model (its allocations join the grid)
    short = solve_cpsat(inst, time_limit=PROOF_S, horizon=24, relax_time_limit=0, start_policy="sensascale")
    assert grid_optimal(short) and short.objective == pytest.approx(100115.4, abs=1e-6)
    assert short.horizon_proof.optimal_within_horizon and short.horizon == 24 and "optimal within a horizon of 24 rounds" in short.message
    assert short.json_params()["optimal_within_horizon"] == 24  # JSON: the proof's horizon
    assert short.horizon_proof is not None and not short.horizon_proof.contains_optimum


@pytest.mark.slow
def test_default_solve_extends_the_horizon_the_proof_needs():
    """The default horizon (24) is shorter than the proof needs: solved again with it,
    the optimum is global."""
    from sensaopt.solve import solve_cpsat

    inst = load_instance(INSTANCES / "tiny-8gpu.json")
    full = solve_cpsat(inst, time_limit=PROOF_S, start_policy="sensascale")  # its makespan + 2 = 24 rounds by default
    assert grid_optimal(full) and full.objective == pytest.approx(100115.4, abs=1e-6)
    proof = full.horizon_proof
    assert proof is not None and proof.needed is not None and proof.contains_optimum and full.horizon >= proof.needed
    assert not full.horizon_proof.optimal_within_horizon and full.horizon_proof.extended_from == 24
    assert full.json_params()["horizon_extended_from"] == 24 and "optimal_within_horizon" not in full.json_params()
    # every job of the optimal schedule ends within what the proof needs
    assert max(s.end for s in full.schedule.segments) <= proof.needed


def test_horizon_needed_monotone():
    inst = load_instance(INSTANCES / "tiny-8gpu.json")
    prep = prepare(inst, None, 2, False, 10_000, 10**6, policy_warm_start(inst))
    a = horizon_needed(prep.data, 100115.4, 1e5)
    assert a >= 1
    assert horizon_needed(prep.data, 100200.0, 1e5) >= a
    assert horizon_needed(prep.data, 100115.4, 0.0) > a  # a weaker loss bound needs a longer horizon


def test_cooperation_partner_takes_over():
    """Deadline-hard phase with a partner: a primary run without incumbent, HiGHS
    started from the complete zero-miss start proves tiny-16gpu's optimum 78.0."""
    from sensaopt.exact.common import SolveSettings
    from sensaopt.exact.model.builder import to_objective
    from sensaopt.exact.outcome import Engine, highs_partner
    from sensaopt.exact.phases.complete import complete_schedule
    from sensaopt.exact.phases.deadline_hard import cooperate
    from sensaopt.solvers import SolveOutcome

    prep, out = _shortfall("tiny-16gpu", warm=True)
    data = hard_data(prep.data)
    whole = complete_schedule(data, out.schedule)
    assert whole is not None and check_schedule(data.instance, whole).ok
    mb = build_cpsat(data, Strength())

    class Nothing(Engine):
        def run(self, mb, budget):
            return SolveOutcome(status=Status.TIME_LIMIT, value=None, objective=None, bound=None, message="stub", wall_s=0.0)

    nothing = Nothing("cpsat", SolverParams())
    best_mb, res, record = cooperate(mb, nothing, highs_partner(2, 0), SolveSettings(), TimeBudget.start(30), whole)
    assert best_mb is not mb and res.status == Status.OPTIMAL
    assert to_objective(data, res.objective) == pytest.approx(78.0, abs=1e-6)
    assert record.partner == "highs" and record.partner_run is not None and record.partner_run.status == Status.OPTIMAL


def test_cooperating_solve_keeps_the_optimum():
    from sensaopt.solve import solve_cpsat

    inst = load_instance(INSTANCES / "tiny-16gpu.json")
    res = solve_cpsat(inst, time_limit=PROOF_S, cooperate=True)
    assert res.status == Status.OPTIMAL and res.objective == pytest.approx(78.0, abs=1e-6)
    coop = res.lexicographic.cooperation if res.lexicographic is not None else None
    assert coop is not None and coop.primary_run.status == Status.OPTIMAL


def test_unfinished_shortfall_schedule_is_completed():
    """tiny-8gpu's shortfall incumbent leaves a job unfinished at its deadline: the
    greedy completion continues it and adds the rest; the result is valid and complete."""
    from sensaopt.exact.phases.complete import complete_schedule

    prep, out = _shortfall("tiny-8gpu", warm=True)
    assert out.best is not None and out.schedule is None
    unfinished = [j for j, f in finish_minutes(prep.data.instance, out.best).items() if f is None]
    assert unfinished
    whole = complete_schedule(prep.data, out.best)
    assert whole is not None
    ev = check_schedule(prep.data.instance, whole)
    assert ev.ok and all(f is not None for f in finish_minutes(prep.data.instance, whole).values())


def test_zero_miss_warm_start_settles_the_shortfall_without_a_model():
    """tiny-16gpu's warm start meets every open deadline: phase 1 is decided by it, no
    model built; tiny-8gpu's misses one, so its model is built as before."""
    def never(*a, **k):
        raise AssertionError("the shortfall model was built")

    inst = load_instance(INSTANCES / "tiny-16gpu.json")
    prep = prepare(inst, None, 2, True, 10_000, 10**6, policy_warm_start(inst))
    out = solve_shortfall(prep.data, Strength(), never, never, TimeBudget.start(5), prep.hint)
    assert out.report.zero_miss and out.report.status == Status.OPTIMAL and out.report.bound == 0
    assert out.schedule is prep.hint and "without a solve" in out.report.message
    bad = load_instance(INSTANCES / "tiny-8gpu.json")
    prep = prepare(bad, None, 2, True, 10_000, 10**6, policy_warm_start(bad))
    with pytest.raises(AssertionError, match="was built"):
        solve_shortfall(prep.data, Strength(), never, never, TimeBudget.start(5), prep.hint)


def test_shortfall_model_size_is_guarded():
    """A shortfall model larger than max_vars is skipped (None: the loss phases run)."""
    inst = load_instance(INSTANCES / "tiny-8gpu.json")
    prep = prepare(inst, None, 2, False, 10_000, 10**6, policy_warm_start(inst))
    run = lambda mb, b: run_cpsat(mb.backend, b, SolverParams(workers=1))  # noqa: E731
    sd = shortfall_data(prep.data)
    assert sd.estimate_vars() > 0
    assert solve_shortfall(prep.data, Strength(), build_cpsat, run, TimeBudget.start(5), None, sd.estimate_vars() - 1) is None
    assert solve_shortfall(prep.data, Strength(), build_cpsat, run, TimeBudget.start(5), None, sd.estimate_vars()) is not None


@pytest.mark.parametrize("workers,mode", [(1, "sequential"), (2, "parallel")])
def test_cooperation_mode_follows_the_workers(workers, mode):
    """One worker: the partner after the primary; two: side by side, one core each
    (issue 33 item 4). Either way the optimum of tiny-16gpu is kept."""
    from sensaopt.solve import solve_cpsat

    inst = load_instance(INSTANCES / "tiny-16gpu.json")
    res = solve_cpsat(inst, time_limit=PROOF_S, cooperate=True, workers=workers)
    coop = res.lexicographic.cooperation
    assert coop is not None and coop.mode == mode and coop.partner == "highs"
    assert res.objective == pytest.approx(78.0, abs=1e-6) and res.bound <= res.objective + 1e-9
    if mode == "parallel":
        assert coop.partner_run is not None  # both ran, whichever proved first


def test_run_both_returns_both_and_raises_either_error():
    from sensaopt.exact.phases.deadline_hard import run_both

    assert run_both(lambda: 1, lambda: 2) == (1, 2)

    def boom():
        raise RuntimeError("partner failed")

    with pytest.raises(RuntimeError, match="partner failed"):
        run_both(lambda: 1, boom)


def _outcome(status):
    from sensaopt.solvers.base import SolveOutcome

    return SolveOutcome(status=status, value=None, objective=1.0, bound=1.0, message="", wall_s=0.0)


@pytest.mark.parametrize("status, stops", [(Status.OPTIMAL, True), (Status.INFEASIBLE, True), (Status.TIME_LIMIT, False)])
def test_run_both_stops_the_other_side_once_one_proves(status, stops):
    import threading

    from sensaopt.exact.phases.deadline_hard import run_both
    from sensaopt.solvers.interrupt import run_stoppable

    stopped = threading.Event()

    def searching():  # a search that ends when stopped from outside, or after 30 s (a guard against a hang)
        return run_stoppable(lambda: "stopped" if stopped.wait(30.0 if stops else 0.5) else "ran out", stopped.set)

    def proving():
        return _outcome(status)

    for first, second in ((proving, searching), (searching, proving)):
        stopped.clear()
        a, b = run_both(first, second)
        other = b if first is proving else a
        assert other == ("stopped" if stops else "ran out")
