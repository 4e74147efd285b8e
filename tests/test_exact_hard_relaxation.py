"""The deadline-hard allocation relaxation (``models/formulation.md``, "Deadline-hard
relaxation"): when the incumbent misses nothing and any miss costs more than it, every
better valid schedule meets every deadline, so the relaxation is solved with every
deadline hard (smaller and tighter than the weighted one, no loss floor to prove)."""

from __future__ import annotations

import dataclasses

import pytest

import sensaopt
from sensaopt.allocations import exact_allocations
from sensaopt.exact.common import WarmStart, inner_horizon
from sensaopt.exact.model.data import build_data
from sensaopt.exact.outcome import Engine, exact_params
from sensaopt.exact.phases.allocation import bound_engine, hard_relaxation, ladder, miss_floor, root_lps
from sensaopt.exact.settings import SolveSettings
from sensaopt.instance import SoftDeadline
from sensaopt.simulator import simulate
from sensaopt.solvers.budget import TimeBudget


def test_miss_floor_is_the_cheapest_miss_plus_the_solo_jct():
    inst = sensaopt.load_instance("tiny-16gpu")
    outer = build_data(inst, 30, relaxed=True, refine=1)
    wv = inst.objective.violation_weight
    cheapest = min(j.value for j in inst.jobs if j.deadline is not None)
    solo = sum((jd.earliest_done + 1) * outer.R - jd.job.arrival for jd in outer.jobs) / outer.n
    assert miss_floor(outer) == pytest.approx(wv * cheapest + solo, rel=1e-12)


def test_miss_floor_prices_soft_deadlines_by_their_steps():
    """A soft deadline's tier costs its step (value − next value): the cheapest step counts."""
    inst = sensaopt.load_instance("tiny-16gpu")
    j0 = inst.jobs[0]
    soft = dataclasses.replace(j0, soft_deadlines=(SoftDeadline(j0.deadline + 600.0, 0.25 * j0.value),))
    inst2 = dataclasses.replace(inst, jobs=(soft, *inst.jobs[1:]))
    base = miss_floor(build_data(inst, 30, relaxed=True, refine=1))
    wv = inst.objective.violation_weight
    cheapest = min(j.value for j in inst.jobs if j.deadline is not None)
    expected = base - wv * cheapest + wv * min(cheapest, 0.25 * j0.value)
    assert miss_floor(build_data(inst2, 30, relaxed=True, refine=1)) == pytest.approx(expected, rel=1e-12)


def _with_hopeless(inst):
    """tiny-16gpu with job 0's deadline one minute after its arrival: missed by every schedule."""
    j0 = inst.jobs[0]
    return dataclasses.replace(inst, jobs=(dataclasses.replace(j0, deadline=j0.arrival + 1.0), *inst.jobs[1:]))


def test_miss_floor_adds_the_hopeless_loss_and_prices_only_open_deadlines():
    """Every schedule pays a hopeless deadline, so a schedule missing an open one costs that
    loss, the cheapest open step and the solo JCT; the hopeless step itself is no open step."""
    inst = sensaopt.load_instance("tiny-16gpu")
    hop = _with_hopeless(inst)
    outer = build_data(hop, 30, relaxed=True, refine=1)
    assert list(outer.hopeless) == [hop.jobs[0].id]
    wv = inst.objective.violation_weight
    cheapest_open = min(j.value for j in hop.jobs[1:] if j.deadline is not None)
    solo = sum((jd.earliest_done + 1) * outer.R - jd.job.arrival for jd in outer.jobs) / outer.n
    assert miss_floor(outer) == pytest.approx(wv * hop.jobs[0].value + wv * cheapest_open + solo, rel=1e-12)


