"""The compiled label-setting search of pricing (:mod:`sensaopt.exact.decompositions.pricing`):
one job's cheapest schedule under slot prices, on arrays, compiled by Numba.

It is the search that :class:`~sensaopt.exact.decompositions.pricing.JobPricer` documents,
step for step and in the same order, so that it returns the same column, not only one of
the same cost: a Pareto front is taken as a stable sort by (most progress, least price, order
of generation), then each label kept when cheaper, by more than :data:`EPS`, than the last one
kept. Units: progress
in the model's integer work units (``ModelData``), prices and costs in scaled objective units
(floats; every sum is formed in the same order as in the search before it was compiled,
session 36, so the floats are the same bits).

Labels live in a pool of arrays (progress, price, parent, pair, slot; the root, index 0,
is the job before its first slot). In one slot the open labels are segments of one flat
array of pool indices (:func:`_segments`): never ran, paused, running each pair, and, when
the predecessors are grouped, the running labels' front per pattern and over all pairs.
Buffers are allocated once per search and grown by doubling.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

EPS = 1e-9  # scaled units: a label or a schedule must be cheaper than another by more than this to replace it
HEAP_FROM = 8  # fronts of more runs than this are merged with a heap, others by scanning the runs' heads


@njit(cache=True, inline="always")
def _front(prog: np.ndarray, cost: np.ndarray, starts: np.ndarray, n_runs: int, keep: np.ndarray, heads: np.ndarray) -> int:
    """The labels (``prog``, ``cost``; runs ``r`` at positions ``starts[r]:starts[r + 1]``, each
    sorted by strictly decreasing progress, as every front is) that no other dominates: their
    positions into ``keep[:m]``, most progress first; returns ``m``. The runs are merged by
    (most progress, least price, earlier run): the stable sort of their concatenation.
    ``heads``: scratch, room for ``n_runs``."""
    heads[:n_runs] = starts[:n_runs]
    m = 0
    best = np.inf
    if n_runs > HEAP_FROM:
        heap = [(-prog[0], cost[0], 0, 0)]  # typed by its first item, then emptied
        heap.pop()
        for r in range(n_runs):
            if heads[r] < starts[r + 1]:
                heapq.heappush(heap, (-prog[heads[r]], cost[heads[r]], r, heads[r]))
        while heap:
            _, c, r, h = heapq.heappop(heap)
            if h + 1 < starts[r + 1]:
                heapq.heappush(heap, (-prog[h + 1], cost[h + 1], r, h + 1))
            if c < best - EPS:
                keep[m] = h
                m += 1
                best = c
        return m
    while True:
        pick, h = -1, -1
        for r in range(n_runs):
            j = heads[r]
            if j < starts[r + 1] and (pick < 0 or prog[j] > prog[h] or (prog[j] == prog[h] and cost[j] < cost[h])):
                pick, h = r, j
        if pick < 0:
            return m
        heads[pick] += 1
        if cost[h] < best - EPS:
            keep[m] = h
            m += 1
            best = cost[h]


@njit(cache=True)
def _pool_front(labels: np.ndarray, starts: np.ndarray, n_runs: int, prog: np.ndarray, cost: np.ndarray, scratch: tuple,
                out: np.ndarray, at: int) -> int:
    """:func:`_front` of the pool labels ``labels`` (runs at ``starts`` as there), written into
    ``out`` from ``at``; returns the position after them. ``scratch``: room for ``len(labels)``."""
    s_p, s_c, keep = scratch[0], scratch[1], scratch[3]
    for r in range(len(labels)):
        s_p[r] = prog[labels[r]]
        s_c[r] = cost[labels[r]]
    m = _front(s_p, s_c, starts, n_runs, keep, scratch[5])
    for r in range(m):
        out[at + r] = labels[keep[r]]
    return at + m


@njit(cache=True, inline="always")
def _grow(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` with room for at least ``n`` entries (doubling)."""
    if n <= len(a):
        return a
    b = np.empty(max(n, 2 * len(a)), a.dtype)
    b[:len(a)] = a
    return b


