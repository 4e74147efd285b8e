"""Lower bounds (sensaopt.bounds): attained exactly on hand-made instances, never beaten
by a validated schedule of any policy (property test) nor by the ladder's known optima,
and computed at trace scale on the Philly SLO trace (skipped without the shared traces).

Units: minutes (arrival, work, deadlines, JCT), cores, GB."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensaopt.bounds import compute_bounds, jct_bound, miss_bound
from sensaopt.bounds.areas import GPUS, Resource, areas, min_ratio
from sensaopt.bounds.jct import srpt_completions
from sensaopt.bounds.misses import moore_hodgson
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance, load_schedule
from sensaopt.metrics import compute_metrics
from sensaopt.servable import share_speeds
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule, segment_speed
from tests.conftest import INSTANCE_FILES, REPO

from .util import instance, job

CHEAP_POLICIES = ["edf", "edf-demote", "edf-tune", "edf-tune-demote", "fifo", "lst", "sensascale", "sensascale-paper",
                  "synergy-tune"]
SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "derandomize": True}


# ---- each bound attained exactly --------------------------------------------------------------------------------


def test_two_jobs_that_cannot_share_one_gpu_force_one_miss_and_edf_attains_it():
    # one GPU, R = 10: each bert job needs 3 rounds inside [0, 40): 6 rounds > 4
    inst = instance([job("a", 0, work=30, deadline=40.0), job("b", 0, work=30, deadline=40.0)], gpus=1, cpus=3, mem=62.5)
    for regime in ("best", "unit"):
        b = miss_bound(inst, regime)
        assert (b.trivial, b.interval, b.misses, b.lost_value) == (0, 1, 1, 1.0)
        assert [(blk.start, blk.end, blk.jobs, blk.forced) for blk in b.blocks] == [(0.0, 40.0, 2, 1)]
    assert simulate(inst, "edf").metrics.slo_violations == 1
    # one round more of room and both fit: nothing is forced
    roomy = instance([job("a", 0, work=30, deadline=60.0), job("b", 0, work=30, deadline=60.0)], gpus=1, cpus=3, mem=62.5)
    assert miss_bound(roomy).misses == 0


def test_a_job_that_misses_alone_is_trivial_and_loses_what_its_soft_deadline_does_not_keep():
    inst = instance([job("late", 5, work=30, deadline=39.0, value=4.0, soft=((60.0, 1.0),)), job("ok", 0, work=10, deadline=20.0)])
    b = miss_bound(inst)
    assert (b.trivial, b.interval, b.trivial_loss) == (1, 0, 3.0)
    assert simulate(inst, "edf").metrics.weighted_violations == 3.0


def test_cores_force_misses_the_gpus_allow_and_the_regimes_differ():
    # 8 GPUs, 24 cores; 9 one-GPU res18 jobs, 24 min of work due in one round of 10 min: speed 2.4 needs 9 cores.
    # GPUs alone force 1 (9 GPU-rounds > 8); cores force 6: each needs >= 2.4 x min(cores/speed) = 2.4 x 1/0.37
    # core-rounds (res18 is most core-efficient at its floor), 24 per round fit 3 of them. At the share (3 cores,
    # speed 1.0) no job can make it alone: all 9 are trivial misses.
    inst = instance([job(f"j{k}", 0, work=24, model="res18", deadline=10.0) for k in range(9)], R=10.0)
    assert miss_bound(inst, "best", resources=(GPUS,)).misses == 1
    assert miss_bound(inst, "best", resources=(Resource("cores", cpu=1.0),)).misses == 6
    best = miss_bound(inst, "best")
    assert (best.misses, best.resource) == (6, "cores")
    unit = miss_bound(inst, "unit")
    assert (unit.trivial, unit.misses) == (9, 9)
    assert simulate(inst, "edf").metrics.slo_violations == 9  # EDF gives the share: it attains the unit bound
    assert simulate(inst, "sensascale").metrics.slo_violations >= 6
    assert min_ratio(inst.jobs[0].profile, 1, inst.cluster, (0.0, 1.0, 0.0)) == pytest.approx(1 / 0.37)


def test_per_job_jct_bound_is_attained_by_a_job_alone():
    inst = instance([job("a", 3, work=25, deadline=None)], R=10.0)  # released in round 1, 3 rounds: finish 40
    b = jct_bound(inst)
    assert b.per_job == pytest.approx(37.0) and b.avg_jct == pytest.approx(37.0)
    assert simulate(inst, "edf").metrics.avg_jct == pytest.approx(37.0)


def test_pooled_jct_bound_is_attained_on_one_gpu():
    # two one-round jobs at minute 0 on one GPU: one finishes at 10, the other at 20 whatever the order
    inst = instance([job("a", 0, work=10), job("b", 0, work=10)], gpus=1, cpus=3, mem=62.5)
    b = jct_bound(inst)
    assert (b.per_job, b.pooled, b.lp, b.avg_jct) == pytest.approx((10.0, 15.0, 15.0, 15.0))
    assert jct_bound(inst, lp_max_vars=0).lp is None and jct_bound(inst, lp_max_vars=1).lp is None  # skipped
    assert simulate(inst, "fifo").metrics.avg_jct == pytest.approx(15.0)


def test_time_indexed_lp_sees_queueing_the_other_parts_miss():
    # 8 one-GPU jobs of 2 rounds each at minute 0 on 4 GPUs, R = 10: the best schedule runs 4, then 4 -> finishes 20 and 40;
    # alone each finishes at 20; SRPT on the pooled machine (4 GPU-rounds per round) runs one job at a time at 4 GPUs:
    # 5, 10, ..., 40 min, 22.5 on average; the LP keeps each job to one GPU a round and finds the 30
    inst = instance([job(f"j{k}", 0, work=20) for k in range(8)], gpus=4, cpus=12, mem=250.0)
    b = jct_bound(inst)
    assert (b.per_job, b.lp, b.avg_jct) == pytest.approx((20.0, 30.0, 30.0))
    assert b.pooled == pytest.approx(22.5)
    assert simulate(inst, "fifo").metrics.avg_jct == pytest.approx(30.0)


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.stem)
def test_the_lp_contains_the_per_job_part(path):
    for regime in ("best", "unit"):
        b = jct_bound(load_instance(path), regime)
        assert b.lp is not None and b.lp >= b.per_job - 1e-6


def test_moore_hodgson_and_srpt_by_hand():
    # due 2, 3, 4 with sizes 2, 2, 1: keep the first, drop the second at due 3, keep the third -> 0, 1, 1
    assert list(moore_hodgson(np.array([2.0, 2.0, 1.0]), np.array([2.0, 3.0, 4.0]))) == [0, 1, 1]
    assert list(moore_hodgson(np.array([1.0, 1.0]), np.array([1.0, 2.0]))) == [0, 0]  # exactly full: fits
    # SRPT: A (3) at 0, B (1) at 1 preempts A: B done at 2, A at 4
    assert list(srpt_completions(np.array([0.0, 1.0]), np.array([3.0, 1.0]))) == [4.0, 2.0]
    assert list(srpt_completions(np.array([5.0]), np.array([2.0]))) == [7.0]


def test_areas_count_rounds_at_the_regime_speed():
    inst = instance([job("r", 0, gpus=2, work=25, model="res18"), job("b", 0, gpus=1, work=25)], R=10.0)
    # res18 on 2 GPUs of a 24-core node: 12 cores per GPU -> 2.4 -> 2 rounds x 2 GPUs; bert: 3 rounds
    assert areas(inst, "best", GPUS) * inst.cluster.total_gpus == pytest.approx([4.0, 3.0])
    assert areas(inst, "unit", GPUS) * inst.cluster.total_gpus == pytest.approx([6.0, 3.0])
    with pytest.raises(ValueError, match="unknown speed regime"):
        miss_bound(inst, "fast")  # type: ignore[arg-type]


# ---- never beaten -------------------------------------------------------------------------------------------------


def _share_only(inst, res) -> bool:
    """No job of ``res``'s schedule ever ran faster than at the proportional share."""
    cap = dict(zip((j.id for j in inst.jobs), share_speeds(inst)))
    jobs = {j.id: j for j in inst.jobs}
    return all(segment_speed(jobs[s.job], s) <= cap[s.job] + 1e-9 for s in res.schedule.segments)


