"""The allocation grids of the exact models: which per-GPU allocations a model offers.

The problem (``models/formulation.md``, "The feasible set") lets a job take any real
number of cores and GB on each node of its placement, within capacity and at least its
profile's floor per GPU; its speed is the bilinear surface of
:class:`~sensaopt.profiles.SensitivityProfile` at the per-GPU allocation (slowest node),
flat above the top levels. A time-indexed model must choose among finitely many
options, so it is built twice over one refined grid of ``refine`` steps per grid cell
and axis, on a lattice of 1/:data:`LATTICE` cores and GB:

* **inner** options (:func:`inner_options`): real allocations at their true speed — the
  policies' whole-core options (:func:`sensaopt.options.job_options`: whole cores at the
  measured memory levels, each node type's proportional share), whole cores per *job*
  at or just above each measured CPU level (at the memory levels), each node type's
  whole-node share per GPU rounded *down* (a job alone on a node, or on its GPUs of a
  node) combined with the levels, and (``inner_refine`` > 1) the refined grid points
  rounded *up* to the lattice. Every schedule of
  the inner model is a valid schedule: its optimum is an upper bound, attained.
* **outer** options (:func:`outer_options`): the refined grid rounded *down* to the
  lattice; the option at a point gets the highest speed of its whole grid box (the
  point up to the next point on both axes; to infinity past the last, where the surface
  is flat). Every real allocation lies in some box, uses at least that box's point's
  resources and runs at most that box's speed: any valid schedule maps to an outer
  model schedule with no more resources and at least its progress, slot by slot, so
  the outer model's bound is a bound of the problem (the theorem in
  ``models/formulation.md``). Its schedules are not valid schedules (they run faster
  than the profile allows); only its bound is used.

Both sets keep only Pareto-efficient options (no other option as fast with no more CPU
and memory).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from sensaopt.instance import Cluster
from sensaopt.options import job_options
from sensaopt.profiles import Option, SensitivityProfile

DEFAULT_REFINE = 2  # refined steps per grid cell and axis of the finest outer grid (the relaxation); finer: refine=
LATTICE = 100  # grid points on a 1/100 core, 1/100 GB lattice (the models' resource units stay integral)
EPS = 1e-9


def _lattice(x: float, up: bool) -> float:
    y = x * LATTICE
    return (math.ceil(y - 1e-6) if up else math.floor(y + 1e-6)) / LATTICE


def refined_axis(levels: tuple[float, ...], refine: int) -> list[float]:
    """The grid levels with ``refine - 1`` equally spaced points inside each interval."""
    out: list[float] = []
    for a, b in zip(levels, levels[1:]):
        out += [a + (b - a) * i / refine for i in range(refine)]
    return out + [levels[-1]]


def pareto(options: Iterable[Option]) -> tuple[Option, ...]:
    """The options no other option dominates (as fast with no more CPU and memory),
    slowest first; ties in (cores, GB) keep the fastest."""
    opts = sorted(options, key=lambda o: (o.cpu, o.mem, -o.speed))
    kept: list[Option] = []
    for o in opts:
        if not any(p.cpu <= o.cpu + EPS and p.mem <= o.mem + EPS and p.speed >= o.speed for p in kept):
            kept = [p for p in kept if not (o.cpu <= p.cpu + EPS and o.mem <= p.mem + EPS and o.speed >= p.speed)]
            kept.append(o)
    kept.sort(key=lambda o: (o.speed, o.cpu, o.mem))
    return tuple(kept)


def whole_node_shares(cluster: Cluster, gpus: int) -> set[tuple[float, float]]:
    """Per-GPU (cores, GB) of a whole node of each type shared by a job's GPUs on it:
    ``gpus`` (one node) or the node's GPUs (a gang job): all its cores (a whole number per
    job), its GB rounded down to the lattice."""
    out = set()
    for t in cluster.node_types:
        per = gpus if gpus <= t.gpus else t.gpus
        out.add((t.cpus / per, _lattice(t.mem_gb / per, up=False)))
    return out


def inner_options(profile: SensitivityProfile, cluster: Cluster, gpus: int, refine: int = 1,
                  extra: Iterable[tuple[float, float]] = ()) -> tuple[Option, ...]:
    """Real allocations a ``gpus``-GPU job may take, at their true profile speed (module
    doc; ``refine`` 1: the grid levels only, no refined points), plus the ``extra``
    per-GPU points (a warm start's)."""
    fc, fm = profile.floor
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
    pts |= set(extra)
    opts = (Option(c, m, round(profile.speed(c, m), 12)) for c, m in pts if c >= fc - EPS and m >= fm - EPS)
    return pareto(o for o in opts if o.speed > 0)


def outer_options(profile: SensitivityProfile, refine: int = DEFAULT_REFINE, gpus: int | None = None) -> tuple[Option, ...]:
    """Relaxation options: the refined grid rounded down to the lattice, each point with
    the highest speed of its box (module doc). ``gpus``: the job's GPUs; its CPU axis then
    holds only the per-GPU cores a node can give it in whole cores (:func:`cpu_value`),
    each box's speed the highest over those values in it (None: any real CPU)."""
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
            s = profile.box_max(c, c1, m, m1, cands)
            if s > 0:
                # rounded up: the relaxation never credits less than the box's speed
                opts.append(Option(_lattice(c, up=False), m, math.ceil(s * 1e12 - 1e-3) / 1e12))
    return pareto(opts)


def relaxation_options(profile: SensitivityProfile, refine: int, gpus: int) -> tuple[Option, ...]:
    """The outer options the allocation relaxation gives a ``gpus``-GPU job: of the two
    valid outer grids (any real CPU, or only the whole-core values, :func:`outer_options`)
    the one with fewer options, the whole-core one on a tie (its boxes are never more
    optimistic). Each job may take either: the Lemma maps every job on its own.
    Measured on a 20-job Philly window (1-GPU jobs): refine 1 has 53 / 62 options (real /
    whole-core), refine 2 173 / 119, refine 4 653 / 233; the larger, tighter refine-1
    grid reached a lower bound within the relaxation's share of 60 s."""
    key = ("relaxation_options", refine, gpus)  # per profile: build_data asks once per job and stage
    hit = profile._cache.get(key)
    if hit is None:
        real, whole = outer_options(profile, refine), outer_options(profile, refine, gpus)
        hit = profile._cache[key] = whole if len(whole) <= len(real) else real
    return hit


def cpu_value(x: float, gpus: int, up: bool, strict: bool = False) -> float:
    """The per-GPU cores nearest ``x`` (at or above it with ``up``, at or below it —
    strictly below with ``strict`` — otherwise) that some node can give a ``gpus``-GPU job
    in whole cores: k/d for whole k and d GPUs of the job on that node, 1 <= d <= ``gpus``."""
    ds = range(1, max(gpus, 1) + 1)
    if up:
        return min(math.ceil(x * d - EPS) / d for d in ds)
    return max((math.ceil(x * d - EPS) - 1 if strict else math.floor(x * d + EPS)) / d for d in ds)


def cpu_candidates(levels: tuple[float, ...], c0: float, c1: float, gpus: int) -> list[float]:
    """Where the speed over the per-GPU cores :func:`cpu_value` allows in [c0, c1) peaks:
    the surface is linear in CPU between levels, so on each piece at its first or last
    allowed value — c0, the last allowed value below c1, the allowed values on both sides
    of each level inside (past the top level the surface is flat: the top level's next
    allowed value stands for all of them)."""
    last = math.inf if c1 == math.inf else cpu_value(c1, gpus, up=False, strict=True)
    out = {c0} if c1 == math.inf else {c0, last}
    for lv in levels:
        if c0 < lv < c1:
            out |= {v for v in (cpu_value(lv, gpus, up=False), cpu_value(lv, gpus, up=True)) if c0 <= v <= last}
    return sorted(out)


def dominated(outer: tuple[Option, ...], inner: tuple[Option, ...]) -> bool:
    """Every outer option has an inner one with no more CPU and memory and at least its
    speed: the inner model is then a relaxation too, and its bound is valid."""
    return all(any(i.cpu <= o.cpu + EPS and i.mem <= o.mem + EPS and i.speed >= o.speed for i in inner) for o in outer)
