"""The two orders in which Chronus hands out free GPUs.

* the 5-minute order (the artifact's ``best_func``, reversed sort): [artifact:
  fake-forced (overrun) jobs first,] unadmitted and best effort (least remaining
  estimate × GPUs), then admitted (least slack × GPUs), hopeless last;
* the artifact's odd-minute ``filling_jobs`` order: ascending (priority, emergence):
  hopeless first (least late × GPUs), then admitted (most slack × GPUs), unadmitted,
  best effort (most remaining × GPUs).

Ties: earlier arrival, then id. :func:`order_keys` and :func:`fill_keys` are the
per-round fast forms (the same arithmetic, so the same floats) of :func:`order_key`
and :func:`fill_key`."""

from __future__ import annotations

from sensaopt.policies.base import JobState

from .job import ChronusJob
from .lease import BEST_EFFORT, UNACCEPTED

OrderKey = tuple[int, int, float, float, str]  # (force, class group, urgency, arrival, id)
FillKey = tuple[int, float, float, str]  # (class, -urgency, arrival, id)
Pair = tuple[ChronusJob, JobState]


def order_key(job: ChronusJob, js: JobState, now: float, overruns_first: bool) -> OrderKey:
    """The 5-minute order of one job (only jobs admission has classified are ordered)."""
    assert job.queue_class is not None
    force = -int(job.fake_force) if overruns_first else 0
    return (force, -(min(job.queue_class, 1)), job.urgency(js, now), job.arrival, job.id)


def order_keys(pairs: list[Pair], now: float, overruns_first: bool) -> list[OrderKey]:
    """:func:`order_key` of every pair, :meth:`ChronusJob.urgency` inlined (the
    placement sorts these every round)."""
    keys: list[OrderKey] = []
    append = keys.append
    for job, js in pairs:
        cls = job.queue_class
        assert cls is not None
        work = job.work
        left = job.estimate - (work - js.remaining) / work * job.duration  # estimate_left
        if cls in (UNACCEPTED, BEST_EFFORT):
            urgency = left * job.gpus
        else:
            deadline = job.deadline_check
            urgency = ((now if deadline is None else deadline) - now - left) * job.gpus
        append((-int(job.fake_force) if overruns_first else 0, -cls if cls < 1 else -1, urgency, job.arrival, job.id))
    return keys


def fill_key(job: ChronusJob, js: JobState, now: float) -> FillKey:
    """The odd-minute filling order of one job."""
    assert job.queue_class is not None
    return (job.queue_class, -job.urgency(js, now), job.arrival, job.id)


def fill_keys(pairs: list[Pair], urgency: dict[str, float]) -> list[FillKey]:
    """:func:`fill_key` of every pair from the urgencies this round's
    :func:`order_keys` already computed (job id -> urgency; nothing they read changes
    in between)."""
    keys = []
    for job, _js in pairs:
        assert job.queue_class is not None
        keys.append((job.queue_class, -urgency[job.id], job.arrival, job.id))
    return keys
