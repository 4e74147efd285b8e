"""The valid allocations of a job on a node: the one home of "which CPU and memory a job
may take", for the validator, the policies, the exact models and their relaxations.

**The rule** (``models/formulation.md``, "The feasible set"): on every node of its
placement a job gets a whole number of cores (:func:`whole_cores`) and any amount of
GB, at least its profile's floor per GPU (:func:`meets_floor`), within the node's
capacity (:func:`fits`). Its speed is the profile's surface at the per-GPU allocation
(:meth:`~sensaopt.profiles.SensitivityProfile.speed`).

**The sets** a policy or model chooses from, :class:`~sensaopt.profiles.Option`\\ s
(per-GPU cores and GB with their speed), each Pareto-efficient (:func:`pareto`: no
other option as fast with no more CPU and memory):

* the policies' options (:func:`job_options`): whole cores per GPU at the measured
  memory levels (:func:`whole_core_options`) plus each node type's proportional share
  (:func:`proportional_share`); the optimal demand is chosen among them
  (:func:`optimal_demand`);
* the exact models' **inner** grid (:func:`inner_options`): real allocations at their
  true speed — the policies' options, whole cores per *job* at or just above each
  measured CPU level (at the memory levels), each node type's whole-node share per GPU
  rounded *down* (:func:`whole_node_shares`; a job alone on a node, or on its GPUs of a
  node) combined with the levels, and (``refine`` > 1) the refined grid points
  (:func:`refined_axis`) rounded *up* to the lattice of 1/:data:`LATTICE` cores and GB.
  Every schedule of the inner model is a valid schedule: its optimum is an upper bound,
  attained;
* the **outer** grid (:func:`outer_options`): the refined grid rounded *down* to the
  lattice; the option at a point gets the highest speed of its whole grid box
  (:func:`box_max`: the point up to the next point on both axes; to infinity past the
  last, where the surface is flat). Every real allocation lies in some box, uses at
  least that box's point's resources and runs at most that box's speed: any valid
  schedule maps to an outer model schedule with no more resources and at least its
  progress, slot by slot, so the outer model's bound is a bound of the problem (the
  Lemma in ``models/formulation.md``, "Exact over every valid allocation"). Its
  schedules are not valid schedules; only its bound is used. With a job's GPU count its
  CPU axis holds only the per-GPU cores a node can give in whole cores
  (:func:`cpu_value`, :func:`cpu_candidates`); the relaxation takes the smaller of the
  two grids (:func:`relaxation_options`);
* **dominance** (:func:`dominated`, :func:`grids_dominate`): the inner grid covers the
  outer one, and the inner model's proof stands alone;
* an exact model's options of every job and the options each node holds
  (:func:`model_grids`, one call per model data build).

**One cache**: every set is computed once per profile (by value) and arguments
(:func:`_cached`; the entries live as long as the profile), except a model grid with a
warm start's points (those differ from solve to solve).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from sensaopt import profile_data
from sensaopt.instance import Cluster, Instance, Job, Node, NodeType
from sensaopt.profiles import Option, SensitivityProfile

if TYPE_CHECKING:
    from sensaopt.schedule import Schedule

__all__ = [
    "DEFAULT_REFINE", "LATTICE", "JobGrid", "Option", "best_speed", "box_max", "cpu_candidates", "cpu_value", "dominated", "fits",
    "grids_dominate", "inner_options", "job_options", "meets_floor", "model_grids", "optimal_demand", "outer_options",
    "pareto", "proportional_share", "refined_axis", "relaxation_options", "schedule_points", "whole_core_options",
    "whole_cores", "whole_node_shares",
]

DEFAULT_REFINE = 2  # refined steps per grid cell and axis of the finest outer grid (the relaxation); finer: refine=
LATTICE = 100  # grid points on a 1/100 core, 1/100 GB lattice (the models' resource units stay integral)
EPS = 1e-9  # tolerance of every comparison of cores, GB and speeds here (the validator's)

T = TypeVar("T")
_CACHE: weakref.WeakKeyDictionary[SensitivityProfile, dict[tuple, object]] = weakref.WeakKeyDictionary()


def _cached(profile: SensitivityProfile, key: tuple, make: Callable[[], T]) -> T:
    """The one cache of this module: ``make()`` once per profile (by value) and ``key``."""
    store = _CACHE.get(profile)
    if store is None:
        store = _CACHE[profile] = {}
    hit = store.get(key)
    if hit is None:
        hit = store[key] = make()
    return hit  # type: ignore[return-value]


# ---- the rule -----------------------------------------------------------------------------------
def meets_floor(profile: SensitivityProfile, cpu: float, mem: float) -> bool:
    """Whether a per-GPU allocation reaches the profile's floor (the validator's ``floor``).

    Args:
        profile: the job's profile.
        cpu: cores per GPU.
        mem: GB per GPU.

    Returns:
        True when both reach the floor (to :data:`EPS`).
    """
    fc, fm = profile.floor
    return cpu >= fc - EPS and mem >= fm - EPS


def whole_cores(cores: float) -> bool:
    """Whether a job's cores on one node are a whole number (the validator's ``whole_cores``).

    Args:
        cores: cores of one job on one node (not per GPU).

    Returns:
        True when whole (to :data:`EPS`).
    """
    return abs(cores - round(cores)) <= EPS


def fits(node: Node | NodeType, gpus: int, option: Option, whole: bool = True) -> bool:
    """Whether ``gpus`` GPUs of a job on ``node`` can take ``option`` per GPU: its cores
    and GB within the node's capacity and, with ``whole``, whole cores (:func:`whole_cores`).

    Args:
        node: the node (or its type).
        gpus: the job's GPUs on it.
        option: the per-GPU allocation.
        whole: apply the whole-core rule (False: the allocation relaxation, whose CPU axis
            is already restricted).

    Returns:
        True when the node holds it.
    """
    cores = gpus * option.cpu
    return (cores <= node.cpus + EPS and gpus * option.mem <= node.mem_gb + 1e-6
            and (not whole or whole_cores(cores)))


def proportional_share(node: Node | NodeType) -> tuple[int, float]:
    """The GPU-proportional per-GPU share of a node.

    Args:
        node: the node (or node type).

    Returns:
        (cores per GPU, floored to whole cores; GB per GPU).
    """
    return math.floor(node.cpus / node.gpus + 1e-9), node.mem_gb / node.gpus


def _gpus_on(node: NodeType, gpus: int) -> int:
    """A ``gpus``-GPU job's GPUs on a node of type ``node`` that holds the most of them:
    all of them, or the whole node's (a gang job)."""
    return gpus if gpus <= node.gpus else node.gpus


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
        per = _gpus_on(t, gpus)
        cmax, mmax = t.cpus / per, t.mem_gb / per
        if meets_floor(profile, cmax, mmax):
            best = max(best, box_max(profile, fc, cmax, fm, mmax))
    return best