def _check_never_beaten(inst, policies=CHEAP_POLICIES) -> int:
    """Assert every policy's validated schedule is no better than the bounds; returns how
    many runs the unit regime applied to."""
    b = compute_bounds(inst)
    unit_runs = 0
    for pol in policies:
        res = simulate(inst, pol)
        ev = check_schedule(inst, res.schedule)
        assert ev.ok, (pol, ev.errors[:2])
        m = compute_metrics(inst, ev)
        regimes = ["best"] + (["unit"] if _share_only(inst, res) else [])
        unit_runs += len(regimes) - 1
        for r in regimes:
            assert m.slo_violations >= b.misses[r].misses, (pol, r)
            assert m.weighted_violations >= b.misses[r].lost_value - 1e-9, (pol, r)
            assert m.avg_jct >= b.jct[r].avg_jct - 1e-9, (pol, r)
    return unit_runs


@st.composite
def configs(draw) -> GeneratorConfig:
    return GeneratorConfig(
        jobs=draw(st.integers(2, 10)), nodes=draw(st.integers(1, 2)), node_gpus=draw(st.sampled_from([4, 8])),
        node_cpus=draw(st.sampled_from([12, 24])), node_mem_gb=draw(st.sampled_from([250.0, 500.0])),
        round_minutes=draw(st.sampled_from([10.0, 30.0])), load=draw(st.floats(0.5, 8.0)),
        work_max=draw(st.sampled_from([120.0, 240.0])), deadline_hi=draw(st.sampled_from([1.2, 2.0])),
        deadline_round=draw(st.sampled_from([10.0, 60.0])),
        sensitive_fraction=draw(st.sampled_from([0.0, 0.5, 1.0])), best_effort_fraction=draw(st.sampled_from([0.0, 0.3])),
        seed=draw(st.integers(0, 10_000)),
    )


