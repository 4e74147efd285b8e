"""The simulator: every policy's schedule validates; determinism; conservation."""

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance
from sensaopt.policies import policy_names
from sensaopt.simulator import apply_profile_error, simulate
from sensaopt.validator import check_schedule

from .conftest import INSTANCE_FILES
from .util import instance, job

# policies that solve an optimization model every round are exercised in their own tests
FAST_POLICIES = [p for p in policy_names() if not p.startswith("rolling")]


def test_committed_instances_exist():
    names = {f.stem for f in INSTANCE_FILES}
    for rung in ("tiny", "small", "medium"):
        for g in ("8gpu", "16gpu"):
            assert f"{rung}-{g}" in names


@pytest.mark.parametrize("policy", FAST_POLICIES)
@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.stem)
def test_every_policy_on_every_committed_instance_validates(path, policy):
    inst = load_instance(path)
    res = simulate(inst, policy)
    ev = check_schedule(inst, res.schedule)
    assert ev.ok, ev.errors[:3]
    assert res.metrics.finished == len(inst.jobs)
    assert res.objective == pytest.approx(res.metrics.objective)
    assert res.status.value == "FEASIBLE" and res.bound is None


@pytest.mark.parametrize("policy", ["sensascale", "edf"])
def test_same_seed_same_result(policy):
    inst = generate(GeneratorConfig(jobs=30, nodes=2, seed=4))
    a = simulate(inst, policy, profile_error=0.3, seed=7)
    b = simulate(inst, policy, profile_error=0.3, seed=7)
    assert a.schedule == b.schedule and a.metrics == b.metrics


def test_profile_error_is_seeded_and_hidden_from_policies():
    inst = generate(GeneratorConfig(jobs=10, nodes=1, seed=1))
    t1, t2, t3 = (apply_profile_error(inst, 0.2, s) for s in (1, 1, 2))
    assert [j.speed_factor for j in t1.jobs] == [j.speed_factor for j in t2.jobs]
    assert [j.speed_factor for j in t1.jobs] != [j.speed_factor for j in t3.jobs]
    seen = []

    class Spy:
        name = "spy"

        def reset(self, instance):
            seen.extend(j.speed_factor for j in instance.jobs)

        def decide(self, state):
            seen.extend(js.spec.speed_factor for js in state.jobs)
            from sensaopt.policies.simple import EDFPolicy

            p = EDFPolicy()
            return p.decide(state)

    res = simulate(inst, Spy(), profile_error=0.5, seed=3)
    assert set(seen) == {1.0}
    assert check_schedule(apply_profile_error(inst, 0.5, 3), res.schedule).ok


def test_work_is_conserved_and_capacity_respected():
    inst = generate(GeneratorConfig(jobs=40, nodes=2, seed=2, load=2.0))
    res = simulate(inst, "sensascale", profile_error=0.2, seed=5)
    ev = check_schedule(apply_profile_error(inst, 0.2, 5), res.schedule)
    assert ev.ok
    assert sum(o.work_done for o in ev.outcomes.values()) == pytest.approx(sum(j.work for j in inst.jobs))
    for res_name, cap in (("gpu", 8), ("cpu", 24), ("mem", 500)):
        assert ev.usage[res_name].max() <= cap + 1e-6


def test_idle_stretches_are_skipped():
    inst = instance([job("a", arrival=0, work=10), job("b", arrival=100000, work=10)])
    res = simulate(inst, "fifo")
    assert res.params["rounds_decided"] == 2
    assert res.metrics.makespan == 100010


def test_hand_computed_fifo_run():
    # one 8-GPU node; a (8 GPUs, 20 min) blocks b (1 GPU) until minute 20
    inst = instance([job("a", gpus=8, work=20), job("b", arrival=1, work=15, deadline=30)])
    m = simulate(inst, "fifo").metrics
    assert m.avg_jct == pytest.approx((20 + (40 - 1)) / 2)
    assert m.slo_violations == 1 and m.avg_queueing_time == pytest.approx((0 + 19) / 2)


def test_bad_policy_decision_is_reported():
    from sensaopt.errors import PolicyError
    from sensaopt.schedule import Placement

    class Greedy:
        name = "overcommit"

        def reset(self, instance):
            pass

        def decide(self, state):
            return {js.id: (Placement(0, js.gpus, 24, 500.0),) for js in state.jobs}

    inst = instance([job("a", work=10), job("b", work=10)])
    with pytest.raises(PolicyError, match="over-committed node"):
        simulate(inst, Greedy())
