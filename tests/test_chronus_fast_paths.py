"""Chronus placement fast paths agree with their plain definitions: the inlined sort
keys (:func:`~sensaopt.policies.chronus.order.order_keys`, ``fill_keys``) with
``order_key`` and ``fill_key``, the pool's running free-GPU count with the sum over
nodes, and the cached proportional placements with ``proportional_placement``."""

from __future__ import annotations

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies.chronus import order
from sensaopt.policies.chronus import placement as chronus_placement
from sensaopt.policies.chronus.placement import ChronusPool
from sensaopt.policies.chronus.policy import ChronusCleanPolicy, ChronusPolicy
from sensaopt.policies.placement import proportional_placement
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule


@pytest.mark.parametrize("policy", [ChronusPolicy, ChronusCleanPolicy])
def test_inlined_keys_equal_key(policy, monkeypatch):
    calls = {"order": 0, "fill": 0}
    last: dict[str, float] = {}

    def checked_order_keys(pairs, now, overruns_first):
        keys = order.order_keys(pairs, now, overruns_first)
        assert keys == [order.order_key(job, js, now, overruns_first) for job, js in pairs]
        calls["order"] += 1
        last["now"] = now
        return keys

    def checked_fill_keys(pairs, urgency):
        keys = order.fill_keys(pairs, urgency)
        assert keys == [order.fill_key(job, js, last["now"]) for job, js in pairs]
        calls["fill"] += 1
        return keys

    monkeypatch.setattr(chronus_placement, "order_keys", checked_order_keys)
    monkeypatch.setattr(chronus_placement, "fill_keys", checked_fill_keys)
    inst = generate(GeneratorConfig(jobs=25, nodes=2, seed=3, round_minutes=5.0, best_effort_fraction=0.2))
    res = simulate(inst, policy())
    assert calls["order"] > 0
    if policy is ChronusPolicy:  # only the artifact reading runs the odd-minute filling pass
        assert calls["fill"] > 0
    assert check_schedule(inst, res.schedule).errors == []


def test_pool_free_count_and_cached_placements():
    inst = generate(GeneratorConfig(jobs=1, nodes=3, seed=0))
    cache: dict = {}
    pool = ChronusPool(inst.cluster, cache)
    assert pool.free == sum(pool.gpus)
    taken = []
    for g in (1, 3, 2):
        pl = pool.place_proportional(g)
        assert pl is not None
        assert pl == tuple(proportional_placement(inst.cluster.nodes[p.node], p.gpus) for p in pl)
        pool.take(pl)
        taken.append(pl)
        assert pool.free == sum(pool.gpus)
    assert cache  # placements were cached ...
    again = pool.place_proportional(1)
    assert again is not None and again[0] is cache[(again[0].node, 1)]  # ... and reused
    for pl in taken:
        pool.give_back(pl)
    assert pool.free == sum(pool.gpus) == inst.cluster.total_gpus
