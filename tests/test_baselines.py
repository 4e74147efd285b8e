"""The reviewer's baselines (policies/queue.py): demotion order, stickiness, TUNE
fallback under EDF order, least laxity; each on hand-made cases, and all of them
through simulate / validator on the committed instances."""

from __future__ import annotations

import pytest

from sensaopt.instance import Cluster, Instance, Job, NodeType
from sensaopt.policies import make_policy, policy_config_class
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.queue import edf_key, order_key, queue_order, run_minutes, sticky_order, target_deadline
from sensaopt.profiles import SensitivityProfile
from sensaopt.schedule import Placement
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule

CLUSTER = Cluster((NodeType("n", 8, 24, 500.0, 1),))  # share: 3 cores, 62.5 GB per GPU
FLAT = SensitivityProfile("flat", (1.0, 3.0), (20.0, 62.5), ((1.0, 1.0), (1.0, 1.0)))
HUNGRY = SensitivityProfile("hungry", (1.0, 3.0, 6.0), (20.0, 62.5), ((0.5, 0.5), (1.0, 1.0), (2.0, 2.0)))
BASELINES = ("edf-demote", "lst", "edf-tune", "edf-tune-demote", "sensascale-paper")


def _state(jobs, now=0.0, R=10.0, remaining=None, ran=None, rnd=None) -> RoundState:
    inst = Instance("t", CLUSTER, R, tuple(jobs))
    js = []
    for j in inst.jobs:
        s = JobState(spec=j, remaining=(remaining or {}).get(j.id, j.work))
        if ran and j.id in ran:
            s.placements, s.last_round, s.first_round = ran[j.id]
        js.append(s)
    r = int(now // R) if rnd is None else rnd
    return RoundState(r, now, R, inst.cluster, inst.overheads, js)


def test_run_minutes_rounds_up_and_counts_the_restart():
    st = _state([Job("a", 0.0, 1, 25.0, FLAT, deadline=100.0)])
    assert run_minutes(st.jobs[0], st, 1.0) == 30.0  # 25 min of work -> the end of round 3
    assert run_minutes(st.jobs[0], st, 2.0) == 20.0  # 12.5 min
    # paused after running in round 0, now round 2: restart 0.5 min -> 25.5 -> 30
    st = _state([Job("a", 0.0, 1, 20.0, FLAT, deadline=100.0)], now=20.0, ran={"a": ((Placement(0, 1, 3, 62.5),), 0, 0)})
    assert run_minutes(st.jobs[0], st, 1.0) == 30.0  # 20 + 0.5 restart -> 3 rounds


def test_demotion_targets_the_first_reachable_deadline():
    a = Job("a", 0.0, 1, 30.0, FLAT, deadline=20.0)  # needs 30 min: misses 20 at speed 1
    st = _state([a])
    assert target_deadline(st.jobs[0], st, 1.0, demote_late=False) == 20.0
    assert target_deadline(st.jobs[0], st, 1.0, demote_late=True) is None
    assert target_deadline(st.jobs[0], st, 2.0, demote_late=True) == 20.0  # 15 min at speed 2 -> round end 20


def test_late_jobs_go_behind_every_job_that_can_still_make_it():
    late = Job("late", 0.0, 1, 50.0, FLAT, deadline=20.0)
    ok = Job("ok", 1.0, 1, 10.0, FLAT, deadline=200.0)
    be = Job("be", 0.5, 1, 5.0, FLAT)  # best effort, shorter than late: first in the demoted tier
    st = _state([late, ok, be])
    plain = [js.id for js in queue_order(st.jobs, st, "edf", False, lambda js: 1.0)]
    demoted = [js.id for js in queue_order(st.jobs, st, "edf", True, lambda js: 1.0)]
    assert plain == ["late", "ok", "be"]
    assert demoted == ["ok", "be", "late"]


def test_plain_edf_key_is_the_general_key():
    from sensaopt.instance import SoftDeadline

    jobs = [Job("late", 0.0, 1, 50.0, FLAT, deadline=20.0), Job("ok", 1.0, 2, 10.0, FLAT, deadline=200.0),
            Job("be", 0.5, 1, 5.0, FLAT), Job("be2", 0.5, 4, 5.0, HUNGRY),
            Job("soft", 2.0, 1, 30.0, FLAT, deadline=40.0, value=10.0, soft_deadlines=(SoftDeadline(90.0, 5.0),))]
    st = _state(jobs, now=10.0, ran={"ok": ((Placement(0, 2, 6, 125.0),), 0, 0)})
    general = order_key(st, "edf", False, lambda js: 1.0)
    assert [edf_key(js) for js in st.jobs] == [general(js) for js in st.jobs]


def test_least_laxity_order():
    a = Job("a", 0.0, 1, 10.0, FLAT, deadline=100.0)  # LST 90
    b = Job("b", 1.0, 1, 80.0, FLAT, deadline=120.0)  # LST 40: first, although its deadline is later
    st = _state([a, b])
    assert [js.id for js in queue_order(st.jobs, st, "lst", False, lambda js: 1.0)] == ["b", "a"]
    assert [js.id for js in queue_order(st.jobs, st, "edf", False, lambda js: 1.0)] == ["a", "b"]


def test_sticky_places_running_jobs_first_on_their_nodes():
    cluster = Cluster((NodeType("n", 4, 12, 250.0, 2),))
    old = Job("old", 0.0, 2, 100.0, FLAT, deadline=500.0)  # ran on node 1 last round
    new = Job("new", 5.0, 4, 100.0, FLAT, deadline=200.0)  # earlier deadline, needs a whole node
    inst = Instance("t", cluster, 10.0, (old, new))
    js_old = JobState(spec=old, remaining=90.0, placements=(Placement(1, 2, 6, 125.0),), last_round=0, first_round=0)
    js_new = JobState(spec=new, remaining=100.0)
    st = RoundState(1, 10.0, 10.0, cluster, inst.overheads, [js_old, js_new])
    assert [js.id for js in sticky_order([js_new, js_old], st)] == ["old", "new"]
    for name, keeps in (("edf", True), ("edf-demote", True)):
        pol = make_policy(name)
        pol.reset(inst)
        out = pol.decide(st)
        assert out["old"][0].node == 1 and out["new"][0].node == 0, (name, keeps)


def test_sticky_admits_by_priority_then_places_running_first():
    cluster = Cluster((NodeType("n", 4, 12, 250.0, 1),))
    run = Job("run", 0.0, 2, 100.0, FLAT, deadline=900.0)
    urgent = Job("urgent", 5.0, 4, 40.0, FLAT, deadline=60.0)  # takes the whole node: 'run' is not admitted
    inst = Instance("t", cluster, 10.0, (run, urgent))
    st = RoundState(1, 10.0, 10.0, cluster, inst.overheads,
                    [JobState(spec=run, remaining=90.0, placements=(Placement(0, 2, 6, 125.0),), last_round=0, first_round=0),
                     JobState(spec=urgent, remaining=40.0)])
    pol = make_policy("edf-demote")
    pol.reset(inst)
    assert set(pol.decide(st)) == {"urgent"}


def test_edf_tune_gives_optimal_demand_then_falls_back_in_deadline_order():
    a = Job("a", 0.0, 4, 60.0, HUNGRY, deadline=300.0)
    b = Job("b", 5.0, 4, 60.0, HUNGRY, deadline=100.0)  # later arrival, earlier deadline
    c = Job("c", 6.0, 2, 60.0, HUNGRY, deadline=90.0)  # earliest deadline: optimal demand, 2 x 6 cores
    inst = Instance("t", CLUSTER, 10.0, (a, b, c))
    st = _state([a, b, c])
    for name, first in (("synergy-tune", "a"), ("edf-tune", "c")):
        pol = make_policy(name)
        pol.reset(inst)
        assert pol.order(st.jobs, st)[0].id == first
    pol = make_policy("edf-tune")
    pol.reset(inst)
    out = pol.decide(st)
    # c: optimal demand, 2 x (6 cores, 20 GB); b: its optimal (24 cores) does not fit in the
    # 12 cores left, its share (12 cores, 250 GB) does; a: 4 GPUs, 2 free -> waits
    assert out == {"c": (Placement(0, 2, 12, 40.0),), "b": (Placement(0, 4, 12, 250.0),)}
    assert pol.stats == {"optimal": 1, "proportional": 1, "took_back": 0, "waited": 1}


def test_named_configurations_differ_only_in_their_defaults():
    assert policy_config_class("edf-demote")().demote_late and policy_config_class("edf-demote")().sticky
    assert policy_config_class("lst")().order == "lst"
    tune = policy_config_class("edf-tune-demote")()
    assert (tune.order, tune.demote_late, tune.sticky) == ("edf", True, True)
    paper = policy_config_class("sensascale-paper")()
    assert (paper.deadline_order, paper.adjust, paper.fill_spare, paper.repack_limit) == ("lst-strict", True, False, 0)
    with pytest.raises(ValueError, match="order"):
        make_policy("edf", order="random")


@pytest.mark.parametrize("name", BASELINES)
@pytest.mark.parametrize("inst_name", ["small-8gpu", "small-16gpu"])
def test_baselines_produce_valid_schedules(name, inst_name):
    import sensaopt

    inst = sensaopt.load_instance(inst_name)
    res = simulate(inst, name)
    assert check_schedule(inst, res.schedule).ok
    assert res.metrics.finished == len(inst.jobs)
    assert res.params["config"] == {f: getattr(policy_config_class(name)(), f) for f in res.params["config"]}
