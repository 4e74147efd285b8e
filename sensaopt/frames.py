"""pandas views of instances, schedules and results (for notebooks and reports).

Every number is recomputed by the validator (:func:`sensaopt.validator.check_schedule`)
from the instance and the schedule, so a frame can never disagree with the metrics.
Units: minutes (times), cores, GB; ``gap`` columns are fractions (0.05 = 5 %).

* :func:`jobs_frame`: the instance's jobs (model, sensitivity, GPUs, work, deadline);
* :func:`outcomes_frame`: one row per job of a schedule or Result: start, finish,
  JCT, queueing time, met deadline, lost value, preemptions, migrations;
* :func:`metrics_frame`: one row per Result (the :mod:`sensaopt.metrics` figures);
* :func:`usage_frame`: cluster-wide GPU/CPU/memory use per round (fractions);
* :func:`gap_frame`: heuristic results against an exact result on one instance.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from sensaopt.instance import Instance
from sensaopt.result import Result
from sensaopt.schedule import Schedule
from sensaopt.validator import Evaluation, check_schedule

OUTCOME_COLUMNS = (
    "job", "model", "sensitive", "gpus", "arrival", "work", "deadline", "value", "first_start", "finish",
    "jct", "queueing", "met_deadline", "lost_value", "preemptions", "migrations",
)
METRIC_COLUMNS = (
    "solver", "status", "objective", "bound", "runtime_s", "slo_violations", "slo_jobs", "slo_violation_rate",
    "weighted_violations", "avg_jct", "avg_queueing_time", "makespan", "gpu_utilization", "cpu_utilization",
    "mem_utilization", "preemptions", "migrations", "finished", "jobs",
)


def truth_instance(instance: Instance, result: Result | None) -> Instance:
    """The instance a result was scored on: with the hidden speed factors drawn from
    ``result.params['profile_error']`` and ``['seed']`` when the simulation used them."""
    if result is None:
        return instance
    sigma = float(result.params.get("profile_error") or 0.0)
    if sigma <= 0:
        return instance
    from sensaopt.simulator import apply_profile_error

    return apply_profile_error(instance, sigma, int(result.params.get("seed", 0)))


def evaluate(instance: Instance, result_or_schedule: Result | Schedule, require_complete: bool = True) -> Evaluation:
    """Validator evaluation of a Result's (or a bare) schedule on ``instance``."""
    if isinstance(result_or_schedule, Result):
        if result_or_schedule.schedule is None:
            raise ValueError(f"result of {result_or_schedule.solver} ({result_or_schedule.status.value}) has no schedule")
        return check_schedule(truth_instance(instance, result_or_schedule), result_or_schedule.schedule, require_complete)
    return check_schedule(instance, result_or_schedule, require_complete)


def jobs_frame(instance: Instance) -> pd.DataFrame:
    """One row per job: model, whether its profile is sensitive, GPUs, arrival, work
    (minutes at speed 1.0), deadline (NaN: best effort), value; indexed by job id."""
    rows = [
        {
            "job": j.id, "model": j.model, "sensitive": bool(j.profile.is_sensitive()), "gpus": j.gpus,
            "arrival": j.arrival, "work": j.work, "deadline": np.nan if j.deadline is None else j.deadline,
            "value": j.value if j.deadline is not None else np.nan,
        }
        for j in instance.jobs
    ]
    return pd.DataFrame(rows).set_index("job")


