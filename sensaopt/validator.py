"""The one independent validator: recomputes everything from instance + schedule.

Rules (each error names its rule):

``unknown_job``      a segment names a job the instance does not have
``unknown_node``     a placement names a node index outside the cluster
``bad_segment``      a segment with ``rounds < 1``, ``start < 0`` or no placement
``gang``             a segment's placements do not add up to exactly the job's GPUs
``single_node``      a job that fits one node is spread over several
``whole_nodes``      a job larger than every node uses a partial node more than once
``duplicate_node``   a segment places the job twice on the same node
``floor``            CPU or memory per GPU below the profile's floor, or a placement
                     with no GPU
``overlap``          two segments of one job share a round
``before_arrival``   a job runs in a round that starts before its arrival
``capacity_gpu``, ``capacity_cpu``, ``capacity_mem``
                     a node's GPUs, cores or GB exceeded in some round
``after_completion`` a job holds resources in a round after the one its work ended in
``incomplete``       a job's work is never completed (only with ``require_complete``)

Progress: in a round, a job does ``speed × minutes`` of work, where ``speed`` is the
job's true speed (profile speed at its per-GPU allocation × ``Job.speed_factor``; the
slowest node of a multi-node job sets the pace) and ``minutes`` is the round length
less the restart overhead in the first round of a segment that resumes the job after
a gap or on a different set of nodes. A job completes at the **end** of the round in
which its cumulative work reaches ``Job.work`` (resources are released at round
boundaries), so completion times are multiples of the round length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sensaopt.errors import ScheduleError
from sensaopt.instance import Instance, Job
from sensaopt.schedule import Schedule, Segment

WORK_EPS = 1e-6  # minutes of work: a job with less than this left is done


@dataclass(frozen=True)
class JobOutcome:
    job: str
    first_start: float | None  # minutes
    finish: float | None  # minutes (end of the completion round); None: unfinished
    work_done: float  # minutes of work at speed 1.0 (capped at the job's work)
    preemptions: int  # resumes after a gap
    migrations: int  # resumes right away but on other nodes


@dataclass
class Evaluation:
    """What the validator recomputed. ``errors`` is empty for a valid schedule."""

    outcomes: dict[str, JobOutcome]
    errors: list[ScheduleError]
    gpu_minutes: float = 0.0  # resource-minutes actually held
    cpu_minutes: float = 0.0
    mem_gb_minutes: float = 0.0
    usage: dict = field(default_factory=dict, repr=False)  # per-round per-node arrays

    @property
    def ok(self) -> bool:
        return not self.errors


def segment_speed(job: Job, seg: Segment) -> float:
    """True speed of a job over a segment: slowest node's profile speed × speed_factor."""
    s = min(job.profile.speed(p.cpus / p.gpus, p.mem_gb / p.gpus) for p in seg.placements)
    return s * job.speed_factor


def is_restart(prev: Segment | None, seg: Segment) -> bool:
    """Does ``seg`` pay the restart overhead? Yes if the job ran before and either
    paused in between or moved to another set of nodes."""
    return prev is not None and (prev.end != seg.start or prev.nodes != seg.nodes)


