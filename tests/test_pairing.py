"""The pairing step: the fast assignment path has the weight of networkx's matching and of
a brute-force matching; weights are Python ints."""

import itertools
import random

import numpy as np
import pytest

from sensaopt.policies.sensascale.pairing import match_assignment, match_networkx


def total(W, pairs):
    return int(sum(W[a, b] for a, b in pairs))


def is_matching(pairs):
    rows = [a for a, _ in pairs]
    cols = [b for _, b in pairs]
    return len(set(rows)) == len(rows) and len(set(cols)) == len(cols)


def brute_force(W):
    S, I = W.shape
    best = 0
    for k in range(min(S, I) + 1):
        for rows in itertools.combinations(range(S), k):
            for cols in itertools.permutations(range(I), k):
                best = max(best, int(sum(W[r, c] for r, c in zip(rows, cols))))
    return best


def random_matrix(rng, S, I, density):
    W = np.zeros((S, I), dtype=np.int64)
    for a in range(S):
        for b in range(I):
            if rng.random() < density:
                W[a, b] = rng.randint(1, 10**6)
    return W


@pytest.mark.parametrize("seed", range(40))
def test_assignment_equals_brute_force_and_networkx_small(seed):
    rng = random.Random(seed)
    W = random_matrix(rng, rng.randint(0, 4), rng.randint(0, 4), rng.choice([0.2, 0.5, 1.0]))
    a, n = match_assignment(W), match_networkx(W)
    assert is_matching(a) and is_matching(n)
    assert all(W[r, c] > 0 for r, c in a + n)
    assert total(W, a) == total(W, n) == brute_force(W)


@pytest.mark.parametrize("seed", range(25))
def test_assignment_equals_networkx_larger(seed):
    rng = random.Random(1000 + seed)
    W = random_matrix(rng, rng.randint(5, 40), rng.randint(5, 40), rng.choice([0.1, 0.3, 0.8]))
    assert total(W, match_assignment(W)) == total(W, match_networkx(W))


def test_networkx_edges_are_ordered_sensitive_first():
    W = np.array([[0, 5], [7, 0]], dtype=np.int64)
    assert match_networkx(W) == [(0, 1), (1, 0)]


def test_vectorised_weights_equal_per_pair_weights():
    from sensaopt.policies.base import JobState, RoundState
    from sensaopt.policies.sensascale import SensaScalePolicy
    from sensaopt.policies.sensascale.analysis import analyse
    from sensaopt.policies.sensascale.pairing import pair_weight, weight_matrix
    from sensaopt.generate import GeneratorConfig, generate

    inst = generate(GeneratorConfig(jobs=80, nodes=4, seed=5))
    pol = SensaScalePolicy()
    pol.reset(inst)
    st = RoundState(3, 30.0, 10.0, inst.cluster, inst.overheads, [JobState(spec=j, remaining=j.work * 0.7) for j in inst.jobs])
    infos = analyse(st, pol.facts, pol.config)
    sens = [x for x in infos if x.facts.sensitive]
    insens = [x for x in infos if not x.facts.sensitive]
    W = weight_matrix(sens, insens, inst.cluster, 30.0, 10.0, 10**6)
    ref = np.array([[pair_weight(s, i, inst.cluster, 30.0, 10.0, 10**6) for i in insens] for s in sens])
    assert W.shape == ref.shape and (W.sum() > 0)
    assert np.abs(W - ref).max() <= 1  # same value up to float rounding of the last unit


def class_graph(rng, S, I, kr, kc):
    """A job graph whose rows (columns) come from kr (kc) classes, and its class form."""
    base = np.array([[rng.choice([0, 0, rng.randint(1, 10**6)]) for _ in range(kc)] for _ in range(kr)], dtype=np.int64)
    rows = [rng.randrange(kr) for _ in range(S)]
    cols = [rng.randrange(kc) for _ in range(I)]
    W = base[np.ix_(rows, cols)] if S and I else np.zeros((S, I), dtype=np.int64)
    return W, base, [[n for n, r in enumerate(rows) if r == c] for c in range(kr)], [[n for n, r in enumerate(cols) if r == c] for c in range(kc)]


@pytest.mark.parametrize("seed", range(60))
def test_class_matching_has_the_weight_of_networkx(seed):
    from sensaopt.policies.sensascale.pairing import match_classes

    rng = random.Random(5000 + seed)
    W, Wc, rm, cm = class_graph(rng, rng.randint(0, 30), rng.randint(0, 30), rng.randint(1, 5), rng.randint(1, 5))
    pairs = match_classes(Wc, rm, cm)
    assert is_matching(pairs) and all(W[a, b] > 0 for a, b in pairs)
    assert total(W, pairs) == total(W, match_networkx(W)) == total(W, match_assignment(W))


