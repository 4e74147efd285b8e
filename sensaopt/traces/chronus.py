"""Loader of the Chronus artifact's Philly-derived traces (CSV, times in minutes).

Columns: ``job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,
expect_time_list,expect_value_list,best_effort,job_type``.

* rows with ``num_gpu = 0`` are not GPU jobs: skipped, counted as ``"no_gpu"``;
* ``work`` = ``duration`` minutes; ``arrival`` = ``submit_time`` minutes;
* strict: one deadline ``submit_time + expect_time`` with its value (10 in the traces);
* soft: the first deadline and value become ``Job.deadline``/``Job.value``, the other
  three (values 8, 5, 2) ``Job.soft_deadlines``;
* best effort (``best_effort = 1`` or ``job_type = best``/``best-effort``): no deadline;
* malformed rows: :class:`InputError` naming file, line, field and job (default), or
  skipped and counted as ``"malformed"`` with ``on_error="skip"``.

``model_name`` is synthetic in these traces and is ignored: model types come from
:class:`~sensaopt.traces.sensitivity.SensitivityMix`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sensaopt.errors import InputError
from sensaopt.instance import Cluster, Instance, SoftDeadline
from sensaopt.traces._rows import Row, RowError, as_float, as_int, field, gpu_rows, within
from sensaopt.traces.trace import TraceData, TraceJob, load_trace

COLUMNS = ("job_id", "num_gpu", "submit_time", "duration", "expect_time_list", "expect_value_list", "best_effort", "job_type")
_TYPES = {"strict": "strict", "soft": "soft", "best": "best", "best-effort": "best", "best_effort": "best"}


def read_chronus(path: str | Path, on_error: str = "raise", name: str | None = None) -> TraceData:
    p = Path(path)
    data = TraceData(name or p.stem, str(p), [], has_deadlines=True)
    for _line, _jid, job in gpu_rows(p, COLUMNS, "num_gpu", data, on_error, _parse):
        data.jobs.append(job)
    if not data.jobs:
        raise InputError(str(p), "rows", "no GPU job in the trace")
    return data


def _parse(row: Row, jid: str, gpus: int) -> TraceJob:
    submit = within("submit_time", as_float(row, "submit_time", 0.0), "submit")
    dur = as_float(row, "duration")
    if dur <= 0:
        raise RowError("duration", f"must be > 0 minutes, got {dur:g}")
    within("duration", dur, "duration")
    jt = field(row, "job_type").lower()
    if jt not in _TYPES:
        raise RowError("job_type", f"unknown job type {jt!r} (strict, soft, best-effort)")
    be = as_int(row, "best_effort", 0)
    if be not in (0, 1):
        raise RowError("best_effort", f"must be 0 or 1, got {be}")
    if be == 1 or _TYPES[jt] == "best":
        return TraceJob(jid, submit, gpus, dur)
    times = _numbers(field(row, "expect_time_list"), "expect_time_list")
    values = _numbers(field(row, "expect_value_list"), "expect_value_list")
    if len(times) != len(values):
        raise RowError("expect_value_list", f"{len(values)} values for {len(times)} deadlines")
    if _TYPES[jt] == "strict" and len(times) != 1:
        raise RowError("expect_time_list", f"a strict job has one deadline, got {len(times)}")
    for k, (t, v) in enumerate(zip(times, values)):
        if t <= 0:
            raise RowError("expect_time_list", f"relative deadline must be > 0, got {t:g}")
        if v <= 0:
            raise RowError("expect_value_list", f"values must be > 0, got {v:g}")
        within("expect_time_list", t, "deadline")
        within("expect_value_list", v, "value")
        if k and not (t > times[k - 1] and v < values[k - 1]):
            raise RowError("expect_time_list", "later deadlines must come later and be worth less")
    soft = tuple(SoftDeadline(submit + t, v) for t, v in zip(times[1:], values[1:]))
    return TraceJob(jid, submit, gpus, dur, deadline=submit + times[0], value=values[0], soft_deadlines=soft)


def _numbers(text: str, name: str) -> list[float]:
    try:
        return [float(x) for x in text.split("-")]
    except ValueError:
        raise RowError(name, f"not a '-'-separated list of numbers: {text!r}") from None


def load_chronus(path: str | Path, cluster: Cluster, **options: Any) -> Instance:
    """A Chronus trace CSV (deadlines from the trace) as an instance on ``cluster``; ``options`` as for
    :func:`sensaopt.traces.trace.load_trace` (start, days, limit, mix, seed, round_minutes, on_error)."""
    return load_trace(read_chronus, path, cluster, **options)
