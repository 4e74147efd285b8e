"""A job CSV in any layout, read through a column mapping (``--columns``).

The mapping names, for each job field, the CSV column holding it and its unit:
``FIELD=COLUMN[:UNIT]``, comma-separated, e.g.
``arrival=submit_time:s,gpus=num_gpu,work=duration:h,deadline=due:s``.

| field | required | units (default first) | meaning |
| --- | --- | --- | --- |
| ``arrival`` | yes | ``min``, ``s``, ``h``, ``datetime`` | submission; arrival = minutes after the earliest one |
| ``gpus`` | yes | (a count) | GPUs asked for; 0-GPU rows are skipped |
| ``work`` | yes | ``min``, ``s``, ``h`` | run time at speed 1 |
| ``deadline`` | no | as ``arrival`` (same clock) | absolute deadline |
| ``deadline_after`` | no | ``min``, ``s``, ``h`` | deadline, counted from the job's submission |
| ``id`` | no | | job id (default: ``line<N>``) |

``datetime`` reads seconds or ``YYYY-MM-DD HH:MM:SS``. A row without a deadline (the
column empty) is best effort, one with no run time is skipped (``zero_duration``); without a deadline column the trace has none and
:class:`sensaopt.traces.trace.DeadlineRule` adds them. Rows are checked as in the other
readers: one :class:`InputError` naming file, line, field and job, or skipped and
counted (``on_error="skip"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sensaopt.errors import InputError
from sensaopt.traces._rows import Row, RowError, as_float, field, gpu_rows, within
from sensaopt.traces._time import seconds
from sensaopt.traces.trace import TraceData, TraceJob

SPANS = {"min": 1.0, "s": 1.0 / 60.0, "h": 60.0}  # minutes per unit
FIELDS: dict[str, tuple[bool, tuple[str, ...]]] = {  # field -> (required, units: default first)
    "arrival": (True, ("min", "s", "h", "datetime")),
    "gpus": (True, ("count",)),
    "work": (True, ("min", "s", "h")),
    "deadline": (False, ("min", "s", "h", "datetime")),
    "deadline_after": (False, ("min", "s", "h")),
    "id": (False, ("text",)),
}


@dataclass(frozen=True)
class Column:
    """Where one job field is read: the CSV ``column`` and its ``unit``."""

    column: str
    unit: str


def parse_columns(spec: str, where: str = "--columns") -> dict[str, Column]:
    """``FIELD=COLUMN[:UNIT],...`` as a mapping; :class:`InputError` naming the bad item."""
    out: dict[str, Column] = {}
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        name, eq, rest = item.partition("=")
        name = name.strip()
        column, _, unit = rest.partition(":")
        if not eq or not column.strip():
            raise InputError(where, item, "expected FIELD=COLUMN[:UNIT]")
        if name not in FIELDS:
            raise InputError(where, item, f"unknown field {name!r} (fields: {', '.join(FIELDS)})")
        units = FIELDS[name][1]
        unit = unit.strip() or units[0]
        if unit not in units:
            raise InputError(where, item, f"unit {unit!r} of {name} is not one of {', '.join(units)}")
        if name in out:
            raise InputError(where, item, f"{name} is mapped twice")
        out[name] = Column(column.strip(), unit)
    missing = [n for n, (req, _) in FIELDS.items() if req and n not in out]
    if missing:
        raise InputError(where, spec, f"no column for {', '.join(missing)} (required: arrival, gpus, work)")
    if "deadline" in out and "deadline_after" in out:
        raise InputError(where, spec, "map deadline or deadline_after, not both")
    if out["arrival"].unit == "datetime" and out.get("deadline", Column("", "datetime")).unit != "datetime":
        raise InputError(where, spec, "deadline must be a datetime when arrival is (the same clock)")
    return out


def _time(row: Row, c: Column, name: str) -> float:
    """Minutes on the file's clock (datetime: seconds since the epoch / 60)."""
    if c.unit == "datetime":
        return seconds(field(row, c.column), name) / 60.0
    return as_float(row, c.column) * SPANS[c.unit]


def read_mapped(path: str | Path, columns: dict[str, Column], on_error: str = "raise", name: str | None = None) -> TraceData:
    """The GPU jobs of the CSV ``path`` read through ``columns`` (:func:`parse_columns`);
    arrival = minutes after the earliest submission (deadlines shifted with it)."""
    p = Path(path)
    deadline_col = columns.get("deadline") or columns.get("deadline_after")
    data = TraceData(name or p.stem, str(p), [], has_deadlines=deadline_col is not None)
    required = tuple(c.column for n, c in columns.items() if FIELDS[n][0])
    id_col = columns.get("id")

    def parse(row: Row, jid: str, gpus: int) -> tuple[str, float, int, float, float | None] | None:
        arrival = _time(row, columns["arrival"], columns["arrival"].column)
        work = as_float(row, columns["work"].column, 0.0) * SPANS[columns["work"].unit]
        if work == 0:
            data.skip("zero_duration")
            return None
        within(columns["work"].column, work, "duration")
        deadline: float | None = None
        if deadline_col is not None and (row.get(deadline_col.column) or "").strip():
            d = _time(row, deadline_col, deadline_col.column)
            deadline = arrival + d if "deadline_after" in columns else d
            if deadline <= arrival:
                raise RowError(deadline_col.column, "deadline is not after the submission")
        job_id = (row.get(id_col.column) or "").strip() if id_col is not None else ""
        return job_id or jid, arrival, gpus, work, deadline

    rows = [v for _, _, v in gpu_rows(p, required, columns["gpus"].column, data, on_error, parse)]
    if not rows:
        raise InputError(str(p), "rows", "no GPU job in the file")
    origin = min(r[1] for r in rows)
    data.jobs = [TraceJob(jid, a - origin, g, w, None if d is None else d - origin) for jid, a, g, w, d in rows]
    return data