@njit(cache=True)
def _segments(never: int, paused: np.ndarray, n_paused: int, run: np.ndarray, run_off: np.ndarray, grouped: bool,
              by_pattern: np.ndarray, pat_off: np.ndarray, prog: np.ndarray, cost: np.ndarray, cur: np.ndarray,
              seg: np.ndarray, scratch: tuple) -> np.ndarray:
    """The open labels of a slot, flat in ``cur`` (grown if needed, returned), with segment
    ``s`` at ``cur[seg[s]:seg[s + 1]]``: 0 never ran (the root or nothing), 1 paused, 2 + a
    running pair ``a``; when ``grouped``, then the running labels' front per pattern
    (``by_pattern[pat_off[q]:pat_off[q + 1]]``: its pairs, in order) and over all pairs."""
    P = len(run_off) - 1
    n_run = run_off[P]
    cur = _grow(cur, never + n_paused + 3 * n_run)  # the groups hold at most n_run labels each
    starts, gather = scratch[2], scratch[4]
    seg[0] = 0
    if never:
        cur[0] = 0
    seg[1] = never
    cur[seg[1]:seg[1] + n_paused] = paused[:n_paused]
    seg[2] = seg[1] + n_paused
    for a in range(P):
        cur[seg[2 + a]:seg[2 + a] + run_off[a + 1] - run_off[a]] = run[run_off[a]:run_off[a + 1]]
        seg[3 + a] = seg[2 + a] + run_off[a + 1] - run_off[a]
    if not grouped:
        return cur
    n_pat = len(pat_off) - 1
    for q in range(n_pat):
        g, r = 0, 0
        for a in by_pattern[pat_off[q]:pat_off[q + 1]]:
            starts[r] = g
            r += 1
            for j in range(run_off[a], run_off[a + 1]):
                gather[g] = run[j]
                g += 1
        starts[r] = g
        if g == 0:
            seg[3 + P + q] = seg[2 + P + q]
            continue
        seg[3 + P + q] = _pool_front(gather[:g], starts, r, prog, cost, scratch, cur, seg[2 + P + q])
    seg[3 + P + n_pat] = _pool_front(run[:n_run], run_off, P, prog, cost, scratch, cur, seg[2 + P + n_pat])
    return cur


