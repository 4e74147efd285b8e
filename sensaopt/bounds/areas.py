"""What each job must take from the pooled cluster to finish: its *area*, in
resource-rounds of one weighted resource, under a speed regime.

A *pooled resource* ``Resource(gpu=α, cpu=β, mem=γ)`` counts α per GPU, β per core and
γ per GB a job holds in a round; the cluster offers ``α·GPUs + β·cores + γ·GB`` of it
per round (:meth:`Resource.capacity`). A job's area is a lower bound on what it holds
of it, summed over the rounds it runs, in **every** schedule that finishes it:

* rounds: it holds its ``g`` GPUs for at least ``k`` whole rounds, ``k`` =
  :func:`sensaopt.servable.min_rounds` at the regime's speed cap (``best``:
  :func:`sensaopt.servable.best_speeds`, any policy; ``unit``:
  :func:`sensaopt.servable.share_speeds`, policies that never run a job faster than at
  the GPU-proportional share), whatever the change costs (they only remove progress);
* work: in a round at per-GPU allocation (c, m) and speed s it does at most s·R minutes
  of work and holds g·(α + β·c + γ·m); over its rounds it does at least ``work −
  WORK_EPS``, so it holds at least ``g · (work − WORK_EPS)/R · ρ``, ρ = min over every
  allowed per-GPU allocation of (α + β·c + γ·m)/speed(c, m) (× ``speed_factor`` in the
  speed). The profile is bilinear on each grid cell, so for fixed m the ratio is a ratio
  of affine functions of c (monotone), and likewise in m: its minimum over the box a
  node allows lies at a grid level or the box's edge — only those points are evaluated
  (the same argument as :func:`sensaopt.allocations.best_speed`). A gang job's nodes are
  whole nodes and at most one partial one: ρ is the least over both boxes.

So area = ``g · max(α·k + (work − WORK_EPS)/R · ρ(0, β, γ), (work − WORK_EPS)/R · ρ(α, β, γ))``.
Only ``best`` uses CPU and memory: under ``unit`` every job is counted at GPUs alone
(a job capped at the share speed may still hold any cores; the GPU rounds hold).
Units: areas and capacities in resource-rounds (× R for resource-minutes).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from sensaopt.servable import best_speeds, min_rounds, share_speeds
from sensaopt.validator import WORK_EPS

if TYPE_CHECKING:
    from sensaopt.instance import Cluster, Instance
    from sensaopt.profiles import SensitivityProfile

Regime = Literal["best", "unit"]
"""A bound's speed regime: ``"best"`` (each job at its best speed: any policy) or ``"unit"``
(at the GPU-proportional share: policies that never speed a job up)."""
REGIMES: tuple[Regime, ...] = ("best", "unit")
"""Both regimes."""
SAFETY = 1e-9  # relative: areas are shrunk by this much so float rounding never overstates them


@dataclass(frozen=True)
class Resource:
    """A pooled resource: weight per GPU, per core and per GB held for one round.
    Weights are given per unit of the cluster's total (``gpu=1`` = one cluster's GPUs)
    and normalised by :meth:`weights`."""

    name: str
    gpu: float = 0.0
    cpu: float = 0.0
    mem: float = 0.0

    def weights(self, cluster: Cluster) -> tuple[float, float, float]:
        """(α per GPU, β per core, γ per GB): each weight ÷ the cluster's total of it."""
        return self.gpu / cluster.total_gpus, self.cpu / cluster.total_cpus, self.mem / cluster.total_mem_gb

    def capacity(self, cluster: Cluster) -> float:
        """What the cluster offers per round (= gpu + cpu + mem, the weights being per total)."""
        a, b, c = self.weights(cluster)
        return a * cluster.total_gpus + b * cluster.total_cpus + c * cluster.total_mem_gb


