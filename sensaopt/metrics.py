"""The one metrics module and the one objective function.

All times are minutes. JCT = finish − arrival; queueing time = first start − arrival
(the first round the job held GPUs). A job *violates* its SLO when it has a deadline
and finishes after it (soft deadlines may still earn part of its value: the value it
lost is its ``loss``). Utilization = resource-minutes held ÷ (capacity × makespan),
with the makespan measured from minute 0 to the last completion.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sensaopt.instance import Instance
from sensaopt.validator import Evaluation


@dataclass(frozen=True)
class Metrics:
    jobs: int
    finished: int
    slo_jobs: int  # jobs with a deadline
    slo_violations: int  # deadline jobs finishing after their (first) deadline, or never
    slo_violation_rate: float  # slo_violations / slo_jobs (0 when there are none)
    weighted_violations: float  # sum of lost value
    weighted_violation_rate: float  # lost value / total deadline value
    avg_jct: float | None  # minutes, finished jobs
    avg_queueing_time: float | None  # minutes, jobs that started
    makespan: float  # minutes
    gpu_utilization: float
    cpu_utilization: float
    mem_utilization: float
    preemptions: int
    migrations: int
    objective: float | None  # see objective(); None if a job is unfinished

    def to_dict(self) -> dict:
        return asdict(self)


def compute_metrics(instance: Instance, ev: Evaluation) -> Metrics:
    jobs = instance.jobs
    out = ev.outcomes
    slo = [j for j in jobs if j.has_deadline]
    viol = sum(1 for j in slo if out[j.id].finish is None or out[j.id].finish > j.deadline + 1e-9)
    loss = sum(j.loss(out[j.id].finish) for j in slo)
    total_value = sum(j.value for j in slo)
    fin = [j for j in jobs if out[j.id].finish is not None]
    started = [j for j in jobs if out[j.id].first_start is not None]
    avg_jct = sum(out[j.id].finish - j.arrival for j in fin) / len(fin) if fin else None
    avg_q = sum(out[j.id].first_start - j.arrival for j in started) / len(started) if started else None
    makespan = max((out[j.id].finish for j in fin), default=0.0)
    c = instance.cluster
    span = makespan if makespan > 0 else 1.0
    all_done = len(fin) == len(jobs)
    return Metrics(
        jobs=len(jobs),
        finished=len(fin),
        slo_jobs=len(slo),
        slo_violations=viol,
        slo_violation_rate=viol / len(slo) if slo else 0.0,
        weighted_violations=loss,
        weighted_violation_rate=loss / total_value if total_value else 0.0,
        avg_jct=avg_jct,
        avg_queueing_time=avg_q,
        makespan=makespan,
        gpu_utilization=ev.gpu_minutes / (c.total_gpus * span),
        cpu_utilization=ev.cpu_minutes / (c.total_cpus * span),
        mem_utilization=ev.mem_gb_minutes / (c.total_mem_gb * span),
        preemptions=sum(o.preemptions for o in out.values()),
        migrations=sum(o.migrations for o in out.values()),
        objective=objective_value(instance, loss, avg_jct) if all_done else None,
    )


def objective_value(instance: Instance, weighted_violations: float, avg_jct: float) -> float:
    """THE objective every solver is scored with (lower is better):
    ``violation_weight × lost deadline value + average JCT (minutes)``."""
    return instance.objective.violation_weight * weighted_violations + avg_jct
