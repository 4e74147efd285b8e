"""The one metrics module and the one objective function.

All times are minutes. Each derived quantity has one definition here:

* per job (:class:`JobMetrics`, :func:`job_metrics`): JCT = finish − arrival; queueing
  time = first start − arrival (the first round the job held GPUs); pending time = the
  minutes between arrival and finish in which the job held no GPU, i.e.
  finish − arrival − rounds held × R (the Chronus artifact's ``pending_time``, which
  also counts the waits after preemptions); it *violates* its SLO when it has a
  deadline and finishes after it, or never (soft deadlines may still earn part of its
  value: the value it lost is its ``lost_value``); changes of allocation
  (:class:`sensaopt.instance.Change`: restarts, counted as ``preemptions``,
  migrations, resizes) and the wall minutes of rounds each kind cost, as the
  validator counted them;
* per schedule (:class:`Metrics`, :func:`compute_metrics`): aggregates of those rows;
  utilization = resource-minutes held ÷ (capacity × makespan), with the makespan
  measured from minute 0 to the last completion.

Column lists of every table (frames, per-job CSV, sweep summaries) are the dataclass
fields: :data:`JOB_METRIC_COLUMNS` and :data:`METRIC_COLUMNS`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from sensaopt.instance import Instance
from sensaopt.validator import Evaluation

DEADLINE_EPS = 1e-9  # minutes: a finish this close after the deadline still meets it


@dataclass(frozen=True)
class JobMetrics:
    """One job's outcome in a schedule (minutes; ``None``: never started / never
    finished, or, for ``met_deadline``, a best-effort job)."""

    job: str
    first_start: float | None  # start of the first round the job held GPUs
    finish: float | None  # end of the completion round
    jct: float | None  # finish − arrival
    queueing: float | None  # first start − arrival
    met_deadline: bool | None  # finished by its (first) deadline
    lost_value: float  # deadline value lost (0 for best-effort jobs)
    preemptions: int  # restarts: resumes after a gap
    migrations: int  # runs on right away on another node set or GPU split
    resizes: int  # runs on right away on the same GPUs with other CPU or memory
    restart_minutes_lost: float  # wall minutes of rounds lost to restarts (min(cost, R) each)
    migration_minutes_lost: float  # the same, to migrations
    resize_minutes_lost: float  # the same, to resizes
    pending: float | None  # finish − arrival − rounds held × R; None if unfinished


@dataclass(frozen=True)
class Metrics:
    """Aggregates of one schedule's :class:`JobMetrics` (field order = column order)."""

    slo_violations: int  # deadline jobs finishing after their (first) deadline, or never
    slo_violation_rate: float  # slo_violations / slo_jobs (0 when there are none)
    avg_jct: float | None  # minutes, finished jobs
    avg_queueing_time: float | None  # minutes, jobs that started: first start − arrival
    avg_pending_time: float | None  # minutes, finished jobs: JobMetrics.pending
    makespan: float  # minutes
    jobs: int
    finished: int
    slo_jobs: int  # jobs with a deadline
    weighted_violations: float  # sum of lost value
    weighted_violation_rate: float  # lost value / total deadline value
    gpu_utilization: float  # fraction of GPU-minutes over the makespan
    cpu_utilization: float
    mem_utilization: float
    preemptions: int  # restarts, all jobs
    migrations: int
    resizes: int
    restart_minutes_lost: float  # wall minutes, all jobs
    migration_minutes_lost: float
    resize_minutes_lost: float
    objective: float | None  # see objective_value(); None if a job is unfinished

    def to_dict(self) -> dict[str, int | float | None]:
        return asdict(self)


JOB_METRIC_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(JobMetrics))  # starts with "job"
METRIC_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Metrics))


