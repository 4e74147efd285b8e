"""A lower bound on the average JCT of every complete valid schedule, with every deadline
relaxed (it holds whatever a schedule misses, so also at the miss bound's loss level).

Two parts; the bound is the larger:

* **per job**: job j finishes no earlier than its earliest finish alone at the regime's
  speed cap (:func:`sensaopt.servable.earliest_finishes`: release round + its fewest
  rounds, whole rounds), so its JCT is at least that less its arrival; averaged;
* **pooled**: one machine of speed ``cap`` (a pooled resource's capacity per round,
  :mod:`sensaopt.bounds.areas`) on which job j, released at its release round, needs
  its area ``p_j`` (resource-rounds), preemption free. Any valid schedule maps to it:
  in round t, process each job j that holds ``h_jt`` of the resource for ``h_jt/cap``
  of [t, t+1) — the holdings fit (Σ h_jt <= cap), a job is processed only after its
  release, and by the end of the round in which the real schedule completes j it has
  had ``Σ h_jt >= p_j``. So Σ_j real finish >= Σ_j finish on the machine >= that of
  the shortest-remaining-processing-time schedule, optimal for 1|r_j, pmtn|ΣC_j
  (Schrage 1968). Averaged, less the mean arrival. Every pooled resource of the regime
  gives a valid bound; the largest is kept.

Change costs only remove progress (a job then holds more rounds), so ignoring them keeps
both parts valid. Minutes throughout (the machine runs in rounds, converted × R).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from sensaopt.bounds.areas import RESOURCES, Regime, Resource, areas, regime_speeds
from sensaopt.instance import Instance
from sensaopt.servable import earliest_finishes, min_rounds, release_rounds


@dataclass(frozen=True)
class JctBound:
    """Average-JCT lower bound under ``regime`` (minutes, over every job; module doc)."""

    regime: Regime
    jobs: int
    per_job: float  # mean of (earliest finish alone − arrival)
    pooled: float  # mean JCT of SRPT on the pooled machine
    resource: str  # the pooled resource of ``pooled``

    @property
    def avg_jct(self) -> float:
        return max(self.per_job, self.pooled)


def srpt_completions(release: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Completion times of preemptive shortest-remaining-processing-time on one unit-speed
    machine (same time unit as the inputs), per job in input order."""
    n = len(release)
    order = np.argsort(release, kind="stable")
    done = np.empty(n)
    heap: list[tuple[float, int]] = []
    t = 0.0
    i = 0
    while i < n or heap:
        if not heap:
            t = max(t, float(release[order[i]]))
        nxt = float(release[order[i]]) if i < n else np.inf
        while i < n and release[order[i]] <= t:  # every job released by t joins the queue
            heapq.heappush(heap, (float(work[order[i]]), int(order[i])))
            i += 1
            nxt = float(release[order[i]]) if i < n else np.inf
        left, j = heapq.heappop(heap)
        if t + left <= nxt:
            t += left
            done[j] = t
        else:
            heapq.heappush(heap, (left - (nxt - t), j))
            t = nxt
    return done


def jct_bound(instance: Instance, regime: Regime = "best", resources: tuple[Resource, ...] | None = None) -> JctBound:
    """The average-JCT bound of ``instance`` under ``regime`` (module doc), minutes."""
    R = instance.round_minutes
    n = len(instance.jobs)
    arrival = np.fromiter((j.arrival for j in instance.jobs), dtype=float, count=n)
    speeds = regime_speeds(instance, regime)
    rounds = min_rounds(instance, speeds)
    per_job = float(np.mean(earliest_finishes(instance, speeds) - arrival)) if n else 0.0
    rel = release_rounds(instance)
    best, name = 0.0, ""
    for res in resources or RESOURCES[regime]:
        cap = res.capacity(instance.cluster)
        fin = srpt_completions(rel, areas(instance, regime, res, rounds) / cap)
        v = float(np.mean(fin * R - arrival)) if n else 0.0
        if v > best or not name:
            best, name = v, res.name
    return JctBound(regime=regime, jobs=n, per_job=per_job, pooled=best, resource=name)
