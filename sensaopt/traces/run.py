"""Running policies on trace instances and writing their results.

Per policy: ``<outdir>/<policy>.jobs.csv`` (or ``.parquet``: :data:`sensaopt.tables.TABLE_FORMATS`; one row per job: arrival, GPUs, work,
model, sensitivity, deadline, value, then its :class:`sensaopt.metrics.JobMetrics`:
first start, finish, JCT, queueing time, met deadline, lost value, preemptions
(restarts), migrations, resizes, minutes lost to each, pending time; minutes) and ``<outdir>/<policy>.summary.json`` (the
:mod:`sensaopt.metrics` figures via :meth:`Result.to_dict`, without the schedule,
plus the workload settings).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import astuple
from pathlib import Path
from typing import Any

from sensaopt.instance import Instance
from sensaopt.io import json_text
from sensaopt.metrics import JOB_METRIC_COLUMNS, job_metrics
from sensaopt.outputs import PathLike, write_bytes, write_text
from sensaopt.result import Result
from sensaopt.simulator import simulate
from sensaopt.validator import Evaluation

JOB_INFO_COLUMNS = ("job", "arrival", "gpus", "work", "model", "sensitive", "deadline", "value")
JOB_COLUMNS = JOB_INFO_COLUMNS + JOB_METRIC_COLUMNS[1:]


def run_policy(instance: Instance, policy: str, *, seed: int = 0, profile_error: float = 0.0,
               progress: Callable[[int, int, int], Any] | None = None,
               policy_config: dict[str, Any] | None = None) -> tuple[Result, Evaluation]:
    """Simulate ``policy`` (knobs overridden by ``policy_config``); the schedule is
    validated once, by the simulator (a bad one raises). Returns the Result and the
    evaluation it carries (on its truth instance)."""
    res = simulate(instance, policy, seed=seed, profile_error=profile_error, progress=progress, validate=True,
                   policy_config=policy_config)
    return res, _carried(res)


def _carried(res: Result) -> Evaluation:
    if res.evaluation is None:
        raise ValueError(f"result of {res.solver} carries no evaluation")
    return res.evaluation


def job_rows(instance: Instance, ev: Evaluation) -> list[dict[str, Any]]:
    """One CSV row per job (:data:`JOB_COLUMNS`): the job, then its
    :class:`sensaopt.metrics.JobMetrics` (minutes; ``sensitive`` and ``met_deadline``
    booleans; None: none, e.g. a best-effort job's deadline)."""
    rows = []
    for j, m in zip(instance.jobs, job_metrics(instance, ev)):
        row: dict[str, Any] = {
            "job": j.id, "arrival": j.arrival, "gpus": j.gpus, "work": j.work, "model": j.model,
            "sensitive": bool(j.profile.is_sensitive()),
            "deadline": j.deadline, "value": j.value if j.deadline is not None else None,
        }
        row.update(zip(JOB_METRIC_COLUMNS[1:], astuple(m)[1:]))
        rows.append(row)
    return rows


def jobs_table(instance: Instance, ev: Evaluation, fmt: str = "csv") -> bytes:
    """The per-job table in ``fmt`` (:func:`sensaopt.tables.table_bytes`: CSV with empty
    cells for None and True / False, or Parquet with typed, nullable columns)."""
    from sensaopt.tables import table_bytes

    return table_bytes(job_rows(instance, ev), JOB_COLUMNS, fmt)


def jobs_csv(instance: Instance, ev: Evaluation) -> str:
    """The jobs.csv text: a header of :data:`JOB_COLUMNS`, one row per job."""
    return jobs_table(instance, ev).decode()


def summary(instance: Instance, res: Result, workload: dict | None = None) -> dict[str, Any]:
    """The summary.json object: :meth:`Result.to_dict` without the schedule, plus the
    instance's size and the workload settings."""
    d = res.to_dict(instance, with_schedule=False)
    d["instance"] = {"name": instance.name, "jobs": len(instance.jobs), "nodes": instance.cluster.num_nodes,
                     "gpus": instance.cluster.total_gpus, "round_minutes": instance.round_minutes}
    if workload:
        d["workload"] = workload
    return d


def output_paths(outdir: str | Path, policy: str, fmt: str = "csv") -> tuple[Path, Path]:
    """The files :func:`write_outputs` writes for ``policy``: (jobs table in ``fmt``, summary JSON)."""
    from sensaopt.policies import file_stem

    out, stem = Path(outdir), file_stem(policy)
    return out / f"{stem}.jobs.{fmt}", out / f"{stem}.summary.json"


def write_outputs(outdir: str | Path, policy: str, instance: Instance, res: Result, ev: Evaluation | None = None,
                  workload: dict | None = None, inputs: tuple[PathLike, ...] = (), fmt: str = "csv",
                  field: str = "--out-dir") -> tuple[Path, Path]:
    """Write ``<policy>.jobs.<fmt>`` and ``<policy>.summary.json``; ``ev`` defaults to the
    evaluation ``res`` carries; neither may be one of ``inputs`` (:func:`sensaopt.outputs.check_output`)."""
    jp, sp = output_paths(outdir, policy, fmt)
    # both contents first (a NaN in the summary is refused before anything is written), then the
    # two files; a failed second write removes the first: the policy's pair is whole or absent
    jobs_data = jobs_table(instance, ev if ev is not None else _carried(res), fmt)
    summary_text = json_text(summary(instance, res, workload), indent=1, where=str(sp))
    existed = jp.exists()
    write_bytes(jp, jobs_data, inputs=inputs, field=field)
    try:
        write_text(sp, summary_text, inputs=inputs, field=field)
    except BaseException:
        if not existed:
            with contextlib.suppress(OSError):
                jp.unlink()
        raise
    return jp, sp
