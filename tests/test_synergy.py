"""Synergy-TUNE on tiny hand-made cases (allocations computed by hand) and on
generated instances (validator)."""

from __future__ import annotations

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.instance import Cluster, Instance, Job, NodeType
from sensaopt.policies import make_policy
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.synergy import SynergyConfig, SynergyTunePolicy, optimal_option
from sensaopt.profiles import SensitivityProfile
from sensaopt.schedule import Placement
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule

# one node: 8 GPUs, 24 cores, 500 GB -> proportional share 3 cores, 62.5 GB per GPU
CLUSTER = Cluster((NodeType("n", 8, 24, 500.0, 1),))

# speed 1.0 from 2 cores per GPU, flat in memory: optimal demand (2 cores, 20 GB)
MODEST = SensitivityProfile("modest", (1.0, 2.0, 3.0, 4.0), (20.0, 62.5), ((0.5, 0.5), (1.0, 1.0), (1.0, 1.0), (1.05, 1.05)))
# CPU hungry: 0.5 at 1 core, 1.0 at 3, 1.6 at 6 cores per GPU; flat in memory.
# Within 10 % of the peak 1.6 needs >= 1.44: 5 cores give 1.0 + 2/3*0.6 = 1.4 (no), 6 give 1.6.
HUNGRY = SensitivityProfile("hungry", (1.0, 3.0, 6.0), (20.0, 62.5), ((0.5, 0.5), (1.0, 1.0), (1.6, 1.6)))


def _inst(jobs) -> Instance:
    return Instance("tiny", CLUSTER, 10.0, tuple(jobs))


def _state(inst: Instance, remaining=None) -> RoundState:
    js = [JobState(spec=j, remaining=(remaining or {}).get(j.id, j.work)) for j in inst.jobs]
    return RoundState(0, 0.0, inst.round_minutes, inst.cluster, inst.overheads, js)


def test_optimal_option_by_hand():
    o = optimal_option(MODEST, CLUSTER, 0.1)
    assert (o.cpu, o.mem) == (2, 20.0)
    o = optimal_option(HUNGRY, CLUSTER, 0.1)
    assert (o.cpu, o.mem) == (6, 20.0)


def test_optimal_demand_when_it_fits():
    inst = _inst([Job("a", 0.0, 4, 60.0, MODEST), Job("b", 1.0, 2, 60.0, MODEST)])
    pol = SynergyTunePolicy()
    pol.reset(inst)
    out = pol.decide(_state(inst))
    assert out["a"] == (Placement(0, 4, 8, 80.0),)  # 4 x (2 cores, 20 GB)
    assert out["b"] == (Placement(0, 2, 4, 40.0),)
    assert pol.stats["optimal"] == 2


def test_proportional_fallback_then_take_back():
    # a: 4 GPUs x 6 cores = 24 cores (all of them), 80 GB.
    # b: optimal (24 cores) and proportional (12 cores) do not fit -> a is cut back
    #    to its proportional share (12 cores, 250 GB), b gets 12 cores, 250 GB.
    inst = _inst([Job("a", 0.0, 4, 60.0, HUNGRY), Job("b", 1.0, 4, 60.0, HUNGRY)])
    pol = SynergyTunePolicy()
    pol.reset(inst)
    out = pol.decide(_state(inst))
    assert out["a"] == (Placement(0, 4, 12, 250.0),)
    assert out["b"] == (Placement(0, 4, 12, 250.0),)
    assert pol.stats["took_back"] == 1


def test_proportional_when_optimal_does_not_fit():
    # a (MODEST, 4 GPUs) takes 8 cores, 80 GB; b (HUNGRY, 4 GPUs) would need 24 cores:
    # 16 free -> its proportional share (12 cores, 250 GB) fits without taking back.
    inst = _inst([Job("a", 0.0, 4, 60.0, MODEST), Job("b", 1.0, 4, 60.0, HUNGRY)])
    pol = SynergyTunePolicy()
    pol.reset(inst)
    out = pol.decide(_state(inst))
    assert out["a"] == (Placement(0, 4, 8, 80.0),)
    assert out["b"] == (Placement(0, 4, 12, 250.0),)


@pytest.mark.parametrize("order,first", [("fifo", "long"), ("srtf", "short")])
def test_job_order(order, first):
    inst = _inst([Job("long", 0.0, 8, 100.0, MODEST), Job("short", 1.0, 8, 20.0, MODEST)])
    pol = SynergyTunePolicy(SynergyConfig(order=order))
    pol.reset(inst)
    out = pol.decide(_state(inst))
    assert list(out) == [first]


def test_config_rejects_unknown_order():
    with pytest.raises(ValueError):
        SynergyConfig(order="lifo")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("order", ["fifo", "srtf"])
def test_generated_instances_validate(seed, order):
    inst = generate(GeneratorConfig(jobs=30, nodes=3, seed=seed, gpu_mix=((1, 0.5), (2, 0.2), (4, 0.15), (8, 0.1), (16, 0.05))))
    res = simulate(inst, make_policy("synergy-tune", order=order))
    ev = check_schedule(inst, res.schedule)
    assert ev.errors == []
    assert res.metrics.finished == len(inst.jobs)
