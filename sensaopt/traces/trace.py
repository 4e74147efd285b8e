"""Trace jobs before they become an :class:`~sensaopt.instance.Instance`.

A loader (``chronus``, ``helios``, ``philly``) or a calibrated generator produces a
:class:`TraceData`: jobs with arrival (minutes from the trace's origin), GPUs, work
(minutes: the trace's run time) and, if the trace has them, deadlines.
:func:`window` cuts a time window / job limit; :func:`build_instance` adds a cluster,
model types (:mod:`sensaopt.traces.sensitivity`) and, for traces without deadlines,
deadlines by :class:`DeadlineRule`, and turns run times into work
(:data:`DURATION_AT`: what a trace duration means on the cluster's node).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sensaopt.allocations import proportional_share
from sensaopt.errors import InputError
from sensaopt.generate import deadline_rule
from sensaopt.instance import Cluster, Instance, Job, SoftDeadline
from sensaopt.profiles import catalog
from sensaopt.traces._rows import RowError, within
from sensaopt.traces.sensitivity import SensitivityMix

MINUTES_PER_DAY = 1440.0

DURATION_AT = ("node", "reference")
"""What a trace duration (run time) means, :func:`resolve_duration_at`:

* ``"node"``: the job's run time at the GPU-proportional share of the node it runs on
  (the default on every node whose per-GPU share is not the profiles' reference): its
  work (minutes at speed 1.0, the reference share) = duration × the job's profile speed
  at that share;
* ``"reference"``: its run time at the reference share (3 cores, 62.5 GB per GPU):
  work = duration (every run before this option existed).

On a node at the reference share both give the same instance (every profile runs at
speed 1.0 there). Deadlines stay as the trace (or the deadline rule, from the
durations) gives them."""


def at_reference_share(cluster: Cluster) -> bool:
    """Every node type of ``cluster`` gives the profiles' reference share per GPU
    (:data:`sensaopt.profile_data.REFERENCE_SHARE`, within 10⁻⁹)."""
    from sensaopt.profile_data import REFERENCE_SHARE

    rc, rm = REFERENCE_SHARE
    return all(abs(t.cpus / t.gpus - rc) <= 1e-9 and abs(t.mem_gb / t.gpus - rm) <= 1e-9 for t in cluster.node_types)


def resolve_duration_at(duration_at: str | None, cluster: Cluster) -> str:
    """The convention a workload option ``duration_at`` means on ``cluster``: on a cluster
    at the reference share always ``"reference"`` (the same instance either way: one
    canonical value); elsewhere ``duration_at``, or ``"node"`` when it is None (the
    default). :class:`InputError` for a value not in :data:`DURATION_AT`."""
    if duration_at is not None and duration_at not in DURATION_AT:
        raise InputError("--duration-at", "duration_at", f"expected one of {', '.join(DURATION_AT)} or none, got {duration_at!r}")
    if at_reference_share(cluster):
        return "reference"
    return duration_at or "node"


@dataclass(frozen=True)
class TraceJob:
    """One job of a trace, before model types and deadlines are drawn.

    Attributes:
        id: the job's id.
        arrival: minutes from the trace origin.
        gpus: GPUs it asks for.
        work: minutes of run time at speed 1.0 (its duration in the trace).
        deadline: absolute minutes (None: best effort, or the trace has none: a :class:`DeadlineRule` draws it).
        value: what missing its deadline costs (lost value).
        soft_deadlines: further (minute, value) deadlines.
    """

    id: str
    arrival: float  # minutes from the trace origin
    gpus: int
    work: float  # minutes of run time (speed 1.0)
    deadline: float | None = None  # absolute minutes; None: best effort or no deadline info
    value: float = 1.0
    soft_deadlines: tuple[SoftDeadline, ...] = ()

    def shifted(self, dt: float) -> TraceJob:
        return replace(
            self,
            arrival=self.arrival + dt,
            deadline=None if self.deadline is None else self.deadline + dt,
            soft_deadlines=tuple(SoftDeadline(s.at + dt, s.value) for s in self.soft_deadlines),
        )


@dataclass
class TraceData:
    """A trace's jobs as read (or built from a researcher's own data), ready for :func:`build_instance`.

    Attributes:
        name: the trace's name.
        source: where it came from (a path or source name; used in messages).
        jobs: the jobs, by arrival.
        has_deadlines: the trace itself gives deadlines (Chronus); else a :class:`DeadlineRule` draws them.
        skipped: rows skipped, by reason.
    """

    name: str
    source: str
    jobs: list[TraceJob]
    has_deadlines: bool  # the trace itself gives deadlines (Chronus); else use a DeadlineRule
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> rows skipped

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n

    def offered_gpu_minutes(self) -> float:
        return sum(j.gpus * j.work for j in self.jobs)


LogRow = tuple[str, str, float, int, float]  # (where: "line 5: " or "[3].", job id, submit s, GPUs, run time s)


def jobs_from_origin(rows: list[LogRow], submit_field: str, data: TraceData, on_error: str) -> list[TraceJob]:
    """Jobs of a job log (Helios, Philly): arrival = minutes since the earliest
    submission, work = run time / 60. An arrival beyond ``sensaopt.limits.TRACE["submit"]``
    makes its row malformed (``on_error``: raise, naming the row, or skip and count)."""
    origin = min(r[2] for r in rows)
    jobs = []
    for where, jid, s, g, d in rows:
        try:
            arrival = within(submit_field, (s - origin) / 60.0, "submit", f"{s - origin:g} s after the first submission = ")
        except RowError as e:
            if on_error == "skip":
                data.skip("malformed")
                continue
            raise InputError(data.source, f"{where}{e.field}", e.message, jid) from None
        jobs.append(TraceJob(jid, arrival, g, d / 60.0))
    return jobs


@dataclass(frozen=True)
class DeadlineRule:
    """SPEC section 5: ``deadline = arrival + λ·work``, ``λ ~ U(lo, min(hi, cap/work))``
    (λ = lo when cap/work < lo), rounded up to a multiple of ``round_to`` minutes; a
    ``best_effort_fraction`` of the jobs (drawn at random) gets no deadline."""

    lo: float = 1.1
    hi: float = 2.0
    cap: float = 5040.0  # minutes
    round_to: float = 60.0  # minutes
    best_effort_fraction: float = 0.0
    value: float = 1.0

    def check(self) -> None:
        if not (1.0 <= self.lo <= self.hi):
            raise ValueError("deadline rule needs 1 <= lo <= hi")
        if not 0 <= self.best_effort_fraction <= 1:
            raise ValueError("best_effort_fraction must be within [0, 1]")

    def apply(self, jobs: list[TraceJob], seed: int) -> list[TraceJob]:
        self.check()
        rng = np.random.default_rng(seed)
        u = rng.random(len(jobs))
        be = rng.random(len(jobs)) < self.best_effort_fraction
        out = []
        for j, uk, b in zip(jobs, u, be):
            if b:
                out.append(replace(j, deadline=None, value=1.0, soft_deadlines=()))
                continue
            hi = max(self.lo, min(self.hi, self.cap / j.work))
            lam = self.lo + uk * (hi - self.lo)
            d = deadline_rule(j.arrival, j.work, lam, self.round_to)
            if d <= j.arrival:  # arrival exactly on a rounding boundary with tiny work
                d = j.arrival + self.round_to
            out.append(replace(j, deadline=d, value=self.value, soft_deadlines=()))
        return out


def window(data: TraceData, start: float = 0.0, days: float | None = None, limit: int | None = None) -> TraceData:
    """The jobs arriving in a window of the trace, shifted so that ``start`` becomes minute 0.

    Args:
        data: the trace.
        start: the window's start, minutes from the trace origin.
        days: the window's length in days (None: everything after ``start``).
        limit: keep the first ``limit`` jobs by arrival (None: all).

    Returns:
        A new :class:`TraceData` (skip counts kept)."""
    if start < 0 or (days is not None and days <= 0) or (limit is not None and limit < 1):
        raise InputError(data.source, "window", "need start >= 0, days > 0 and limit >= 1")
    end = math.inf if days is None else start + days * MINUTES_PER_DAY
    jobs = sorted((j for j in data.jobs if start <= j.arrival < end), key=lambda j: j.arrival)
    if limit is not None:
        jobs = jobs[:limit]
    if not jobs:
        raise InputError(data.source, "window", f"no jobs arrive in the window [{start:g}, {end:g}) minutes")
    return TraceData(data.name, data.source, [j.shifted(-start) for j in jobs], data.has_deadlines, dict(data.skipped))


def scale_load(data: TraceData, load: float) -> TraceData:
    """Compress (load > 1) or stretch inter-arrival times by ``1/load``; deadlines keep
    their distance to the arrival.

    Args:
        data: the trace.
        load: the arrival-rate multiplier (> 0).

    Returns:
        A new :class:`TraceData`."""
    if not (load > 0 and math.isfinite(load)):
        raise InputError(data.source, "load", "must be positive")
    if load == 1.0:
        return data
    jobs = [j.shifted(j.arrival / load - j.arrival) for j in data.jobs]
    return TraceData(data.name, data.source, jobs, data.has_deadlines, dict(data.skipped))


def thin(data: TraceData, fraction: float, seed: int) -> TraceData:
    """Keep each job with probability ``fraction`` (seeded): a scaled-down workload with
    the same timeline; pair it with a cluster ``fraction`` × the size to keep the load.

    Args:
        data: the trace.
        fraction: the probability of keeping a job, in (0, 1].
        seed: seed of the draw.

    Returns:
        A new :class:`TraceData`."""
    if not 0 < fraction <= 1:
        raise InputError(data.source, "sample", "the kept fraction must be within (0, 1]")
    if fraction == 1.0:
        return data
    keep = np.random.default_rng([seed, 7919]).random(len(data.jobs)) < fraction
    jobs = [j for j, k in zip(data.jobs, keep) if k]
    if not jobs:
        raise InputError(data.source, "sample", "no job kept")
    return TraceData(data.name, data.source, jobs, data.has_deadlines, dict(data.skipped))


def build_instance(
    data: TraceData,
    cluster: Cluster,
    *,
    mix: SensitivityMix | None = None,
    seed: int = 0,
    round_minutes: float = 5.0,
    deadlines: DeadlineRule | None = None,
    name: str | None = None,
    duration_at: str = "reference",
) -> Instance:
    """The instance of ``data`` on ``cluster``. Model types are drawn with ``mix`` and
    ``seed``; deadlines come from the trace if it has them, else from ``deadlines``
    (default :class:`DeadlineRule()`, from the durations), seeded by ``seed + 1``. Jobs
    needing more GPUs than the cluster has are skipped (counted in
    ``data.skipped["too_big"]``). ``duration_at`` (:data:`DURATION_AT`): ``"node"``
    makes each job's work its duration × its profile speed at the GPU-proportional share
    of the cluster's first node type (trace instances have one); ``"reference"``: work =
    duration.

    Args:
        data: the trace (:class:`TraceData`).
        cluster: the cluster (e.g. :func:`sensaopt.traces.preset_cluster`).
        mix: how model types are drawn (:class:`sensaopt.traces.SensitivityMix`).
        seed: seed of the model-type draw (deadlines: ``seed + 1``).
        round_minutes: the round length, minutes.
        deadlines: the rule for traces without deadlines (None: :class:`DeadlineRule()`).
        name: the instance's name (None: the trace's).
        duration_at: ``"node"``, ``"reference"`` or None (:func:`resolve_duration_at`).

    Returns:
        The instance.

    Raises:
        InputError: a model that cannot run at the proportional share (below its profile's floor)."""
    jobs = [j for j in data.jobs if j.gpus <= cluster.total_gpus]
    if len(jobs) < len(data.jobs):
        data.skip("too_big", len(data.jobs) - len(jobs))
    if not jobs:
        raise InputError(data.source, "jobs", "no job fits the cluster")
    if not data.has_deadlines:
        jobs = (deadlines or DeadlineRule()).apply(jobs, seed + 1)
    models = (mix or SensitivityMix()).assign(len(jobs), seed)
    cat = catalog()
    factor = _work_factors(models, cluster, duration_at, data.source)
    out = [
        Job(id=j.id, arrival=j.arrival, gpus=j.gpus, work=j.work * factor[m], profile=cat[m], deadline=j.deadline, value=j.value,
            soft_deadlines=j.soft_deadlines)
        for j, m in zip(jobs, models)
    ]
    return Instance(name=name or data.name, cluster=cluster, round_minutes=round_minutes, jobs=tuple(out), source=data.source)


def _work_factors(models: list[str], cluster: Cluster, duration_at: str, source: str) -> dict[str, float]:
    """Per model type, work per minute of trace duration (:data:`DURATION_AT`): 1.0 for
    ``"reference"``, the profile speed at the first node type's proportional share for ``"node"``."""
    if duration_at not in DURATION_AT:
        raise InputError(source, "duration_at", f"expected one of {', '.join(DURATION_AT)}, got {duration_at!r}")
    names = set(models)
    if duration_at == "reference":
        return dict.fromkeys(names, 1.0)
    t = cluster.node_types[0]
    cat = catalog()
    share = proportional_share(t)  # the policies' share: cores per GPU floored
    out = {m: cat[m].speed(*share) for m in names}
    slow = sorted(m for m, v in out.items() if not v > 0)
    if slow:
        raise InputError(source, "duration_at", f"model(s) {', '.join(slow)} cannot run at the node's proportional share "
                                                f"({share[0]:g} cores, {share[1]:g} GB per GPU): use duration_at=reference")
    return out


def load_trace(
    read: Callable[[str | Path, str], TraceData],
    path: str | Path,
    cluster: Cluster,
    *,
    start: float = 0.0,
    days: float | None = None,
    limit: int | None = None,
    mix: SensitivityMix | None = None,
    deadlines: DeadlineRule | None = None,
    seed: int = 0,
    round_minutes: float = 5.0,
    on_error: str = "raise",
) -> Instance:
    """``read(path, on_error) -> TraceData``, cut to the window ``[start, start + days)``
    (minutes, days) and its first ``limit`` jobs, as an instance on ``cluster``
    (``deadlines``: the rule for traces without deadlines; ``mix``: model types)."""
    data = window(read(path, on_error), start, days, limit)
    return build_instance(data, cluster, mix=mix, seed=seed, round_minutes=round_minutes, deadlines=deadlines)
