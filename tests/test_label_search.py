"""Pricing's compiled label search (sensaopt/exact/decompositions/label_search.py): a front is
the stable sort's chain (the tie rule the column depends on), on runs merged by scanning
their heads and by a heap; the search never reads past its buffers; the pricer's answers
are the brute force's in tests/test_exact_colgen.py."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sensaopt.exact.decompositions import label_search
from sensaopt.exact.decompositions.label_search import EPS, HEAP_FROM, _front


def _reference(prog: list[int], cost: list[float]) -> list[int]:
    """The front as the pure-Python search took it: sort by (most progress, least price),
    stable (ties keep their order), then keep each label cheaper by more than EPS than the last kept."""
    order = sorted(range(len(prog)), key=lambda j: (-prog[j], cost[j]))
    out, best = [], float("inf")
    for j in order:
        if cost[j] < best - EPS:
            out.append(j)
            best = cost[j]
    return out


@pytest.mark.parametrize("n_runs", [1, 2, 5, HEAP_FROM, HEAP_FROM + 1, 20])
@pytest.mark.parametrize("seed", range(6))
def test_a_front_is_the_stable_sorts_chain(n_runs, seed):
    """Runs of strictly decreasing progress (as fronts are), with progress and prices drawn
    from few values, so that ties across runs and prices within EPS are common."""
    rng = random.Random(seed * 100 + n_runs)
    prog: list[int] = []
    cost: list[float] = []
    starts = [0]
    for _ in range(n_runs):
        k = rng.randint(0, 7)
        prog += sorted(rng.sample(range(12), k), reverse=True)
        cost += [rng.choice([0.0, 1.0, 1.0 + 0.5 * EPS, 1.0 + 2 * EPS, 2.0, 3.5]) for _ in range(k)]
        starts.append(len(prog))
    k = len(prog)
    keep, heads = np.zeros(max(k, 1), np.int64), np.zeros(n_runs, np.int64)
    m = _front(np.array(prog + [0], np.int64), np.array(cost + [0.0]), np.array(starts, np.int64), n_runs, keep, heads)
    assert keep[:m].tolist() == _reference(prog, cost)


def test_the_search_stays_inside_its_buffers(monkeypatch):
    """Numba does not check indices: the same searches run with bounds checking on (the
    interpreted kernel, where numpy checks every index) on a job whose fronts grow past
    the first buffers and cross the heap's threshold, and give the compiled answers."""
    rng = np.random.default_rng(3)
    P, n = HEAP_FROM + 4, 16
    pattern = np.arange(P, dtype=np.int64) % 3
    units = [rng.integers(50, 400, P).astype(np.int64) for _ in range(4)]
    g_pair = rng.integers(50, 400, (P, P)).astype(np.int64)
    cost_at = np.arange(n, dtype=np.float64) * 10.0
    low = np.minimum.accumulate(cost_at[::-1])[::-1].copy()
    runs = []
    for grouped in (True, False):
        prices = rng.choice([0.0, 0.0, 1.0, 7.5, 30.0], size=(n, P))
        banned = rng.random((n, P)) < 0.1
        must = np.full(n, -1, np.int64)
        args = (3000, 400, 0, n - 1, n, 0, -1, cost_at, low, prices, banned, must, grouped, pattern, 3, *units, g_pair, np.inf)
        runs.append((args, label_search.search(*args)))
    interpreted = _interpreted(monkeypatch)
    for args, compiled in runs:
        slow = interpreted(*args)
        assert compiled[3] >= 0, "the job has a schedule"
        assert compiled[0] == slow[0] and compiled[3] == slow[3] and compiled[4] == slow[4]
        assert compiled[1].tolist() == slow[1].tolist() and compiled[2].tolist() == slow[2].tolist()


def _interpreted(monkeypatch):
    """``search`` run by the Python interpreter, every helper too (numpy checks each index)."""
    for name in ("_front", "_pool_front", "_grow", "_segments", "_sources", "_idle", "_column"):
        monkeypatch.setattr(label_search, name, getattr(label_search, name).py_func)
    return label_search.search.py_func
