"""Each validator rule has a schedule that breaks exactly it; hand-computed outcomes."""

from dataclasses import replace

import pytest

from sensaopt.metrics import compute_metrics
from sensaopt.schedule import Placement as P
from sensaopt.schedule import Schedule, Segment
from sensaopt.validator import (
    CAPACITY_RULES,
    GATE_RULES,
    RULES,
    SEGMENT_RULES,
    JobReplay,
    RuleContext,
    Usage,
    check_schedule,
    rule_after_completion,
    rule_incomplete,
    rule_overlap,
    rule_round_length,
    validate,
)

from .util import instance, job

# two 8-GPU nodes, 24 cores and 500 GB each; rounds of 10 minutes; overhead 0.5 + 0.5·log2 g
INST = instance(
    [
        job("a", arrival=0, gpus=1, work=20, model="bert", deadline=30),  # 2 rounds at speed 1
        job("b", arrival=15, gpus=2, work=30, model="res18", deadline=60),  # release round 2
        job("c", arrival=0, gpus=12, work=10, model="gnmt"),  # one whole node + 4 GPUs
        job("e", arrival=0, gpus=7, work=10, model="bert"),
    ],
    nodes=2,
)


def base_segments():
    return [
        Segment("a", 0, 2, (P(0, 1, 3, 62.5),)),
        Segment("b", 2, 3, (P(0, 2, 6, 125.0),)),
        Segment("c", 5, 1, (P(0, 8, 24, 500.0), P(1, 4, 12, 250.0))),
        Segment("e", 6, 1, (P(1, 7, 21, 437.5),)),
    ]


def sched(segs):
    """A Schedule of ``segs`` as the validator may meet it: built without the format's
    construction checks (``Schedule.__post_init__``), so that segments the constructor
    refuses (no rounds, fractional cores, no GPU) still reach the rules meant to catch
    them in schedules altered after construction."""
    s = object.__new__(Schedule)
    for name, value in (("segments", tuple(segs)), ("round_minutes", 10.0), ("meta", {})):
        object.__setattr__(s, name, value)
    return s


def rules(segs, **kw):
    return {e.rule for e in check_schedule(INST, sched(segs), **kw).errors}


def test_base_schedule_is_valid_and_outcomes_are_hand_computed():
    ev = validate(INST, sched(base_segments()))
    o = ev.outcomes
    assert (o["a"].first_start, o["a"].finish) == (0, 20)
    assert (o["b"].first_start, o["b"].finish) == (20, 50)
    assert o["c"].finish == 60 and o["e"].finish == 70
    m = compute_metrics(INST, ev)
    assert m.slo_violations == 0 and m.avg_jct == pytest.approx((20 + 35 + 60 + 70) / 4)
    assert m.avg_queueing_time == pytest.approx((0 + 5 + 50 + 60) / 4)
    assert m.makespan == 70
    assert m.gpu_utilization == pytest.approx((1 * 20 + 2 * 30 + 12 * 10 + 7 * 10) / (16 * 70))


def replace_seg(job_id, **kw):
    return [replace(s, **kw) if s.job == job_id else s for s in base_segments()]