GPUS = Resource("gpus", gpu=1.0)
RESOURCES: dict[Regime, tuple[Resource, ...]] = {
    "best": (GPUS, Resource("cores", cpu=1.0), Resource("memory", mem=1.0), Resource("gpus+cores", gpu=1.0, cpu=1.0),
             Resource("gpus+2cores", gpu=1.0, cpu=2.0), Resource("gpus+memory", gpu=1.0, mem=1.0),
             Resource("gpus+cores+memory", gpu=1.0, cpu=1.0, mem=1.0)),
    "unit": (GPUS,),
}
"""The pooled resources each bound is computed for (each gives a valid bound; the
strongest is kept)."""


def regime_speeds(instance: Instance, regime: Regime) -> np.ndarray:
    """Per job, the speed cap of ``regime`` (× ``speed_factor``): ``best`` or ``unit``."""
    if regime == "best":
        return best_speeds(instance)
    if regime == "unit":
        return share_speeds(instance)
    raise ValueError(f"unknown speed regime {regime!r} (best | unit)")


def min_ratio(profile: SensitivityProfile, gpus: int, cluster: Cluster, w: tuple[float, float, float]) -> float:
    """ρ: least (α + β·c + γ·m) / speed(c, m) over the per-GPU allocations (c, m) a
    ``gpus``-GPU job may get on ``cluster`` (module doc; speed without ``speed_factor``);
    ``inf`` when no allocation is allowed."""
    a, b, c = w
    fc, fm = profile.floor
    best = np.inf
    for t in cluster.node_types:
        if gpus <= t.gpus:
            shares = {gpus}
        elif len(cluster.node_types) == 1:  # whole nodes and at most one partial node of g mod G GPUs
            shares = {t.gpus} | ({gpus % t.gpus} if gpus % t.gpus else set())
        else:  # over mixed node types a partial node may hold any number of the job's GPUs
            shares = set(range(1, t.gpus + 1))
        for share in shares:
            cmax, mmax = t.cpus / share, t.mem_gb / share
            if cmax < fc - 1e-9 or mmax < fm - 1e-9:
                continue
            cs = [x for x in profile.cpu_levels if x <= cmax] + [cmax]
            ms = [x for x in profile.mem_levels if x <= mmax] + [mmax]
            for x, y in itertools.product(cs, ms):
                s = profile.speed(x, y)
                if s > 0:
                    best = min(best, (a + b * x + c * y) / s)
    return float(best)


def areas(instance: Instance, regime: Regime, resource: Resource, rounds: np.ndarray | None = None) -> np.ndarray:
    """Per job (instance order), its area (module doc) of ``resource`` under ``regime``,
    resource-rounds; ``rounds``: :func:`sensaopt.servable.min_rounds` at the regime's
    speeds, if already computed."""
    cl = instance.cluster
    a, b, c = resource.weights(cl)
    k = min_rounds(instance, regime_speeds(instance, regime)) if rounds is None else rounds
    g = np.fromiter((j.gpus for j in instance.jobs), dtype=float, count=len(instance.jobs))
    out = a * np.where(np.isfinite(k), k, 0.0)  # speed 0 (no node gives the floor): the instance refuses such jobs
    if regime == "best" and (b or c):
        work = np.fromiter((max(j.work - WORK_EPS, 0.0) for j in instance.jobs), dtype=float, count=len(instance.jobs))
        cache: dict[tuple[int, int], tuple[float, float]] = {}
        keep: list[SensitivityProfile] = []  # the profiles keyed by id stay alive while cached
        both = np.empty(len(instance.jobs))
        rest = np.empty(len(instance.jobs))
        for i, j in enumerate(instance.jobs):
            key = (id(j.profile), j.gpus)
            r = cache.get(key)
            if r is None:
                keep.append(j.profile)
                r = cache[key] = (min_ratio(j.profile, j.gpus, cl, (a, b, c)), min_ratio(j.profile, j.gpus, cl, (0.0, b, c)))
            both[i], rest[i] = r[0] / j.speed_factor, r[1] / j.speed_factor
        units = work / instance.round_minutes
        out = np.maximum(out + units * rest, units * both)
    return g * out * (1.0 - SAFETY)
