"""JSON output: strict JSON text (no NaN or infinity) and the check that finds the first
non-finite number in a JSON-ready object, naming its path. The one way sensaopt writes
result, summary and instance JSON (re-exported by :mod:`sensaopt.io`)."""

from __future__ import annotations

import json
import math
from typing import Any

from sensaopt.errors import SensaoptError


def first_non_finite(obj: Any) -> tuple[str, float] | None:
    """(path, value) of the first NaN or infinite float in a JSON-ready object, else None."""
    found = _non_finite(obj)
    if found is None:
        return None
    parts, x = found
    path = ""
    for part in reversed(parts):  # the path is built only for the value found
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)", x


def _non_finite(o: Any) -> tuple[list[str | int], float] | None:
    """The first NaN or infinity in ``o`` (depth first, in order): its path parts, innermost first, and value."""
    if isinstance(o, float):
        return None if math.isfinite(o) else ([], o)
    items: Any
    if isinstance(o, dict):
        items = o.items()
    elif isinstance(o, (list, tuple)):
        items = enumerate(o)
    else:
        return None
    for k, v in items:
        if isinstance(v, (dict, list, tuple, float)):
            found = _non_finite(v)
            if found is not None:
                found[0].append(k if isinstance(o, (list, tuple)) else str(k))
                return found
    return None


def check_json_numbers(obj: Any, where: str) -> None:
    """:class:`SensaoptError` (one line) if ``obj`` holds NaN or an infinity, which JSON cannot carry."""
    bad = first_non_finite(obj)
    if bad is not None:
        raise SensaoptError(f"{where}: {bad[0]} is {bad[1]}; NaN and infinity are not JSON, nothing written")


def json_text(obj: Any, *, indent: int | None = None, where: str = "output") -> str:
    """``obj`` as strict JSON text (``allow_nan=False``): the one way sensaopt writes
    result, summary and instance JSON. A NaN or infinity raises :class:`SensaoptError`
    naming ``where`` and the field, instead of writing ``NaN``/``Infinity`` (not JSON)."""
    try:
        return json.dumps(obj, indent=indent, allow_nan=False)
    except ValueError:
        check_json_numbers(obj, where)
        raise


__all__ = ["check_json_numbers", "first_non_finite", "json_text"]
