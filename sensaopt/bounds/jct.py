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

* **time-indexed LP** (GPUs; only while it has at most ``lp_max_vars`` variables): take
  each job's first ``k_j`` held rounds as ``y_jt = 1``; then ``Σ_t y_jt = k_j``,
  ``0 <= y_jt <= 1`` for ``t >= r_j``, ``Σ_j g_j y_jt <= GPUs`` per round, and its finish
  round is at least ``Σ_t y_jt (t + 1/2)/k_j + k_j/2`` (the last of k distinct rounds is
  at least their mean + (k − 1)/2). So Σ finish ≥ LP optimum + Σ k_j/2. The LP is cut at
  ``T = max r_j + max k_j + floor(Σ g_j k_j / GPUs) + 1``: an LP solution using a round
  ``>= T`` can move part of it to an earlier round of the job's with spare capacity (one
  exists: fewer than ``k_j`` of its rounds before T are full for it, and the capacity of
  the others exceeds every job's total), lowering the cost, so the cut loses nothing. The
  value is HiGHS's row duals put in the Lagrangian (any multipliers give a lower bound),
  so solver tolerances cannot overstate it. It contains the per-job part (a job's k
  rounds from ``r_j`` have mean ``>= r_j + (k − 1)/2``) and adds queueing where GPUs are short.

Change costs only remove progress (a job then holds more rounds), so ignoring them keeps
every part valid. Minutes throughout (the machine and the LP run in rounds, converted × R).
"""

from __future__ import annotations

import heapq
import math
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
    lp: float | None = None  # mean JCT of the time-indexed LP; None: too large or not solved

    @property
    def avg_jct(self) -> float:
        return max(self.per_job, self.pooled, self.lp if self.lp is not None else -math.inf)


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


LP_MAX_VARS = 300_000  # default: larger time-indexed LPs are skipped (trace scale)


def lp_total_finish(rel: np.ndarray, rounds: np.ndarray, gpus: np.ndarray, capacity: int,
                    max_vars: int = LP_MAX_VARS) -> float | None:
    """Lower bound on the sum of finish rounds (module doc, time-indexed LP): the LP
    optimum + Σ k_j/2, certified by the Lagrangian of HiGHS's duals; None when the LP
    has more than ``max_vars`` variables or HiGHS does not reach optimality."""
    n = len(rel)
    if n == 0:
        return 0.0
    T = int(rel.max() + rounds.max() + math.floor(float((gpus * rounds).sum()) / capacity) + 1)
    lens = (T - rel).astype(np.int64)
    nv = int(lens.sum())
    if nv > max_vars:
        return None
    import highspy

    from sensaopt.quiet import quiet_stdout

    job = np.repeat(np.arange(n), lens)
    t = (np.arange(nv) - np.repeat(np.cumsum(lens) - lens, lens)) + np.repeat(rel.astype(np.int64), lens)
    cost = (t + 0.5) / rounds[job]
    with quiet_stdout():
        h = highspy.Highs()
    highspy.Highs.resetGlobalScheduler(True)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    inf = highspy.kHighsInf
    h.addRows(n + T, np.r_[rounds, np.full(T, -inf)], np.r_[rounds, np.full(T, float(capacity))], 0,
              np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    index = np.empty(2 * nv, dtype=np.int32)
    index[0::2], index[1::2] = job, n + t
    value = np.empty(2 * nv)
    value[0::2], value[1::2] = 1.0, gpus[job]
    h.addCols(nv, cost, np.zeros(nv), np.ones(nv), 2 * nv, np.arange(0, 2 * nv, 2, dtype=np.int32), index, value)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    dual = np.asarray(h.getSolution().row_dual)
    u = dual[:n]
    best = -math.inf
    for sign in (1.0, -1.0):  # the capacity rows' multipliers must be <= 0 here: try both sign conventions
        v = np.minimum(sign * dual[n:], 0.0)
        lag = float(rounds @ u + capacity * v.sum() + np.minimum(cost - u[job] - gpus[job] * v[t], 0.0).sum())
        best = max(best, lag)
    return best - 1e-9 * abs(best) + float(rounds.sum()) / 2


def jct_bound(instance: Instance, regime: Regime = "best", resources: tuple[Resource, ...] | None = None,
              lp_max_vars: int = LP_MAX_VARS, speeds: np.ndarray | None = None) -> JctBound:
    """The average-JCT bound of ``instance`` under ``regime`` (module doc), minutes;
    ``lp_max_vars`` 0: no time-indexed LP; ``speeds``: the regime's per-job speed caps
    (:func:`~sensaopt.bounds.areas.regime_speeds`) if the caller has them."""
    R = instance.round_minutes
    n = len(instance.jobs)
    arrival = np.fromiter((j.arrival for j in instance.jobs), dtype=float, count=n)
    speeds = regime_speeds(instance, regime) if speeds is None else speeds
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
    g = np.fromiter((j.gpus for j in instance.jobs), dtype=float, count=n)
    total = lp_total_finish(rel, rounds, g, instance.cluster.total_gpus, lp_max_vars) if lp_max_vars > 0 else None
    lp = None if total is None or not n else (total * R - float(arrival.sum())) / n
    return JctBound(regime=regime, jobs=n, per_job=per_job, pooled=best, resource=name, lp=lp)
