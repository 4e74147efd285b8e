"""The deadline-hard relaxation's Dantzig–Wolfe bound (``relax_colgen``,
:class:`sensaopt.exact.phases.dantzig_wolfe.DantzigWolfe`): column generation over whole
per-job schedules of the relaxation, before its root LP, which is solved only when column
generation has not converged. It must bound the relaxation's
MIP (so every valid schedule better than the incumbent), charge what the builder's
capacity rows charge (in the relaxation a gang job's whole nodes hold GPUs only), and
be switched off by its option."""

from __future__ import annotations

import dataclasses

import pytest

import sensaopt
from sensaopt.exact.decompositions.colgen import _Rows, column_generation
from sensaopt.exact.model.builder import ModelSpec, build, round_bound, to_objective
from sensaopt.exact.model.data import build_data, hard_data
from sensaopt.exact.outcome import Engine, exact_params
from sensaopt.exact.phases import allocation
from sensaopt.exact.phases.allocation import Climb, hard_relaxation
from sensaopt.exact.phases.lift import lift_columns
from sensaopt.exact.pipeline import better_lifted
from sensaopt.exact.settings import SolveSettings
from sensaopt.instance import Cluster, NodeType
from sensaopt.result import STAGE_ROOT_LP, Status
from sensaopt.simulator import simulate
from sensaopt.solvers import SolverParams
from sensaopt.solvers.budget import TimeBudget
from sensaopt.solvers.highs import HighsBackend