@settings(max_examples=25, **SETTINGS)
@given(configs())
def test_no_policy_beats_the_bounds(cfg):
    _check_never_beaten(generate(cfg))


def test_the_unit_regime_applies_to_edf():
    # the premise the property test checks before using the unit bound holds for EDF (else that check is empty)
    inst = generate(GeneratorConfig(jobs=10, nodes=2, load=3.0, seed=4))
    assert _share_only(inst, simulate(inst, "edf")) and _share_only(inst, simulate(inst, "fifo"))


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.stem)
def test_bounds_below_every_cheap_policy_on_the_ladder(path):
    _check_never_beaten(load_instance(path), ["edf", "edf-demote", "sensascale"])


# optima proven by every exact backend (models/measurements.md, the ladder table): (misses, avg JCT, minutes)
PROVEN = {"tiny-16gpu": (0, 78.0), "tiny-8gpu": (1, 115.4)}
# zero-miss schedules (tests/data/exact, tests/test_exact_small_rung.py): the optimum misses none
CERTIFIED = ("small-8gpu", "small-16gpu")


@pytest.mark.parametrize("name", sorted(PROVEN))
def test_bounds_below_the_proven_optima(name):
    b = compute_bounds(load_instance(REPO / "instances" / f"{name}.json"))
    misses, jct = PROVEN[name]
    assert b.forced_misses("best") <= misses and b.jct_bound("best") <= jct


@pytest.mark.parametrize("name", CERTIFIED)
def test_bounds_below_the_certified_schedules(name):
    inst = load_instance(REPO / "instances" / f"{name}.json")
    m = compute_metrics(inst, check_schedule(inst, load_schedule(REPO / "tests" / "data" / "exact" / f"{name}.zero-miss.json", inst)))
    b = compute_bounds(inst)
    assert b.forced_misses("best") == 0 == m.slo_violations and b.jct_bound("best") <= m.avg_jct


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROVEN))
def test_bounds_below_the_exact_optimum(name):
    from sensaopt.result import Status
    from sensaopt.solve import solve

    inst = load_instance(REPO / "instances" / f"{name}.json")
    res = solve(inst, solver="cpsat", time_limit=600)
    assert res.status is Status.OPTIMAL
    b = compute_bounds(inst)
    assert b.forced_misses("best") <= res.metrics.slo_violations and b.jct_bound("best") <= res.metrics.avg_jct + 1e-9


@pytest.mark.slow
@settings(max_examples=10, **SETTINGS)
@given(st.integers(0, 10_000), st.sampled_from([1.5, 3.0, 6.0]))
def test_the_exact_optimum_never_beats_the_bounds(seed, load):
    from sensaopt.result import Status
    from sensaopt.solve import solve_cpsat

    inst = generate(GeneratorConfig(jobs=4, nodes=1, load=load, deadline_hi=1.3, deadline_round=10.0, seed=seed))
    res = solve_cpsat(inst, time_limit=120)
    if res.status is not Status.OPTIMAL:
        return
    b = compute_bounds(inst)
    assert b.forced_misses("best") <= res.metrics.slo_violations
    assert b.misses["best"].lost_value <= res.metrics.weighted_violations + 1e-9
    assert b.jct_bound("best") <= res.metrics.avg_jct + 1e-9  # at the optimum's loss level: the JCT bound relaxes deadlines


