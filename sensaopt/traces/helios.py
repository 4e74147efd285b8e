"""Loader of the Helios job log CSV (SenseTime, e.g. HeliosData ``cluster_log.csv``).

Columns: ``job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,
end_time,duration,queue``. Times are seconds or ``YYYY-MM-DD HH:MM:SS``; ``duration``
is seconds of run time.

* ``arrival`` = minutes from the earliest submit time in the file (the trace origin;
  a window's ``start`` counts from it); ``work`` = ``duration / 60`` minutes (if
  ``duration`` is empty: ``end_time - start_time``);
* CPU-only rows (``gpu_num = 0``) are skipped (``"no_gpu"``), as are jobs that ran for
  0 seconds (``"zero_duration"``) and, if ``states`` is given, jobs in other states
  (``"state"``);
* the log has no deadlines: :func:`build_instance` adds them by the SPEC rule;
* malformed rows: :class:`InputError` naming file, line, field and job (default), or
  skipped and counted as ``"malformed"`` with ``on_error="skip"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sensaopt.errors import InputError
from sensaopt.instance import Cluster, Instance
from sensaopt.traces._rows import Row, RowError, as_float, gpu_rows, within
from sensaopt.traces._time import seconds
from sensaopt.traces.trace import LogRow, TraceData, jobs_from_origin, load_trace

COLUMNS = ("job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time", "start_time", "end_time", "duration", "queue")
REQUIRED = ("job_id", "gpu_num", "state", "submit_time", "duration")


def read_helios(path: str | Path, on_error: str = "raise", states: tuple[str, ...] | None = None, name: str | None = None) -> TraceData:
    p = Path(path)
    data = TraceData(name or p.stem, str(p), [], has_deadlines=False)
    wanted = {s.upper() for s in states} if states else None

    def parse(row: Row, jid: str, gpus: int) -> tuple[float, int, float] | None:
        if wanted is not None and (row.get("state") or "").strip().upper() not in wanted:
            data.skip("state")
            return None
        submit = seconds(row.get("submit_time"), "submit_time")
        if (row.get("duration") or "").strip():
            dur = as_float(row, "duration", 0.0)
        else:
            dur = seconds(row.get("end_time"), "end_time") - seconds(row.get("start_time"), "start_time")
            if dur < 0:
                raise RowError("end_time", "ends before it starts")
        if dur > 0:
            within("duration", dur / 60.0, "duration", f"{dur:g} s = ")
        return submit, gpus, dur

    raw: list[LogRow] = []
    for line, jid, (submit, gpus, dur) in gpu_rows(p, REQUIRED, "gpu_num", data, on_error, parse):
        if dur <= 0:
            data.skip("zero_duration")
            continue
        raw.append((f"line {line}: ", jid, submit, gpus, dur))
    if not raw:
        raise InputError(str(p), "rows", "no GPU job with a positive duration in the log")
    data.jobs = jobs_from_origin(raw, "submit_time", data, on_error)
    return data


def load_helios(path: str | Path, cluster: Cluster, **options: Any) -> Instance:
    """A Helios job-log CSV as an instance on ``cluster``; ``options`` as for
    :func:`sensaopt.traces.trace.load_trace` (start, days, limit, mix, seed, round_minutes, on_error)."""
    return load_trace(read_helios, path, cluster, **options)