def check_schedule(instance: Instance, schedule: Schedule, require_complete: bool = True, max_errors: int = 50) -> Evaluation:
    """Check every rule and recompute outcomes; never raises on a bad schedule."""
    errors: list[ScheduleError] = []
    R = instance.round_minutes
    nodes = instance.cluster.nodes
    n_nodes = len(nodes)
    max_g = instance.cluster.max_node_gpus

    def err(rule: str, msg: str, job: str | None = None, r: int | None = None) -> None:
        if len(errors) < max_errors:
            errors.append(ScheduleError(rule, msg, job, r))

    if abs(schedule.round_minutes - R) > 1e-9:
        err("bad_segment", f"schedule round length {schedule.round_minutes} != instance round length {R}")

    # ---- structural checks per segment ------------------------------------------------
    good: list[Segment] = []
    for seg in schedule.segments:
        if seg.job not in instance.job_index:
            err("unknown_job", f"unknown job {seg.job!r}", seg.job, seg.start)
            continue
        job = instance.job(seg.job)
        if seg.rounds < 1 or seg.start < 0 or not seg.placements:
            err("bad_segment", f"segment start={seg.start} rounds={seg.rounds} with {len(seg.placements)} placements", seg.job, seg.start)
            continue
        if any(not (0 <= p.node < n_nodes) for p in seg.placements):
            err("unknown_node", "placement on a node the cluster does not have", seg.job, seg.start)
            continue
        if len({p.node for p in seg.placements}) != len(seg.placements):
            err("duplicate_node", "the job is placed twice on one node", seg.job, seg.start)
        if sum(p.gpus for p in seg.placements) != job.gpus:
            err("gang", f"placements give {sum(p.gpus for p in seg.placements)} GPUs, the job needs {job.gpus}", seg.job, seg.start)
        if job.gpus <= max_g and len(seg.placements) > 1:
            err("single_node", f"a {job.gpus}-GPU job must run on one node", seg.job, seg.start)
        if job.gpus > max_g:
            partial = sum(1 for p in seg.placements if p.gpus != nodes[p.node].gpus)
            if partial > 1:
                err("whole_nodes", f"{partial} partial nodes; a job larger than a node uses whole nodes and at most one partial node", seg.job, seg.start)
        fc, fm = job.profile.floor
        for p in seg.placements:
            if p.gpus <= 0:
                err("floor", "a placement with no GPU", seg.job, seg.start)
            elif p.cpus / p.gpus < fc - 1e-9 or p.mem_gb / p.gpus < fm - 1e-9:
                err("floor", f"{p.cpus / p.gpus:g} cores and {p.mem_gb / p.gpus:g} GB per GPU on node {nodes[p.node].name} is below the profile floor ({fc:g}, {fm:g})", seg.job, seg.start)
        if seg.start < instance.release_round(job):
            err("before_arrival", f"runs in round {seg.start} (minute {seg.start * R:g}) before arrival at minute {job.arrival:g}", seg.job, seg.start)
        good.append(seg)

    # ---- capacity per node and round ----------------------------------------------------
    T = max((s.end for s in good), default=0)
    usage: dict[str, np.ndarray] = {}
    gpu_min = cpu_min = mem_min = 0.0
    if good:
        starts, ends, nidx, g, c, m = [], [], [], [], [], []
        for s in good:
            for p in s.placements:
                starts.append(s.start); ends.append(s.end); nidx.append(p.node)
                g.append(p.gpus); c.append(p.cpus); m.append(p.mem_gb)
        starts_a, ends_a, nidx_a = np.array(starts), np.array(ends), np.array(nidx)
        caps = {
            "gpu": np.array([n.gpus for n in nodes], dtype=float),
            "cpu": np.array([n.cpus for n in nodes], dtype=float),
            "mem": np.array([n.mem_gb for n in nodes], dtype=float),
        }
        lengths = (ends_a - starts_a) * R
        # cell (round, node) of every placement's start and end, starts first: bincount
        # adds in input order, as np.add.at would (same floating-point sums)
        cells = np.concatenate([starts_a * n_nodes + nidx_a, ends_a * n_nodes + nidx_a])
        for res, vals in (("gpu", g), ("cpu", c), ("mem", m)):
            v = np.array(vals, dtype=float)
            diff = np.bincount(cells, weights=np.concatenate([v, -v]), minlength=(T + 1) * n_nodes).reshape(T + 1, n_nodes)
            use = np.cumsum(diff, axis=0)[:T]
            usage[res] = use
            over = np.argwhere(use > caps[res][None, :] + 1e-6)
            for r, n in over[:5]:
                holders = sorted(s.job for s in good if s.start <= r < s.end and any(p.node == n for p in s.placements))
                err(f"capacity_{res}", f"node {nodes[n].name} uses {use[r, n]:g} of {caps[res][n]:g} {res} (jobs {', '.join(holders)})", holders[0] if holders else None, int(r))
            total = float(np.dot(v, lengths))
            if res == "gpu":
                gpu_min = total
            elif res == "cpu":
                cpu_min = total
            else:
                mem_min = total

    # ---- progress, completion, overlap ---------------------------------------------------
    by_job: dict[str, list[Segment]] = {}
    for s in good:
        by_job.setdefault(s.job, []).append(s)
    outcomes: dict[str, JobOutcome] = {}
    for job in instance.jobs:
        segs = sorted(by_job.get(job.id, ()), key=lambda s: s.start)
        done, finish, prev = 0.0, None, None
        preempt = migr = 0
        overhead = instance.overheads.restart_minutes(job.gpus)
        prev_nodes = None
        for seg in segs:
            if prev is not None and seg.start < prev.end:
                err("overlap", f"segments starting at rounds {prev.start} and {seg.start} overlap", job.id, seg.start)
                if seg.end > prev.end:
                    prev, prev_nodes = seg, seg.nodes
                continue
            if finish is not None:
                err("after_completion", f"holds resources in round {seg.start}, after completing at minute {finish:g}", job.id, seg.start)
                prev, prev_nodes = seg, seg.nodes
                continue
            nodes = seg.nodes
            restart = prev is not None and (prev.end != seg.start or prev_nodes != nodes)  # is_restart()
            if restart:
                if prev.end != seg.start:
                    preempt += 1
                else:
                    migr += 1
            speed = segment_speed(job, seg)
            per_round = speed * R
            first = speed * max(R - overhead, 0.0) if restart else per_round
            left = job.work - done
            if first >= left - WORK_EPS:
                k = 1
            elif per_round <= 0:
                k = None
            else:
                k = 1 + math.ceil((left - first - WORK_EPS) / per_round)
            if k is not None and k <= seg.rounds:
                done = job.work
                finish = (seg.start + k) * R
                if k < seg.rounds:
                    err("after_completion", f"holds resources for {seg.rounds - k} round(s) after completing at minute {finish:g}", job.id, seg.start + k)
            else:
                done += first + per_round * (seg.rounds - 1)
            prev, prev_nodes = seg, nodes
        if finish is None and require_complete:
            err("incomplete", f"work done {done:g} of {job.work:g} minutes", job.id)
        outcomes[job.id] = JobOutcome(
            job=job.id,
            first_start=segs[0].start * R if segs else None,
            finish=finish,
            work_done=min(done, job.work),
            preemptions=preempt,
            migrations=migr,
        )
    return Evaluation(outcomes, errors, gpu_min, cpu_min, mem_min, usage)


def validate(instance: Instance, schedule: Schedule, require_complete: bool = True) -> Evaluation:
    """Like :func:`check_schedule` but raises the first :class:`ScheduleError`."""
    ev = check_schedule(instance, schedule, require_complete)
    if ev.errors:
        raise ev.errors[0]
    return ev