def whole_node_shares(cluster: Cluster, gpus: int) -> set[tuple[float, float]]:
    """Per-GPU allocations of a whole node of each type shared by a job's GPUs on it.

    Args:
        cluster: the cluster.
        gpus: the job's GPUs (on one node; a gang job: the node's GPUs).

    Returns:
        (cores per GPU: all the node's cores, a whole number per job; GB per GPU rounded
        down to the lattice), one per node type.
    """
    out = set()
    for t in cluster.node_types:
        per = _gpus_on(t, gpus)
        out.add((t.cpus / per, _lattice(t.mem_gb / per, up=False)))
    return out


# ---- dominance and the Pareto front --------------------------------------------------------------
def pareto(options: Iterable[Option]) -> tuple[Option, ...]:
    """The options no other option dominates (as fast with no more CPU and memory).

    Args:
        options: candidate options (speed > 0).

    Returns:
        The efficient ones, slowest first (then fewer cores, then less memory); ties in
        (cores, GB) keep the fastest.
    """
    opts = sorted(options, key=lambda o: (o.cpu, o.mem, -o.speed))
    kept: list[Option] = []
    for o in opts:
        if not any(p.cpu <= o.cpu + EPS and p.mem <= o.mem + EPS and p.speed >= o.speed for p in kept):
            kept = [p for p in kept if not (o.cpu <= p.cpu + EPS and o.mem <= p.mem + EPS and o.speed >= p.speed)]
            kept.append(o)
    kept.sort(key=lambda o: (o.speed, o.cpu, o.mem))
    return tuple(kept)


def dominated(outer: tuple[Option, ...], inner: tuple[Option, ...]) -> bool:
    """Whether every outer option has an inner one with no more CPU and memory and at
    least its speed: the inner model is then a relaxation too, and its bound is valid.

    Args:
        outer: the outer (relaxation) options.
        inner: the inner (model) options.

    Returns:
        True when ``inner`` dominates ``outer``.
    """
    return all(any(i.cpu <= o.cpu + EPS and i.mem <= o.mem + EPS and i.speed >= o.speed for i in inner) for o in outer)