def job_metrics(instance: Instance, ev: Evaluation) -> list[JobMetrics]:
    """One :class:`JobMetrics` per job of ``instance`` (in its order).

    Args:
        instance: the instance scheduled.
        ev: the validator's evaluation of the schedule (:func:`sensaopt.validator.check_schedule`).

    Returns:
        The per-job rows (minutes; ``met_deadline`` None for a best-effort job)."""
    rows = []
    R = instance.round_minutes
    for j in instance.jobs:
        o = ev.outcomes[j.id]
        fin, start = o.finish, o.first_start
        rows.append(JobMetrics(
            job=j.id,
            first_start=start,
            finish=fin,
            jct=None if fin is None else fin - j.arrival,
            queueing=None if start is None else start - j.arrival,
            met_deadline=None if j.deadline is None else (fin is not None and fin <= j.deadline + DEADLINE_EPS),
            lost_value=j.loss(fin),
            preemptions=o.preemptions,
            migrations=o.migrations,
            resizes=o.resizes,
            restart_minutes_lost=o.restart_minutes_lost,
            migration_minutes_lost=o.migration_minutes_lost,
            resize_minutes_lost=o.resize_minutes_lost,
            pending=None if fin is None else fin - j.arrival - o.rounds_held * R,
        ))
    return rows


def compute_metrics(instance: Instance, ev: Evaluation) -> Metrics:
    """The schedule's :class:`Metrics` from its per-job rows (:func:`job_metrics` of ``ev``);
    sums run in job order.

    Args:
        instance: the instance scheduled.
        ev: the validator's evaluation of the schedule.

    Returns:
        The schedule's metrics (minutes, fractions of the cluster)."""
    rows = job_metrics(instance, ev)
    slo = [r for r in rows if r.met_deadline is not None]
    viol = sum(1 for r in slo if not r.met_deadline)
    loss = sum(r.lost_value for r in slo)
    total_value = sum(j.value for j in instance.jobs if j.has_deadline)
    jcts = [r.jct for r in rows if r.jct is not None]
    waits = [r.queueing for r in rows if r.queueing is not None]
    avg_jct = sum(jcts) / len(jcts) if jcts else None
    avg_q = sum(waits) / len(waits) if waits else None
    pend = [r.pending for r in rows if r.pending is not None]
    makespan = max((r.finish for r in rows if r.finish is not None), default=0.0)
    c = instance.cluster
    span = makespan if makespan > 0 else 1.0
    return Metrics(
        slo_violations=viol,
        slo_violation_rate=viol / len(slo) if slo else 0.0,
        avg_jct=avg_jct,
        avg_queueing_time=avg_q,
        avg_pending_time=sum(pend) / len(pend) if pend else None,
        makespan=makespan,
        jobs=len(rows),
        finished=len(jcts),
        slo_jobs=len(slo),
        weighted_violations=loss,
        weighted_violation_rate=loss / total_value if total_value else 0.0,
        gpu_utilization=ev.gpu_minutes / (c.total_gpus * span),
        cpu_utilization=ev.cpu_minutes / (c.total_cpus * span),
        mem_utilization=ev.mem_gb_minutes / (c.total_mem_gb * span),
        preemptions=sum(r.preemptions for r in rows),
        migrations=sum(r.migrations for r in rows),
        resizes=sum(r.resizes for r in rows),
        restart_minutes_lost=sum(r.restart_minutes_lost for r in rows),
        migration_minutes_lost=sum(r.migration_minutes_lost for r in rows),
        resize_minutes_lost=sum(r.resize_minutes_lost for r in rows),
        objective=objective_value(instance, loss, avg_jct) if avg_jct is not None and len(jcts) == len(rows) else None,
    )


def objective_value(instance: Instance, weighted_violations: float, avg_jct: float) -> float:
    """THE objective every solver is scored with (lower is better):
    ``violation_weight × lost deadline value + average JCT (minutes)``.

    Args:
        instance: the instance (its ``objective.violation_weight``, 10⁵ by default).
        weighted_violations: lost deadline value (sum of the values of the deadlines missed).
        avg_jct: average job completion time, minutes.

    Returns:
        The objective value.
    """
    return instance.objective.violation_weight * weighted_violations + avg_jct