def test_a_forced_miss_no_longer_keeps_the_deadline_hard_relaxation_out():
    """With a hopeless deadline the incumbent (which pays it) is below the miss floor, the
    pipeline certifies with the deadline-hard relaxation, and its bound is at most the
    incumbent's objective, which misses only the hopeless deadline."""
    hop = _with_hopeless(sensaopt.load_instance("tiny-16gpu"))
    res = sensaopt.solve(hop, solver="cpsat", time_limit=60, workers=1)
    assert res.metrics.slo_violations == 1
    assert res.objective < miss_floor(build_data(hop, 30, relaxed=True, refine=1))
    assert {st.model for st in res.allocations.stages} == {"deadline-hard"}, res.message
    assert res.bound <= res.objective + 1e-9


def test_hard_relaxation_bounds_a_zero_miss_schedule():
    """Its bound never exceeds a valid zero-miss schedule's objective (SensaScale's)."""
    inst = sensaopt.load_instance("tiny-16gpu")
    h = simulate(inst, "sensascale")
    assert h.metrics.slo_violations == 0
    outer = build_data(inst, 30, relaxed=True, refine=1)
    assert h.objective < miss_floor(outer)
    settings = SolveSettings(workers=1)
    eng = Engine("cpsat", exact_params("cpsat", 1, 0))
    bound, _, how, stage = hard_relaxation(h.objective, inst, outer, 1, eng, settings, TimeBudget.start(60))
    assert bound <= h.objective + 1e-6, how
    assert "deadline-hard" in how and "on highs" in how
    assert (stage.bound, stage.model, stage.backend) == (bound, "deadline-hard", "highs")


def test_bound_engine_takes_highs_for_cpsat_only():
    settings = SolveSettings(workers=1, seed=3)
    assert bound_engine(Engine("cpsat", exact_params("cpsat", 1, 3)), settings).backend == "highs"
    cbc = Engine("cbc", exact_params("cbc", 1, 3))
    assert bound_engine(cbc, settings) is cbc


def test_pipeline_certifies_a_zero_miss_optimum_by_the_hard_relaxation():
    res = sensaopt.solve(sensaopt.load_instance("tiny-16gpu"), solver="cpsat", time_limit=60, workers=1)
    assert res.metrics.slo_violations == 0
    report = res.allocations
    assert report.check == "relaxation", res.message
    # every root LP of the ladder first (refine 1, 2: neither reaches 78), then refine 1's search proves it
    assert [(st.refine, st.steps) for st in report.stages] == [(1, "root LP"), (2, "root LP"), (1, "search")]
    assert {(st.model, st.backend) for st in report.stages} == {("deadline-hard", "highs")}
    assert res.bound <= res.objective + 1e-9


def test_lp_first_runs_the_root_lps_before_the_inner_solve_and_proves_the_same():
    """``lp_first`` (the default): the root LPs from the warm start's objective, then the
    inner solve with all the time left, then the search in what it leaves; the same
    optimum, proven, as the inner solve first."""
    inst = sensaopt.load_instance("tiny-16gpu")
    ref = sensaopt.solve(inst, solver="cpsat", time_limit=60, workers=1, lp_first=False)
    res = sensaopt.solve(inst, solver="cpsat", time_limit=60, workers=1)  # the default
    assert res.params["lp_first"] is True and ref.params["lp_first"] is False
    assert res.status == ref.status == sensaopt.Status.OPTIMAL, res.message
    assert res.objective == pytest.approx(ref.objective)
    stages = [(st.refine, st.steps) for st in res.allocations.stages]
    assert stages[:2] == [(1, "root LP"), (2, "root LP")] and all(s == "search" for _, s in stages[2:]), stages
    assert all(st.seconds is not None and 0 <= st.seconds <= res.runtime_s for st in res.allocations.stages)
    assert res.bound <= res.objective + 1e-9