def grids_dominate(instance: Instance, refine: int, inner_refine: int = 1) -> bool:
    """Whether, for every job, the inner grid dominates the relaxation's (:func:`dominated`)
    and the job fits one node: the allocation check's first certificate.

    Args:
        instance: the instance.
        refine: the relaxation's refined steps per grid cell.
        inner_refine: the inner grid's refined steps.

    Returns:
        True when the inner model's optimum is the problem's.
    """
    max_g = instance.cluster.max_node_gpus
    seen: dict[tuple[int, int], bool] = {}
    for job in instance.jobs:
        key = (id(job.profile), job.gpus)
        if key not in seen:
            seen[key] = job.gpus <= max_g and dominated(relaxation_options(job.profile, refine, job.gpus),
                                                        inner_options(job.profile, instance.cluster, job.gpus, inner_refine))
        if not seen[key]:
            return False
    return True


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
        return pareto(o for o in (_option(profile, c, m) for c, m in cand) if o.speed > 0)
    return _cached(profile, ("whole_core", extra), make)


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


# ---- the exact models' grids ---------------------------------------------------------------------
def _lattice(x: float, up: bool) -> float:
    """``x`` on the lattice of 1/:data:`LATTICE`, rounded up or down."""
    y = x * LATTICE
    return (math.ceil(y - 1e-6) if up else math.floor(y + 1e-6)) / LATTICE


def _option(profile: SensitivityProfile, cpu: float, mem: float) -> Option:
    """The option at a per-GPU point, its speed rounded to 12 digits (0 below the floor)."""
    return Option(cpu, mem, round(profile.speed(cpu, mem), 12))


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
        cs = [_lattice(c, up=True) for c in refined_axis(profile.cpu_levels, refine)]
        ms = [_lattice(m, up=True) for m in refined_axis(profile.mem_levels, refine)]
        if refine > 1:
            pts |= {(c, m) for c in cs for m in ms}
        for sc, sm in whole_node_shares(cluster, gpus):
            pts |= {(sc, m) for m in ms if m <= sm + EPS} | {(c, sm) for c in cs if c <= sc + EPS} | {(sc, sm)}
        opts = (_option(profile, c, m) for c, m in pts if meets_floor(profile, c, m))
        return pareto(o for o in opts if o.speed > 0)
    return _cached(profile, ("inner", gpus, refine, cluster.node_types), make)


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
            cs = sorted({_lattice(c, up=False) for c in axis})
        else:
            cs = sorted({cpu_value(c, gpus, up=True) for c in axis})
        ms = sorted({_lattice(m, up=False) for m in refined_axis(profile.mem_levels, refine)})
        opts = []
        for i, c in enumerate(cs):
            c1 = cs[i + 1] if i + 1 < len(cs) else math.inf
            cands = None if gpus is None else cpu_candidates(profile.cpu_levels, c, c1, gpus)
            for k, m in enumerate(ms):
                m1 = ms[k + 1] if k + 1 < len(ms) else math.inf
                s = box_max(profile, c, c1, m, m1, cands)
                if s > 0:
                    # rounded up: the relaxation never credits less than the box's speed
                    opts.append(Option(_lattice(c, up=False), m, math.ceil(s * 1e12 - 1e-3) / 1e12))
        return pareto(opts)
    return _cached(profile, ("outer", refine, gpus), make)


def relaxation_options(profile: SensitivityProfile, refine: int, gpus: int) -> tuple[Option, ...]:
    """The outer options the allocation relaxation gives a job.

    Of the two valid outer grids (any real CPU, or only the whole-core values,
    :func:`outer_options`) the one with fewer options, the whole-core one on a tie (its
    boxes are never more optimistic). Each job may take either: the Lemma maps every job
    on its own. Measured on a 20-job Philly window (1-GPU jobs): refine 1 has 53 / 62
    options (real / whole-core), refine 2 173 / 119, refine 4 653 / 233; the larger,
    tighter refine-1 grid reached a lower bound within the relaxation's share of 60 s.

    Args:
        profile: the job's profile.
        refine: refined steps per grid cell and axis.
        gpus: the job's GPUs.

    Returns:
        The chosen grid's options.
    """
    real, whole = outer_options(profile, refine), outer_options(profile, refine, gpus)
    return whole if len(whole) <= len(real) else real


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


