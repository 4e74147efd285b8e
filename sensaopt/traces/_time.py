"""Timestamps in trace files: seconds (a number) or ``YYYY-MM-DD HH:MM:SS``."""

from __future__ import annotations

import math
from datetime import datetime

from sensaopt.traces._rows import RowError

_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S.%f")


def seconds(text: str | None, name: str) -> float:
    """Seconds since the epoch (naive datetimes are read as UTC) or the number given."""
    if text is None or str(text).strip() in ("", "None", "null", "NaN", "nan"):
        raise RowError(name, "missing time")
    t = str(text).strip()
    try:
        x = float(t)
        if not math.isfinite(x):
            raise ValueError
        return x
    except ValueError:
        pass
    for fmt in _FORMATS:
        try:
            d = datetime.strptime(t, fmt)
            return (d - datetime(1970, 1, 1)).total_seconds()
        except ValueError:
            continue
    raise RowError(name, f"not a time (seconds or YYYY-MM-DD HH:MM:SS): {t!r}")
