"""The tables sensaopt writes (CSV, JSON, Parquet): their column names and types, one
definition each, free of pandas (the command line imports it at start).

* the gap tables (:func:`sensaopt.frames.gap_frame`, ``sensaopt gap`` rows):
  :data:`GAP_COLUMNS`, :func:`gap_record`;
* the file formats of a table: :data:`TABLE_FORMATS` (``.csv``, ``.json``; ``.parquet``
  where pyarrow is installed, the ``[parquet]`` extra), :func:`format_of`,
  :func:`check_format` (before any work: a missing pyarrow is one line naming the
  extra), :func:`table_bytes`. Parquet keeps the column types: booleans as booleans
  (nullable: None is null), numbers with None as null.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

from sensaopt.compare import COMPARISON_COLUMNS, Comparison
from sensaopt.errors import InputError

TABLE_FORMATS = ("csv", "json", "parquet")
PARQUET_EXTRA = 'pip install "sensaopt[parquet]"'

# The gap tables (gap_frame, `sensaopt gap` rows) hold the Comparison fields, the scalar-objective ones named for what
# they hold: the weighted objective (W x lost deadline value + avg JCT minutes, W = 1e5 per unit of lost value: one more
# miss dominates it) apart, its gaps in percent. Comparison field -> (column, factor).
OBJECTIVE_COLUMNS: dict[str, tuple[str, float]] = {
    "abs_gap": ("objective_diff", 1.0),                        # objective - exact objective (weighted objective units)
    "gap": ("objective_gap_pct", 100.0),                       # 100 x objective_diff / exact objective
    "gap_to_bound": ("objective_gap_to_bound_pct", 100.0),     # 100 x (objective - exact bound) / exact bound
    "exact_gap": ("exact_solver_gap_pct", 100.0),              # the exact solver's own gap, percent
    "jct_diff": ("jct_diff_min", 1.0),                         # avg JCT - exact avg JCT, minutes (any level)
}
GAP_COLUMNS: tuple[str, ...] = tuple(OBJECTIVE_COLUMNS.get(c, (c, 1.0))[0] for c in COMPARISON_COLUMNS)


def gap_record(c: Comparison) -> dict[str, Any]:
    """One row of a gap table: ``c``'s fields in :data:`GAP_COLUMNS` (the objective ones
    renamed and in percent, :data:`OBJECTIVE_COLUMNS`)."""
    out: dict[str, Any] = {}
    for k, v in c.to_dict().items():
        name, factor = OBJECTIVE_COLUMNS.get(k, (k, 1.0))
        out[name] = v * factor if v is not None and factor != 1.0 else v
    return out


def format_of(path: Any) -> str | None:
    """The table format a file name asks for (its suffix, any case: ``csv``, ``json``, ``parquet``), else None."""
    from pathlib import Path

    fmt = Path(path).suffix.lower().lstrip(".")
    return fmt if fmt in TABLE_FORMATS else None


def check_format(fmt: str, field: str, allowed: Sequence[str] = TABLE_FORMATS) -> str:
    """``fmt`` if it is one of ``allowed`` and can be written here; else an
    :class:`InputError` on ``field``: an unknown format, or Parquet without pyarrow (one
    line naming the extra)."""
    if fmt not in allowed:
        raise InputError("(command line)", field, f"unknown table format {fmt!r} (use {', '.join(allowed)})")
    if fmt == "parquet" and not parquet_available():
        raise InputError("(command line)", field, f"writing Parquet needs pyarrow: {PARQUET_EXTRA}")
    return fmt


def parquet_available() -> bool:
    """Whether pandas can write Parquet here (pyarrow installed: the ``[parquet]`` extra)."""
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def _null(v: Any) -> bool:
    return v is None or v == "" or (isinstance(v, float) and math.isnan(v))


def _frame(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> Any:
    """``rows`` as a pandas frame with typed columns: a column of bools as ``bool``
    (with a None: the nullable ``boolean``), of numbers as numbers (None: NaN), text as text."""
    import pandas as pd

    df = pd.DataFrame(list(rows), columns=list(columns))
    for c in df.columns:
        vals = [v for v in df[c] if not _null(v)]
        nulls = len(vals) < len(df)
        if vals and all(isinstance(v, bool) for v in vals):
            df[c] = df[c].map(lambda v: None if _null(v) else bool(v)).astype("boolean" if nulls else bool)
        elif vals and all(isinstance(v, (int, float)) for v in vals):
            df[c] = pd.to_numeric(df[c].map(lambda v: None if _null(v) else v))
    return df


def table_bytes(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str, where: str = "output") -> bytes:
    """The file content of a table in ``fmt`` (:data:`TABLE_FORMATS`): CSV (header of
    ``columns``; None and NaN empty, booleans True / False), JSON (a list of row objects;
    a NaN is an error naming ``where``) or Parquet (typed columns, :func:`_frame`)."""
    if fmt == "parquet":
        buf = io.BytesIO()
        _frame(rows, columns).to_parquet(buf, index=False)
        return buf.getvalue()
    if fmt == "json":
        from sensaopt.io import json_text

        return (json_text([{c: r.get(c) for c in columns} for r in rows], indent=1, where=where) + "\n").encode()
    text = io.StringIO()
    w = csv.DictWriter(text, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if v is None or (isinstance(v, float) and math.isnan(v)) else v for k, v in r.items()})
    return text.getvalue().encode()
