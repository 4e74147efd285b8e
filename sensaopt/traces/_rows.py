"""Shared CSV row handling: malformed rows raise :class:`InputError` naming file,
line, field and job (``on_error="raise"``, the default) or are skipped and counted
under ``"malformed"`` (``on_error="skip"``)."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sensaopt.errors import InputError

T = TypeVar("T")
Row = dict[Any, Any]  # a csv.DictReader row: column -> text (None for missing fields, extra ones under None)

ON_ERROR = ("raise", "skip")


class SkipCounter(Protocol):
    """Where readers count the rows they drop, by reason (:class:`sensaopt.traces.trace.TraceData`)."""

    def skip(self, reason: str, n: int = 1) -> None: ...


class RowError(Exception):
    def __init__(self, field: str, message: str) -> None:
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def check_on_error(on_error: str) -> None:
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}, not {on_error!r}")


def open_csv(path: str | Path, required: tuple[str, ...]) -> Iterator[tuple[int, Row]]:
    """(line number, row) pairs of a CSV file with a header holding ``required``."""
    p = Path(path)
    try:
        f = p.open(newline="")
    except FileNotFoundError:
        raise InputError(str(p), "(file)", "no such file") from None
    except OSError as e:
        raise InputError(str(p), "(file)", f"cannot read: {e}") from None
    with f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(str(p), "header", f"missing column(s) {', '.join(missing)} (have: {', '.join(header)})")
        for row in reader:
            yield reader.line_num, row


def check_width(row: Row) -> None:
    """A row with more or fewer fields than the header (a truncated line, a stray
    delimiter) is malformed: ``csv.DictReader`` keeps extra values under the key
    ``None`` and fills missing ones with ``None``."""
    n = sum(1 for k in row if k is not None)
    extra = row.get(None) or []
    given = sum(1 for k, v in row.items() if k is not None and v is not None) + len(extra)
    if extra or given != n:
        raise RowError("(row)", f"{given} fields where the header has {n} (truncated or mis-columned row)")


def field(row: Row, name: str) -> str:
    v = row.get(name)
    if v is None or v.strip() == "":
        raise RowError(name, "missing value")
    return v.strip()


def as_int(row: Row, name: str, minimum: int | None = None) -> int:
    v = field(row, name)
    try:
        x = int(float(v)) if float(v).is_integer() else None
    except ValueError:
        x = None
    if x is None:
        raise RowError(name, f"not an integer: {v!r}")
    if minimum is not None and x < minimum:
        raise RowError(name, f"must be >= {minimum}, got {x}")
    return x


def as_float(row: Row, name: str, minimum: float | None = None) -> float:
    v = field(row, name)
    try:
        x = float(v)
    except ValueError:
        raise RowError(name, f"not a number: {v!r}") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise RowError(name, f"not a finite number: {v!r}")
    if minimum is not None and x < minimum:
        raise RowError(name, f"must be >= {minimum:g}, got {x:g}")
    return x


def gpu_rows(path: str | Path, required: tuple[str, ...], gpu_field: str, data: SkipCounter, on_error: str,
             parse: Callable[[Row, str, int], T | None]) -> Iterator[tuple[str, T]]:
    """``(job id, parse(row, job id, gpus))`` for every well-formed GPU row of a CSV.

    Shared by the Chronus and Helios readers: rows with no GPU are skipped and counted
    (``data.skip("no_gpu")``); a row of the wrong width, one ``parse`` rejects with a
    :class:`RowError`, or a repeated job id is malformed (``on_error``). ``parse`` may
    return ``None`` to drop a row it has counted itself."""
    check_on_error(on_error)
    seen: set[str] = set()
    for line, row in open_csv(path, required):
        jid = (row.get("job_id") or "").strip() or f"line{line}"
        try:
            check_width(row)
            gpus = as_int(row, gpu_field, 0)
            if gpus == 0:
                data.skip("no_gpu")
                continue
            value = parse(row, jid, gpus)
            if value is None:
                continue
            if jid in seen:
                raise RowError("job_id", "duplicate job id")
        except RowError as e:
            if on_error == "skip":
                data.skip("malformed")
                continue
            raise InputError(str(path), f"line {line}: {e.field}", e.message, jid) from None
        seen.add(jid)
        yield jid, value
