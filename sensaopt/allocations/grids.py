"""The sets of valid allocations a policy or an exact model chooses from: the policies'
whole-core options, the exact models' inner and outer grids and the relaxation's, and
the best speed over every allocation (the package doc, :mod:`sensaopt.allocations`)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from sensaopt import profile_data
from sensaopt.allocations.rule import (
    DEFAULT_REFINE,
    EPS,
    cached,
    gpus_on,
    lattice,
    meets_floor,
    option_at,
    pareto,
    proportional_share,
    whole_node_shares,
)
from sensaopt.instance import Cluster, Instance
from sensaopt.profiles import Option, SensitivityProfile


def best_speed(profile: SensitivityProfile, gpus: int, cluster: Cluster) -> float:
    """The highest speed a job reaches over every allocation one node can give its GPUs.

    Per GPU up to (node cores / g, node GB / g) for a job of g GPUs that fits the node,
    up to (node cores / G, node GB / G) for a gang job on G-GPU nodes (its slowest node
    is a whole node); at least the floor (:func:`box_max` over that box). Over several
    node types the best of them.

    Args:
        profile: the job's profile.
        gpus: the job's GPUs.
        cluster: the cluster.

    Returns:
        The speed (without the job's ``speed_factor``); 0.0 when no node type gives the floor.
    """
    best = 0.0
    fc, fm = profile.floor
    for t in cluster.node_types:
        per = gpus_on(t, gpus)
        cmax, mmax = t.cpus / per, t.mem_gb / per
        if meets_floor(profile, cmax, mmax):
            best = max(best, box_max(profile, fc, cmax, fm, mmax))
    return best



def best_speeds(instance: Instance) -> tuple[float, ...]:
    """Every job's best speed (:func:`best_speed`) × its ``speed_factor``, in one call.

    Args:
        instance: the instance.

    Returns:
        Per job (instance order), the speed; computed once per (profile, GPU count).
    """
    seen: dict[tuple[SensitivityProfile, int], float] = {}
    out = []
    for j in instance.jobs:
        key = (j.profile, j.gpus)
        s = seen.get(key)
        if s is None:
            s = seen[key] = best_speed(j.profile, j.gpus, instance.cluster)
        out.append(s * j.speed_factor)
    return tuple(out)

# ---- the policies' options -----------------------------------------------------------------------
def whole_core_options(profile: SensitivityProfile, extra: tuple[tuple[float, float], ...] = ()) -> tuple[Option, ...]:
    """Pareto-efficient per-GPU allocations in whole cores per GPU.

    Args:
        profile: the job's profile.
        extra: further (cores, GB) per-GPU points (cores floored to whole ones; below the
            floor: left out).

    Returns:
        Every whole core count from the floor to the largest CPU level at every memory
        level, plus ``extra``, efficient ones only (:func:`pareto`), slowest first.
    """
    def make() -> tuple[Option, ...]:
        cpus = range(math.ceil(profile.cpu_levels[0]), math.floor(profile.cpu_levels[-1]) + 1)
        cand = {(c, m) for c in cpus for m in profile.mem_levels}
        for c, m in extra:
            c = math.floor(c + 1e-9)
            if meets_floor(profile, c, m):
                cand.add((c, float(m)))
        return pareto(o for o in (option_at(profile, c, m) for c, m in cand) if o.speed > 0)
    return cached(profile, ("whole_core", extra), make)


def job_options(profile: SensitivityProfile, cluster: Cluster) -> tuple[Option, ...]:
    """Per-GPU options a policy may give a job (and the exact models' coarsest grid).

    Args:
        profile: the job's profile.
        cluster: the cluster (its node types' proportional shares are options too).

    Returns:
        :func:`whole_core_options` with every node type's :func:`proportional_share`.
    """
    return whole_core_options(profile, tuple(sorted({proportional_share(t) for t in cluster.node_types})))


def optimal_demand(profile: SensitivityProfile, tolerance: float = 0.1,
                   share: tuple[float, float] | None = None) -> Option:
    """The smallest whole-core option reaching ``(1 - tolerance) * peak`` speed.

    Args:
        profile: the job's profile.
        tolerance: the share of the peak speed given up (0.1: 90 % of the peak).
        share: (cores, GB) per GPU the dominant share is measured against (None: the
            reference share, 3 cores and 62.5 GB per GPU).

    Returns:
        Among :func:`whole_core_options`, the least dominant share, then less CPU, then
        less memory.
    """
    sc, sm = share or profile_data.REFERENCE_SHARE
    target = (1 - tolerance) * profile.peak - 1e-9
    good = [o for o in whole_core_options(profile) if o.speed >= target]
    return min(good, key=lambda o: (max(o.cpu / sc, o.mem / sm), o.cpu, o.mem))



def refined_axis(levels: tuple[float, ...], refine: int) -> list[float]:
    """The grid levels with ``refine - 1`` equally spaced points inside each interval.

    Args:
        levels: an axis' measured levels, increasing.
        refine: steps per interval.

    Returns:
        The refined points, increasing.
    """
    out: list[float] = []
    for a, b in zip(levels, levels[1:]):
        out += [a + (b - a) * i / refine for i in range(refine)]
    return out + [levels[-1]]


def inner_options(profile: SensitivityProfile, cluster: Cluster, gpus: int, refine: int = 1) -> tuple[Option, ...]:
    """Real allocations a job may take, at their true profile speed (module doc).

    Args:
        profile: the job's profile.
        cluster: the cluster (its node types' proportional and whole-node shares).
        gpus: the job's GPUs.
        refine: refined steps per grid cell (1: the grid levels only, no refined points).

    Returns:
        The inner grid's efficient options, slowest first.
    """
    def make() -> tuple[Option, ...]:
        pts = {(o.cpu, o.mem) for o in job_options(profile, cluster)}
        # whole cores per job at (or just above) each measured CPU level: a fractional level
        # (0.5, 1.5 per GPU) is otherwise reached only by its whole-cores-per-GPU neighbours
        per_job = {math.ceil(c * gpus - EPS) / gpus for c in profile.cpu_levels}
        pts |= {(c, m) for c in per_job for m in profile.mem_levels}
        cs = [lattice(c, up=True) for c in refined_axis(profile.cpu_levels, refine)]
        ms = [lattice(m, up=True) for m in refined_axis(profile.mem_levels, refine)]
        if refine > 1:
            pts |= {(c, m) for c in cs for m in ms}
        for sc, sm in whole_node_shares(cluster, gpus):
            pts |= {(sc, m) for m in ms if m <= sm + EPS} | {(c, sm) for c in cs if c <= sc + EPS} | {(sc, sm)}
        opts = (option_at(profile, c, m) for c, m in pts if meets_floor(profile, c, m))
        return pareto(o for o in opts if o.speed > 0)
    return cached(profile, ("inner", gpus, refine, cluster.node_types), make)


def box_max(profile: SensitivityProfile, c0: float, c1: float, m0: float, m1: float,
            cpus: Iterable[float] | None = None) -> float:
    """Highest speed over the per-GPU box [c0, c1] × [m0, m1].

    The surface is bilinear on every grid cell, so its maximum over each cell's part of
    the box lies at a corner of that part: the box's corners and the grid levels inside
    it are the only candidates.

    Args:
        profile: the profile.
        c0: lowest cores per GPU.
        c1: highest cores per GPU (``math.inf``: flat above the top level).
        m0: lowest GB per GPU.
        m1: highest GB per GPU (``math.inf`` allowed).
        cpus: the CPU candidates instead (a box whose CPU side is a discrete set: its
            extreme points on each linear piece, :func:`cpu_candidates`).

    Returns:
        The highest speed (0.0 when the box lies below the floor).
    """
    cs = list(cpus) if cpus is not None else _box_axis(profile.cpu_levels, c0, c1)
    ms = _box_axis(profile.mem_levels, m0, m1)
    return max(profile.speed(c, m) for c in cs for m in ms)


def _box_axis(levels: tuple[float, ...], lo: float, hi: float) -> list[float]:
    """The candidate points of one axis of a box [lo, hi]: its ends (``hi`` capped at the
    top level, where the surface turns flat) and every level strictly inside."""
    hi = min(hi, max(levels[-1], lo))
    return [lo, hi] + [x for x in levels if lo < x < hi]


def outer_options(profile: SensitivityProfile, refine: int = DEFAULT_REFINE, gpus: int | None = None) -> tuple[Option, ...]:
    """Relaxation options: the refined grid rounded down to the lattice, each point with
    the highest speed of its box (module doc).

    Args:
        profile: the job's profile.
        refine: refined steps per grid cell and axis.
        gpus: the job's GPUs; its CPU axis then holds only the per-GPU cores a node can
            give it in whole cores (:func:`cpu_value`), each box's speed the highest over
            those values in it (None: any real CPU).

    Returns:
        The outer grid's efficient options, slowest first.
    """
    def make() -> tuple[Option, ...]:
        axis = refined_axis(profile.cpu_levels, refine)
        if gpus is None:
            cs = sorted({lattice(c, up=False) for c in axis})
        else:
            cs = sorted({cpu_value(c, gpus, up=True) for c in axis})
        ms = sorted({lattice(m, up=False) for m in refined_axis(profile.mem_levels, refine)})
        opts = []
        for i, c in enumerate(cs):
            c1 = cs[i + 1] if i + 1 < len(cs) else math.inf
            cands = None if gpus is None else cpu_candidates(profile.cpu_levels, c, c1, gpus)
            for k, m in enumerate(ms):
                m1 = ms[k + 1] if k + 1 < len(ms) else math.inf
                s = box_max(profile, c, c1, m, m1, cands)
                if s > 0:
                    # rounded up: the relaxation never credits less than the box's speed
                    opts.append(Option(lattice(c, up=False), m, math.ceil(s * 1e12 - 1e-3) / 1e12))
        return pareto(opts)
    return cached(profile, ("outer", refine, gpus), make)


def relaxation_options(profile: SensitivityProfile, refine: int, gpus: int, cores: int | None = None) -> tuple[Option, ...]:
    """The outer options the allocation relaxation gives a job.

    A job that fits one node (``cores``: the most cores of a node type that holds all
    its GPUs) gets the grid exact in CPU, :func:`exact_cpu_options`, when it has at most
    :data:`EXACT_CPU_MAX` CPU values. Otherwise, of the two other valid outer grids (any
    real CPU, or only the whole-core values, :func:`outer_options`) the one with fewer
    options, the whole-core one on a tie (its boxes are never more optimistic). Each job
    may take any of them: the Lemma maps every job on its own.

    Why exact in CPU: the coarser grids' boxes credit a job the speed of the next CPU
    point (1 core at 2 cores' speed), and on 20-job Philly windows the relaxation's MIP
    optimum was then its root LP (w2, w3, w4, w16, w17: nothing a search could lift);
    exact in CPU, w4's relaxation optimum is the inner grid's, 78.65 instead of 78.15
    (``models/measurements.md``, session 22).

    Args:
        profile: the job's profile.
        refine: refined steps per grid cell and axis (memory only on the CPU-exact grid).
        gpus: the job's GPUs.
        cores: see above; None for a gang job (several nodes) or when unknown.

    Returns:
        The chosen grid's options.
    """
    if cores is not None:
        exact = exact_cpu_options(profile, refine, gpus, cores)
        if exact is not None:
            return exact
    real, whole = outer_options(profile, refine), outer_options(profile, refine, gpus)
    return whole if len(whole) <= len(real) else real


EXACT_CPU_MAX = 64  # most CPU values of a CPU-exact relaxation grid (per job); a job with more keeps the coarser grids


def exact_cpu_axis(profile: SensitivityProfile, gpus: int, cores: int) -> list[float]:
    """Every cores-per-GPU value a node gives all the GPUs of a job in whole cores.

    Args:
        profile: the job's profile.
        gpus: the job's GPUs (all on one node).
        cores: the node's cores.

    Returns:
        k / ``gpus`` for whole k, from the profile's floor up to the first value at or
        above its top CPU level (above it the surface is flat), ascending.
    """
    lo = math.ceil(profile.cpu_levels[0] * gpus - EPS)
    hi = min(math.ceil(profile.cpu_levels[-1] * gpus - EPS), cores)
    return [k / gpus for k in range(max(lo, 1), hi + 1)]


def exact_cpu_options(profile: SensitivityProfile, refine: int, gpus: int, cores: int) -> tuple[Option, ...] | None:
    """The relaxation grid of a job that fits one node, exact in CPU: every allowed
    cores-per-GPU value (:func:`exact_cpu_axis`) × the refined memory points, each point
    with the highest speed over its memory interval at exactly its CPU (module doc of
    :mod:`sensaopt.allocations`, the Lemma: all the job's GPUs are on one node, so the
    only allowed CPU value in [k/g, (k+1)/g) is k/g, and a value above the axis gets the
    top value's box, where the surface is flat). Memory points are rounded down to the
    lattice, speeds up, as in :func:`outer_options`; the CPU is k/g exactly, so that a schedule
    of the relaxation (the shortfall model's, a lifted one) has whole cores. None when the axis has more than
    :data:`EXACT_CPU_MAX` values.

    Args:
        profile: the job's profile.
        refine: refined memory steps per grid cell.
        gpus: the job's GPUs (all on one node).
        cores: the most cores of a node type holding ``gpus`` GPUs.

    Returns:
        The efficient options, slowest first, or None.
    """
    def make() -> tuple[Option, ...] | None:
        cs = exact_cpu_axis(profile, gpus, cores)
        if not cs or len(cs) > EXACT_CPU_MAX:
            return None
        ms = sorted({lattice(m, up=False) for m in refined_axis(profile.mem_levels, refine)})
        opts = []
        for i, c in enumerate(cs):
            top = i + 1 == len(cs) and c >= profile.cpu_levels[-1] - EPS
            for k, m in enumerate(ms):
                m1 = ms[k + 1] if k + 1 < len(ms) else math.inf
                s = box_max(profile, c, math.inf if top else c, m, m1, None if top else [c])
                if s > 0:  # the CPU exactly k/g (not on the lattice): g × it is k whole cores
                    opts.append(Option(c, m, math.ceil(s * 1e12 - 1e-3) / 1e12))
        return pareto(opts)
    return cached(profile, ("outer-exact-cpu", refine, gpus, cores), make)


def cpu_value(x: float, gpus: int, up: bool, strict: bool = False) -> float:
    """The per-GPU cores nearest ``x`` that some node can give a ``gpus``-GPU job in whole
    cores: k/d for whole k and d GPUs of the job on that node, 1 <= d <= ``gpus``.

    Args:
        x: cores per GPU.
        gpus: the job's GPUs.
        up: the nearest value at or above ``x`` (False: at or below it).
        strict: with ``up`` False, strictly below ``x``.

    Returns:
        The value, cores per GPU.
    """
    ds = range(1, max(gpus, 1) + 1)
    if up:
        return min(math.ceil(x * d - EPS) / d for d in ds)
    return max((math.ceil(x * d - EPS) - 1 if strict else math.floor(x * d + EPS)) / d for d in ds)


def cpu_candidates(levels: tuple[float, ...], c0: float, c1: float, gpus: int) -> list[float]:
    """Where the speed over the per-GPU cores :func:`cpu_value` allows in [c0, c1) peaks.

    The surface is linear in CPU between levels, so on each piece at its first or last
    allowed value: c0, the last allowed value below c1, the allowed values on both sides
    of each level inside (past the top level the surface is flat: the top level's next
    allowed value stands for all of them).

    Args:
        levels: the profile's CPU levels, cores per GPU.
        c0: the box's lowest cores per GPU (an allowed value).
        c1: the next point's cores per GPU (``math.inf``: past the last point).
        gpus: the job's GPUs.

    Returns:
        The candidates, increasing.
    """
    last = math.inf if c1 == math.inf else cpu_value(c1, gpus, up=False, strict=True)
    out = {c0} if c1 == math.inf else {c0, last}
    for lv in levels:
        if c0 < lv < c1:
            out |= {v for v in (cpu_value(lv, gpus, up=False), cpu_value(lv, gpus, up=True)) if c0 <= v <= last}
    return sorted(out)
