"""The rule of a valid allocation and what every set of them is built from: the floor,
whole cores, a node's capacity (:func:`fits`), the shares of a node, the lattice of
grid points, dominance and the Pareto front, and the one cache (:func:`cached`); and
the validator's allocation checks of a whole schedule (:func:`schedule_faults`).
The package doc (:mod:`sensaopt.allocations`) has the whole picture."""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from sensaopt.instance import Cluster, Node, NodeType
from sensaopt.profiles import Option, SensitivityProfile

if TYPE_CHECKING:
    from sensaopt.instance import Instance
    from sensaopt.schedule import Segment

DEFAULT_REFINE = 2  # refined steps per grid cell and axis of the finest outer grid (the relaxation); finer: refine=
LATTICE = 100  # grid points on a 1/100 core, 1/100 GB lattice (the models' resource units stay integral)
EPS = 1e-9  # tolerance of every comparison of cores, GB and speeds here (the validator's)

T = TypeVar("T")
_CACHE: weakref.WeakKeyDictionary[SensitivityProfile, dict[tuple, object]] = weakref.WeakKeyDictionary()


def cached(profile: SensitivityProfile, key: tuple, make: Callable[[], T]) -> T:
    """The one cache of the package: ``make()`` once per profile (by value) and ``key``.

    Args:
        profile: the profile the entry belongs to (it lives as long as the profile).
        key: the set's name and arguments.
        make: computes the entry.

    Returns:
        The entry.
    """
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


def proportional_allocation(node: Node | NodeType, gpus: int) -> tuple[int, float]:
    """The GPU-proportional share of a node for ``gpus`` of a job's GPUs on it.

    Args:
        node: the node (or node type).
        gpus: the job's GPUs on it.

    Returns:
        (cores of the job on the node, floored to whole cores; GB of the job on the node).
    """
    return math.floor(gpus * node.cpus / node.gpus + 1e-9), gpus * node.mem_gb / node.gpus


def gpus_on(node: NodeType, gpus: int) -> int:
    """A job's GPUs on a node that holds the most of them.

    Args:
        node: the node type.
        gpus: the job's GPUs.

    Returns:
        All of them, or the whole node's (a gang job).
    """
    return gpus if gpus <= node.gpus else node.gpus


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
        per = gpus_on(t, gpus)
        out.add((t.cpus / per, lattice(t.mem_gb / per, up=False)))
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



# ---- the lattice ------------------------------------------------------------------------------------
def lattice(x: float, up: bool) -> float:
    """``x`` on the lattice of 1/:data:`LATTICE`.

    Args:
        x: cores or GB per GPU.
        up: round up (False: down).

    Returns:
        The lattice point.
    """
    y = x * LATTICE
    return (math.ceil(y - 1e-6) if up else math.floor(y + 1e-6)) / LATTICE


def option_at(profile: SensitivityProfile, cpu: float, mem: float) -> Option:
    """The option at a per-GPU point.

    Args:
        profile: the job's profile.
        cpu: cores per GPU.
        mem: GB per GPU.

    Returns:
        The option, its speed rounded to 12 digits (0 below the floor).
    """
    return Option(cpu, mem, round(profile.speed(cpu, mem), 12))


# ---- the validator's checks of a whole schedule --------------------------------------------------
@dataclass(frozen=True)
class PlacementFaults:
    """The placements of one segment that break an allocation rule, by their index in
    the segment's placements.

    Attributes:
        below_floor: placements with a GPU whose cores or GB per GPU are below the
            profile's floor (:func:`meets_floor`; the validator's ``floor``).
        fractional: placements whose cores are not whole (:func:`whole_cores`; the
            validator's ``whole_cores``).
    """

    below_floor: frozenset[int] = frozenset()
    fractional: frozenset[int] = frozenset()


NO_FAULTS = PlacementFaults()


def schedule_faults(instance: Instance, segments: Iterable[Segment]) -> tuple[PlacementFaults, ...]:
    """The allocation rules checked on every placement of a schedule, in one call.

    Args:
        instance: the instance (its jobs' profiles).
        segments: the schedule's segments.

    Returns:
        Per segment (same order), its :class:`PlacementFaults` (:data:`NO_FAULTS` for a
        segment that breaks none, or whose job the instance does not have).
    """
    index, jobs = instance.job_index, instance.jobs
    out: list[PlacementFaults] = []
    for seg in segments:
        k = index.get(seg.job)
        if k is None:
            out.append(NO_FAULTS)
            continue
        profile = jobs[k].profile
        low: list[int] = []
        frac: list[int] = []
        for i, p in enumerate(seg.placements):
            if p.gpus > 0 and not meets_floor(profile, p.cpus / p.gpus, p.mem_gb / p.gpus):
                low.append(i)
            if not whole_cores(p.cpus):
                frac.append(i)
        out.append(PlacementFaults(frozenset(low), frozenset(frac)) if low or frac else NO_FAULTS)
    return tuple(out)
