"""The allocation relaxation's loss floor (``models/formulation.md``, "Exact over every
valid allocation"): the relaxation minimizes avg JCT + max(loss, floor) where the floor is
a loss every valid schedule pays, so it cannot trade an unavoidable miss for JCT."""

from __future__ import annotations

import pytest

import sensaopt
from sensaopt.exact.model.data import build_data
from sensaopt.exact.outcome import Engine, exact_params
from sensaopt.exact.phases.allocation import instance_bound, relaxation_bound
from sensaopt.exact.settings import SolveSettings
from sensaopt.simulator import simulate
from sensaopt.solvers.budget import TimeBudget


def coarse_grids(inst):
    """The relaxation's grids before the CPU-exact one (any real CPU or whole-core boxes,
    the smaller): looser, so that the relaxation alone avoids tiny-8gpu's forced miss."""
    from sensaopt.allocations import model_grids

    return model_grids(inst, inst.jobs, relaxed=True, refine=1, inner_refine=0, extra={}, exact_cpu=False)


def _floored(backend: str):
    inst = sensaopt.load_instance("tiny-8gpu")
    _, floor = instance_bound(inst)  # one forced miss (sensaopt.bounds), which the coarse relaxation alone avoids
    outer = build_data(inst, 36, relaxed=True, refine=1, grids=coarse_grids(inst))
    eng = Engine(backend, exact_params(backend, 1, 0))
    free = relaxation_bound(outer, eng, SolveSettings(workers=1), TimeBudget.start(60))
    floored = relaxation_bound(outer, eng, SolveSettings(workers=1), TimeBudget.start(60), floor)
    heuristic = simulate(inst, "sensascale").objective  # a validated schedule's objective (metrics units)
    return inst, floor, free, floored, heuristic


def _check(backend: str) -> None:
    inst, floor, (free, free_how), (b, how), heuristic = _floored(backend)
    assert b <= heuristic + 1e-6, (b, heuristic, how)  # a bound, whatever the solver managed in its time
    assert floor > 0 and "loss at least the floor" in how
    if "OPTIMAL" in how and "OPTIMAL" in free_how:
        assert free < floor  # the relaxation alone meets every deadline ...
        assert b >= floor  # ... the floored one pays the forced miss
        assert b > free


def test_relaxation_pays_the_forced_loss_cpsat():
    _check("cpsat")


def test_the_cpu_exact_relaxation_sees_the_forced_miss_alone():
    """On the CPU-exact grid (the default) the relaxation alone already misses tiny-8gpu's
    forced deadline: its boxes no longer credit one core two cores' speed."""
    inst = sensaopt.load_instance("tiny-8gpu")
    _, floor = instance_bound(inst)
    eng = Engine("cpsat", exact_params("cpsat", 1, 0))
    b, how = relaxation_bound(build_data(inst, 36, relaxed=True, refine=1), eng, SolveSettings(workers=1), TimeBudget.start(60))
    assert b <= simulate(inst, "sensascale").objective + 1e-6, how
    if "OPTIMAL" in how:
        assert b >= floor


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_relaxation_pays_the_forced_loss_milp(backend):
    _check(backend)


def test_the_relaxation_on_highs_keeps_its_root_lp_as_a_bound():
    """The LP relaxation is solved before the search: its optimum is a bound of the MIP's
    (a search stopped before its root still proves it), and the stage says so."""
    from sensaopt.exact.model.builder import Strength, build
    from sensaopt.solvers import SolverParams
    from sensaopt.solvers.highs import HighsBackend, lp_bound

    inst = sensaopt.load_instance("tiny-8gpu")
    outer = build_data(inst, 36, relaxed=True, refine=1)
    be = HighsBackend()
    build(outer, be, Strength())
    lp = lp_bound(be, TimeBudget.start(60), SolverParams(workers=1))
    mip = be.solve(TimeBudget.start(60), SolverParams(workers=1))
    assert lp is not None and mip.objective is not None
    assert lp <= mip.objective + 1e-6 * abs(mip.objective)  # a bound of the MIP's optimum
    eng = Engine("highs", exact_params("highs", 1, 0))
    b, how = relaxation_bound(outer, eng, SolveSettings(workers=1), TimeBudget.start(60))
    assert "root LP" in how and b <= simulate(inst, "sensascale").objective + 1e-6


def test_the_relaxation_share_follows_the_size():
    from sensaopt.exact.phases.allocation import RELAX_SHARE, RELAX_SHARE_LARGE, relax_share

    shares = [relax_share(n) for n in range(1, 100)]
    assert shares[:20] == [RELAX_SHARE] * 20  # up to 20 jobs: unchanged
    assert relax_share(40) == relax_share(80) == RELAX_SHARE_LARGE
    assert relax_share(30) == pytest.approx((RELAX_SHARE + RELAX_SHARE_LARGE) / 2)
    assert all(a <= b for a, b in zip(shares, shares[1:]))
    assert all(0 < s < 1 for s in shares)


def test_a_solve_records_the_relaxation_seconds():
    inst = sensaopt.load_instance("tiny-8gpu")
    res = sensaopt.solve(inst, solver="cpsat", time_limit=8, workers=1)
    assert res.params["relax_s"] == pytest.approx(0.25 * 8)
    res = sensaopt.solve(inst, solver="cpsat", time_limit=8, workers=1, relax_time_limit=1.5)
    assert res.params["relax_s"] == pytest.approx(1.5)


