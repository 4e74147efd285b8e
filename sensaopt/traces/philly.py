"""Loader of the Philly ``cluster_job_log`` JSON (msr-fiddle/philly-traces).

The file is a JSON list of jobs::

    {"status": "Pass", "vc": "6214e9", "jobid": "application_...", "user": "...",
     "submitted_time": "2017-10-03 02:54:07",
     "attempts": [{"start_time": "...", "end_time": "...",
                   "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]}]}

* ``arrival`` = minutes from the earliest ``submitted_time`` in the file;
* ``gpus`` = GPUs of the first attempt (sum over its ``detail`` entries);
* ``work`` = first attempt's start to the last attempt's end, minutes (the usual
  reading of this log, as in its analysis notebook);
* jobs without attempts or GPUs (``"no_gpu"``), with an unfinished attempt
  (``end_time`` ``None``: ``"unfinished"``) or 0 s run time (``"zero_duration"``) are
  skipped and counted; ``statuses`` (e.g. ``("Pass",)``) filters (``"status"``);
* malformed entries: :class:`InputError` naming file, entry index, field and job
  (default), or skipped as ``"malformed"`` with ``on_error="skip"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sensaopt.errors import InputError
from sensaopt.instance import Cluster, Instance
from sensaopt.io import read_json
from sensaopt.traces._rows import RowError, check_on_error, within
from sensaopt.traces._time import seconds
from sensaopt.traces.trace import LogRow, TraceData, jobs_from_origin, load_trace


class _Skip(Exception):
    def __init__(self, reason: str):
        self.reason = reason


def read_philly(path: str | Path, on_error: str = "raise", statuses: tuple[str, ...] | None = None, name: str | None = None) -> TraceData:
    check_on_error(on_error)
    p = Path(path)
    raw = read_json(p, max_bytes=None)  # the whole cluster_job_log is a large file
    if not isinstance(raw, list):
        raise InputError(str(p), "(top level)", "expected a JSON list of jobs (cluster_job_log)")
    data = TraceData(name or p.stem, str(p), [], has_deadlines=False)
    rows: list[LogRow] = []
    seen: set[str] = set()
    for k, entry in enumerate(raw):
        jid = str(entry.get("jobid")) if isinstance(entry, dict) and entry.get("jobid") is not None else f"#{k}"
        try:
            if not isinstance(entry, dict):
                raise RowError("(entry)", "not a JSON object")
            if "jobid" not in entry:
                raise RowError("jobid", "missing")
            if statuses is not None and entry.get("status") not in statuses:
                raise _Skip("status")
            parsed = _parse(entry)
            if jid in seen:
                raise RowError("jobid", "duplicate job id")
            seen.add(jid)
            rows.append((f"[{k}].", jid, *parsed))
        except _Skip as s:
            data.skip(s.reason)
        except RowError as e:
            if on_error == "skip":
                data.skip("malformed")
                continue
            raise InputError(str(p), f"[{k}].{e.field}", e.message, jid) from None
    if not rows:
        raise InputError(str(p), "(top level)", "no finished GPU job in the log")
    data.jobs = jobs_from_origin(rows, "submitted_time", data, on_error)
    return data


def _parse(e: dict) -> tuple[float, int, float]:
    submit = seconds(e.get("submitted_time"), "submitted_time")
    att = e.get("attempts")
    if att is None:
        raise RowError("attempts", "missing")
    if not isinstance(att, list):
        raise RowError("attempts", "not a list")
    if not att:
        raise _Skip("no_gpu")
    gpus = 0
    for q, d in enumerate(att[0].get("detail") or [] if isinstance(att[0], dict) else []):
        g = d.get("gpus") if isinstance(d, dict) else None
        if not isinstance(g, list):
            raise RowError(f"attempts[0].detail[{q}].gpus", "not a list of GPU names")
        gpus += len(g)
    if gpus == 0:
        raise _Skip("no_gpu")
    first, last = att[0], att[-1]
    if not isinstance(first, dict) or not isinstance(last, dict):
        raise RowError("attempts", "an attempt is not a JSON object")
    if last.get("end_time") in (None, "None", "") or first.get("start_time") in (None, "None", ""):
        raise _Skip("unfinished")
    t0 = seconds(first.get("start_time"), "attempts[0].start_time")
    t1 = seconds(last.get("end_time"), f"attempts[{len(att) - 1}].end_time")
    if t1 < t0:
        raise RowError(f"attempts[{len(att) - 1}].end_time", "ends before the first attempt starts")
    if t1 == t0:
        raise _Skip("zero_duration")
    within(f"attempts[{len(att) - 1}].end_time", (t1 - t0) / 60.0, "duration", f"{t1 - t0:g} s of run time = ")
    return submit, gpus, t1 - t0


def load_philly(path: str | Path, cluster: Cluster, **options: Any) -> Instance:
    """A Philly cluster_job_log JSON as an instance on ``cluster``; ``options`` as for
    :func:`sensaopt.traces.trace.load_trace` (start, days, limit, mix, seed, round_minutes, on_error)."""
    return load_trace(read_philly, path, cluster, **options)
