"""Running policies on trace instances and writing their results.

Per policy: ``<outdir>/<policy>.jobs.csv`` (one row per job: arrival, GPUs, work,
model, deadline, value, first start, finish, JCT, queueing time, lost value,
preemptions, migrations; minutes) and ``<outdir>/<policy>.summary.json`` (the
:mod:`sensaopt.metrics` figures via :meth:`Result.to_dict`, without the schedule,
plus the workload settings).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Callable

from sensaopt.instance import Instance
from sensaopt.io import atomic_write_text
from sensaopt.result import Result
from sensaopt.simulator import simulate
from sensaopt.validator import Evaluation, check_schedule

JOB_COLUMNS = (
    "job", "arrival", "gpus", "work", "model", "sensitive", "deadline", "value", "first_start", "finish",
    "jct", "queueing", "met_deadline", "lost_value", "preemptions", "migrations",
)


def run_policy(instance: Instance, policy: str, *, seed: int = 0, profile_error: float = 0.0, progress: Callable | None = None) -> tuple[Result, Evaluation]:
    """Simulate ``policy``; the schedule is validated (a bad one raises)."""
    res = simulate(instance, policy, seed=seed, profile_error=profile_error, progress=progress, validate=True)
    truth = instance
    if profile_error > 0:
        from sensaopt.simulator import apply_profile_error

        truth = apply_profile_error(instance, profile_error, seed)
    ev = check_schedule(truth, res.schedule)
    return res, ev


def job_rows(instance: Instance, ev: Evaluation) -> list[dict]:
    rows = []
    for j in instance.jobs:
        o = ev.outcomes[j.id]
        rows.append({
            "job": j.id, "arrival": j.arrival, "gpus": j.gpus, "work": j.work, "model": j.model,
            "sensitive": int(j.profile.is_sensitive()), "deadline": "" if j.deadline is None else j.deadline,
            "value": j.value if j.deadline is not None else "", "first_start": "" if o.first_start is None else o.first_start,
            "finish": "" if o.finish is None else o.finish, "jct": "" if o.finish is None else o.finish - j.arrival,
            "queueing": "" if o.first_start is None else o.first_start - j.arrival,
            "met_deadline": "" if j.deadline is None else int(o.finish is not None and o.finish <= j.deadline + 1e-9),
            "lost_value": j.loss(o.finish), "preemptions": o.preemptions, "migrations": o.migrations,
        })
    return rows


def jobs_csv(instance: Instance, ev: Evaluation) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=JOB_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(job_rows(instance, ev))
    return buf.getvalue()


def summary(instance: Instance, res: Result, workload: dict | None = None) -> dict:
    d = res.to_dict(instance, with_schedule=False)
    d["instance"] = {"name": instance.name, "jobs": len(instance.jobs), "nodes": instance.cluster.num_nodes,
                     "gpus": instance.cluster.total_gpus, "round_minutes": instance.round_minutes}
    if workload:
        d["workload"] = workload
    return d


def write_outputs(outdir: str | Path, policy: str, instance: Instance, res: Result, ev: Evaluation, workload: dict | None = None) -> tuple[Path, Path]:
    out = Path(outdir)
    jp, sp = out / f"{policy}.jobs.csv", out / f"{policy}.summary.json"
    atomic_write_text(jp, jobs_csv(instance, ev))
    atomic_write_text(sp, json.dumps(summary(instance, res, workload), indent=1))
    return jp, sp
