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
* **energetic** blocks (GPUs alone, which a job holds in a fixed amount each round it
  runs): a job released in ``[A, B)`` that meets its deadline holds its GPUs for at least
  ``k_j − max(0, D_j − B)`` of its rounds inside the block, whether or not it ends
  there; the fewest jobs to drop so that these fit ``cap·(B − A)`` is to drop the
  largest first (exact for one constraint). A block counts only jobs released inside
  it, so blocks that do not overlap still hold disjoint jobs; a block's count is the
  larger of its two (both bound the misses among its jobs).

Candidate blocks: starts at release rounds (at most one per ``step_minutes``; default
every one), ends at every deadline round up to ``max_block_minutes`` after the start
(energetic: ``energy_minutes``). A start whose every
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
from sensaopt.servable import earliest_finishes, min_rounds, release_rounds, unservable_jobs

STEP_MINUTES = 0.0  # default spacing of block starts: 0, every distinct release round
MAX_BLOCK_MINUTES = math.inf  # default longest block: the whole horizon
ENERGY_MINUTES = 1440.0  # default longest energetic block


@dataclass(frozen=True)
class Block:
    """One block of the interval part: rounds [start, end) as minutes, the deadline jobs
    released inside it that need capacity inside it to meet their deadlines, and how many
    of them miss at least."""

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
    """Sorted block starts (rounds): the distinct release rounds, at most one per ``step``
    rounds (``step`` 0: every one)."""
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


Candidates = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # per block end: end, forced, least loss, jobs


def _fits(total: np.ndarray | float, room: np.ndarray | float) -> np.ndarray | bool:
    """``total <= room`` with ties (relative 1e-12) in favour of fitting: float error never forces a miss."""
    return np.asarray(total) <= np.asarray(room) * (1 + 1e-12) + 1e-12


def _contained(A: float, area: np.ndarray, cap: float, rel: np.ndarray, due: np.ndarray, loss: np.ndarray,
               span: float) -> Candidates | None:
    """Blocks [A, B) by Moore–Hodgson over the jobs inside them (module doc); jobs sorted by ``due``."""
    sel = np.flatnonzero((rel >= A) & (due <= A + span))
    if len(sel) == 0:
        return None
    d = due[sel]
    over = np.flatnonzero(~_fits(np.cumsum(area[sel]), (d - A) * cap))
    if len(over) == 0:  # every prefix fits: Moore–Hodgson would drop no job from any block starting at A
        return None
    sel, d = sel[: over[-1] + 1], d[: over[-1] + 1]  # later jobs cannot raise the count of a shorter block
    late = moore_hodgson(area[sel], (d - A) * cap)
    last = np.flatnonzero(np.r_[d[1:] != d[:-1], True])  # the last job of each distinct deadline round
    return d[last], late[last].astype(float), np.minimum.accumulate(loss[sel])[last], last + 1.0


def _energetic(A: float, per_round: np.ndarray, rounds: np.ndarray, cap: float, rel: np.ndarray, due: np.ndarray,
               loss: np.ndarray, span: float) -> Candidates | None:
    """Blocks [A, B), B <= A + ``span``, by the jobs released in them: a job released at
    r in [A, B) that meets its deadline D holds its GPUs (``per_round`` of the resource each
    round) for at least k − max(0, D − B) rounds inside [A, B); the fewest jobs to drop
    so that one block's total fits is to drop the largest first (module doc)."""
    own = np.flatnonzero((rel >= A) & (rel < A + span))
    if len(own) == 0:
        return None
    r, d, k, w, pr = rel[own], due[own], rounds[own], loss[own], per_round[own]
    out: list[tuple[float, float, float, float]] = []
    for B in np.unique(d[(d > A) & (d <= A + span)]):
        e = pr * np.clip(k - np.maximum(d - B, 0.0), 0.0, None) * (r < B)
        room = cap * (B - A)
        total = float(e.sum())
        if _fits(total, room):
            continue
        big = np.sort(e)[::-1]
        c = int(np.argmax(_fits(total - np.cumsum(big), room))) + 1  # drop the c largest
        out.append((float(B), float(c), float(w[e > 0].min()), float((e > 0).sum())))
    if not out:
        return None
    a = np.asarray(out)
    return a[:, 0], a[:, 1], a[:, 2], a[:, 3]


