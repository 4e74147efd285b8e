"""Chronus fast paths agree with their plain definitions: the inlined sort keys
(:func:`~sensaopt.policies.chronus.order.order_keys`, ``fill_keys``) with ``order_key``
and ``fill_key``, the pool's running free-GPU count with the sum over nodes, the cached
proportional placements with ``proportional_placement``, the pool's no-room skip with
a plain search, the incremental admission packing (:class:`~sensaopt.policies.chronus.admission.Packer`)
with packing from scratch, and the vectorised plan check with a slot-by-slot one."""

from __future__ import annotations

import random

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies.chronus import order
from sensaopt.policies.chronus import placement as chronus_placement
from sensaopt.policies.chronus.admission import Packer, admit, earliest_feasible_m, greedy_pack
from sensaopt.policies.chronus.placement import ChronusPool
from sensaopt.policies.chronus.policy import ChronusCleanPolicy, ChronusPolicy
from sensaopt.policies.chronus.selection import LeaseJob, check_plans
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


def scratch_pack(requests, capacity, total):
    """The packing rule written plainly (the code before the incremental packer): sort
    all requests, then each takes the latest ``l`` slots before ``m`` with room."""
    horizon = max([m for _, _, _, m in requests] + [len(capacity)])
    cap = list(capacity) + [total] * (horizon - len(capacity))
    plans = {}
    for _r, _slack, _m, k in sorted((-r, m - n, -m, k) for k, (_, r, n, m) in enumerate(requests)):
        key, r, n, m = requests[k]
        got = [t for t in range(m - 1, -1, -1) if cap[t] >= r][:n] if n <= m else []
        if len(got) < n:
            return None
        for t in got:
            cap[t] -= r
        plans[key] = sorted(got)
    return plans


def scratch_earliest(others, new, capacity, total):
    key, r, n, m = new
    right = max([mm for *_, mm in others] + [len(capacity), m]) + n + 1
    return next((mm for mm in range(max(n, m), right) if scratch_pack(others + [(key, r, n, mm)], capacity, total)), right)


def _requests(rng, count, prefix):
    return [(f"{prefix}{i}", rng.choice([1, 1, 2, 4, 8]), rng.randint(0, 5), rng.randint(0, 14)) for i in range(count)]


@pytest.mark.parametrize("seed", range(4))
def test_packer_equals_packing_from_scratch(seed):
    rng = random.Random(seed)
    for _ in range(150):
        total = rng.choice([4, 8, 16])
        cap = [rng.randint(0, total) for _ in range(rng.randint(0, 12))]
        first, later = _requests(rng, rng.randint(0, 8), "a"), _requests(rng, rng.randint(1, 6), "b")
        assert greedy_pack(first, cap, total) == scratch_pack(first, cap, total)
        packer, packed = Packer(first, cap, total), list(first)
        for new in later:  # as an admission step: decide, then add (admitted or kept)
            new = (new[0], new[1], max(new[2], 1), new[3])
            plans = scratch_pack(packed + [new], cap, total)
            assert packer.probe(new) == (plans[new[0]] if plans else None)
            feasible = scratch_pack(packed, cap, total) is not None and scratch_earliest(packed, new, cap, total)
            if feasible and scratch_pack(packed + [(new[0], new[1], new[2], feasible)], cap, total):  # the search is monotone here
                assert earliest_feasible_m(packer, new) == feasible
                dec = admit(packer, new, last_m=new[3] + rng.randint(0, 3))
                assert dec.m == (new[3] if plans else feasible)
            packer.add(new)
            packed.append(new)
            assert packer.plans() == scratch_pack(packed, cap, total)


@pytest.mark.parametrize("seed", range(4))
def test_packer_kept_probe_then_add(seed):
    """probe(keep=True) then add of the same request (admission's path), with and
    without the no-replay shortcut: the same packing as from scratch after each add."""
    rng = random.Random(100 + seed)
    for _ in range(150):
        total = rng.choice([4, 8, 16])
        cap = [rng.randint(0, total) for _ in range(rng.randint(0, 12))]
        first = _requests(rng, rng.randint(0, 8), "a")
        packer, packed = Packer(first, cap, total), list(first)
        for new in _requests(rng, rng.randint(1, 8), "b"):
            new = (new[0], new[1], max(new[2], 1), new[3])
            plans = scratch_pack(packed + [new], cap, total)
            assert packer.probe(new, keep=True) == (plans[new[0]] if plans else None)
            packer.add(new)
            packed.append(new)
            assert packer.plans() == scratch_pack(packed, cap, total)
            fresh = Packer(packed, cap, total)
            assert packer.caps[: len(fresh.caps)] == fresh.caps and packer.slots[: len(fresh.slots)] == fresh.slots


def test_no_room_skip_same_as_plain_search():
    inst = generate(GeneratorConfig(jobs=1, nodes=4, seed=0))
    rng = random.Random(5)
    for _ in range(50):
        pool, plain = ChronusPool(inst.cluster, {}), ChronusPool(inst.cluster, {})
        for _ in range(30):
            g = rng.choice([1, 2, 3, 4, 8, 12])
            want = plain.place_proportional(g)
            if want is not None:
                plain.take(want)
            skipped = pool.no_room <= g <= pool.max_gpus
            got = None if skipped else pool.place_proportional(g)
            if got is None and not skipped and g <= pool.max_gpus:
                pool.no_room = g
            assert got == want
            if got is not None:
                pool.take(got)
            assert pool.full == (plain.place_proportional(1) is None)


def test_check_plans_vectorised():
    jobs = [LeaseJob("a", 2, 2, ((3, 1.0),)), LeaseJob("b", 1, 1, ((2, 1.0), (3, 0.5)))]
    check_plans(jobs, {"a": (0, (0, 2)), "b": (1, (2,))}, [2, 2, 3])
    check_plans(jobs, {"a": (0, (1, 2))}, [0, 2, 2])  # partial selections are allowed
    for plans, cap in [({"a": (0, (0, 2)), "b": (1, (2,))}, [2, 2, 2]),  # slot 2 over capacity
                       ({"a": (0, (0, 3))}, [2, 2, 2, 2]),  # slot 3 past the option's 3 slots
                       ({"a": (0, (1, 1))}, [2, 2, 2]),  # the same slot twice
                       ({"b": (0, ())}, [2, 2, 2])]:  # fewer slots than leases
        with pytest.raises(AssertionError):
            check_plans(jobs, plans, cap)
