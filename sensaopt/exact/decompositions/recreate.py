"""Ruin and recreate over whole job columns: a local search after price and branch's
restricted master (:mod:`sensaopt.exact.phases.price_branch`; ``models/formulation.md``,
"Price and branch from the start").

A solution is one column per job (:class:`~sensaopt.exact.decompositions.pricing.Column`,
a complete schedule of that job in the model's own allocations) whose summed use fits every
capacity row of the master (:class:`~sensaopt.exact.decompositions.colgen.Master`: GPUs,
cores and memory of one node in one slot). Every other rule of the model concerns one job
and is inside its column, so such a set is a schedule of the instance and its cost is the
model's objective (scaled units).

A move removes a few related jobs: a random job and the jobs whose columns share the most
capacity rows with it (:func:`_related`), or, on a share ``time_share`` of the moves
(:data:`TIME_SHARE` by default), a random job and the jobs whose columns run nearest a
random slot of that job's column, on any node (:func:`_near_in_time`). It re-inserts them
one at a time, each as the cheapest column of that job that fits the capacity the others
leave (:meth:`JobPricer.price <sensaopt.exact.decompositions.pricing.JobPricer.price>` with
every (slot, pair) that would overflow a row banned: exact for one job given the rest).
Among columns of equal cost, the tie is broken by the master LP's row prices times a random
factor in [0, 1], so that a re-inserted job leaves room where the LP says room is scarce. A move is kept when the total
cost does not rise (equal moves walk plateaus). Unlike the restricted master, the search is
not limited to the columns generated so far.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sensaopt.exact.decompositions.colgen import Master
from sensaopt.exact.decompositions.pricing import NO_RULE, Column
from sensaopt.exact.model.data import ModelData

RUIN_SIZE = (2, 8)  # jobs removed per move: at least, at most (never more than the instance has)
TIE_FACTORS = (0.0, 0.0, 0.1, 0.5, 1.0)  # the LP row prices' weight in a move's re-insertion, drawn per move
TIME_SHARE = 0.5  # by default, the share of moves that ruin by time (_near_in_time); session 34, models/measurements.md
STALL_PER_PAIR = 10  # by default, moves in a row without a lower cost that stop the search, per pair of jobs (stall_moves)
FIT_EPS = 1e-9  # capacity units: a use within this of a row's capacity fits


@dataclass(frozen=True)
class RecreateOutcome:
    """What the search did: the columns (one per job), their summed cost (scaled model
    units), the moves tried, the moves that lowered the cost, the last such move's number
    (0: none), and seconds."""

    columns: list[Column]
    cost: int
    moves: int
    improving: int
    last_improving: int
    seconds: float


class JobCells:
    """Job ``k``'s capacity entries, flattened: for every (slot index ``i``, pair ``b``) of
    :meth:`ModelData.slots`, the rows it uses and their coefficients (``cell = i·pairs + b``)."""

    def __init__(self, master: Master, k: int) -> None:
        self.k = k
        per_slot = master.rows.use[k]
        self.pairs = len(master.data.jobs[k].pairs)
        self.first = master.data.slots(master.data.jobs[k]).start
        self.n = len(per_slot) * self.pairs
        cells, rows, coefs = [], [], []
        for i, per_pair in enumerate(per_slot):
            for b, items in enumerate(per_pair):
                for r, c in items:
                    cells.append(i * self.pairs + b)
                    rows.append(r)
                    coefs.append(c)
        self.cell = np.asarray(cells, dtype=np.int64)
        self.row = np.asarray(rows, dtype=np.int64)
        self.coef = np.asarray(coefs, dtype=np.float64)


def stall_moves(n_jobs: int, stall: int | None = None) -> int | None:
    """The moves in a row without a lower cost that stop the search on ``n_jobs`` jobs
    (None: it never stops for that): ``stall`` moves where given (0: never), else
    :data:`STALL_PER_PAIR` per pair of jobs (40 jobs: 7,800; 20: 1,900; 8: 280), at least 1.
    Why it grows with the pairs: a move ruins a job and the jobs it shares most capacity
    with, so the distinct moves grow with the pairs, and on the 40-job Philly windows lower
    costs came up to ~6,000 moves after the one before (``models/measurements.md``, session 33)."""
    if stall is None:
        return max(STALL_PER_PAIR * n_jobs * (n_jobs - 1) // 2, 1)
    return stall or None


def cheapest_fit(master: Master, cells: JobCells, used: np.ndarray, prices: np.ndarray | None,
                 most: int | None = None) -> Column | None:
    """The cheapest column of job ``cells.k`` whose use fits ``master.cap − used`` in every row
    (its objective contribution plus ``prices`` · its use, ``prices`` per capacity row,
    None: none), or None when no schedule of the job fits. ``most`` (scaled units): None
    as well when no column within it could be the answer, which the pricer then need not
    finish proving (its ``cutoff``: ``most`` plus the dearest prices a column could pay, one
    pair per slot; costs are integral); an answer costing at most ``most`` is the one
    returned without it."""
    over = used[cells.row] + cells.coef > master.cap[cells.row] + FIT_EPS
    banned = np.bincount(cells.cell[over], minlength=cells.n).reshape(-1, cells.pairs) > 0
    weights = np.zeros(len(cells.row)) if prices is None else prices[cells.row] * cells.coef
    slot_price = np.bincount(cells.cell, weights=weights, minlength=cells.n).reshape(-1, cells.pairs)
    cutoff = math.inf if most is None else most + 0.5 + (0.0 if prices is None else float(slot_price.max(axis=1).sum()))
    _, col = master.pricers[cells.k].price(slot_price, NO_RULE, cutoff, banned)
    return col


def ruin_and_recreate(master: Master, columns: list[Column], stop_at: float, seed: int = 0,
                      row_prices: np.ndarray | None = None, max_moves: int | None = None,
                      stall: int | None = None, enough: Callable[[int], bool] | None = None,
                      time_share: float | None = None) -> RecreateOutcome:
    """Ruin and recreate (module docstring) from ``columns`` (one per job, fitting every
    capacity row) until ``stop_at`` (monotonic seconds) or ``max_moves`` moves, with the
    random choices of ``seed``; ``row_prices``: the master LP's prices per capacity row
    (≥ 0, scaled units per capacity unit) for the ties, None: no tie-breaking prices.
    Also stops once the moves in a row that did not lower the cost are at least
    :func:`stall_moves` of ``stall`` (None: the default per pair of jobs; 0: never) and at
    least the moves before the last that did,
    or once ``enough(cost)`` holds for the cost reached (scaled units; e.g. it meets a
    lower bound). ``time_share`` (in [0, 1]; None: :data:`TIME_SHARE`): the share of
    moves that ruin by time (:func:`_near_in_time`), the others ruin related jobs
    (:func:`_related`); at 0 no draw is made for it, so the random choices are those of
    the search before it existed (session 33).
    The result's cost is never above the start's."""
    time_share = TIME_SHARE if time_share is None else time_share
    if not 0.0 <= time_share <= 1.0:
        raise ValueError(f"time_share must be in [0, 1], got {time_share}")
    t0 = time.monotonic()
    data = master.data
    if sorted(c.k for c in columns) != list(range(data.n)):
        raise ValueError("ruin and recreate needs exactly one column per job")
    rng = random.Random(seed)
    cells = [JobCells(master, k) for k in range(data.n)]
    floor = _cost_floors(master, cells)
    row_slot = _row_slots(master)
    cur = {c.k: c for c in columns}
    uses = {k: master.use(c) for k, c in cur.items()}
    used = np.zeros(master.n_rows)
    for idx, val in uses.values():
        np.add.at(used, idx, val)
    cost = sum(c.cost for c in cur.values())
    low, high = min(RUIN_SIZE[0], data.n), min(RUIN_SIZE[1], data.n)
    stall = stall_moves(data.n, stall)
    moves = improving = last = 0
    if enough is not None and enough(cost):
        stop_at = -np.inf
    while time.monotonic() < stop_at and (max_moves is None or moves < max_moves) and (stall is None or moves - last < max(stall, last)):
        moves += 1
        ruined = _ruin(rng, uses, row_slot, rng.randint(low, high), time_share)
        left = used.copy()
        for k in ruined:  # a column's rows are distinct (Master.use), so plain indexing adds exactly
            left[uses[k][0]] -= uses[k][1]
        factor = rng.choice(TIE_FACTORS)
        prices = None if row_prices is None or factor == 0 else factor * row_prices
        removed = sum(cur[k].cost for k in ruined)  # the most the re-inserted columns may cost together, for the move to be kept
        new = _recreate(master, cells, _order(rng, ruined, cur, data), left, prices, removed, floor)
        if new is None:
            continue
        after = cost - removed + sum(c.cost for c, _ in new.values())
        if after > cost:
            continue
        lower = after < cost
        cost, used = after, left
        for k, (col, use) in new.items():
            cur[k], uses[k] = col, use
        if lower:
            improving, last = improving + 1, moves
            if enough is not None and enough(cost):
                break
    return RecreateOutcome([cur[k] for k in range(data.n)], cost, moves, improving, last, time.monotonic() - t0)


def _recreate(master: Master, cells: list[JobCells], order: list[int], left: np.ndarray, prices: np.ndarray | None,
              room: int | None = None, floor: list[int] | None = None
              ) -> dict[int, tuple[Column, tuple[np.ndarray, np.ndarray]]] | None:
    """Each job of ``order`` in turn as its cheapest column in the capacity ``left``
    (updated in place), with that column's use (:meth:`Master.use`); None when one of them
    fits nowhere, or, given ``room`` (scaled units: the most the re-inserted columns may
    cost together for the move to be kept) and ``floor`` (per job, a cost no column of it
    is below), as soon as they cannot fit in ``room``: before a job whose floor no longer
    fits, or inside the job's pricing (:func:`cheapest_fit`'s ``most``). Those moves are
    rejected either way, and the kept ones get the same columns, so the search is the one
    without ``room``, move for move, only faster (``models/formulation.md``, "The cost cut")."""
    new: dict[int, tuple[Column, tuple[np.ndarray, np.ndarray]]] = {}
    rest = 0 if room is None or floor is None else sum(floor[k] for k in order)
    for k in order:
        most = None
        if room is not None and floor is not None:
            rest -= floor[k]
            most = room - rest
            if most < floor[k]:
                return None
        col = cheapest_fit(master, cells[k], left, prices, most)
        if col is None:
            return None
        if room is not None:
            room -= col.cost
        idx, val = use = master.use(col)
        left[idx] += val
        new[k] = (col, use)
    return new


def _cost_floors(master: Master, cells: list[JobCells]) -> list[int]:
    """Per job, the cost of its cheapest column with every capacity row free (scaled units):
    no column of the job costs less."""
    free = np.zeros(master.n_rows)
    floors = []
    for c in cells:
        col = cheapest_fit(master, c, free, None)
        floors.append(0 if col is None else col.cost)
    return floors


def _row_slots(master: Master) -> np.ndarray:
    """The slot of every capacity row of ``master`` (its ``t`` in ``(node, t, resource)``)."""
    row_slot = np.zeros(master.n_rows, dtype=np.int64)
    for (_, t, _), r in master.rows.index.items():
        row_slot[r] = t
    return row_slot


def _ruin(rng: random.Random, uses: dict[int, tuple[np.ndarray, np.ndarray]], row_slot: np.ndarray, size: int,
          time_share: float) -> list[int]:
    """The ``size`` jobs a move removes: :func:`_near_in_time` on a share ``time_share`` of
    the moves, else :func:`_related` (no draw when ``time_share`` is 0)."""
    if time_share > 0 and rng.random() < time_share:
        return _near_in_time(rng, uses, row_slot, size)
    return _related(rng, uses, len(row_slot), size)


def _near_in_time(rng: random.Random, uses: dict[int, tuple[np.ndarray, np.ndarray]], row_slot: np.ndarray, size: int) -> list[int]:
    """A random job, a random slot among the rows its column uses, and the ``size − 1`` jobs
    whose columns use a row nearest that slot (distance in slots; ties at random; a column
    using no row is farthest). Where :func:`_related` removes the jobs that compete for the
    same node-slots, this removes the jobs running around the same time on any node, so
    that a move can trade work between nodes (``models/measurements.md``, session 34)."""
    anchor = rng.randrange(len(uses))
    slots = row_slot[uses[anchor][0]]
    t = int(slots[rng.randrange(len(slots))]) if len(slots) else 0
    near = {k: int(np.abs(row_slot[idx] - t).min()) if len(idx) else math.inf for k, (idx, _) in uses.items()}
    return sorted(uses, key=lambda k: (k != anchor, near[k], rng.random()))[:size]


def _related(rng: random.Random, uses: dict[int, tuple[np.ndarray, np.ndarray]], n_rows: int, size: int) -> list[int]:
    """A random job and the ``size − 1`` jobs sharing the most capacity rows with it (ties at random)."""
    anchor = rng.randrange(len(uses))
    mask = np.zeros(n_rows, dtype=bool)
    mask[uses[anchor][0]] = True
    shared = {k: int(mask[idx].sum()) for k, (idx, _) in uses.items()}
    return sorted(uses, key=lambda k: (k != anchor, -shared[k], rng.random()))[:size]


def _order(rng: random.Random, ruined: list[int], cur: dict[int, Column], data: ModelData) -> list[int]:
    """The re-insertion order, drawn per move: random (2 in 5), by the removed columns'
    completion slot (3 in 10), or by the jobs' work, least first (3 in 10)."""
    order = list(ruined)
    draw = rng.random()
    if draw < 0.4:
        rng.shuffle(order)
    elif draw < 0.7:
        order.sort(key=lambda k: cur[k].done)
    else:
        order.sort(key=lambda k: data.jobs[k].work_units)
    return order


__all__ = ["RUIN_SIZE", "TIME_SHARE", "STALL_PER_PAIR", "JobCells", "RecreateOutcome", "cheapest_fit", "ruin_and_recreate", "stall_moves"]