def _interval(area: np.ndarray, cap: float, rel: np.ndarray, due: np.ndarray, loss: np.ndarray, starts: np.ndarray,
              span: float, per_round: np.ndarray | None, rounds: np.ndarray,
              energy_span: float) -> tuple[int, float, list[tuple[float, float, int, int]]]:
    """(count, lost value, blocks (start, end, jobs, forced) of the count) of the interval
    part for one pooled resource (``per_round``: what a job holds of it each round it
    runs, when that is fixed — GPUs alone — for the energetic blocks); jobs sorted by ``due``.
    Blocks of the best set do not overlap in time, and each counts only jobs released
    inside it: their counts add."""
    n = len(starts)
    best_n = np.zeros(n + 1)
    best_v = np.zeros(n + 1)
    choice: list[tuple[float, int, int, int] | None] = [None] * n
    for i in range(n - 1, -1, -1):
        A = starts[i]
        best_n[i], best_v[i] = best_n[i + 1], best_v[i + 1]
        cands = [_contained(A, area, cap, rel, due, loss, span)]
        if per_round is not None and energy_span > 0:
            cands.append(_energetic(A, per_round, rounds, cap, rel, due, loss, energy_span))
        for c in cands:
            if c is None:
                continue
            ends, f, wmin, jobs = c
            nxt = np.searchsorted(starts, ends, side="left")
            tot = f + best_n[nxt]
            k = int(np.argmax(tot))
            if tot[k] > best_n[i]:
                best_n[i] = tot[k]
                choice[i] = (float(ends[k]), int(nxt[k]), int(jobs[k]), int(f[k]))
            best_v[i] = max(best_v[i], float((f * wmin + best_v[nxt]).max()))
    blocks = []
    i = 0
    while i < n:
        ch = choice[i]
        if ch is None or best_n[i] == best_n[i + 1]:
            i += 1
            continue
        blocks.append((float(starts[i]), ch[0], ch[2], ch[3]))
        i = ch[1]
    return int(best_n[0]), float(best_v[0]), blocks


def miss_bound(instance: Instance, regime: Regime = "best", step_minutes: float = STEP_MINUTES,
               max_block_minutes: float = MAX_BLOCK_MINUTES, resources: tuple[Resource, ...] | None = None,
               energy_minutes: float = ENERGY_MINUTES, speeds: np.ndarray | None = None) -> MissBound:
    """The miss bound of ``instance`` under ``regime`` (module doc); ``step_minutes``,
    ``max_block_minutes`` and ``energy_minutes`` (0: no energetic blocks) choose the
    candidate blocks, ``resources`` the pooled resources (default
    :data:`sensaopt.bounds.areas.RESOURCES` of the regime); ``speeds``: the regime's
    per-job speed caps (:func:`~sensaopt.bounds.areas.regime_speeds`) if the caller has them."""
    for name, v, lo in (("step_minutes", step_minutes, 0.0), ("max_block_minutes", max_block_minutes, None),
                        ("energy_minutes", energy_minutes, 0.0)):
        if not (v >= lo if lo is not None else v > 0):  # NaN too
            raise ArgumentError("miss_bound()", name, f"must be {'>= 0' if lo is not None else '> 0'} minutes, got {v!r}")
    R = instance.round_minutes
    speeds = regime_speeds(instance, regime) if speeds is None else speeds
    rounds = min_rounds(instance, speeds)
    fin = earliest_finishes(instance, speeds)
    has_d = np.fromiter((j.deadline is not None for j in instance.jobs), dtype=bool, count=len(instance.jobs))
    due = deadline_rounds(instance)
    rel = release_rounds(instance)
    loss = least_losses(instance, fin)
    bad = unservable_jobs(instance, speeds)
    trivial = np.fromiter((j.id in bad for j in instance.jobs), dtype=bool, count=len(instance.jobs))
    rest = np.flatnonzero(has_d & ~trivial)
    order = rest[np.argsort(due[rest], kind="stable")]
    starts = block_starts(rel[order], step_minutes / R)
    span = max_block_minutes / R
    best: tuple[int, str, list[tuple[float, float, int, int]]] = (0, "", [])
    best_loss: tuple[float, str] = (0.0, "")
    for res in resources or RESOURCES[regime]:
        a = areas(instance, regime, res, rounds)[order]
        gpu_only = res.cpu == 0 and res.mem == 0  # a job holds a fixed amount of it each round it runs
        per_round = a / rounds[order] if gpu_only else None
        cnt, val, blocks = _interval(a, res.capacity(instance.cluster), rel[order], due[order], loss[order], starts, span,
                                     per_round, rounds[order], energy_minutes / R)
        if cnt > best[0] or not best[1]:
            best = (cnt, res.name, blocks)
        if val > best_loss[0] or not best_loss[1]:
            best_loss = (val, res.name)
    return MissBound(
        regime=regime, slo_jobs=int(has_d.sum()), trivial=int(trivial.sum()), trivial_loss=float(loss[trivial].sum()),
        interval=best[0], interval_loss=best_loss[0], resource=best[1], loss_resource=best_loss[1],
        blocks=tuple(Block(s * R, e * R, n, f) for s, e, n, f in best[2]),
    )