CASES = {
    "unknown_job": base_segments() + [Segment("zz", 0, 1, (P(1, 1, 3, 62.5),))],
    "unknown_node": replace_seg("a", placements=(P(5, 1, 3, 62.5),)),
    "bad_segment": base_segments() + [Segment("a", 9, 0, (P(1, 1, 3, 62.5),))],
    "gang": replace_seg("e", placements=(P(1, 6, 18, 375.0),)),
    "single_node": replace_seg("b", placements=(P(0, 1, 3, 62.5), P(1, 1, 3, 62.5))),
    "whole_nodes": replace_seg("c", placements=(P(0, 6, 18, 375.0), P(1, 6, 18, 375.0))),
    "before_arrival": replace_seg("b", start=1),
    "whole_cores": replace_seg("a", placements=(P(0, 1, 3.5, 62.5),)),
    "capacity_gpu": replace_seg("e", start=2, placements=(P(0, 7, 7, 145.81),)),  # meets b: 9 GPUs
    "capacity_cpu": replace_seg("a", placements=(P(0, 1, 25, 62.5),)),
    "capacity_mem": replace_seg("a", placements=(P(0, 1, 3, 501.0),)),
    "after_completion": replace_seg("a", rounds=3),
    "incomplete": replace_seg("a", rounds=1),
    "overlap": base_segments() + [Segment("a", 1, 1, (P(1, 1, 3, 62.5),))],
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_rule_broken_alone(rule):
    # a segment on an unknown node cannot count as progress: leave completion out of that case
    assert rules(CASES[rule], require_complete=rule != "unknown_node") == {rule}


# ---- each rule function on its own ------------------------------------------------------------
FLOOR = replace_seg("a", placements=(P(0, 1, 3, 10.0),))
DUPLICATE = replace_seg("c", placements=(P(0, 8, 24, 500.0), P(0, 4, 12, 250.0)))
SCHEDULE_CASES = {**{r: segs for r, segs in CASES.items() if RULES[r] not in (rule_overlap, rule_after_completion, rule_incomplete)},
                  "floor": FLOOR, "duplicate_node": DUPLICATE}


def alone(name, segs):
    """The errors of one segment or capacity rule function, applied at its scope to every segment."""
    fn, ctx = RULES[name], RuleContext.of(INST)
    passed = [s for s in segs if not any(gate(ctx, s) for gate in GATE_RULES)]
    if fn in GATE_RULES:
        return [e for s in segs for e in fn(ctx, s)]
    if fn in SEGMENT_RULES:
        return [e for s in passed for e in fn(ctx, INST.job(s.job), s)]
    assert fn in CAPACITY_RULES
    return list(fn(ctx, Usage.of(ctx, passed), passed))


def test_every_rule_has_a_function_and_a_case():
    assert len(RULES) == 16 and set(RULES) == set(CASES) | {"floor", "duplicate_node"}
    assert set(SCHEDULE_CASES) | {"overlap", "after_completion", "incomplete"} == set(RULES)


@pytest.mark.parametrize("rule", sorted(SCHEDULE_CASES))
def test_rule_function_reports_its_case(rule):
    found = alone(rule, SCHEDULE_CASES[rule])
    assert found and {e.rule for e in found} == {rule}


@pytest.mark.parametrize("rule", sorted(SCHEDULE_CASES))
def test_valid_schedule_passes_each_rule_function(rule):
    assert alone(rule, base_segments()) == []


def test_round_length_is_a_bad_segment():
    ctx = RuleContext.of(INST)
    assert rule_round_length(ctx, sched(base_segments())) == ()
    (e,) = rule_round_length(ctx, Schedule(tuple(base_segments()), 5.0))
    assert e.rule == "bad_segment" and "round length 5.0" in e.message


def replay(job_id, segs):
    rp = JobReplay.start(INST, INST.job(job_id))
    for s in segs:
        rp.run(s)
    return rp


A0 = Segment("a", 0, 2, (P(0, 1, 3, 62.5),))  # a: 20 minutes of work at speed 1 -> done at the end of round 1


def test_overlap_rule_alone():
    rp = replay("a", [A0])
    assert rule_overlap(rp, Segment("a", 2, 1, A0.placements)) == ()
    (e,) = rule_overlap(rp, Segment("a", 1, 1, (P(1, 1, 3, 62.5),)))
    assert (e.rule, e.job, e.round, e.message) == ("overlap", "a", 1, "segments starting at rounds 0 and 1 overlap")
    assert rule_overlap(replay("a", []), A0) == ()  # a first segment overlaps nothing


def test_after_completion_rule_alone():
    rp = replay("a", [A0])
    assert rp.finish == 20 and rule_after_completion(rp, A0) == ()
    long = replace(A0, rounds=3)
    rp = replay("a", [long])
    (e,) = rule_after_completion(rp, long)
    assert (e.rule, e.round, e.message) == ("after_completion", 2, "holds resources for 1 round(s) after completing at minute 20")
    later = Segment("a", 5, 1, A0.placements)
    rp.run(later)
    (e,) = rule_after_completion(rp, later)
    assert (e.round, e.message) == (5, "holds resources in round 5, after completing at minute 20")


def test_incomplete_rule_alone():
    assert rule_incomplete(replay("a", [A0])) == ()
    (e,) = rule_incomplete(replay("a", [replace(A0, rounds=1)]))
    assert (e.rule, e.job, e.round, e.message) == ("incomplete", "a", None, "work done 10 of 20 minutes")
    assert rule_incomplete(replay("a", []))[0].message == "work done 0 of 20 minutes"


def test_no_gpu_placement_is_a_floor_error_not_a_crash():
    segs = replace_seg("a", placements=(P(0, 0, 3, 62.5),))
    ev = check_schedule(INST, sched(segs), require_complete=False)
    assert {e.rule for e in ev.errors} == {"floor", "gang"} and ev.outcomes["a"].work_done == 0


def test_errors_are_capped_in_the_order_found():
    segs = base_segments() + [Segment(f"x{k}", 0, 1, (P(0, 1, 3, 62.5),)) for k in range(5)]
    full = check_schedule(INST, sched(segs)).errors
    capped = check_schedule(INST, sched(segs), max_errors=3).errors
    assert [str(e) for e in capped] == [str(e) for e in full[:3]] and full[0].message == "unknown job 'x0'"


def test_floor_broken_alone():
    # 0.5 GB per GPU is below bert's 20.83 GB floor; progress at zero speed is not completion
    segs = replace_seg("a", placements=(P(0, 1, 3, 10.0),))
    assert rules(segs, require_complete=False) == {"floor"}


def test_duplicate_node():
    segs = replace_seg("c", placements=(P(0, 8, 24, 500.0), P(0, 4, 12, 250.0)))
    r = rules(segs)
    assert "duplicate_node" in r and r <= {"duplicate_node", "capacity_gpu", "capacity_cpu", "capacity_mem"}


def test_change_costs_after_preemption_and_migration():
    # b: 2 GPUs: restart 0.5 + 0.5·1 = 1 minute, migration (default) 1 + 0.5·1 = 1.5 minutes;
    # res18 at 6 cores/125 GB per GPU... per GPU (3, 62.5) -> 1.0
    segs = [
        Segment("a", 0, 2, (P(0, 1, 3, 62.5),)),
        Segment("b", 2, 1, (P(0, 2, 6, 125.0),)),  # 10 done
        Segment("b", 4, 1, (P(0, 2, 6, 125.0),)),  # resume after a gap: 9 done (19)
        Segment("b", 5, 1, (P(1, 2, 6, 125.0),)),  # migrate: 8.5 done (27.5)
        Segment("b", 6, 1, (P(1, 2, 6, 125.0),)),  # 2.5 left: done at the end of round 6
        Segment("c", 7, 1, (P(0, 8, 24, 500.0), P(1, 4, 12, 250.0))),
        Segment("e", 8, 1, (P(1, 7, 21, 437.5),)),
    ]
    ev = validate(INST, sched(segs))
    assert ev.outcomes["b"].finish == 70
    b = ev.outcomes["b"]
    assert b.preemptions == 1 and b.migrations == 1 and b.resizes == 0
    assert (b.restart_minutes_lost, b.migration_minutes_lost, b.rounds_held) == (1.0, 1.5, 4)
    # one round less and b is not done: 27.5 < 30
    ev2 = check_schedule(INST, sched(segs[:4] + segs[5:]))
    assert {e.rule for e in ev2.errors} == {"incomplete"}


def test_resize_on_same_node_is_counted_and_speed_follows_profile():
    # b at 9 cores/GPU (res18: 2.4x) for one round (24 done), then proportional after a
    # resize costing 0.5 minutes: 9.5 more >= 6 left, done in round 3
    segs = replace_seg("b", rounds=1, placements=(P(0, 2, 18, 125.0),))
    segs.insert(2, Segment("b", 3, 1, (P(0, 2, 6, 125.0),)))
    ev = validate(INST, sched(segs))
    b = ev.outcomes["b"]
    assert b.finish == 40 and b.migrations == 0 and b.resizes == 1 and b.resize_minutes_lost == 0.5


def test_speed_factor_changes_progress():
    inst = replace(INST, jobs=tuple(replace(j, speed_factor=0.5) if j.id == "a" else j for j in INST.jobs))
    assert {e.rule for e in check_schedule(inst, sched(base_segments())).errors} == {"incomplete"}
    ok = replace_seg("a", rounds=4)
    ok[1] = replace(ok[1], start=4)
    ok[2] = replace(ok[2], start=7)
    ok[3] = replace(ok[3], start=8)
    assert check_schedule(inst, sched(ok)).ok


def test_soft_deadline_losses():
    inst = instance([job("s", work=30, deadline=20, value=10, soft=((40, 8), (60, 5)))])
    for start, loss in ((0, 2.0), (2, 5.0), (4, 10.0)):  # finishing at 30, 50, 70 minutes
        seg = [Segment("s", start, 3, (P(0, 1, 3, 62.5),))]
        m = compute_metrics(inst, validate(inst, sched(seg)))
        assert m.weighted_violations == pytest.approx(loss) and m.slo_violations == 1
        assert m.objective == pytest.approx(inst.objective.violation_weight * loss + m.avg_jct)