# ---- an exact model's options ---------------------------------------------------------------------
@dataclass(frozen=True)
class JobGrid:
    """One job's per-GPU options in an exact model and the ones each node holds.

    Attributes:
        options: the options in model order (an option's index is its place here).
        holds: (node type, the job's GPUs on a node of it) -> indices of the options such
            a node holds (:func:`fits`; whole cores unless relaxed).
    """

    options: tuple[Option, ...]
    holds: Mapping[tuple[NodeType, int], frozenset[int]]


def model_grids(instance: Instance, jobs: Iterable[Job], *, relaxed: bool, refine: int, inner_refine: int,
                extra: Mapping[str, set[tuple[float, float]]]) -> dict[str, JobGrid]:
    """Every job's options in an exact model (``models/formulation.md``, $O_j$).

    Args:
        instance: the instance (its cluster).
        jobs: the model's jobs.
        relaxed: the allocation relaxation's grid (:func:`relaxation_options`), whose bound
            is a bound of the problem; otherwise the inner grid's, whose schedules are valid.
        refine: the relaxation's refined steps per grid cell.
        inner_refine: the inner grid's refined steps (0: the policies' options alone,
            :func:`job_options`: the rolling-horizon policies' windows).
        extra: job id -> per-GPU (cores, GB) points added to its inner options (a warm
            start's, :func:`schedule_points`; the relaxation ignores them).

    Returns:
        Job id -> its :class:`JobGrid`.
    """
    cluster = instance.cluster
    return {job.id: _job_grid(job.profile, cluster, job.gpus, relaxed, refine, inner_refine,
                              frozenset(extra.get(job.id, ()))) for job in jobs}


def _job_grid(profile: SensitivityProfile, cluster: Cluster, gpus: int, relaxed: bool, refine: int, inner_refine: int,
              extra: frozenset[tuple[float, float]]) -> JobGrid:
    """:func:`model_grids` of one job (cached unless it has ``extra`` points: a warm
    start's points differ from solve to solve, and the cache would only grow)."""
    def make() -> JobGrid:
        opts = _model_options(profile, cluster, gpus, relaxed, refine, inner_refine, extra)
        holds = {(t, g): frozenset(k for k, o in enumerate(opts) if fits(t, g, o, whole=not relaxed))
                 for t in cluster.node_types for g in range(1, min(gpus, t.gpus) + 1)}
        return JobGrid(opts, holds)
    if extra and not relaxed:
        return make()
    return _cached(profile, ("model", gpus, relaxed, refine if relaxed else inner_refine, cluster.node_types), make)


def _model_options(profile: SensitivityProfile, cluster: Cluster, gpus: int, relaxed: bool, refine: int,
                   inner_refine: int, extra: frozenset[tuple[float, float]]) -> tuple[Option, ...]:
    """The options of :func:`model_grids`: the outer grid, or the inner one (distinct
    (cores, GB): another option is a resize) plus the ``extra`` points at their speed."""
    if relaxed:
        return relaxation_options(profile, refine, gpus)
    if inner_refine == 0:
        opts: list[Option] = []
        for o in job_options(profile, cluster):
            if not any(p.cpu == o.cpu and p.mem == o.mem for p in opts):
                opts.append(o)
    else:
        opts = list(inner_options(profile, cluster, gpus, inner_refine))
    for c, m in sorted(extra):
        if not any(abs(o.cpu - c) < 1e-9 and abs(o.mem - m) < 1e-9 for o in opts):
            o = _option(profile, c, m)
            if o.speed > 0:
                opts.append(o)
    return tuple(opts)


def schedule_points(schedule: Schedule | None) -> dict[str, set[tuple[float, float]]]:
    """The per-GPU allocations a schedule uses uniformly on all nodes of a segment.

    Args:
        schedule: the schedule (None: none).

    Returns:
        Job id -> its (cores, GB) per-GPU points (:func:`model_grids`' ``extra``: the
        schedule stays representable in the model).
    """
    out: dict[str, set[tuple[float, float]]] = {}
    if schedule is None:
        return out
    for s in schedule.segments:
        pts = {(p.cpus / p.gpus, p.mem_gb / p.gpus) for p in s.placements}
        if len(pts) == 1:
            c, m = next(iter(pts))
            out.setdefault(s.job, set()).add((float(c), float(m)))
    return out