# ---- trace scale -------------------------------------------------------------------------------------------------


def _philly_slo(days: float | None):
    from sensaopt.config import WorkloadConfig
    from sensaopt.traces.sources import workload_instance

    return workload_instance(WorkloadConfig(trace="chronus-slo", preset="philly-8", days=days))[0]


def _check_trace_bounds(inst) -> None:
    b = compute_bounds(inst)
    d = b.to_dict()
    assert d["jobs"] == len(inst.jobs) and d["slo_jobs"] == len(inst.jobs)  # every Philly job has a deadline
    for r in ("best", "unit"):
        assert 0 <= d["misses"][r]["misses"] <= d["slo_jobs"]
        assert math.isfinite(d["jct"][r]["avg_jct"]) and d["jct"][r]["avg_jct"] > 0
    assert b.misses["best"].trivial == 0  # every Philly job can meet its deadline alone (servable.py agrees)


def test_philly_slo_window_bounds(shared_traces):
    _check_trace_bounds(_philly_slo(2.0))


@pytest.mark.slow
def test_philly_slo_full_trace_bounds(shared_traces):
    inst = _philly_slo(None)
    assert len(inst.jobs) > 30_000
    _check_trace_bounds(inst)


# ---- command line and tables ---------------------------------------------------------------------------------------


def _cli(args, capsys):
    from sensaopt.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_bound_command_text_json_and_output(capsys, tmp_path):
    import json

    inst = instance([job("a", 0, work=30, deadline=40.0), job("b", 0, work=30, deadline=40.0)], gpus=1, cpus=3, mem=62.5)
    from sensaopt.io import save_instance

    path = tmp_path / "two.json"
    save_instance(inst, path)
    code, out, _ = _cli(["bound", path], capsys)
    assert code == 0
    assert "deadline misses at best speed (any policy): >= 1 of 2 (50.00%)" in out
    assert "[0, 40) min: 2 deadline job(s) released inside need capacity inside, >= 1 miss" in out
    assert "average JCT at best speed (any policy), every deadline relaxed: >= 45.0 min" in out  # one at 30, one at 60 min
    code, out, _ = _cli(["bound", path, "--json", "-o", tmp_path / "b.json"], capsys)
    d = json.loads(out)
    assert code == 0 and d == json.loads((tmp_path / "b.json").read_text())
    assert d["misses"]["best"]["misses"] == 1 and d["misses"]["unit"]["blocks"][0]["forced"] == 1
    assert d["jct"]["best"]["avg_jct"] == pytest.approx(45.0) and d["jct"]["best"]["resource"] == "gpus"
    code, out, _ = _cli(["bound", "--trace", "synthetic", "--jobs", "12", "--preset", "2x8", "--json"], capsys)
    assert code == 0 and json.loads(out)["jobs"] == 12


@pytest.mark.parametrize("args, says", [
    ([], "give an instance file or --trace NAME"),
    (["tiny-8gpu", "--trace", "synthetic"], "give an instance file or --trace NAME"),
    (["nosuch.json"], "no such file"),
    (["tiny-8gpu", "--step-minutes", "-1"], "--step-minutes"),
    (["tiny-8gpu", "--step-minutes", "nan"], "--step-minutes"),
])
def test_bound_command_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, says):
    out_file = tmp_path / "b.json"
    code, out, err = _cli(["bound", *args, "-o", out_file], capsys)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and out == ""
    assert not out_file.exists()


def test_miss_bound_refuses_a_bad_block_family():
    from sensaopt.errors import ArgumentError

    inst = instance([job("a", 0, work=10, deadline=20.0)])
    with pytest.raises(ArgumentError, match="step_minutes"):
        miss_bound(inst, step_minutes=-1.0)
    with pytest.raises(ArgumentError, match="max_block_minutes"):
        miss_bound(inst, max_block_minutes=float("nan"))


