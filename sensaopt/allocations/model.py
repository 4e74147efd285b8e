"""An exact model's options: every job's grid and the options each node holds
(:func:`model_grids`), the points a warm start uses (:func:`schedule_points`), grid
dominance (:func:`grids_dominate`), and everything the exact pipeline needs about the
valid allocations, computed in one call (:func:`exact_allocations`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sensaopt.allocations.grids import best_speeds, inner_options, job_options, relaxation_options
from sensaopt.allocations.rule import cached, dominated, fits, option_at
from sensaopt.instance import Cluster, Instance, Job, NodeType
from sensaopt.profiles import Option, SensitivityProfile

if TYPE_CHECKING:
    from sensaopt.schedule import Schedule


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
            seen[key] = job.gpus <= max_g and dominated(relaxation_options(job.profile, refine, job.gpus,
                                                                           single_node_cores(instance.cluster, job.gpus)),
                                                        inner_options(job.profile, instance.cluster, job.gpus, inner_refine))
        if not seen[key]:
            return False
    return True


def single_node_cores(cluster: Cluster, gpus: int) -> int | None:
    """The most cores of a node type that holds all the GPUs of a job.

    Args:
        cluster: the cluster.
        gpus: the job's GPUs.

    Returns:
        The cores (the gang rule places such a job on one node), or None when no node
        type holds them all (a gang job).
    """
    cores = [t.cpus for t in cluster.node_types if t.gpus >= gpus]
    return int(max(cores)) if cores else None


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
                extra: Mapping[str, set[tuple[float, float]]], exact_cpu: bool = True) -> dict[str, JobGrid]:
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
        exact_cpu: the relaxation's CPU-exact grid for one-node jobs
            (:func:`~sensaopt.allocations.grids.relaxation_options`); False: the coarse grids.

    Returns:
        Job id -> its :class:`JobGrid`.
    """
    cluster = instance.cluster
    return {job.id: _job_grid(job.profile, cluster, job.gpus, relaxed, refine, inner_refine,
                              frozenset(extra.get(job.id, ())), exact_cpu) for job in jobs}


def _job_grid(profile: SensitivityProfile, cluster: Cluster, gpus: int, relaxed: bool, refine: int, inner_refine: int,
              extra: frozenset[tuple[float, float]], exact_cpu: bool = True) -> JobGrid:
    """:func:`model_grids` of one job (cached unless it has ``extra`` points: a warm
    start's points differ from solve to solve, and the cache would only grow)."""
    def make() -> JobGrid:
        opts = _model_options(profile, cluster, gpus, relaxed, refine, inner_refine, extra, exact_cpu)
        holds = {(t, g): frozenset(k for k, o in enumerate(opts) if fits(t, g, o, whole=not relaxed))
                 for t in cluster.node_types for g in range(1, min(gpus, t.gpus) + 1)}
        return JobGrid(opts, holds)
    if extra and not relaxed:
        return make()
    return cached(profile, ("model", gpus, relaxed, refine if relaxed else inner_refine, cluster.node_types, exact_cpu), make)


def _model_options(profile: SensitivityProfile, cluster: Cluster, gpus: int, relaxed: bool, refine: int,
                   inner_refine: int, extra: frozenset[tuple[float, float]], exact_cpu: bool = True) -> tuple[Option, ...]:
    """The options of :func:`model_grids`: the outer grid, or the inner one (distinct
    (cores, GB): another option is a resize) plus the ``extra`` points at their speed."""
    if relaxed:
        return relaxation_options(profile, refine, gpus, single_node_cores(cluster, gpus) if exact_cpu else None)
    if inner_refine == 0:
        opts: list[Option] = []
        for o in job_options(profile, cluster):
            if not any(p.cpu == o.cpu and p.mem == o.mem for p in opts):
                opts.append(o)
    else:
        opts = list(inner_options(profile, cluster, gpus, inner_refine))
    for c, m in sorted(extra):
        if not any(abs(o.cpu - c) < 1e-9 and abs(o.mem - m) < 1e-9 for o in opts):
            o = option_at(profile, c, m)
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


@dataclass(frozen=True)
class ExactAllocations:
    """What the exact pipeline needs about every job's valid allocations, computed in one
    call (:func:`exact_allocations`) and handed down through its phases.

    Attributes:
        inner: job id -> its inner model grid (:func:`model_grids`, the warm start's
            points included: its schedule stays representable).
        dominated: whether the inner grid dominates the relaxation's for every job
            (:func:`grids_dominate`): the inner model's proof stands alone.
        relaxed: refined steps -> job id -> the allocation relaxation's grid of that
            refinement (empty when ``dominated``: no relaxation is solved).
        best_speeds: per job (instance order), its best speed over every allocation ×
            its ``speed_factor`` (:func:`~sensaopt.allocations.grids.best_speeds`).
    """

    inner: Mapping[str, JobGrid]
    dominated: bool
    relaxed: Mapping[int, Mapping[str, JobGrid]]
    best_speeds: tuple[float, ...]


def exact_allocations(instance: Instance, start: Schedule | None, *, refine: int, inner_refine: int,
                      relax_refines: Iterable[int]) -> ExactAllocations:
    """Everything the exact pipeline asks about the valid allocations, in one call.

    Args:
        instance: the instance.
        start: the warm start (its per-GPU points join the inner grids; None: none).
        refine: the finest relaxation's refined steps per grid cell (dominance is
            checked against it).
        inner_refine: the inner grid's refined steps.
        relax_refines: the relaxations' refined steps the pipeline may solve, coarse first.

    Returns:
        The :class:`ExactAllocations`.
    """
    jobs = instance.jobs
    inner = model_grids(instance, jobs, relaxed=False, refine=refine, inner_refine=inner_refine,
                        extra=schedule_points(start))
    dom = grids_dominate(instance, refine, inner_refine)
    relaxed = {} if dom else {r: model_grids(instance, jobs, relaxed=True, refine=r, inner_refine=inner_refine, extra={})
                              for r in relax_refines}
    return ExactAllocations(inner, dom, relaxed, best_speeds(instance))
