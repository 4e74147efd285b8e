"""The change-cost model (issue 13): each kind of change (restart, migration, resize) is
classified by the one rule, charged in the first round of its segment and counted, by
hand; the simulator agrees with the validator at every cost scale; the costs come from
the instance file (defaults when absent) and ``--move-cost-scale`` reaches them."""

from __future__ import annotations

import importlib
import json
import math
from dataclasses import fields, replace

import pytest

from sensaopt.changes import classify
from sensaopt.cli import main
from sensaopt.config import WorkloadConfig
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.instance import Change, Overheads
from sensaopt.io import instance_from_dict, instance_to_dict, load_instance, save_instance, save_schedule
from sensaopt.metrics import compute_metrics, job_metrics
from sensaopt.policies import policy_names
from sensaopt.schedule import Placement as P
from sensaopt.schedule import Schedule, Segment
from sensaopt.simulator import simulate
from sensaopt.sweep.config import RunConfig
from sensaopt.traces.sources import workload_instance
from sensaopt.validator import check_schedule

from .conftest import REPO
from .util import instance, job

R = 10.0
# restart 1 + 1·log2 g, migration 2 + 1·log2 g, resize 0.5 (minutes); a 4-GPU job:
# restart 3, migration 4, resize 0.5; a 12-GPU job: migration 2 + log2 12
COSTS = (1.0, 1.0, 2.0, 1.0, 0.5)
WHOLE = P(0, 4, 12, 250.0)  # bert (speed 1.0 at any allocation above its floor) on node 0


def run(work: float, segs: list[Segment], gpus: int = 4, costs: tuple[float, ...] = COSTS):
    """The validator's outcome of job x (bert, ``gpus`` GPUs, ``work`` minutes) over
    ``segs`` on two 8-GPU nodes with rounds of 10 minutes, and its metrics row."""
    inst = instance([job("x", gpus=gpus, work=work)], nodes=2, R=R, overhead=costs)
    ev = check_schedule(inst, Schedule(tuple(segs), R))
    assert ev.ok, ev.errors
    return ev.outcomes["x"], job_metrics(inst, ev)[0]


def lost(o) -> tuple[float, float, float]:
    return (o.restart_minutes_lost, o.migration_minutes_lost, o.resize_minutes_lost)


def test_restart_after_a_pause():
    # r0: 10; paused in r1; r2: 10 - 3 = 7 (17); r3: 10 -> done at the end of r3
    o, m = run(20, [Segment("x", 0, 1, (WHOLE,)), Segment("x", 2, 2, (WHOLE,))])
    assert (o.finish, o.preemptions, o.migrations, o.resizes) == (40, 1, 0, 0)
    assert lost(o) == (3.0, 0.0, 0.0)
    assert m.pending == 40 - 0 - 3 * R  # held 3 rounds of 4


def test_migration_to_another_node():
    # r0: 10 on node 0; r1 on node 1: 10 - 4 = 6 (16); r2: done
    o, m = run(20, [Segment("x", 0, 1, (WHOLE,)), Segment("x", 1, 2, (P(1, 4, 12, 250.0),))])
    assert (o.finish, o.preemptions, o.migrations, o.resizes) == (30, 0, 1, 0)
    assert lost(o) == (0.0, 4.0, 0.0) and m.pending == 0.0


def test_migration_by_gpu_split_on_the_same_nodes():
    # 12 GPUs: 8 + 4, then 4 + 8 on the same two nodes: migration 2 + log2 12 = 5.585 minutes
    a = (P(0, 8, 24, 500.0), P(1, 4, 12, 250.0))
    b = (P(0, 4, 12, 250.0), P(1, 8, 24, 500.0))
    cost = 2 + math.log2(12)
    o, _ = run(10 + (R - cost), [Segment("x", 0, 1, a), Segment("x", 1, 1, b)], gpus=12)
    assert (o.finish, o.migrations, o.resizes) == (20, 1, 0)
    assert o.migration_minutes_lost == pytest.approx(cost)
    # a hair more work than the change round leaves: one more round
    o, _ = run(10 + (R - cost) + 0.01, [Segment("x", 0, 1, a), Segment("x", 1, 2, b)], gpus=12)
    assert o.finish == 30