def test_class_weights_equal_the_job_matrix_on_a_policy_graph():
    from sensaopt.generate import GeneratorConfig, generate
    from sensaopt.policies.base import JobState, RoundState
    from sensaopt.policies.sensascale import SensaScalePolicy
    from sensaopt.policies.sensascale.analysis import analyse
    from sensaopt.policies.sensascale.pairing import candidates, class_weights, match_classes, weight_matrix

    inst = generate(GeneratorConfig(jobs=300, nodes=20, seed=2))
    pol = SensaScalePolicy(pairing_method="classes", urgency_levels=16)
    pol.reset(inst)
    st = RoundState(12, 120.0, 10.0, inst.cluster, inst.overheads, [JobState(spec=j, remaining=j.work) for j in inst.jobs])
    sens, insens = candidates(analyse(st, pol.facts, pol.config), inst.cluster, pol.config)
    L = pol.config.urgency_levels
    W = weight_matrix(sens, insens, inst.cluster, 120.0, 10.0, 10**6, None, L)
    Wc, sm, im = class_weights(sens, insens, inst.cluster, 120.0, 10.0, 10**6, None, L)
    for a, rows in enumerate(sm):
        for b, cols in enumerate(im):
            assert (W[np.ix_(rows, cols)] == Wc[a, b]).all()
    assert len(sm) < len(sens)  # classes do merge jobs
    assert total(W, match_classes(Wc, sm, im)) == total(W, match_assignment(W))


def test_class_method_runs_end_to_end_and_validates():
    from sensaopt.generate import GeneratorConfig, generate
    from sensaopt.policies.sensascale import SensaScalePolicy
    from sensaopt.simulator import simulate

    inst = generate(GeneratorConfig(jobs=60, nodes=4, seed=6, load=1.8))
    res = simulate(inst, SensaScalePolicy(pairing_method="classes", urgency_levels=16))
    assert res.metrics.finished == 60 and res.params["config"]["pairing_method"] == "classes"


def test_within_class_pairing_pairs_a_cpu_hungry_with_a_memory_hungry_job():
    """pairing_classes="cpu-memory": on one 8-GPU, 24-core, 500-GB node a CPU-hungry
    4-GPU job (2x at 6 cores per GPU, flat in memory) and a memory-hungry one (2x at 100 GB
    per GPU, 1 core enough) are rows and columns; the memory-hungry one gets its optimal
    demand (1 core, 100 GB per GPU), the CPU-hungry one the best option within the rest
    (5 cores and 20 GB per GPU of the 20 cores, 100 GB left), both faster than at the
    share. The sensitive-insensitive default finds no pair (no insensitive job)."""
    from sensaopt.instance import Cluster, Instance, Job, NodeType
    from sensaopt.policies.base import JobState, RoundState
    from sensaopt.policies.sensascale import SensaScalePolicy
    from sensaopt.policies.sensascale.analysis import analyse
    from sensaopt.policies.sensascale.pairing import candidates, make_pairs
    from sensaopt.profiles import SensitivityProfile

    cpu = SensitivityProfile("cpu", (1.0, 3.0, 6.0), (20.0, 62.5), ((0.5, 0.5), (1.0, 1.0), (2.0, 2.0)))
    mem = SensitivityProfile("mem", (1.0, 3.0), (20.0, 62.5, 100.0), ((1.0, 1.0, 2.0), (1.0, 1.0, 2.0)))
    cluster = Cluster((NodeType("n", 8, 24, 500.0, 1),))
    inst = Instance("t", cluster, 10.0, (Job("c", 0.0, 4, 100.0, cpu, deadline=400.0), Job("m", 0.0, 4, 100.0, mem, deadline=400.0)))
    st = RoundState(0, 0.0, 10.0, cluster, inst.overheads, [JobState(spec=j, remaining=j.work) for j in inst.jobs])
    for classes, expect in (("sensitive-insensitive", {}), ("cpu-memory", {"c", "m"})):
        pol = SensaScalePolicy(pairing_classes=classes)
        pol.reset(inst)
        infos = analyse(st, pol.facts, pol.config)
        rows, cols = candidates(infos, cluster, pol.config)
        if classes == "cpu-memory":
            assert [x.id for x in rows] == ["c"] and [x.id for x in cols] == ["m"]
        pairs = make_pairs(infos, cluster, pol.config, 0.0, 10.0)
        assert set(pairs) == set(expect)
        out = pol.decide(st)
        if classes == "cpu-memory":
            (pc,), (pm,) = out["c"], out["m"]
            assert (pm.cpus, pm.mem_gb) == (4, 400.0)  # m's optimal demand: 1 core, 100 GB per GPU
            assert (pc.cpus, pc.mem_gb) == (20, 80.0) and pc.node == pm.node  # c: 5 cores, 20 GB per GPU