def test_paper_table_bound_columns_from_the_records_or_the_instances():
    from sensaopt.sweep import RunConfig, run_config
    from sensaopt.sweep.paper import missing_bounds, table_rows
    from sensaopt.traces.sources import workload_instance

    cfg = RunConfig(trace="synthetic", jobs=30, preset="1x8", load=3.0, policy="edf")
    rec = run_config(cfg)
    b = compute_bounds(workload_instance(cfg)[0])
    assert rec["bounds"] == b.record()
    runs = [("synthetic", 8, cfg)]
    (row,) = table_rows(runs, {cfg.key(): rec})
    assert row["forced_misses"] == b.forced_misses("best") and row["jct_bound"] == pytest.approx(b.jct_bound("best"))
    assert row["forced_misses_share"] == b.forced_misses("unit")
    assert row["misses_above_forced"] == rec["metrics"]["slo_violations"] - b.forced_misses("best")
    assert row["avg_jct"] >= row["jct_bound"]
    old = {k: v for k, v in rec.items() if k != "bounds"}  # a record made before the bounds were stored
    (none,) = table_rows(runs, {cfg.key(): old})
    assert none["forced_misses"] is None and none["jct_bound"] is None
    (filled,) = table_rows(runs, {cfg.key(): old}, missing_bounds(runs, {cfg.key(): old}))
    assert filled == row
    assert missing_bounds(runs, {cfg.key(): rec}) == {}  # nothing recomputed when the records have them


def test_an_energetic_block_forces_the_miss_of_tiny_8gpu():
    # j4 (8 GPUs, 3 rounds in [30, 60) min) takes the whole node there, and j1 (1 GPU, 17 rounds in [10, 210) min)
    # must run in 2 of those 3 rounds: one of them misses (the proven optimum misses 1, models/measurements.md);
    # neither job's window lies inside the other's block, so only the energetic block sees it
    inst = load_instance(REPO / "instances" / "tiny-8gpu.json")
    b = miss_bound(inst)
    assert (b.misses, [(x.start, x.end, x.jobs, x.forced) for x in b.blocks]) == (1, [(30.0, 60.0, 2, 1)])
    assert miss_bound(inst, energy_minutes=0.0).misses == 0


# average JCT (minutes) of the 20-job Philly SLO windows proven optimal, every deadline met (models/measurements.md,
# "Third pass: 20-job windows proven with CP-SAT then HiGHS")
PROVEN_WINDOWS = {4: 78.65, 6: 69.90, 7: 78.30, 10: 78.55, 11: 109.35, 13: 76.45, 14: 97.20, 15: 94.65, 18: 81.25, 19: 71.95}


def test_bounds_below_the_proven_window_optima(shared_traces, tmp_path, capsys):
    code, _, err = _cli(["instances", "from-trace", "--trace", "chronus-slo", "--jobs", 20, "--count", 20, "--first", 3000,
                         "--out-dir", tmp_path], capsys)
    assert code == 0, err
    for w, jct in PROVEN_WINDOWS.items():
        b = compute_bounds(load_instance(tmp_path / f"chronus-slo-w{w}.json"))
        assert b.forced_misses("best") == 0 and b.jct_bound("best") <= jct, w


def test_a_gang_job_is_counted_at_its_most_frugal_node():
    # 12 GPUs on 8-GPU nodes: one whole node (3 cores per GPU) and one partial node of 4 GPUs (6 cores per GPU);
    # over mixed node types a partial node may hold any number of its GPUs (a single GPU: the whole node per GPU)
    from sensaopt.instance import Cluster, NodeType
    from sensaopt.profiles import get_profile

    p = get_profile("res18")
    w = (1.0, 0.1, 0.0)  # (1 + 0.1 c)/speed: least at 3, 6 and 9 cores per GPU in boxes of 3, 6 and 24
    one = Cluster((NodeType("n", 8, 24, 500.0, 2),))
    mixed = Cluster((NodeType("n", 8, 24, 500.0, 2), NodeType("m", 4, 24, 500.0, 1)))
    per_box = {c: min((1 + 0.1 * x) / p.speed(x, 62.5) for x in p.cpu_levels if x <= c) for c in (3.0, 6.0, 24.0)}
    assert per_box[24.0] < per_box[6.0] < per_box[3.0]
    assert min_ratio(p, 12, one, w) == pytest.approx(min(per_box[3.0], per_box[6.0]))
    assert min_ratio(p, 12, mixed, w) == pytest.approx(per_box[24.0])
