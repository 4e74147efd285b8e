"""Jobs no schedule can serve: deadline jobs that miss their deadline even alone.

A deadline job is *unservable* when, alone on the empty cluster, started in its release
round (:meth:`sensaopt.instance.Instance.release_round`: the first round starting at or
after its arrival) and run there without a break at its best speed, it still finishes
after its (first) deadline — the deadline :mod:`sensaopt.metrics` counts SLO violations
against. Every valid schedule then misses it, so its miss says nothing about a policy;
rates "over servable jobs" leave these jobs out.

Rules matched exactly with :mod:`sensaopt.validator` (and the simulator, which it checks):

* time in minutes, rounds of ``R = instance.round_minutes``; a job may first run in round
  ``ceil(arrival / R - 1e-9)``; its first segment costs no change (no restart);
* work (minutes at speed 1.0) done per round = speed × R; the job completes at the end
  of round ``release + k``, ``k = 1`` if ``speed·R >= work − WORK_EPS``, else
  ``1 + ceil((work − speed·R − WORK_EPS) / (speed·R))`` (the validator's replay);
* it meets its deadline when that finish ``<= deadline + DEADLINE_EPS``
  (:data:`sensaopt.metrics.DEADLINE_EPS`);
* best speed (× the job's ``speed_factor``): the highest profile speed over every
  allocation one node can give its GPUs, per GPU up to (node cores / g, node GB / g) for
  a job of g GPUs that fits one node, and up to (node cores / G, node GB / G) for a gang
  job on G-GPU nodes (its slowest node is a whole node); at least the profile's floor.
  Over several node types the best of them (an upper bound, so never a servable job
  counted as unservable). The profile's bilinear surface reaches its maximum over such a
  box at a grid level or the box's corner, so only those points are evaluated
  (:func:`sensaopt.allocations.best_speed`, :func:`~sensaopt.allocations.box_max`).

Vectorised over jobs (numpy), the speeds computed once per (profile, GPU count).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from sensaopt import allocations
from sensaopt.allocations import proportional_share
from sensaopt.metrics import DEADLINE_EPS
from sensaopt.validator import WORK_EPS

if TYPE_CHECKING:
    from sensaopt.instance import Instance, Job
    from sensaopt.profiles import SensitivityProfile


def best_speeds(instance: Instance) -> np.ndarray:
    """Per job (instance order), its best speed (:func:`sensaopt.allocations.best_speed`) × its
    ``speed_factor``, asked of :func:`sensaopt.allocations.best_speeds` in one call."""
    return np.array(allocations.best_speeds(instance), dtype=float).reshape(len(instance.jobs))


def share_speeds(instance: Instance) -> np.ndarray:
    """Per job (instance order), its speed at the GPU-proportional share
    (:func:`sensaopt.allocations.proportional_share`; the best over node types) × its
    ``speed_factor``: the fastest a job runs under a policy that gives every job the
    share (EDF, FIFO, Chronus). 1.0 × ``speed_factor`` on the reference server."""
    shares = [proportional_share(t) for t in instance.cluster.node_types]
    cache: dict[int, float] = {}
    keep: list[SensitivityProfile] = []
    out = np.empty(len(instance.jobs), dtype=float)
    for i, j in enumerate(instance.jobs):
        s = cache.get(id(j.profile))
        if s is None:
            keep.append(j.profile)
            s = cache[id(j.profile)] = max(j.profile.speed(c, m) for c, m in shares)
        out[i] = s * j.speed_factor
    return out


def min_rounds(instance: Instance, speeds: np.ndarray) -> np.ndarray:
    """Per job (instance order), the fewest rounds in which it can do its work at most
    ``speeds`` (per job, × ``speed_factor`` included): the validator's replay of one
    uninterrupted segment from the module doc; ``inf`` where the speed is 0. A job held
    for fewer rounds, at any allocation and with any change costs, is unfinished."""
    jobs = instance.jobs
    work = np.fromiter((j.work for j in jobs), dtype=float, count=len(jobs))
    per_round = speeds * instance.round_minutes
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(per_round >= work - WORK_EPS, 1.0, 1.0 + np.ceil((work - per_round - WORK_EPS) / per_round))
    return np.where(per_round > 0, k, np.inf)


def release_rounds(instance: Instance) -> np.ndarray:
    """Per job (instance order), the first round it may run in
    (:meth:`sensaopt.instance.Instance.release_round`, vectorised)."""
    jobs = instance.jobs
    arrival = np.fromiter((j.arrival for j in jobs), dtype=float, count=len(jobs))
    return np.ceil(arrival / instance.round_minutes - 1e-9) + 0.0  # + 0.0: no -0.0 for arrival 0


def earliest_finishes(instance: Instance, speeds: np.ndarray | None = None) -> np.ndarray:
    """Per job (instance order), the earliest finish any schedule can give it, minutes
    (module doc); ``inf`` when it cannot run at all (below its floor on every node).
    ``speeds``: per-job speed caps instead of :func:`best_speeds` (e.g. :func:`share_speeds`)."""
    sp = best_speeds(instance) if speeds is None else speeds
    return (release_rounds(instance) + min_rounds(instance, sp)) * instance.round_minutes


def unservable_jobs(instance: Instance, speeds: np.ndarray | None = None) -> frozenset[str]:
    """Ids of the deadline jobs that no schedule can finish by their (first) deadline
    (module doc; ``speeds`` as in :func:`earliest_finishes`). Best-effort jobs are never in it."""
    fin = earliest_finishes(instance, speeds)
    return frozenset(j.id for j, f in zip(instance.jobs, fin) if j.deadline is not None and f > j.deadline + DEADLINE_EPS)


def servable_summary(instance: Instance, missed: Iterable[str]) -> dict[str, int]:
    """Counts for rates over servable jobs: ``slo_jobs`` (deadline jobs), ``unservable``
    (:func:`unservable_jobs`), ``servable`` (= their difference), ``violations`` (jobs of
    ``missed`` that are servable) — ``missed`` being the ids of a schedule's deadline jobs
    that missed their (first) deadline."""
    bad = unservable_jobs(instance)
    slo = sum(1 for j in instance.jobs if j.deadline is not None)
    return {"slo_jobs": slo, "unservable": len(bad), "servable": slo - len(bad),
            "violations": sum(1 for m in missed if m not in bad)}


def missed_jobs(jobs: Iterable[Job], met: Iterable[bool | None]) -> list[str]:
    """Ids of the jobs whose ``met_deadline`` (per-job metrics, same order) is False."""
    return [j.id for j, m in zip(jobs, met) if m is False]
