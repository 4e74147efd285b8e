"""The rules of a result's JSON form (:meth:`sensaopt.result.Result.to_dict`), one
function for result files and dicts alike (:meth:`~sensaopt.result.Result.from_dict`,
:func:`~sensaopt.result.load_result`, and ``validate`` and ``plot`` of a ``solve -o``
file through :func:`sensaopt.io.parse_schedule_dict`)."""

from __future__ import annotations

import math
from typing import Any

from sensaopt.errors import InputError
from sensaopt.limits import fmt, type_problem
from sensaopt.metrics import Metrics
from sensaopt.status import Status

_NEEDS_SOLUTION = (Status.OPTIMAL, Status.FEASIBLE)  # statuses that always carry a solution (its objective)


def check_result_fields(d: dict[str, Any], where: str = "result") -> None:
    """The rules of a result's JSON form (:meth:`Result.to_dict`), for result files and
    dicts alike: ``solver`` a string, ``status`` a :class:`Status`, ``objective`` and
    ``bound`` finite numbers or null, ``runtime_s`` a finite number >= 0, ``metrics`` null
    or an object of :class:`~sensaopt.metrics.Metrics`' fields (numbers or null), ``params``
    and ``versions`` objects, ``message`` a string, ``schedule`` an object or null. A result
    may lack a schedule (and then its objective) where its status says so: OPTIMAL and
    FEASIBLE carry an objective; TIME_LIMIT without an incumbent, INFEASIBLE and ERROR need
    none. Raises :class:`~sensaopt.errors.InputError` naming ``where`` and the field."""
    for key in ("solver", "status", "objective", "bound", "runtime_s"):
        if key not in d:
            raise InputError(where, key, "missing required field")
    for key in ("solver", "message"):
        if key in d and not isinstance(d[key], str):
            raise InputError(where, key, type_problem(str, d[key]))
    if not isinstance(d["status"], str) or d["status"] not in Status._value2member_map_:
        raise InputError(where, "status", f"unknown status {d['status']!r} (known: {', '.join(s.value for s in Status)})")
    _check_number(where, "objective", d["objective"], True)
    _check_number(where, "bound", d["bound"], True)
    _check_number(where, "runtime_s", d["runtime_s"], False)
    if d["runtime_s"] < 0:
        raise InputError(where, "runtime_s", f"must be >= 0 seconds, got {d['runtime_s']}")
    for key in ("params", "versions", "schedule", "metrics", "part_bounds"):
        if d.get(key) is not None and not isinstance(d[key], dict):
            raise InputError(where, key, type_problem(dict, d[key]) + " (or null)")
    if d.get("metrics") is not None:
        _check_metrics(where, d["metrics"])
    status = Status(d["status"])
    if status in _NEEDS_SOLUTION and d["objective"] is None:
        raise InputError(where, "objective", f"a {status.value} result carries its solution's objective, got null")


def _check_number(where: str, field_: str, x: Any, optional: bool) -> None:
    """``x`` a finite number (or None when ``optional``); else :class:`~sensaopt.errors.InputError`."""
    if x is None and optional:
        return
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise InputError(where, field_, type_problem(float, x) + (" (or null)" if optional else ""))
    if not (math.isfinite(x) if isinstance(x, float) else abs(x) < 1e308):  # an integer may be beyond any float
        raise InputError(where, field_, f"must be a finite number, got {fmt(x)}")


def _check_metrics(where: str, m: dict[str, Any]) -> None:
    """A result's ``metrics``: exactly :class:`~sensaopt.metrics.Metrics`' fields, each a number or null."""
    from dataclasses import fields

    names = [f.name for f in fields(Metrics)]
    for name in names:
        if name not in m:
            raise InputError(where, f"metrics.{name}", "missing required field")
        _check_number(where, f"metrics.{name}", m[name], True)
    extra = next((k for k in m if k not in names), None)
    if extra is not None:
        raise InputError(where, f"metrics.{extra}", "unknown field")
