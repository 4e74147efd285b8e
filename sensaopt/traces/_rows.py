"""Shared CSV row handling: malformed rows raise :class:`InputError` naming file,
line, field and job (``on_error="raise"``, the default) or are skipped and counted
under ``"malformed"`` (``on_error="skip"``)."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sensaopt.errors import InputError
from sensaopt.io import decode_utf8, sniff_text
from sensaopt.limits import TRACE, fmt

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


HEAD_BYTES = 65536  # check_text_file looks at this many bytes


def check_text_file(path: str | Path) -> None:
    """:class:`InputError` (one line) unless ``path`` is a regular file whose first
    bytes are UTF-8 text: a directory, FIFO or device, a gzip/zip file, UTF-16 text or
    a byte that is not UTF-8 (line and column) is named as such."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(p), "(file)", "no such file")
    if p.is_dir():
        raise InputError(str(p), "(file)", "a directory, not a trace file")
    if not p.is_file():
        raise InputError(str(p), "(file)", "not a regular file (a FIFO, socket or device)")
    try:
        with p.open("rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError as e:
        raise InputError(str(p), "(file)", f"cannot read: {e}") from None
    what = sniff_text(head)
    if what is not None:
        raise InputError(str(p), "(file)", what)
    try:
        head.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if e.end < len(head):  # not just a character cut at the end of the head
            decode_utf8(head, str(p))


def open_csv(path: str | Path, required: tuple[str, ...]) -> Iterator[tuple[int, Row]]:
    """(line number, row) pairs of a UTF-8 CSV file (a byte-order mark is dropped) with a
    header holding ``required``. The line is the row's first line; rows are dicts like
    ``csv.DictReader``'s (missing fields None, extra ones in a list under ``None``).
    Whole-file problems raise :class:`InputError`: not a text file
    (:func:`check_text_file`), a byte that is not UTF-8 (its line and column), a quoted
    field running over several lines (an unterminated quote: the line it starts on)."""
    p = Path(path)
    check_text_file(p)
    try:
        f = p.open(newline="", encoding="utf-8-sig")
    except OSError as e:
        raise InputError(str(p), "(file)", f"cannot read: {e}") from None
    with f:
        try:
            yield from _rows(csv.reader(f), str(p), required)
        except UnicodeDecodeError:
            decode_utf8(p.read_bytes(), str(p))  # raises, naming the line and column
            raise
        except csv.Error as e:
            raise InputError(str(p), "(file)", f"not a CSV file: {e}") from None


def _rows(reader: Any, where: str, required: tuple[str, ...]) -> Iterator[tuple[int, Row]]:
    header: list[str] = next(reader, [])
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:  # a row dict would keep the last of them silently (a JSON key given twice is refused too)
        raise InputError(where, "header", f"column(s) {', '.join(repr(c) for c in twice)} given twice")
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(where, "header", f"missing column(s) {', '.join(missing)} (have: {', '.join(header)})")
    n = len(header)
    while True:
        start = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(where, f"line {start}", f"unreadable CSV row: {e}") from None
        if not values:
            continue  # a blank line
        if reader.line_num > start and any("\n" in v or "\r" in v for v in values):
            raise InputError(where, f"line {start}", f"a quoted field runs on to line {reader.line_num} (an unterminated quote?)")
        row: Row = dict(zip(header, values))
        if len(values) > n:
            row[None] = values[n:]
        for name in header[len(values):]:
            row[name] = None
        yield start, row


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


def within(name: str, x: float, key: str, given: str = "") -> float:
    """``x`` if within ``sensaopt.limits.TRACE[key]``, else :class:`RowError` for field
    ``name`` (``given``: the value as the file gives it, when converted, e.g. ``"90 s = "``)."""
    r = TRACE[key]
    if x not in r:
        raise RowError(name, f"{given}{fmt(x)} {r.unit}: {r.rule()}" if given else f"{r.problem(x)}")
    return x


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
    if not math.isfinite(x):
        raise RowError(name, f"not a finite number: {v!r}")
    if minimum is not None and x < minimum:
        raise RowError(name, f"must be >= {minimum:g}, got {x:g}")
    return x


def gpu_rows(path: str | Path, required: tuple[str, ...], gpu_field: str, data: SkipCounter, on_error: str,
             parse: Callable[[Row, str, int], T | None]) -> Iterator[tuple[int, str, T]]:
    """``(line, job id, parse(row, job id, gpus))`` for every well-formed GPU row of a CSV
    (GPUs within ``sensaopt.limits.TRACE["gpus"]``).

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
            gpus = int(within(gpu_field, as_int(row, gpu_field, 0), "gpus"))
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
        yield line, jid, value
