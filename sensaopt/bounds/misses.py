"""A lower bound on the deadline misses (count and lost value) of every valid schedule.

Two parts, added (they count disjoint jobs):

* **trivial**: the deadline jobs that miss even alone on the empty cluster at the
  regime's speed cap (:func:`sensaopt.servable.unservable_jobs`); each loses at least
  its value less the best soft-deadline value its earliest finish still earns;
* **interval**: the other deadline jobs. Job j may first run in round ``r_j`` and, to
  meet its deadline, must be done by the end of round ``D_j − 1``
  (``D_j = floor((deadline + DEADLINE_EPS)/R)``): it then holds at least ``p_j``
  (:func:`sensaopt.bounds.areas.areas`) of a pooled resource of capacity ``cap`` per
  round inside ``[r_j, D_j)``. For a block of rounds ``[A, B)`` the jobs it met with
  ``A <= r_j`` and ``D_j <= B'`` fit ``cap·(B' − A)`` for every ``B' <= B`` — the
  feasibility condition of one machine of speed ``cap`` with every job released at A,
  whose least number of late jobs Moore–Hodgson's rule gives exactly. So at least that
  many of the block's jobs miss; blocks that do not overlap in time hold disjoint jobs,
  so their counts add: the best set of disjoint blocks is a weighted interval
  scheduling problem (dynamic programming over the block starts). Each pooled resource
  of the regime gives a valid bound; the largest is reported. The lost value of a block:
  its forced count × the least loss of a job in it.

Candidate blocks: starts at release rounds (at most one per ``step_minutes``), ends at
every deadline round up to ``max_block_minutes`` after the start. A start whose every
prefix fits (one cumulative sum) forces nothing and skips Moore–Hodgson. Any family gives a
valid bound (fewer blocks: weaker). Cost: O(starts × jobs per block × log) —
``models/bounds.md`` has the proof and the limits.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from sensaopt.bounds.areas import RESOURCES, Regime, Resource, areas, regime_speeds
from sensaopt.errors import ArgumentError
from sensaopt.instance import Instance
from sensaopt.metrics import DEADLINE_EPS
from sensaopt.servable import earliest_finishes, min_rounds, release_rounds

STEP_MINUTES = 60.0  # default spacing of block starts
MAX_BLOCK_MINUTES = math.inf  # default longest block: the whole horizon


@dataclass(frozen=True)
class Block:
    """One block of the interval part: rounds [start, end) as minutes, the deadline jobs
    that must run inside it to meet their deadlines, and how many of them miss at least."""

    start: float  # minutes
    end: float  # minutes
    jobs: int
    forced: int


@dataclass(frozen=True)
class MissBound:
    """Misses no schedule avoids under ``regime`` (module doc). ``misses`` and
    ``lost_value`` are the bound; the rest is its reasoning."""

    regime: Regime
    slo_jobs: int  # deadline jobs
    trivial: int  # deadline jobs that miss even alone
    trivial_loss: float
    interval: int  # further misses forced by capacity over blocks
    interval_loss: float
    resource: str  # the pooled resource that gave the interval count
    loss_resource: str  # ... and the interval loss
    blocks: tuple[Block, ...] = field(default=())  # the blocks of the interval count, in time order

    @property
    def misses(self) -> int:
        return self.trivial + self.interval

    @property
    def lost_value(self) -> float:
        return self.trivial_loss + self.interval_loss


def least_losses(instance: Instance, finishes: np.ndarray) -> np.ndarray:
    """Per job, the least value it loses if it misses its (first) deadline: its value
    less the best soft-deadline value reachable from ``finishes`` (its earliest finish,
    minutes); 0 for best-effort jobs."""
    out = np.zeros(len(instance.jobs))
    for i, (j, f) in enumerate(zip(instance.jobs, finishes)):
        if j.deadline is not None:
            soft = [s.value for s in j.soft_deadlines if f <= s.at + DEADLINE_EPS]
            out[i] = max(j.value - max(soft, default=0.0), 0.0)
    return out


def deadline_rounds(instance: Instance) -> np.ndarray:
    """Per job, ``D_j``: the round by whose start it must be done to meet its (first)
    deadline (``inf`` for best-effort jobs); rounded up by 1e-9 so float error only weakens."""
    R = instance.round_minutes
    d = np.fromiter((math.inf if j.deadline is None else j.deadline for j in instance.jobs), dtype=float,
                    count=len(instance.jobs))
    return np.floor((d + DEADLINE_EPS) / R + 1e-9)


def block_starts(release: np.ndarray, step: float) -> np.ndarray:
    """Sorted block starts (rounds): the distinct release rounds, at most one per ``step`` rounds."""
    out: list[float] = []
    for r in np.unique(release):
        if not out or r >= out[-1] + step:
            out.append(float(r))
    return np.asarray(out)


def moore_hodgson(p: np.ndarray, due: np.ndarray) -> np.ndarray:
    """Least number of late jobs on one machine, for every prefix: jobs (sorted by
    ``due``) with processing times ``p`` all released at 0; element i = the count over
    jobs 0..i (Moore–Hodgson, exact for each prefix). Ties are resolved in favour of
    fitting (relative 1e-12), so float error never adds a late job."""
    heap: list[float] = []
    total = 0.0
    late = 0
    out = np.empty(len(p), dtype=np.int64)
    for i in range(len(p)):
        x = float(p[i])
        heapq.heappush(heap, -x)
        total += x
        if total > due[i] * (1 + 1e-12) + 1e-12:
            total += heapq.heappop(heap)
            late += 1
        out[i] = late
    return out


def _interval(area: np.ndarray, cap: float, rel: np.ndarray, due: np.ndarray, loss: np.ndarray, starts: np.ndarray,
              span: float) -> tuple[int, float, list[tuple[float, float, int, int]]]:
    """(count, lost value, blocks (start, end, jobs, forced) of the count) of the interval
    part for one pooled resource; the jobs sorted by ``due``."""
    n = len(starts)
    best_n = np.zeros(n + 1)
    best_v = np.zeros(n + 1)
    choice: list[tuple[float, int, int, int] | None] = [None] * n
    for i in range(n - 1, -1, -1):
        A = starts[i]
        sel = np.flatnonzero((rel >= A) & (due <= A + span))
        best_n[i], best_v[i] = best_n[i + 1], best_v[i + 1]
        if len(sel) == 0:
            continue
        d = due[sel]
        over = np.flatnonzero(np.cumsum(area[sel]) > (d - A) * cap * (1 + 1e-12) + 1e-12)
        if len(over) == 0:  # every prefix fits: Moore–Hodgson would drop no job from any block starting at A
            continue
        sel, d = sel[: over[-1] + 1], d[: over[-1] + 1]  # later jobs cannot raise the count of a shorter block
        late = moore_hodgson(area[sel], (d - A) * cap)
        last = np.flatnonzero(np.r_[d[1:] != d[:-1], True])  # the last job of each distinct deadline round
        ends, f = d[last], late[last]
        nxt = np.searchsorted(starts, ends, side="left")
        tot = f + best_n[nxt]
        k = int(np.argmax(tot))
        if tot[k] > best_n[i]:
            best_n[i] = tot[k]
            choice[i] = (float(ends[k]), int(nxt[k]), int(last[k]) + 1, int(f[k]))
        vals = f * np.minimum.accumulate(loss[sel])[last] + best_v[nxt]
        best_v[i] = max(best_v[i], float(vals.max()))
    blocks = []
    i = 0
    while i < n:
        c = choice[i]
        if c is None or best_n[i] == best_n[i + 1]:
            i += 1
            continue
        blocks.append((float(starts[i]), c[0], c[2], c[3]))
        i = c[1]
    return int(best_n[0]), float(best_v[0]), blocks


def miss_bound(instance: Instance, regime: Regime = "best", step_minutes: float = STEP_MINUTES,
               max_block_minutes: float = MAX_BLOCK_MINUTES, resources: tuple[Resource, ...] | None = None) -> MissBound:
    """The miss bound of ``instance`` under ``regime`` (module doc); ``step_minutes`` and
    ``max_block_minutes`` choose the candidate blocks, ``resources`` the pooled resources
    (default :data:`sensaopt.bounds.areas.RESOURCES` of the regime)."""
    if not (step_minutes > 0 and max_block_minutes > 0):  # NaN too
        raise ArgumentError("miss_bound()", "step_minutes" if not step_minutes > 0 else "max_block_minutes",
                            f"must be > 0 minutes, got {step_minutes if not step_minutes > 0 else max_block_minutes!r}")
    R = instance.round_minutes
    speeds = regime_speeds(instance, regime)
    rounds = min_rounds(instance, speeds)
    fin = earliest_finishes(instance, speeds)
    has_d = np.fromiter((j.deadline is not None for j in instance.jobs), dtype=bool, count=len(instance.jobs))
    due = deadline_rounds(instance)
    rel = release_rounds(instance)
    loss = least_losses(instance, fin)
    trivial = has_d & (fin / R > due)  # the end round of its earliest finish is after D_j
    rest = np.flatnonzero(has_d & ~trivial)
    order = rest[np.argsort(due[rest], kind="stable")]
    starts = block_starts(rel[order], max(step_minutes / R, 1.0))
    span = max_block_minutes / R
    best: tuple[int, str, list[tuple[float, float, int, int]]] = (0, "", [])
    best_loss: tuple[float, str] = (0.0, "")
    for res in resources or RESOURCES[regime]:
        a = areas(instance, regime, res, rounds)[order]
        cnt, val, blocks = _interval(a, res.capacity(instance.cluster), rel[order], due[order], loss[order], starts, span)
        if cnt > best[0] or not best[1]:
            best = (cnt, res.name, blocks)
        if val > best_loss[0] or not best_loss[1]:
            best_loss = (val, res.name)
    return MissBound(
        regime=regime, slo_jobs=int(has_d.sum()), trivial=int(trivial.sum()), trivial_loss=float(loss[trivial].sum()),
        interval=best[0], interval_loss=best_loss[0], resource=best[1], loss_resource=best_loss[1],
        blocks=tuple(Block(s * R, e * R, n, f) for s, e, n, f in best[2]),
    )