@pytest.mark.parametrize("after", [P(0, 4, 8, 250.0), P(0, 4, 12, 200.0)], ids=["cpu-only", "memory-only"])
def test_resize_in_place(after):
    # r0: 10; r1 after the resize: 10 - 0.5 = 9.5 (19.5) -> done at the end of r1; 19.6 needs r2
    segs = [Segment("x", 0, 1, (WHOLE,)), Segment("x", 1, 2, (after,))]
    o, _ = run(19.5, [segs[0], replace(segs[1], rounds=1)])
    assert (o.finish, o.preemptions, o.migrations, o.resizes) == (20, 0, 0, 1)
    assert lost(o) == (0.0, 0.0, 0.5)
    o, _ = run(19.6, segs)
    assert (o.finish, o.resizes) == (30, 1)


def test_no_change_across_split_segments_or_reordered_placements():
    o, _ = run(20, [Segment("x", 0, 1, (WHOLE,)), Segment("x", 1, 1, (WHOLE,))])
    assert (o.finish, o.preemptions, o.migrations, o.resizes, lost(o)) == (20, 0, 0, 0, (0.0, 0.0, 0.0))
    a = (P(0, 8, 24, 500.0), P(1, 4, 12, 250.0))
    o, _ = run(20, [Segment("x", 0, 1, a), Segment("x", 1, 1, a[::-1])], gpus=12)
    assert (o.finish, o.migrations, o.resizes) == (20, 0, 0)


def test_cost_longer_than_a_round_loses_the_round_and_counts_only_the_round():
    # restart 15 minutes > R: r2 does nothing and counts 10 lost minutes; r3 completes
    o, _ = run(20, [Segment("x", 0, 1, (WHOLE,)), Segment("x", 2, 2, (WHOLE,))], costs=(15.0, 0.0, 2.0, 1.0, 0.5))
    assert (o.finish, o.preemptions, o.restart_minutes_lost) == (40, 1, 10.0)


def test_job_finishing_in_the_change_round_still_pays_and_counts_it():
    # 15 minutes: r0 10, migration in r1 leaves 6 >= 5 -> done at the end of r1
    o, _ = run(15, [Segment("x", 0, 1, (WHOLE,)), Segment("x", 1, 1, (P(1, 4, 12, 250.0),))])
    assert (o.finish, o.migrations, o.migration_minutes_lost, o.rounds_held) == (20, 1, 4.0, 2)


def test_totals_in_metrics_are_the_sums_of_the_jobs():
    inst = instance([job("x", gpus=4, work=30), job("y", gpus=4, work=20)], nodes=2, R=R, overhead=COSTS)
    segs = [Segment("x", 0, 1, (WHOLE,)), Segment("x", 1, 1, (P(1, 4, 12, 250.0),)), Segment("x", 2, 2, (P(1, 4, 8, 250.0),)),
            Segment("y", 0, 1, (P(0, 4, 12, 250.0),)), Segment("y", 2, 1, (P(0, 4, 12, 250.0),)),
            Segment("y", 3, 1, (P(0, 4, 12, 250.0),))]
    m = compute_metrics(inst, check_schedule(inst, Schedule(tuple(segs), R)))
    # x: 10, migrate (6), resize (9.5) = 25.5, 10 -> done at 40; y: 10, restart (7), 10 -> done at 40
    assert (m.preemptions, m.migrations, m.resizes) == (1, 1, 1)
    assert (m.restart_minutes_lost, m.migration_minutes_lost, m.resize_minutes_lost) == (3.0, 4.0, 0.5)
    assert m.avg_pending_time == (0.0 + 10.0) / 2


def test_classify_rule():
    a, b = (P(0, 4, 12, 250.0),), (P(1, 4, 12, 250.0),)
    assert classify(None, None, a, 3) is Change.NONE
    assert classify(a, 2, a, 3) is Change.RESTART
    assert classify(a, 3, a, 3) is Change.NONE
    assert classify(a, 3, b, 3) is Change.MIGRATION
    assert classify(a, 3, (P(0, 2, 12, 250.0),), 3) is Change.MIGRATION
    assert classify(a, 3, (P(0, 4, 11, 250.0),), 3) is Change.RESIZE
    assert classify(a, 3, (P(0, 4, 12, 249.0),), 3) is Change.RESIZE


