"""Chronus placement fast paths agree with their plain definitions: the inlined sort
keys with :meth:`ChronusPolicy._key` and ``_fill_key``, the pool's running free-GPU count with the sum
over nodes, and the cached proportional placements with ``proportional_placement``."""

from __future__ import annotations

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies.chronus.policy import ChronusCleanPolicy, ChronusPolicy, _ChronusPool
from sensaopt.policies.placement import proportional_placement
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule


def _checked(base: type[ChronusPolicy]) -> type[ChronusPolicy]:
    class Checked(base):  # type: ignore[valid-type, misc]
        calls = 0
        fill_calls = 0

        def _keys(self, pairs, now):
            keys = super()._keys(pairs, now)
            assert keys == [self._key(cj, js, now) for cj, js in pairs]
            type(self).calls += 1
            self.now = now
            return keys

        def _fill_keys(self, pairs, urgency):
            keys = super()._fill_keys(pairs, urgency)
            assert keys == [self._fill_key(cj, js, self.now) for cj, js in pairs]
            type(self).fill_calls += 1
            return keys

    return Checked


@pytest.mark.parametrize("base", [ChronusPolicy, ChronusCleanPolicy])
def test_inlined_keys_equal_key(base):
    inst = generate(GeneratorConfig(jobs=25, nodes=2, seed=3, round_minutes=5.0, best_effort_fraction=0.2))
    pol = _checked(base)()
    res = simulate(inst, pol)
    assert type(pol).calls > 0
    if base is ChronusPolicy:  # only the artifact reading runs the odd-minute filling pass
        assert type(pol).fill_calls > 0
    assert check_schedule(inst, res.schedule).errors == []


def test_pool_free_count_and_cached_placements():
    inst = generate(GeneratorConfig(jobs=1, nodes=3, seed=0))
    cache: dict = {}
    pool = _ChronusPool(inst.cluster, cache)
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
