"""The one independent validator: recomputes everything from instance + schedule.

Each rule is one function ``rule_<name>`` returning the :class:`ScheduleError`\\ s it
finds (an empty tuple when the rule holds); :data:`RULES` maps the rule names to them
and :func:`check_schedule` composes them. Rules by the scope they look at:

a segment on its own, checked in this order (:data:`GATE_RULES` first: a segment that
breaks one of them is left out of every later check):

``unknown_job``      a segment names a job the instance does not have
``bad_segment``      a segment with ``rounds < 1``, ``start < 0`` or no placement (also
                     a schedule whose round length differs from the instance's)
``unknown_node``     a placement names a node index outside the cluster
``duplicate_node``   a segment places the job twice on the same node
``gang``             a segment's placements do not add up to exactly the job's GPUs
``single_node``      a job that fits one node is spread over several
``whole_nodes``      a job larger than every node uses a partial node more than once
``floor``            CPU or memory per GPU below the profile's floor, or a placement
                     with no GPU
``before_arrival``   a job runs in a round that starts before its arrival
``whole_cores``      a placement's cores are not a whole number (cores are given per job
                     and node in whole cores; memory in any amount of GB)

a node in a round (over every well-formed segment, see :class:`Usage`):

``capacity_gpu``, ``capacity_cpu``, ``capacity_mem``
                     a node's GPUs, cores or GB exceeded in some round

a job's segments in start order (see :class:`JobReplay`):

``overlap``          two segments of one job share a round
``after_completion`` a job holds resources in a round after the one its work ended in
``incomplete``       a job's work is never completed (only with ``require_complete``)

A new rule is one more ``rule_<name>`` function at the scope it needs, added to that
scope's tuple (:data:`SEGMENT_RULES`, :data:`CAPACITY_RULES`) or called in
:func:`replay_job`, and to :data:`RULES`; ``tests/test_validator.py`` wants a schedule
that breaks it alone.

Progress: in a round, a job does ``speed × minutes`` of work, where ``speed`` is the
job's true speed (profile speed at its per-GPU allocation × ``Job.speed_factor``; the
slowest node of a multi-node job sets the pace) and ``minutes`` is the round length R,
less, in the first round of a segment, the cost of the change that starts it:
:func:`sensaopt.changes.classify` of the job's previous segment and this one gives its
kind (restart after a pause, migration to another node set or GPU split, resize of CPU
or memory in place, or none) and :meth:`sensaopt.instance.Overheads.minutes` its cost
(``max(R − cost, 0)`` minutes are left). A job completes at the **end** of the round in
which its cumulative work reaches ``Job.work`` (resources are released at round
boundaries), so completion times are multiples of the round length. Changes and the
minutes they cost (``min(cost, R)``) are counted per job while it is unfinished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from sensaopt.allocations import PlacementFaults, schedule_faults
from sensaopt.changes import MIGRATION, RESIZE, RESTART, ChangeCosts, classify
from sensaopt.errors import ScheduleError
from sensaopt.instance import Instance, Job, Node
from sensaopt.progress import WORK_EPS as WORK_EPS  # the tolerance of completion, re-exported
from sensaopt.progress import segment_progress
from sensaopt.schedule import Schedule, Segment

Findings = tuple[ScheduleError, ...]  # what one rule reports; () when it holds
NONE: Findings = ()


@dataclass(frozen=True)
class JobOutcome:
    job: str
    first_start: float | None  # minutes
    finish: float | None  # minutes (end of the completion round); None: unfinished
    work_done: float  # minutes of work at speed 1.0 (capped at the job's work)
    preemptions: int  # restarts: resumes after a gap (Change.RESTART)
    migrations: int  # runs on right away on another node set or GPU split (Change.MIGRATION)
    resizes: int = 0  # runs on right away on the same GPUs, other CPU or memory (Change.RESIZE)
    restart_minutes_lost: float = 0.0  # wall minutes of rounds lost to restarts, min(cost, R) each
    migration_minutes_lost: float = 0.0  # the same, to migrations
    resize_minutes_lost: float = 0.0  # the same, to resizes
    rounds_held: int = 0  # rounds the job held GPUs up to its completion round (included)


@dataclass
class Evaluation:
    """What the validator recomputed. ``errors`` is empty for a valid schedule."""

    outcomes: dict[str, JobOutcome]
    errors: list[ScheduleError]
    gpu_minutes: float = 0.0  # resource-minutes actually held
    cpu_minutes: float = 0.0
    mem_gb_minutes: float = 0.0
    usage: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # per-round per-node arrays

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class RuleContext:
    """What the rules read about the instance, looked up once per check, and the
    allocation rules' findings on the checked schedule's placements, asked of
    :mod:`sensaopt.allocations` in one call (:func:`~sensaopt.allocations.schedule_faults`)."""

    instance: Instance
    nodes: tuple[Node, ...]
    round_minutes: float  # R, minutes per round
    max_node_gpus: int  # GPUs of the largest node: a job with more spans nodes
    faults: Mapping[int, PlacementFaults] = field(default_factory=dict)  # id(segment) -> its faults

    @classmethod
    def of(cls, instance: Instance, segments: Sequence[Segment] = ()) -> RuleContext:
        """The context of a check of ``segments`` (their allocation faults computed here)."""
        cluster = instance.cluster
        faults = {id(s): f for s, f in zip(segments, schedule_faults(instance, segments))}
        return cls(instance, cluster.nodes, instance.round_minutes, cluster.max_node_gpus, faults)

    def faults_of(self, seg: Segment) -> PlacementFaults:
        """``seg``'s allocation faults (asked now for a segment outside the checked ones)."""
        found = self.faults.get(id(seg))
        return found if found is not None else schedule_faults(self.instance, (seg,))[0]