def test_scaled_multiplies_every_cost_and_minutes_follow_the_formulas():
    o = Overheads(*COSTS)
    s = o.scaled(3.0)
    assert [getattr(s, f.name) for f in fields(Overheads)] == [3.0 * c for c in COSTS]
    assert o.minutes(Change.NONE, 8) == 0.0
    assert o.minutes(Change.RESTART, 8) == 1 + 3
    assert o.minutes(Change.MIGRATION, 8) == 2 + 3
    assert o.minutes(Change.RESIZE, 8) == 0.5
    assert o.table(8) == {c: o.minutes(c, 8) for c in Change}
    inst = instance([job("x")], overhead=COSTS)
    assert inst.with_move_cost_scale(1.0) is inst
    assert inst.with_move_cost_scale(0.0).overheads == Overheads(0.0, 0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize("scale", [0.0, 1.0, 4.0])
def test_simulator_and_validator_agree_on_completions_for_every_policy(scale):
    inst = generate(GeneratorConfig(jobs=12, seed=4)).with_move_cost_scale(scale)  # restarts, migrations and resizes at scale 1
    for policy in [p for p in policy_names() if not p.startswith("rolling-")]:
        done_by_round: dict[int, int] = {}
        res = simulate(inst, policy, progress=lambda r, n, _, d=done_by_round: d.__setitem__(r, n))
        assert res.evaluation is not None and res.evaluation.ok, (policy, res.evaluation.errors[:3])
        finish_rounds = [round(o.finish / inst.round_minutes) for o in res.evaluation.outcomes.values()]
        # the simulator's count of finished jobs after each round it decided = the validator's
        for r, n in done_by_round.items():
            assert n == sum(1 for f in finish_rounds if f <= r + 1), (policy, scale, r)


def test_a_file_without_the_new_cost_fields_loads_with_the_defaults():
    d = instance_to_dict(instance([job("x")], overhead=COSTS))
    d["overheads"] = {"base_minutes": 0.7, "per_log2_gpu_minutes": 0.2}
    inst = instance_from_dict(d)
    assert inst.overheads == Overheads(0.7, 0.2)
    assert inst.overheads.migration_base_minutes == Overheads().migration_base_minutes
    assert instance_from_dict(instance_to_dict(replace(inst, overheads=Overheads(*COSTS)))).overheads == Overheads(*COSTS)


def test_move_cost_scale_reaches_the_instance(monkeypatch, capsys, tmp_path):
    solve_module = importlib.import_module("sensaopt.solve")  # the package exports a function of that name
    seen = []
    real = solve_module.solve
    monkeypatch.setattr(solve_module, "solve", lambda inst, **kw: (seen.append(inst.overheads), real(inst, **kw))[1])
    tiny = REPO / "instances" / "tiny-8gpu.json"
    base = load_instance(tiny).overheads
    assert main(["solve", str(tiny), "--policy", "edf", "--move-cost-scale", "2.5", "-o", str(tmp_path / "r.json")]) == 0
    assert seen == [base.scaled(2.5)]
    assert main(["solve", str(tiny), "--policy", "edf", "--move-cost-scale", "-1"]) == 2
    # validate charges the scaled costs: a migration of a 4-GPU job costs 4 x scale minutes
    inst = instance([job("x", gpus=4, work=20)], nodes=2, R=R, overhead=COSTS)
    save_instance(inst, tmp_path / "i.json")
    segs = (Segment("x", 0, 1, (WHOLE,)), Segment("x", 1, 2, (P(1, 4, 12, 250.0),)))
    save_schedule(Schedule(segs, R), inst, tmp_path / "s.json")
    for scale, minutes in ((0.5, 2.0), (2.0, 8.0)):
        capsys.readouterr()
        assert main(["validate", str(tmp_path / "i.json"), str(tmp_path / "s.json"), "--json", "--move-cost-scale", str(scale)]) == 0
        m = json.loads(capsys.readouterr().out)["metrics"]
        assert (m["migrations"], m["migration_minutes_lost"]) == (1, minutes)


def test_workload_move_cost_scale_reaches_the_trace_instance_and_keeps_old_sweep_keys():
    w = WorkloadConfig(trace="synthetic", jobs=5, preset="2x8")
    assert workload_instance(replace(w, move_cost_scale=3.0))[0].overheads == workload_instance(w)[0].overheads.scaled(3.0)
    assert "move_cost_scale" not in RunConfig().to_dict()
    assert RunConfig(move_cost_scale=4.0).key() != RunConfig().key()
    assert RunConfig.from_dict(RunConfig(move_cost_scale=4.0).to_dict()).move_cost_scale == 4.0
    assert WorkloadConfig().move_cost_scale == 1.0