def outcomes_frame(instance: Instance, result_or_schedule: Result | Schedule, evaluation: Evaluation | None = None) -> pd.DataFrame:
    """Per-job outcomes of a schedule (or a Result's schedule), indexed by job id.

    ``jct`` = finish − arrival, ``queueing`` = first start − arrival (minutes; NaN for
    jobs that never finished / started); ``met_deadline`` is NaN for best-effort jobs.
    Pass ``evaluation`` to skip re-running the validator.
    """
    ev = evaluation if evaluation is not None else evaluate(instance, result_or_schedule, require_complete=False)
    base = jobs_frame(instance)
    rows = []
    for j in instance.jobs:
        o = ev.outcomes[j.id]
        fin = np.nan if o.finish is None else o.finish
        start = np.nan if o.first_start is None else o.first_start
        met = np.nan if j.deadline is None else float(o.finish is not None and o.finish <= j.deadline + 1e-9)
        rows.append({
            "job": j.id, "first_start": start, "finish": fin, "jct": fin - j.arrival, "queueing": start - j.arrival,
            "met_deadline": met, "lost_value": j.loss(o.finish), "preemptions": o.preemptions, "migrations": o.migrations,
        })
    out = base.join(pd.DataFrame(rows).set_index("job"))
    return out[list(OUTCOME_COLUMNS[1:])]


def metrics_frame(results: Mapping[str, Result] | Iterable[Result]) -> pd.DataFrame:
    """One row per Result with :data:`METRIC_COLUMNS`. A mapping's keys become the
    index (e.g. policy names); otherwise the index is each result's ``solver``."""
    if isinstance(results, Mapping):
        items = list(results.items())
    else:
        items = [(r.solver, r) for r in results]
    rows = []
    for label, r in items:
        row = {"solver": r.solver, "status": r.status.value, "objective": r.objective, "bound": r.bound, "runtime_s": r.runtime_s}
        if r.metrics is not None:
            row.update({k: v for k, v in r.metrics.to_dict().items() if k in METRIC_COLUMNS})
        rows.append((label, row))
    df = pd.DataFrame([row for _, row in rows], index=pd.Index([lab for lab, _ in rows], name="label"), columns=list(METRIC_COLUMNS))
    return df


def usage_frame(instance: Instance, evaluation: Evaluation) -> pd.DataFrame:
    """Cluster-wide share of GPUs, CPU cores and memory held in each round (0..1),
    indexed by the round's start minute."""
    c = instance.cluster
    caps = {"gpu": c.total_gpus, "cpu": c.total_cpus, "mem": c.total_mem_gb}
    T = max((a.shape[0] for a in evaluation.usage.values()), default=0)
    data = {res: (evaluation.usage[res].sum(axis=1) / caps[res]) if res in evaluation.usage else np.zeros(T) for res in caps}
    idx = pd.Index(np.arange(T) * instance.round_minutes, name="minute")
    return pd.DataFrame(data, index=idx)


def gap_frame(instance: Instance, heuristics: Mapping[str, Result], exact: Result) -> pd.DataFrame:
    """Heuristic results against an exact result on one instance (rows: heuristics).

    ``gap`` = (objective − exact objective) / exact objective, the gap to the best
    exact schedule found (the gap to the optimum when ``exact_status`` is OPTIMAL);
    ``gap_to_bound`` uses the exact solver's proven lower bound instead (an upper
    bound on the true gap; NaN without a bound). ``extra_violations`` = SLO violations
    beyond the exact schedule's; ``jct_diff`` = avg JCT difference (minutes).
    """
    ex_obj = exact.objective
    ex_m = exact.metrics
    rows = []
    for label, r in heuristics.items():
        m = r.metrics
        obj = r.objective
        row = {
            "instance": instance.name, "policy": label, "objective": obj, "slo_violations": m.slo_violations if m else np.nan,
            "avg_jct": m.avg_jct if m else np.nan, "exact_status": exact.status.value,
            "exact_objective": np.nan if ex_obj is None else ex_obj, "exact_bound": np.nan if exact.bound is None else exact.bound,
        }
        row["gap"] = _rel(obj, ex_obj)
        row["gap_to_bound"] = _rel(obj, exact.bound)
        row["extra_violations"] = (m.slo_violations - ex_m.slo_violations) if (m and ex_m) else np.nan
        row["jct_diff"] = (m.avg_jct - ex_m.avg_jct) if (m and ex_m and m.avg_jct is not None and ex_m.avg_jct is not None) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _rel(value: float | None, ref: float | None) -> float:
    if value is None or ref is None or not np.isfinite(ref) or ref <= 0:
        return np.nan
    return (value - ref) / ref