def segment_speed(job: Job, seg: Segment) -> float:
    """True speed of a job over a segment: slowest node's profile speed × speed_factor
    (0.0 when a placement has no GPU: such a segment breaks ``floor`` and makes no progress)."""
    speed, pls = job.profile.speed, seg.placements
    if len(pls) == 1:  # the common case, without the generator
        p = pls[0]
        s = speed(p.cpus / p.gpus, p.mem_gb / p.gpus) if p.gpus > 0 else 0.0
    else:
        s = min(speed(p.cpus / p.gpus, p.mem_gb / p.gpus) if p.gpus > 0 else 0.0 for p in pls)
    return s * job.speed_factor


# ---- schedule-level ----------------------------------------------------------------------------
def rule_round_length(ctx: RuleContext, schedule: Schedule) -> Findings:
    """bad_segment (schedule level): the schedule's round length is the instance's."""
    R = ctx.round_minutes
    if abs(schedule.round_minutes - R) > 1e-9:
        return (ScheduleError("bad_segment", f"schedule round length {schedule.round_minutes} != instance round length {R}"),)
    return NONE


# ---- segment rules -----------------------------------------------------------------------------
def rule_unknown_job(ctx: RuleContext, seg: Segment) -> Findings:
    """unknown_job: the segment names a job of the instance."""
    if seg.job not in ctx.instance.job_index:
        return (ScheduleError("unknown_job", f"unknown job {seg.job!r}", seg.job, seg.start),)
    return NONE


def rule_bad_segment(ctx: RuleContext, seg: Segment) -> Findings:
    """bad_segment: at least one round, a start at round 0 or later, at least one placement."""
    if seg.rounds < 1 or seg.start < 0 or not seg.placements:
        msg = f"segment start={seg.start} rounds={seg.rounds} with {len(seg.placements)} placements"
        return (ScheduleError("bad_segment", msg, seg.job, seg.start),)
    return NONE


def rule_unknown_node(ctx: RuleContext, seg: Segment) -> Findings:
    """unknown_node: every placement is on a node of the cluster."""
    n_nodes = len(ctx.nodes)
    for p in seg.placements:
        if not (0 <= p.node < n_nodes):
            return (ScheduleError("unknown_node", "placement on a node the cluster does not have", seg.job, seg.start),)
    return NONE


