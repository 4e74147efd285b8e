"""Price and branch from the start before the deadline-hard solve
(:mod:`sensaopt.exact.phases.price_branch`, ``colgen_share``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sensaopt.exact.common import SEARCHES_NOTE, WarmStart, prepare
from sensaopt.exact.decompositions.colgen import Master, schedule_of_columns
from sensaopt.exact.decompositions.recreate import STALL_PER_PAIR, TIME_SHARE, RecreateOutcome, stall_moves
from sensaopt.exact.model.data import hard_data
from sensaopt.exact.phases.price_branch import price_and_branch
from sensaopt.exact.settings import COLGEN_MIPS
from sensaopt.io import load_instance
from sensaopt.result import LexicographicReport
from sensaopt.solve import solve
from sensaopt.solvers import TimeBudget
from sensaopt.validator import check_schedule
from sensaopt.warm_start import policy_warm_start

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny16():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))
    return prep, hard_data(prep.data, grow=True)


@pytest.mark.parametrize("mip", ["cpsat", "highs"])
def test_the_restricted_master_from_the_start_returns_at_worst_the_start(tiny16, mip):
    """With only the start's columns (no pricing), the MIP from the start can return
    nothing but the start's columns: one per job, a valid schedule of the start's value."""
    prep, data = tiny16
    master = Master(data, prep.heuristic.schedule)
    assert len(master.seeded) == data.n
    chosen = master.restricted_cpsat(5.0, from_start=True) if mip == "cpsat" else master.restricted_mip(5.0, from_start=True)
    assert chosen is not None and len(chosen) == data.n
    assert sorted(c.k for c in chosen) == list(range(data.n))
    assert sum(c.cost for c in chosen) == sum(master.columns[i].cost for i in master.seeded)
    assert not check_schedule(data.instance, schedule_of_columns(data, chosen)).errors


@pytest.mark.parametrize("mip", COLGEN_MIPS)
def test_price_and_branch_never_returns_worse_than_its_start_and_always_valid(tiny16, mip):
    prep, data = tiny16
    start = prep.heuristic
    out = price_and_branch(data, start.schedule, TimeBudget(20.0, time.perf_counter()), mip=mip)
    assert out is not None and out.start == pytest.approx(start.objective)
    assert out.objective <= start.objective
    ev = check_schedule(data.instance, out.schedule)
    assert not ev.errors
    assert WarmStart.of(data.instance, out.schedule).objective == pytest.approx(out.objective)
    assert out.improved == (out.objective < start.objective - 1e-9)


def test_price_and_branch_keeps_a_start_it_cannot_beat(tiny16, monkeypatch):
    """A restricted master that yields nothing and a ruin and recreate that moves
    nothing leave the start as it was."""
    from sensaopt.exact.phases import price_branch

    prep, data = tiny16
    monkeypatch.setattr(Master, "restricted_cpsat", lambda self, seconds, from_start=False, seed=0, hint=None, workers=1: None)
    monkeypatch.setattr(Master, "restricted_mip", lambda self, seconds, from_start=False: None)
    monkeypatch.setattr(price_branch, "ruin_and_recreate", lambda master, cols, stop_at, seed, prices, **_: RecreateOutcome(
        cols, sum(c.cost for c in cols), 0, 0, 0, 0.0))
    start = prep.heuristic
    out = price_and_branch(data, start.schedule, TimeBudget(5.0, time.perf_counter()))
    assert out is not None and out.schedule is start.schedule and out.objective == pytest.approx(start.objective)
    assert not out.improved and out.mip_objective is None


def test_without_a_restricted_master_answer_ruin_and_recreate_starts_from_the_starts_columns(tiny16, monkeypatch):
    prep, data = tiny16
    monkeypatch.setattr(Master, "restricted_cpsat", lambda self, seconds, from_start=False, seed=0, hint=None, workers=1: None)
    monkeypatch.setattr(Master, "restricted_mip", lambda self, seconds, from_start=False: None)
    start = prep.heuristic
    out = price_and_branch(data, start.schedule, TimeBudget(3.0, time.perf_counter()))
    assert out is not None and out.mip_objective is None and out.moves > 0
    assert out.objective <= start.objective and not check_schedule(data.instance, out.schedule).errors


def test_ruin_and_recreate_starts_from_the_restricted_masters_answer(tiny16):
    prep, data = tiny16
    out = price_and_branch(data, prep.heuristic.schedule, TimeBudget(6.0, time.perf_counter()))
    assert out is not None and out.mip_objective is not None and out.moves > 0
    assert out.objective <= min(out.mip_objective, out.start) + 1e-9
    assert out.improving <= out.moves


@pytest.mark.parametrize(("workers", "cpsat_workers", "expected"), [(1, None, 1), (2, None, 2), (1, 3, 3)])
def test_the_solves_threads_reach_the_restricted_master_on_cpsat(workers, cpsat_workers, expected, monkeypatch):
    """Price and branch's CP-SAT restricted master gets CP-SAT's workers of the solve
    (``cpsat_workers``, else ``workers``; on the 40-job Philly windows the second core
    lowers its answer, ``models/measurements.md``, session 30)."""
    seen: list[int] = []
    real = Master.restricted_cpsat

    def spy(self, seconds, from_start=False, seed=0, hint=None, workers=1):
        seen.append(workers)
        return real(self, seconds, from_start=from_start, seed=seed, hint=hint, workers=workers)

    monkeypatch.setattr(Master, "restricted_cpsat", spy)
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    res = solve(inst, "cpsat", time_limit=20, workers=workers, cpsat_workers=cpsat_workers, colgen_share=0.3, colgen_mip="cpsat")
    assert res.lexicographic is not None and res.lexicographic.price_branch is not None
    assert seen and set(seen) == {expected}
    assert not check_schedule(inst, res.schedule).errors


def test_the_solve_records_it_and_its_report_round_trips():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    res = solve(inst, "cpsat", time_limit=20, workers=1, colgen_share=0.3)
    assert res.lexicographic is not None and res.lexicographic.price_branch is not None
    pb = res.lexicographic.price_branch
    assert pb.objective <= pb.start and pb.mip == "highs+cpsat"
    assert res.objective is not None and res.objective <= pb.objective + 1e-9
    back = LexicographicReport.from_dict(res.lexicographic.to_dict())
    assert back.price_branch == pb
    old = res.lexicographic.to_dict()
    del old["price_branch"]["mip"]  # a record from before session 26
    for key in ("mip_objective", "moves", "improving"):  # and from before session 31
        del old["price_branch"][key]
    back = LexicographicReport.from_dict(old).price_branch
    assert back.mip == "highs" and back.mip_objective is None and back.moves == 0
    assert pb.moves > 0 and pb.improving <= pb.moves


def test_it_runs_by_default_but_not_when_off_or_under_a_work_budget():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    assert solve(inst, "cpsat", time_limit=20, workers=1).lexicographic.price_branch is not None
    assert solve(inst, "cpsat", time_limit=20, workers=1, colgen_share=0).lexicographic.price_branch is None
    res = solve(inst, "cpsat", time_limit=20, workers=1, budget="work:20")
    assert res.lexicographic.price_branch is None


def _recreate_arguments(monkeypatch, option: dict) -> tuple[list[tuple[int | None, float]], object, object]:
    """The (stall, time_share) that price and branch hands ruin and recreate in a solve of
    tiny-16gpu with ``option`` (each search cut at 50 moves), the instance and the result."""
    from sensaopt.exact.phases import price_branch

    seen: list[tuple[int | None, float]] = []
    real = price_branch.ruin_and_recreate

    def spy(master, cols, stop_at, seed, prices, stall, enough, time_share):
        seen.append((stall, time_share))
        return real(master, cols, stop_at, seed, prices, max_moves=50, stall=stall, enough=enough, time_share=time_share)

    monkeypatch.setattr(price_branch, "ruin_and_recreate", spy)
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    return seen, inst, solve(inst, "cpsat", time_limit=20, workers=1, colgen_share=0.3, **option)


@pytest.mark.parametrize(("option", "expected"), [({}, None), ({"recreate_stall": 7}, 7), ({"recreate_stall": 0}, 0)])
def test_the_solves_recreate_stall_reaches_ruin_and_recreate(option, expected, monkeypatch):
    """``recreate_stall`` is the stall of price and branch's ruin and recreate (unset: 10
    moves per pair of jobs; 0: none, the search runs until its share is spent; here cut
    at 50 moves)."""
    seen, inst, res = _recreate_arguments(monkeypatch, option)
    assert [stall for stall, _ in seen] == [expected]
    n = len(inst.jobs)
    assert stall_moves(n, seen[0][0]) == {None: STALL_PER_PAIR * n * (n - 1) // 2, 7: 7, 0: None}[expected]
    assert not check_schedule(inst, res.schedule).errors
    with pytest.raises(Exception, match="recreate_stall"):
        solve(inst, "cpsat", time_limit=5, workers=1, recreate_stall=-1)


def test_a_bad_share_is_refused():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    with pytest.raises(Exception, match="colgen_share"):
        solve(inst, "cpsat", time_limit=5, workers=1, colgen_share=1.5)


def test_the_restricted_master_after_pricing_is_one_valid_column_per_job_with_either_solver(tiny16):
    """After column generation, CP-SAT's and HiGHS's restricted masters each pick one
    column per job, within capacity (the validator accepts the schedule), at no more than
    the start's cost; when HiGHS proved its answer optimal over the columns, CP-SAT's is
    no cheaper (no proof within the time limit is asserted)."""
    prep, data = tiny16
    master = Master(data, prep.heuristic.schedule)
    master.solve(time.monotonic() + 20, lagrangian=False)
    start_cost = sum(master.columns[i].cost for i in master.seeded)
    costs = []
    for chosen in (master.restricted_cpsat(10.0, from_start=True), master.restricted_mip(10.0, from_start=True)):
        assert chosen is not None and sorted(c.k for c in chosen) == list(range(data.n))
        assert not check_schedule(data.instance, schedule_of_columns(data, chosen)).errors
        costs.append(sum(c.cost for c in chosen))
    assert costs[0] <= start_cost and costs[1] <= start_cost
    if master.mip_proven:
        assert costs[1] <= costs[0]


class _Misreporting:
    """A HiGHS object whose reported objective is 200 below its answer's cost (as HiGHS
    1.16 did on the 40-job window w18 after presolve): every other call goes through."""

    def __init__(self, h):
        object.__setattr__(self, "_h", h)

    def __getattr__(self, name):
        return getattr(self._h, name)

    def __setattr__(self, name, value):
        setattr(self._h, name, value)

    def getInfo(self):  # noqa: N802 (highspy's name)
        class Info:
            objective_function_value = self._h.getInfo().objective_function_value - 200.0
        return Info()


@pytest.mark.parametrize("misreport", [False, True])
def test_a_highs_proof_counts_only_when_its_objective_is_its_answers_cost(tiny16, misreport):
    """``mip_proven`` needs HiGHS's OPTIMAL and its reported objective equal to the cost of
    the columns it returns; a misreported one leaves the answer (a valid schedule) unproven,
    so price and branch goes on with CP-SAT."""
    prep, data = tiny16
    master = Master(data, prep.heuristic.schedule)
    master.solve(time.monotonic() + 20, lagrangian=False)
    if misreport:
        master.h = _Misreporting(master.h)
    chosen = master.restricted_mip(30.0, from_start=True)
    assert chosen is not None and not check_schedule(data.instance, schedule_of_columns(data, chosen)).errors
    if misreport:
        assert master.mip_proven is False
    elif master.mip_proven:  # no proof within the limit is asserted; a proof's answer is no dearer than CP-SAT's
        other = master.restricted_cpsat(30.0, from_start=True)
        assert other is None or sum(c.cost for c in chosen) <= sum(c.cost for c in other)


def test_a_bad_restricted_master_solver_is_refused():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    with pytest.raises(Exception, match="colgen_mip"):
        solve(inst, "cpsat", time_limit=5, workers=1, colgen_mip="gurobi")


@pytest.mark.parametrize("settled", [True, False])
def test_no_solver_runs_once_a_bound_proven_before_settles_price_and_branchs_schedule(settled):
    """``settled`` (the pipeline's root-LP bound) meeting price and branch's schedule
    skips the deadline-hard solver: that schedule is the answer, validated, FEASIBLE
    here (the caller's certificate proves it); otherwise the solvers run as before."""
    from sensaopt.exact.common import engine_of
    from sensaopt.exact.phases.deadline_hard import SETTLED_NOTE
    from sensaopt.exact.pipeline import solve_within_horizon
    from sensaopt.exact.settings import SolveSettings
    from sensaopt.result import Status

    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    settings = SolveSettings(time_limit=20, workers=1, cooperate=True)
    asked: list[float] = []

    def test(obj: float) -> bool:
        asked.append(obj)
        return settled

    res = solve_within_horizon(inst, engine_of("cpsat", settings), settings, policy_warm_start(inst),
                               TimeBudget(20.0, time.perf_counter()), settled=test)
    pb = res.lexicographic.price_branch
    assert pb is not None and asked[-1] == pytest.approx(pb.objective)  # before it, ruin and recreate's questions
    assert all(a >= pb.objective - 1e-9 for a in asked)
    assert not check_schedule(inst, res.schedule).errors
    if settled:
        assert pb.moves == 0  # settled from the start: ruin and recreate does not search
        assert SETTLED_NOTE in res.message and res.lexicographic.cooperation is None
        assert res.status == Status.FEASIBLE and res.objective == pytest.approx(pb.objective)
    else:
        assert SETTLED_NOTE not in res.message and res.lexicographic.cooperation is not None
        assert res.objective <= pb.objective + 1e-9


def test_the_root_lp_bound_settles_only_objectives_it_proves_at_or_below_the_warm_start():
    from sensaopt.exact.phases.allocation import Climb
    from sensaopt.exact.pipeline import proven_by

    climb = Climb(bound=10.0, how="test", floor=0.0, step=1.0)
    assert proven_by(None, 12.0) is None and proven_by(climb, None) is None
    settled = proven_by(climb, 12.0)
    assert settled is not None
    assert settled(10.0) and settled(10.4) and not settled(10.6)
    assert not proven_by(climb, 10.2)(10.4)  # above the warm start: the bound covers only schedules better than it
    climb.bound = 10.5  # raised in place (a relaxation search beside the inner solve)
    assert settled(10.6)


@pytest.mark.parametrize(("option", "expected", "used"), [({}, None, TIME_SHARE), ({"recreate_time_share": 0.0}, 0.0, 0.0),
                                                           ({"recreate_time_share": 1.0}, 1.0, 1.0)])
def test_the_solves_recreate_time_share_reaches_ruin_and_recreate(option, expected, used, monkeypatch, ruin_shares):
    """``recreate_time_share`` is the share of ruin and recreate's moves that ruin by time
    (unset: None, which the search reads as ``TIME_SHARE``, one half; 0: none); out of [0, 1]
    the solve refuses it before any work."""
    seen, inst, res = _recreate_arguments(monkeypatch, option)
    assert [share for _, share in seen] == [expected]
    assert ruin_shares == {used}
    assert not check_schedule(inst, res.schedule).errors
    for bad in (-0.1, 1.5):
        with pytest.raises(Exception, match="recreate_time_share"):
            solve(inst, "cpsat", time_limit=5, workers=1, recreate_time_share=bad)


def test_a_model_that_cannot_be_built_in_time_keeps_price_and_branchs_schedule(monkeypatch):
    """When the deadline-hard model's build runs out of time after price and branch, the
    result's incumbent is the better of the warm start and the search's schedule (not the
    warm start alone, as before session 35), validated, with the search's record."""
    from sensaopt.exact.common import engine_of
    from sensaopt.exact.model.variables import BuildTimeout
    from sensaopt.exact.phases import deadline_hard
    from sensaopt.exact.pipeline import solve_within_horizon
    from sensaopt.exact.settings import SolveSettings
    from sensaopt.result import Status

    real = deadline_hard.build_or_result

    class Unbuildable:  # an engine whose build always runs out of time
        def __init__(self, engine):
            self.name = engine.name

        def build(self, *args, **kwargs):
            raise BuildTimeout("the time limit ran out while building the model")

    monkeypatch.setattr(deadline_hard, "build_or_result", lambda prep, data, engine, settings, budget, **kwargs:
                        real(prep, data, Unbuildable(engine), settings, budget, **kwargs))
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    settings = SolveSettings(time_limit=20, workers=1)
    warm = policy_warm_start(inst, "lst")  # 96.33 min, zero misses; the optimum is 78
    res = solve_within_horizon(inst, engine_of("cpsat", settings), settings, warm, TimeBudget(20.0, time.perf_counter()))
    pb = res.lexicographic.price_branch
    assert res.status == Status.TIME_LIMIT and pb is not None
    assert res.objective == pytest.approx(min(pb.objective, warm.objective))
    assert not check_schedule(inst, res.schedule).errors
    assert res.bound is None or res.bound <= res.objective + 1e-9
    assert pb.objective < warm.objective - 1e-9  # the search beats this warm start, so the fix shows
    assert SEARCHES_NOTE in res.message


def test_a_solver_without_an_answer_or_a_start_in_its_variables_keeps_price_and_branchs_schedule(monkeypatch):
    """When the hard model's solver returns nothing and the searches' schedule could not be
    given to it as values, the incumbent is still the better of the warm start and that
    schedule (before session 35: the warm start)."""
    from sensaopt.exact import pipeline
    from sensaopt.exact.common import engine_of
    from sensaopt.exact.outcome import Engine, SolveOutcome
    from sensaopt.exact.phases import deadline_hard
    from sensaopt.exact.settings import SolveSettings
    from sensaopt.result import Status

    class NoAnswer(Engine):
        def run(self, mb, budget):
            return SolveOutcome(Status.TIME_LIMIT, None, None, None, "stopped with no solution", 0.0)

    real = pipeline.solve_deadline_hard
    monkeypatch.setattr(pipeline, "solve_deadline_hard", lambda prep, data, whole, engine, *rest:
                        real(prep, data, whole, NoAnswer(engine.backend, engine.params, engine.build_fn, engine.label), *rest))
    monkeypatch.setattr(deadline_hard, "hint_values", lambda *args, **kwargs: {})
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    settings = SolveSettings(time_limit=20, workers=1)
    warm = policy_warm_start(inst, "lst")  # 96.33 min, zero misses; the optimum is 78
    res = pipeline.solve_within_horizon(inst, engine_of("cpsat", settings), settings, warm,
                                        TimeBudget(20.0, time.perf_counter()))
    pb = res.lexicographic.price_branch
    assert res.status == Status.TIME_LIMIT and pb is not None and pb.objective < warm.objective - 1e-9
    assert res.objective == pytest.approx(pb.objective)
    assert not check_schedule(inst, res.schedule).errors
    assert SEARCHES_NOTE in res.message