def _gang_instance():
    """tiny-16gpu on two 8-GPU nodes (half the cores and memory each), its job j4 on 16
    GPUs: a gang job holding both nodes whole."""
    inst = sensaopt.load_instance("tiny-16gpu")
    node = inst.cluster.node_types[0]
    half = NodeType(name="half", gpus=node.gpus // 2, cpus=node.cpus // 2, mem_gb=node.mem_gb / 2, count=2)
    jobs = tuple(dataclasses.replace(j, gpus=16) if j.id == "j4" else j for j in inst.jobs)
    return dataclasses.replace(inst, cluster=Cluster(node_types=(half,)), jobs=jobs)


def _mip_optimum(data) -> float:
    be = HighsBackend()
    build(data, be, ModelSpec())
    # HiGHS's default gaps: its answer is a relaxed schedule, at least the optimum, which is all the callers need
    # (a bound at most it); the exact gaps made this proof take 9 s instead of 1
    out = be.solve(TimeBudget.start(120), SolverParams(workers=1, seed=0))
    assert out.status == Status.OPTIMAL
    return to_objective(data, out.objective)


def test_columns_charge_a_gang_jobs_whole_nodes_gpus_only_in_the_relaxation():
    inst = _gang_instance()
    for relaxed in (True, False):
        data = build_data(inst, 30, relaxed=relaxed, refine=1)
        jd = next(jd for jd in data.jobs if jd.job.id == "j4")
        rows = _Rows(data)
        resource_of = {i: res for (_n, _t, res), i in rows.index.items()}
        for b, (p, o) in enumerate(jd.pairs):
            charged = data.charges(jd.patterns[p], jd.options[o])
            assert [g for _, g, _, _ in charged] == [8, 8]
            assert all((c == 0 and m == 0) == relaxed for _, _, c, m in charged)
            use = {resource_of[i] for i, _coef in rows.use[jd.k][0][b]}  # the resources its first slot's column terms charge
            assert use == ({0} if relaxed else {0, 1, 2}) and use <= set(resource_of.values())


def test_dantzig_wolfe_bounds_the_relaxations_optimum_with_a_gang_job():
    """Between the relaxation's root LP and its MIP optimum, on an instance where the
    builder does not charge a gang job's whole nodes CPU and memory (a column generation
    that charged them would bound a smaller problem, and could pass the optimum). The
weighted relaxation (every deadline met is not possible here within 30 rounds)."""
    data = build_data(_gang_instance(), 30, relaxed=True, refine=1)
    assert any(len(p.parts) > 1 for jd in data.jobs for p in jd.patterns)
    cg = column_generation(data, 60)
    assert cg.stop == "converged" and cg.bound is not None
    assert to_objective(data, cg.bound) <= _mip_optimum(data) + 1e-9


def test_the_root_lp_stage_takes_the_dantzig_wolfe_bound_and_the_option_turns_it_off():
    inst = sensaopt.load_instance("tiny-16gpu")
    h = simulate(inst, "sensascale")
    outer = build_data(inst, 30, relaxed=True, refine=1)
    eng = Engine("cpsat", exact_params("cpsat", 1, 0))
    got = {}
    for on in (True, False):
        settings = SolveSettings(workers=1, relax_colgen=on)
        bound, _, how, stage = hard_relaxation(h.objective, inst, outer, 1, eng, settings, TimeBudget.start(60),
                                               steps=STAGE_ROOT_LP)
        assert ("Dantzig–Wolfe" in how) == on, how
        assert stage.steps == STAGE_ROOT_LP
        got[on] = bound
    assert got[True] >= got[False] - 1e-9
    hard = hard_data(build_data(inst, 30, relaxed=True, refine=1), grow=True)
    assert got[True] <= min(h.objective, _mip_optimum(hard)) + 1e-9


@pytest.mark.parametrize(("first_share", "max_jobs"), [(0.25, 40), (1e-12, 40), (0.25, 0)],
                         ids=["converges-first", "root-lp-then-resumed", "root-lp-first-above-max-jobs"])
def test_the_root_lp_is_solved_only_when_column_generation_has_not_converged(monkeypatch, first_share, max_jobs):
    """Converged in its first run: the stage's bound is the Dantzig–Wolfe bound, at least the
    root LP's, and no root LP is solved. Cut short (a first run of no time), or with more jobs
    than ``DW_FIRST_MAX_JOBS`` (no first run): the root LP, then column generation to the
    same bound."""
    inst = sensaopt.load_instance("tiny-16gpu")
    settings = SolveSettings(workers=1)
    hard = allocation.hard_model(inst, build_data(inst, 30, relaxed=True, refine=1), settings, 1)
    prover = allocation.bound_engine(Engine("cpsat", exact_params("cpsat", 1, 0)), settings)
    monkeypatch.setattr(allocation, "DW_FIRST_SHARE", first_share)
    monkeypatch.setattr(allocation, "DW_FIRST_MAX_JOBS", max_jobs)
    calls = []
    real_root_lp = allocation.root_lp
    monkeypatch.setattr(allocation, "root_lp", lambda *a, **k: calls.append(1) or real_root_lp(*a, **k))
    colgen: list[str] = []
    got = allocation.relaxation_bound(hard, prover, settings, TimeBudget.start(600), 0.0, STAGE_ROOT_LP, colgen=colgen)
    assert got is not None and colgen == ["converged"], got
    bound, how = got
    lp = real_root_lp(hard, prover, settings, TimeBudget.start(600))
    assert lp is not None and bound >= to_objective(hard, lp) - 1e-9
    if first_share == 0.25 and max_jobs == 40:
        assert not calls and "root LP not solved" in how, how
    else:
        assert calls and "root LP" in how and "Dantzig–Wolfe" in how and "not solved" not in how, how
    cg = column_generation(hard, 600)
    assert cg.stop == "converged" and cg.bound is not None
    assert bound == max(to_objective(hard, cg.bound), to_objective(hard, round_bound(hard, lp)) if calls else 0.0)


def test_no_column_generation_under_a_work_budget():
    """Column generation stops on wall-clock seconds: a deterministic work budget leaves it out."""
    inst = sensaopt.load_instance("tiny-16gpu")
    h = simulate(inst, "sensascale")
    outer = build_data(inst, 30, relaxed=True, refine=1)
    eng = Engine("cpsat", exact_params("cpsat", 1, 0))
    settings = SolveSettings(workers=1, budget="work:100")
    _, _, how, _ = hard_relaxation(h.objective, inst, outer, 1, eng, settings, TimeBudget.start(60), steps=STAGE_ROOT_LP)
    assert "Dantzig–Wolfe" not in how


@pytest.mark.parametrize("w", [0.5])
def test_relax_colgen_is_a_checked_option(w):
    with pytest.raises(sensaopt.errors.ArgumentError):
        SolveSettings.of("solve", {"relax_colgen": w})


def test_the_restricted_masters_schedule_lifts_to_a_valid_one_no_better_than_the_bound():
    """Price and branch on the relaxation: one generated column per job; lifted (every
    option to its real allocation), the validator accepts it and its objective is the
    columns' value, never below the Dantzig–Wolfe bound."""
    inst = sensaopt.load_instance("tiny-16gpu")
    data = hard_data(build_data(inst, 30, relaxed=True, refine=1), grow=True)
    cg = column_generation(data, 30, mip_s=10)
    assert cg.chosen is not None and sorted(c.k for c in cg.chosen) == [jd.k for jd in data.jobs]
    value = to_objective(data, sum(c.cost for c in cg.chosen))
    got = lift_columns(data, cg.chosen, value)
    assert got is not None and not got.evaluation.errors
    assert got.objective == pytest.approx(value, abs=1e-6)
    assert got.objective >= to_objective(data, cg.bound) - 1e-9


def test_a_lifted_relaxation_schedule_becomes_the_start_only_when_it_is_better():
    inst = sensaopt.load_instance("tiny-16gpu")
    data = hard_data(build_data(inst, 30, relaxed=True, refine=1), grow=True)
    cg = column_generation(data, 30, mip_s=10)
    got = lift_columns(data, cg.chosen, None)
    climb = Climb(0.0, "test", 0.0, 0.05, lifted=[got])
    assert better_lifted(climb, got.objective + 1.0) is got
    assert better_lifted(climb, None) is got
    assert better_lifted(climb, got.objective) is None
    assert better_lifted(None, got.objective + 1.0) is None