def rule_duplicate_node(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """duplicate_node: at most one placement per node."""
    pls = seg.placements
    if len(pls) > 1 and len({p.node for p in pls}) != len(pls):
        return (ScheduleError("duplicate_node", "the job is placed twice on one node", seg.job, seg.start),)
    return NONE


def rule_gang(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """gang: the placements give exactly the job's GPUs."""
    given = sum(p.gpus for p in seg.placements)
    if given != job.gpus:
        return (ScheduleError("gang", f"placements give {given} GPUs, the job needs {job.gpus}", seg.job, seg.start),)
    return NONE


def rule_single_node(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """single_node: a job that fits the largest node runs on one node."""
    if job.gpus <= ctx.max_node_gpus and len(seg.placements) > 1:
        return (ScheduleError("single_node", f"a {job.gpus}-GPU job must run on one node", seg.job, seg.start),)
    return NONE


def rule_whole_nodes(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """whole_nodes: a job larger than every node takes whole nodes and at most one partial node."""
    if job.gpus <= ctx.max_node_gpus:
        return NONE
    nodes = ctx.nodes
    partial = sum(1 for p in seg.placements if p.gpus != nodes[p.node].gpus)
    if partial > 1:
        msg = f"{partial} partial nodes; a job larger than a node uses whole nodes and at most one partial node"
        return (ScheduleError("whole_nodes", msg, seg.job, seg.start),)
    return NONE


def rule_floor(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """floor: every placement has a GPU and at least the profile's floor of cores and GB per GPU
    (:func:`sensaopt.allocations.meets_floor`, through :meth:`RuleContext.faults_of`)."""
    profile = job.profile
    low = ctx.faults_of(seg).below_floor
    found: Findings = NONE
    for k, p in enumerate(seg.placements):
        if p.gpus <= 0:
            found += (ScheduleError("floor", "a placement with no GPU", seg.job, seg.start),)
        elif k in low:
            msg = (f"{p.cpus / p.gpus:g} cores and {p.mem_gb / p.gpus:g} GB per GPU on node {ctx.nodes[p.node].name} "
                   f"is below the profile floor ({profile.floor[0]:g}, {profile.floor[1]:g})")
            found += (ScheduleError("floor", msg, seg.job, seg.start),)
    return found


def rule_whole_cores(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """whole_cores: every placement gives the job a whole number of cores on its node
    (the feasible set, ``models/formulation.md``: whole cores per job and node, any GB;
    :func:`sensaopt.allocations.whole_cores`, through :meth:`RuleContext.faults_of`)."""
    frac = ctx.faults_of(seg).fractional
    if not frac:
        return NONE
    p = seg.placements[min(frac)]
    msg = f"{p.cpus:g} cores on node {ctx.nodes[p.node].name} is not a whole number of cores"
    return (ScheduleError("whole_cores", msg, seg.job, seg.start),)


def rule_before_arrival(ctx: RuleContext, job: Job, seg: Segment) -> Findings:
    """before_arrival: the segment starts at or after the job's release round."""
    if seg.start < ctx.instance.release_round(job):
        msg = f"runs in round {seg.start} (minute {seg.start * ctx.round_minutes:g}) before arrival at minute {job.arrival:g}"
        return (ScheduleError("before_arrival", msg, seg.job, seg.start),)
    return NONE


GateRule = Callable[[RuleContext, Segment], Findings]
SegmentRule = Callable[[RuleContext, Job, Segment], Findings]
GATE_RULES: tuple[GateRule, ...] = (rule_unknown_job, rule_bad_segment, rule_unknown_node)
SEGMENT_RULES: tuple[SegmentRule, ...] = (
    rule_duplicate_node, rule_gang, rule_single_node, rule_whole_nodes, rule_floor, rule_whole_cores, rule_before_arrival,
)


class _Report:
    """The errors found so far, at most ``limit`` of them (later ones are dropped)."""

    def __init__(self, limit: int) -> None:
        self.errors: list[ScheduleError] = []
        self.limit = limit

    def add(self, found: Iterable[ScheduleError]) -> None:
        for e in found:
            if len(self.errors) < self.limit:
                self.errors.append(e)


def well_formed_segments(ctx: RuleContext, segments: Iterable[Segment], report: _Report) -> list[Segment]:
    """Apply the segment rules; return the segments that pass :data:`GATE_RULES` (the
    rest of the checks and the progress replay see only those)."""
    good: list[Segment] = []
    index, jobs = ctx.instance.job_index, ctx.instance.jobs
    for seg in segments:
        for gate in GATE_RULES:
            found = gate(ctx, seg)
            if found:
                report.add(found)
                break
        else:
            job = jobs[index[seg.job]]
            for rule in SEGMENT_RULES:
                found = rule(ctx, job, seg)
                if found:
                    report.add(found)
            good.append(seg)
    return good


# ---- capacity rules ----------------------------------------------------------------------------
RESOURCES = ("gpu", "cpu", "mem")  # GPUs, cores, GB


@dataclass(frozen=True)
class Usage:
    """Resources held by a set of segments.

    ``per_round[res]`` is a (rounds, nodes) array of GPUs, cores or GB in use in each
    round on each node (empty without segments); ``minutes[res]`` the GPU-, core- or
    GB-minutes held in total.
    """

    per_round: dict[str, np.ndarray]
    minutes: dict[str, float]

    @classmethod
    def of(cls, ctx: RuleContext, segments: list[Segment]) -> Usage:
        if not segments:
            return cls({}, dict.fromkeys(RESOURCES, 0.0))
        n_nodes = len(ctx.nodes)
        T = max(s.end for s in segments)
        starts, ends, nidx = [], [], []
        g: list[float] = []
        c: list[float] = []
        m: list[float] = []
        for s in segments:
            for p in s.placements:
                starts.append(s.start)
                ends.append(s.end)
                nidx.append(p.node)
                g.append(p.gpus)
                c.append(p.cpus)
                m.append(p.mem_gb)
        vals = {"gpu": g, "cpu": c, "mem": m}
        starts_a, ends_a, nidx_a = np.array(starts), np.array(ends), np.array(nidx)
        lengths = (ends_a - starts_a) * ctx.round_minutes
        # cell (round, node) of every placement's start and end, starts first: bincount
        # adds in input order, as np.add.at would (same floating-point sums)
        cells = np.concatenate([starts_a * n_nodes + nidx_a, ends_a * n_nodes + nidx_a])
        per_round: dict[str, np.ndarray] = {}
        minutes: dict[str, float] = {}
        for res in RESOURCES:
            v = np.array(vals[res], dtype=float)
            diff = np.bincount(cells, weights=np.concatenate([v, -v]), minlength=(T + 1) * n_nodes).reshape(T + 1, n_nodes)
            per_round[res] = np.cumsum(diff, axis=0)[:T]
            minutes[res] = float(np.dot(v, lengths))
        return cls(per_round, minutes)


def _capacity(ctx: RuleContext, usage: Usage, segments: list[Segment], res: str) -> Findings:
    """The first five (round, node) cells where resource ``res`` exceeds the node's capacity."""
    use = usage.per_round.get(res)
    if use is None:
        return NONE
    nodes = ctx.nodes
    attr = {"gpu": "gpus", "cpu": "cpus", "mem": "mem_gb"}[res]
    caps = np.array([getattr(n, attr) for n in nodes], dtype=float)
    found = []
    for r, n in np.argwhere(use > caps[None, :] + 1e-6)[:5]:
        holders = sorted(s.job for s in segments if s.start <= r < s.end and any(p.node == n for p in s.placements))
        msg = f"node {nodes[n].name} uses {use[r, n]:g} of {caps[n]:g} {res} (jobs {', '.join(holders)})"
        found.append(ScheduleError(f"capacity_{res}", msg, holders[0] if holders else None, int(r)))
    return tuple(found)


def rule_capacity_gpu(ctx: RuleContext, usage: Usage, segments: list[Segment]) -> Findings:
    """capacity_gpu: no node holds more GPUs than it has in any round."""
    return _capacity(ctx, usage, segments, "gpu")


def rule_capacity_cpu(ctx: RuleContext, usage: Usage, segments: list[Segment]) -> Findings:
    """capacity_cpu: no node gives out more cores than it has in any round."""
    return _capacity(ctx, usage, segments, "cpu")


def rule_capacity_mem(ctx: RuleContext, usage: Usage, segments: list[Segment]) -> Findings:
    """capacity_mem: no node gives out more GB than it has in any round."""
    return _capacity(ctx, usage, segments, "mem")


CAPACITY_RULES = (rule_capacity_gpu, rule_capacity_cpu, rule_capacity_mem)


# ---- job rules: progress replay ------------------------------------------------------------------
@dataclass(slots=True)
class JobReplay:
    """A job's progress, replayed over its segments in start order (:meth:`run`, :meth:`skip`).

    ``done`` is minutes of work at speed 1.0; ``finish_round`` the round at whose end the
    work was complete (None while unfinished); ``prev`` the segment ending last so far.
    The change counters and minutes (``min(cost, R)`` each) grow while the job is unfinished.
    """

    job: Job
    round_minutes: float  # R
    costs: ChangeCosts  # minutes lost in the first round of a restart, a migration, a resize
    done: float = 0.0
    finish_round: int | None = None
    first_round: int | None = None
    prev: Segment | None = None
    rounds_held: int = 0
    preemptions: int = 0  # restarts
    migrations: int = 0
    resizes: int = 0
    restart_lost: float = 0.0
    migration_lost: float = 0.0
    resize_lost: float = 0.0

    @classmethod
    def start(cls, instance: Instance, job: Job) -> JobReplay:
        return cls(job, instance.round_minutes, ChangeCosts.of(instance.overheads, job.gpus))

    @property
    def finish(self) -> float | None:
        """Completion time, minutes (end of the completion round)."""
        return None if self.finish_round is None else self.finish_round * self.round_minutes

    def skip(self, seg: Segment) -> None:
        """Pass over a segment that overlaps the previous one (no progress): the one
        ending later stays the previous segment."""
        if self.prev is None or seg.end > self.prev.end:
            self.prev = seg

    def run(self, seg: Segment) -> None:
        """Advance over ``seg``: change cost, work done, completion (nothing is gained
        or counted once the job is complete)."""
        prev = self.prev
        self.prev = seg
        if self.finish_round is not None:
            return
        R, job = self.round_minutes, self.job
        cost = 0.0
        if prev is None:
            self.first_round = seg.start
        else:
            kind = classify(prev.placements, prev.end, seg.placements, seg.start)
            if kind is RESTART:
                cost = self.costs.restart
                self.preemptions += 1
                self.restart_lost += min(cost, R)
            elif kind is MIGRATION:
                cost = self.costs.migration
                self.migrations += 1
                self.migration_lost += min(cost, R)
            elif kind is RESIZE:
                cost = self.costs.resize
                self.resizes += 1
                self.resize_lost += min(cost, R)
        p = segment_progress(job.work - self.done, segment_speed(job, seg), R, cost, seg.rounds)
        k = p.rounds_to_done
        if k is not None:
            self.done = job.work
            self.finish_round = seg.start + k
            self.rounds_held += k
        else:
            self.done += p.work(seg.rounds)
            self.rounds_held += seg.rounds

    def outcome(self) -> JobOutcome:
        return JobOutcome(
            job=self.job.id,
            first_start=None if self.first_round is None else self.first_round * self.round_minutes,
            finish=None if self.finish_round is None else self.finish_round * self.round_minutes,
            work_done=min(self.done, self.job.work),
            preemptions=self.preemptions,
            migrations=self.migrations,
            resizes=self.resizes,
            restart_minutes_lost=self.restart_lost,
            migration_minutes_lost=self.migration_lost,
            resize_minutes_lost=self.resize_lost,
            rounds_held=self.rounds_held,
        )


def rule_overlap(rp: JobReplay, seg: Segment) -> Findings:
    """overlap: the segment (next in start order) starts after the job's previous segments end."""
    prev = rp.prev
    if prev is not None and seg.start < prev.end:
        return (ScheduleError("overlap", f"segments starting at rounds {prev.start} and {seg.start} overlap", rp.job.id, seg.start),)
    return NONE


def rule_after_completion(rp: JobReplay, seg: Segment) -> Findings:
    """after_completion: once ``rp`` has run ``seg``, the segment holds no round after the
    one the job's work was completed in."""
    fin = rp.finish_round
    if fin is None or seg.end <= fin:
        return NONE
    if fin <= seg.start:
        msg = f"holds resources in round {seg.start}, after completing at minute {rp.finish:g}"
        return (ScheduleError("after_completion", msg, rp.job.id, seg.start),)
    msg = f"holds resources for {seg.end - fin} round(s) after completing at minute {rp.finish:g}"
    return (ScheduleError("after_completion", msg, rp.job.id, fin),)


def rule_incomplete(rp: JobReplay) -> Findings:
    """incomplete: the replayed segments complete the job's work."""
    if rp.finish_round is None:
        return (ScheduleError("incomplete", f"work done {rp.done:g} of {rp.job.work:g} minutes", rp.job.id),)
    return NONE


_start = attrgetter("start")


def replay_job(instance: Instance, job: Job, segments: Iterable[Segment], report: _Report) -> JobReplay:
    """Replay ``job`` over its ``segments`` (any order), reporting ``overlap`` and
    ``after_completion`` as they come."""
    rp = JobReplay.start(instance, job)
    for seg in sorted(segments, key=_start):
        found = rule_overlap(rp, seg)
        if found:
            report.add(found)
            rp.skip(seg)
            continue
        rp.run(seg)
        found = rule_after_completion(rp, seg)
        if found:
            report.add(found)
    return rp


RULES: dict[str, Callable[..., Findings]] = {
    "unknown_job": rule_unknown_job,
    "bad_segment": rule_bad_segment,
    "unknown_node": rule_unknown_node,
    "duplicate_node": rule_duplicate_node,
    "gang": rule_gang,
    "single_node": rule_single_node,
    "whole_nodes": rule_whole_nodes,
    "floor": rule_floor,
    "before_arrival": rule_before_arrival,
    "whole_cores": rule_whole_cores,
    "capacity_gpu": rule_capacity_gpu,
    "capacity_cpu": rule_capacity_cpu,
    "capacity_mem": rule_capacity_mem,
    "overlap": rule_overlap,
    "after_completion": rule_after_completion,
    "incomplete": rule_incomplete,
}
"""Every rule by name; the name is the ``rule`` of the errors it reports."""


def check_schedule(instance: Instance, schedule: Schedule, require_complete: bool = True, max_errors: int = 50) -> Evaluation:
    """Check every rule and recompute outcomes; never raises on a bad schedule.

    Args:
        instance: the instance the schedule is for (its jobs' true speed factors count).
        schedule: the schedule to check (rounds of ``instance.round_minutes`` minutes).
        require_complete: a job that does not finish is an error (``unfinished``);
            False for partial schedules (rolling windows, plots).
        max_errors: at most this many errors are kept, in the order the rules find them.

    Returns:
        The evaluation: per-job outcomes (minutes), errors, resource-minutes held.
    """
    ctx = RuleContext.of(instance, schedule.segments)
    report = _Report(max_errors)
    report.add(rule_round_length(ctx, schedule))
    good = well_formed_segments(ctx, schedule.segments, report)
    usage = Usage.of(ctx, good)
    for capacity in CAPACITY_RULES:
        report.add(capacity(ctx, usage, good))
    by_job: dict[str, list[Segment]] = {}
    for s in good:
        by_job.setdefault(s.job, []).append(s)
    outcomes: dict[str, JobOutcome] = {}
    for job in instance.jobs:
        rp = replay_job(instance, job, by_job.get(job.id, ()), report)
        if require_complete:
            report.add(rule_incomplete(rp))
        outcomes[job.id] = rp.outcome()
    m = usage.minutes
    return Evaluation(outcomes, report.errors, m["gpu"], m["cpu"], m["mem"], usage.per_round)


def validate(instance: Instance, schedule: Schedule, require_complete: bool = True) -> Evaluation:
    """Like :func:`check_schedule` but raises the first :class:`ScheduleError`.

    Args:
        instance: the instance the schedule is for.
        schedule: the schedule to check.
        require_complete: a job that does not finish is an error.

    Returns:
        The evaluation of a valid schedule.
    """
    ev = check_schedule(instance, schedule, require_complete)
    if ev.errors:
        raise ev.errors[0]
    return ev