def test_a_root_lp_stage_alone_bounds_the_search_and_needs_highs():
    """``steps=ROOT_LP`` (the first pass of the relaxation ladder): on HiGHS the root LP's
    bound, never above what the LP and search together prove; on CP-SAT there is no root
    LP, so None (the ladder then goes straight to the searches)."""
    from sensaopt.exact.phases.allocation import BOTH, ROOT_LP

    inst = sensaopt.load_instance("tiny-16gpu")
    outer = build_data(inst, 21, relaxed=True, refine=1)
    highs = Engine("highs", exact_params("highs", 1, 0))
    lp, how = relaxation_bound(outer, highs, SolveSettings(workers=1), TimeBudget.start(60), steps=ROOT_LP)
    full, _ = relaxation_bound(outer, highs, SolveSettings(workers=1), TimeBudget.start(60), steps=BOTH)
    assert "root LP" in how and lp <= full + 1e-9
    assert lp <= simulate(inst, "sensascale").objective + 1e-9
    cpsat = Engine("cpsat", exact_params("cpsat", 1, 0))
    assert relaxation_bound(outer, cpsat, SolveSettings(workers=1), TimeBudget.start(60), steps=ROOT_LP) is None


@pytest.mark.parametrize("name", ["tiny-8gpu", "tiny-16gpu"])
def test_a_lifted_relaxation_schedule_is_valid_and_no_better_than_the_relaxation(name):
    """Lifting (sensaopt.exact.phases.lift): the relaxation's optimum on the CPU-exact grid,
    every used option's memory raised; when the validator accepts the lifted schedule, its
    objective is at least the relaxation's proven optimum (the relaxation covers it)."""
    from sensaopt.exact.model.builder import to_objective
    from sensaopt.exact.model.data import hard_data
    from sensaopt.exact.outcome import build_model
    from sensaopt.exact.phases.lift import lift
    from sensaopt.result import Status
    from sensaopt.solvers import SolverParams
    from sensaopt.validator import check_schedule

    inst = sensaopt.load_instance(name)
    heuristic = simulate(inst, "sensascale")
    horizon = max(s.end for s in heuristic.schedule.segments) + 2
    for data in (build_data(inst, horizon, relaxed=True, refine=1), hard_data(build_data(inst, horizon, relaxed=True, refine=1))):
        mb = build_model(data, "highs")
        out = mb.backend.solve(TimeBudget.start(30), SolverParams(workers=1, seed=0))
        if out.value is None:
            continue
        got = lift(data, mb.vars, out.value)
        if got is None:
            continue
        assert not check_schedule(inst, got.schedule).errors
        if out.status == Status.OPTIMAL:
            assert got.objective >= to_objective(data, out.bound) - 1e-6


@pytest.mark.parametrize("share", [0.3, 0.8])
def test_the_search_share_keeps_every_answer_honest(share):
    """With the relaxation's search first (search_share), the result is still a validated
    schedule no worse than the start, and its bound is a bound."""
    _honest_on_tiny(workers=1, search_share=share)


def _honest_on_tiny(**options) -> list:
    """The exact solves (CP-SAT, cooperating, 8 s) of tiny-8gpu and tiny-16gpu with
    ``options``, each checked: a validated schedule no worse than SensaScale's, a bound
    no higher than its objective."""
    from sensaopt.solve import solve

    out = []
    for name in ("tiny-8gpu", "tiny-16gpu"):
        inst = sensaopt.load_instance(name)
        res = solve(inst, "cpsat", time_limit=8, seed=0, cooperate=True, **options)
        assert res.schedule is not None and not res.evaluation.errors
        assert res.objective <= simulate(inst, "sensascale").objective + 1e-6
        assert res.bound is not None and res.bound <= res.objective + 1e-6
        out.append(res)
    return out


def test_the_relaxation_beside_keeps_every_answer_honest():
    """With the relaxation's search on its own thread beside the inner solve (relax_beside,
    two workers), the result is still a validated schedule no worse than the start, its
    bound is a bound, and the run says it ran so where the root LPs left a gap."""
    results = _honest_on_tiny(workers=2, relax_beside=True)
    assert any(res.params.get("relax_beside") for res in results)  # it ran on one at least (else this checks nothing)


def test_isolated_runs_send_every_highs_run_to_a_child():
    """Inside ``isolated_runs`` (this thread only) a small model goes to a child process;
    outside, by size; a caller's explicit choice wins."""
    import threading

    import numpy as np

    from sensaopt.solvers.highs import CHILD_MIN_NONZEROS, in_child, isolated_runs
    from sensaopt.solvers.highs_run import HighsArrays

    z = np.zeros(1)
    small = HighsArrays(z, z, z, np.zeros(0, dtype=np.int32), z, z, np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    assert small.nonzeros < CHILD_MIN_NONZEROS
    assert not in_child(small, None)
    seen = []
    with isolated_runs():
        assert in_child(small, None) and not in_child(small, False)
        t = threading.Thread(target=lambda: seen.append(in_child(small, None)))
        t.start()
        t.join()
    assert seen == [False]  # another thread is not inside the block
    assert not in_child(small, None)
