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