@pytest.mark.parametrize("colgen", [True, False])
def test_root_lps_leave_the_finer_root_lp_to_certify_after_a_converged_dantzig_wolfe_bound(colgen):
    """Before the inner solve the ladder's root LPs stop after a stage whose Dantzig–Wolfe
    column generation converged (the stage records how it stopped); without column
    generation every root LP of the ladder runs first, as before."""
    inst = sensaopt.load_instance("tiny-16gpu")
    start = simulate(inst, "sensascale").schedule
    settings = SolveSettings(workers=1, relax_colgen=colgen)
    assert ladder(settings.refine) == [1, 2]
    allocs = exact_allocations(inst, start, refine=settings.refine, inner_refine=1, relax_refines=(1, 2))
    warm = WarmStart.of(inst, start)
    climb = root_lps(warm.objective, inst, inner_horizon(warm, None, settings.horizon_slack),
                     Engine("cpsat", exact_params("cpsat", 1, 0)), settings, TimeBudget.start(60), allocs)
    assert climb is not None and climb.stages[0].refine == 1
    if colgen:
        assert climb.stages[0].dantzig_wolfe == "converged"
        assert climb.lp_done == {1} and len(climb.stages) == 1
    else:
        assert climb.stages[0].dantzig_wolfe is None
        assert climb.lp_done == {1, 2}


def test_lp_first_keeps_the_split_when_the_warm_start_misses():
    """A warm start with a miss has no deadline-hard relaxation, so no root LP runs first:
    the inner solve keeps its share (``params["lp_first"]`` False) and the bound is valid."""
    inst = sensaopt.load_instance("tiny-8gpu")
    res = sensaopt.solve(inst, solver="cpsat", time_limit=20, workers=1)
    assert res.params["lp_first"] is False
    assert res.bound <= res.objective + 1e-9


def test_with_lp_first_the_certificate_gets_what_the_inner_solve_left(monkeypatch):
    """The relaxations' share caps only the root LPs before the inner solve: the certificate
    gets the solve's own budget (all the time the inner solve left), not a new one capped at
    the share. Checked by identity, not by seconds."""
    import sensaopt.exact.pipeline as pipeline

    outer, seen = [], []
    real_begin, real_certify = pipeline.begin, pipeline.certify

    def begin_spy(*args, **kwargs):
        outer.append(real_begin(*args, **kwargs))
        return outer[-1]

    def certify_spy(res, instance, engine, settings, budget, allocs, early=None):
        seen.append((budget, early is not None))
        return real_certify(res, instance, engine, settings, budget, allocs, early)

    monkeypatch.setattr(pipeline, "begin", begin_spy)
    monkeypatch.setattr(pipeline, "certify", certify_spy)
    res = sensaopt.solve(sensaopt.load_instance("tiny-16gpu"), solver="cpsat", time_limit=600, workers=1)
    assert res.params["lp_first"] and len(outer) == 1 and seen
    assert res.params["relax_s"] == pytest.approx(150.0)  # the share: 25 % of 600 s
    assert seen[0] == (outer[0], True)


def test_the_horizon_argument_counts_the_hopeless_loss_every_schedule_pays():
    """With a hopeless deadline and a job without one, the horizon that the JCT argument gives
    the job without a deadline is computed with the hopeless loss as the loss floor; with 0 it
    spanned the whole forced miss (hundreds of thousands of rounds), the relaxation fell back to
    the bound of schedules ending past its horizon, and that bound lost the forced miss."""
    inst = _with_hopeless(sensaopt.load_instance("tiny-16gpu"))
    j5 = inst.jobs[5]
    inst = dataclasses.replace(inst, jobs=(*inst.jobs[:5], dataclasses.replace(j5, deadline=None)))
    outer = build_data(inst, 30, relaxed=True, refine=1)
    h = simulate(inst, "edf")
    assert h.metrics.slo_violations >= 1 and h.objective < miss_floor(outer)
    eng = Engine("cpsat", exact_params("cpsat", 1, 0))
    bound, _, how, stage = hard_relaxation(h.objective, inst, outer, 1, eng, SolveSettings(workers=1), TimeBudget.start(60))
    wv = inst.objective.violation_weight
    assert wv * inst.jobs[0].value <= bound <= h.objective + 1e-6, how
    assert "past the" not in how