@njit(cache=True)
def _sources(grouped: bool, P: int, n_pat: int, pattern: np.ndarray, gains: tuple, g_pair: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Per pair ``b``, its groups of predecessors in the search's order, as two arrays
    ``[b, s]``: the units its slot adds after the ``s``-th group, and that group's segment of
    :func:`_segments`. Never ran (no change), paused (restart), ``b`` itself (no change), then,
    grouped, its pattern's front (resize) and every running pair's (migration), else every
    other pair in order with its own change."""
    g_none, g_restart, g_resize, g_migration = gains
    n_src = 5 if grouped else 2 + P
    gain, segment = np.zeros((P, n_src), np.int64), np.zeros((P, n_src), np.int64)
    for b in range(P):
        gain[b, :3] = g_none[b], g_restart[b], g_none[b]
        segment[b, :3] = 0, 1, 2 + b
        if grouped:
            gain[b, 3:] = g_resize[b], g_migration[b]
            segment[b, 3:] = 2 + P + pattern[b], 2 + P + n_pat
            continue
        s = 3
        for a in range(P):
            if a != b:
                gain[b, s], segment[b, s] = g_pair[a, b], 2 + a
                s += 1
    return gain, segment


@njit(cache=True)
def _idle(t: int, cur: np.ndarray, seg: np.ndarray, P: int, prog: np.ndarray, cost: np.ndarray, bounds: tuple, best: float,
          scratch: tuple, paused: np.ndarray) -> tuple[int, bool]:
    """The paused labels after an idle slot ``t``: the front of the paused and running labels
    (segments 1 to 1 + ``P`` of ``cur``) that can still complete in their slots and cost less
    than ``best`` (else they are cut), written into ``paused``; returns their number and
    whether one was cut."""
    W, most, first, last, low = bounds
    starts, gather = scratch[2], scratch[4]
    k = 0
    cut = False
    for s in range(1, 2 + P):
        starts[s - 1] = k
        for j in range(seg[s], seg[s + 1]):
            lb = cur[j]
            done = t + (W - prog[lb] + most - 1) // most
            if done > last:
                continue
            if cost[lb] + low[done - first] >= best - EPS:
                cut = True
                continue
            gather[k] = lb
            k += 1
    starts[1 + P] = k
    return _pool_front(gather[:k], starts, 1 + P, prog, cost, scratch, paused, 0), cut


@njit(cache=True)
def _column(end: np.ndarray, parent: np.ndarray, pair: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best schedule's running slots and pairs, in slot order, from its completing run
    ``end`` (parent label, pair, slot)."""
    runs = [end[2]]
    pairs = [end[1]]
    lb = end[0]
    while lb >= 0 and pair[lb] >= 0:  # one label per running slot; idle slots keep their parent
        runs.append(slot[lb])
        pairs.append(pair[lb])
        lb = parent[lb]
    return np.array(runs[::-1], np.int64), np.array(pairs[::-1], np.int64)


# long: the compiled kernel's hot loop (per slot, per pair, per label) is written out in one function: with a Numba
# helper per (slot, pair) taking tuples of arrays, a captured 52-pair call took 258 us, written out 109 us (session 36)
@njit(cache=True)
def search(W, most, first, last, n_iter, lo, last_forced, cost_at, low, prices, banned, must, grouped, pattern, n_pat,  # noqa: C901
           g_none, g_restart, g_resize, g_migration, g_pair, cutoff):
    """The cheapest schedule of one job (:meth:`JobPricer.price <sensaopt.exact.decompositions.pricing.JobPricer.price>`).

    ``W`` work units to complete; ``most`` the most units a slot adds; slots ``first``,
    ``first + 1``, … of which the first ``n_iter`` are searched, ``last`` the last where it
    may complete; it completes in a slot ≥ ``lo`` and ≥ ``last_forced`` only. Per slot index
    ``i``: ``cost_at[i]`` the objective contribution when complete there, ``low[i]`` the least
    of those from ``i`` on, ``prices[i, b]`` the price of running pair ``b``, ``banned[i, b]``,
    ``must[i]`` the pair it must run (−1: none). Per pair: ``pattern`` (0..``n_pat`` − 1) and
    the units of a slot after no change, a restart, a resize, a migration; ``g_pair[a, b]``:
    after a slot of pair ``a`` (used when not ``grouped``). ``cutoff``: only schedules cheaper
    than it are sought.

    Returns (total, runs' slots, runs' pairs, completion slot, cut): the cheapest total and
    its column, or (``cutoff``, empty, empty, −1, cut) when none is cheaper than the cutoff;
    ``cut`` tells whether a label or a completion was left out for its cost."""
    P = prices.shape[1]
    prog, cost = np.zeros(256, np.int64), np.zeros(256)
    parent, pair, slot = np.full(256, -1, np.int64), np.full(256, -1, np.int64), np.full(256, -1, np.int64)
    n = 1  # the root: no progress, no price
    by_pattern = np.argsort(pattern, kind="mergesort")
    pat_off = np.searchsorted(pattern[by_pattern], np.arange(n_pat + 1))
    src_gain, src_seg = _sources(grouped, P, n_pat, pattern, (g_none, g_restart, g_resize, g_migration), g_pair)
    n_src = src_gain.shape[1]
    bounds = (W, most, first, last, low)
    seg = np.zeros(4 + P + n_pat, np.int64)
    cur, run, nxt, paused = np.zeros(64, np.int64), np.zeros(64, np.int64), np.zeros(64, np.int64), np.zeros(64, np.int64)
    run_off, nxt_off = np.zeros(P + 1, np.int64), np.zeros(P + 1, np.int64)
    never, n_paused = 1, 0
    best, cut = cutoff, False
    end = np.array([-1, -1, -1], np.int64)  # the best schedule's completing run: parent label, pair, slot
    scratch = (np.zeros(64, np.int64), np.zeros(64), np.zeros(64, np.int64), np.zeros(64, np.int64), np.zeros(64, np.int64),
               np.zeros(P + 5, np.int64))  # progress, price, run starts, kept positions, pool labels; run heads (≤ max(5, P + 2) runs)
    c_prog, c_cost, c_parent = np.zeros(64, np.int64), np.zeros(64), np.zeros(64, np.int64)  # one pair's candidates
    for i in range(n_iter):
        t = first + i
        need = 6 + P + n_paused + 3 * run_off[P]  # at least the labels of a slot's segments (or one pair's candidates), the runs + 1
        scratch = (_grow(scratch[0], need), _grow(scratch[1], need), _grow(scratch[2], need), _grow(scratch[3], need),
                   _grow(scratch[4], need), scratch[5])
        starts, keep, heads = scratch[2], scratch[3], scratch[5]
        c_prog, c_cost, c_parent = _grow(c_prog, need), _grow(c_cost, need), _grow(c_parent, need)
        cur = _segments(never, paused, n_paused, run, run_off, grouped, by_pattern, pat_off, prog, cost, cur, seg, scratch)
        done_ok = lo <= t and t >= last_forced
        cost_t, must_b = cost_at[i], must[i]
        for b in range(P):
            nxt_off[b + 1] = nxt_off[b]
            if (must_b >= 0 and b != must_b) or banned[i, b]:
                continue
            price = prices[i, b]
            k = 0
            for s in range(n_src):
                starts[s] = k  # each source is a front, so its candidates are a run of decreasing progress
                g, sg = src_gain[b, s], src_seg[b, s]
                for j in range(seg[sg], seg[sg + 1]):
                    lb = cur[j]
                    p = prog[lb] + g
                    c = cost[lb] + price
                    if p >= W:
                        if done_ok:  # complete at the end of t: it runs no more
                            if c + cost_t < best - EPS:
                                best = c + cost_t
                                end[0], end[1], end[2] = lb, b, t
                            else:
                                cut = True
                        continue
                    done = t + (W - p + most - 1) // most
                    if done > last:
                        continue  # cannot complete in its slots
                    if c + low[done - first] >= best - EPS:
                        cut = True
                        continue
                    c_prog[k], c_cost[k], c_parent[k] = p, c, lb
                    k += 1
            starts[n_src] = k
            m = _front(c_prog, c_cost, starts, n_src, keep, heads)
            if n + m > len(prog):
                prog, cost, parent = _grow(prog, n + m), _grow(cost, n + m), _grow(parent, n + m)
                pair, slot = _grow(pair, n + m), _grow(slot, n + m)
            if nxt_off[b + 1] + m > len(nxt):
                nxt = _grow(nxt, nxt_off[b + 1] + m)
            for r in range(m):
                j = keep[r]
                prog[n], cost[n], parent[n], pair[n], slot[n] = c_prog[j], c_cost[j], c_parent[j], b, t
                nxt[nxt_off[b + 1]] = n
                nxt_off[b + 1] += 1
                n += 1
        if must_b >= 0:  # no idle slot here
            never, n_paused = 0, 0
        else:
            paused = _grow(paused, seg[2 + P])
            n_paused, was_cut = _idle(t, cur, seg, P, prog, cost, bounds, best, scratch, paused)
            cut = cut or was_cut
        run, nxt, run_off, nxt_off = nxt, run, nxt_off, run_off
    if end[0] < 0:
        return best, np.zeros(0, np.int64), np.zeros(0, np.int64), -1, cut
    runs, pairs = _column(end, parent, pair, slot)
    return best, runs, pairs, end[2], cut


def _warm_up() -> None:
    """One search of a one-slot, one-pair job, at import: Numba compiles :func:`search` (or loads
    it from its cache, ``__pycache__``) here, before a solve's clock starts, not inside the
    first solve's time limit (the exact pipeline imports this module before ``begin``)."""
    one = np.ones(1, np.int64)
    search(1, 1, 0, 0, 1, 0, -1, np.zeros(1), np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1), np.bool_), np.full(1, -1, np.int64),
           True, np.zeros(1, np.int64), 1, one, one, one, one, np.ones((1, 1), np.int64), np.inf)


_warm_up()
