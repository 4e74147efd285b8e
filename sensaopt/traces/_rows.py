"""Shared CSV row handling: malformed rows raise :class:`InputError` naming file,
line, field and job (``on_error="raise"``, the default) or are skipped and counted
under ``"malformed"`` (``on_error="skip"``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator

from sensaopt.errors import InputError

ON_ERROR = ("raise", "skip")


class RowError(Exception):
    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def check_on_error(on_error: str) -> None:
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}, not {on_error!r}")


def open_csv(path: str | Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
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


def check_width(row: dict) -> None:
    """A row with more or fewer fields than the header (a truncated line, a stray
    delimiter) is malformed: ``csv.DictReader`` keeps extra values under the key
    ``None`` and fills missing ones with ``None``."""
    n = sum(1 for k in row if k is not None)
    extra = row.get(None) or []
    given = sum(1 for k, v in row.items() if k is not None and v is not None) + len(extra)
    if extra or given != n:
        raise RowError("(row)", f"{given} fields where the header has {n} (truncated or mis-columned row)")


def field(row: dict, name: str) -> str:
    v = row.get(name)
    if v is None or v.strip() == "":
        raise RowError(name, "missing value")
    return v.strip()


def as_int(row: dict, name: str, minimum: int | None = None) -> int:
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


def as_float(row: dict, name: str, minimum: float | None = None) -> float:
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
