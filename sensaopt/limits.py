"""Valid ranges of every number a user gives: instance fields, trace rows, command-line
options. One table each, checked at every boundary:

* instance files: the pydantic models of :mod:`sensaopt.io` (``Field(ge=, le=)`` built
  from :data:`INSTANCE`);
* the Python API: :func:`sensaopt.instance.check_instance` (``Instance``/``Job`` built
  in code get the same ranges);
* trace rows: :mod:`sensaopt.traces` (:data:`TRACE`, with the file's line);
* command-line options: :mod:`sensaopt.cli.options` (:data:`OPTIONS`, by option name).

The upper bounds keep every derived number finite and exactly representable: a value
≤ 10⁶ times a violation weight ≤ 10⁹ is ≤ 10¹⁵ per job (below 2⁵³), times stay within
:data:`MAX_ROUNDS` rounds of at most a week. ``docs/reliability.md`` prints these tables
(a test compares them).
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import dataclass
from typing import Any

MAX_ROUNDS = 1_000_000  # instance times (arrival, work, deadlines) beyond this many rounds are refused
TRACE_MAX_MINUTES = 1e6  # trace times (submit from the origin, durations, relative deadlines), minutes (~694 days)
MAX_SEED = 2**31 - 1  # CP-SAT and HiGHS take a 32-bit signed seed
MAX_JOBS = 1_000_000  # jobs in an instance file
MAX_FILE_BYTES = 200 * 2**20  # instance and schedule files larger than this are refused before reading
MAX_NAME_CHARS = 1000  # instance names, node type names and job ids (they appear in file names, tables and one-line errors)


def name_problem(text: str) -> str | None:
    """None when ``text`` suits a name or job id: at most :data:`MAX_NAME_CHARS`
    characters, no control characters (a newline would split a table row or an error
    line); else what is wrong."""
    if not text:
        return "an empty name"
    if len(text) > MAX_NAME_CHARS:
        return f"{len(text)} characters; at most {MAX_NAME_CHARS} are supported"
    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        return f"contains the control character {bad!r} (names are one line of printable text)"
    return None


@dataclass(frozen=True)
class Range:
    """The valid values of one number: ``lo ≤ x ≤ hi`` (``lo < x`` when ``lo_open``),
    finite, an integer when ``integer``; ``unit`` is for messages and the docs."""

    lo: float
    hi: float
    unit: str = ""
    lo_open: bool = False
    integer: bool = False

    def __contains__(self, x: object) -> bool:
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            return False
        # NaN fails every comparison and infinities fall outside the finite bounds
        inside = (self.lo < x if self.lo_open else self.lo <= x) and x <= self.hi
        return inside and (not self.integer or float(x).is_integer())

    def text(self) -> str:
        """The interval, e.g. ``(0, 1000000]``."""
        return f"{'(' if self.lo_open else '['}{fmt(self.lo)}, {fmt(self.hi)}]"

    def rule(self) -> str:
        """E.g. ``must be within (0, 1000000] minutes``."""
        what = "an integer within" if self.integer else "within"
        unit = f" {self.unit}" if self.unit else ""
        return f"must be {what} {self.text()}{unit}"

    def problem(self, x: float) -> str | None:
        """None when ``x`` is valid, else what is wrong, e.g. ``must be within (0, 1000000], got 1e+12``."""
        return None if x in self else f"{self.rule()}, got {fmt(x)}"


def fmt(x: float) -> str:
    """A number as short text: integers in full below 10¹², else ``%g``."""
    if isinstance(x, int) and not isinstance(x, bool):
        if abs(x) < 10**12:
            return str(x)
        if abs(x) < 10**300:
            return f"{float(x):g}"
        digits = str(abs(x))  # beyond a float (a JSON reader refuses more than 4300 digits before)
        mantissa = digits[1:6].rstrip("0")
        return f"{'-' if x < 0 else ''}{digits[0]}{'.' + mantissa if mantissa else ''}e+{len(digits) - 1}"
    if math.isfinite(x) and float(x).is_integer() and abs(x) < 1e12:
        return str(int(x))
    return f"{x:g}"


WEEK_MINUTES = 10080.0

# instance fields (file and Python API); times in rounds are checked against MAX_ROUNDS instead
INSTANCE: dict[str, Range] = {
    "round_minutes": Range(0, WEEK_MINUTES, "minutes", lo_open=True),
    "cluster.node_types[].gpus": Range(1, 1024, "GPUs per node", integer=True),
    "cluster.node_types[].cpus": Range(1, 65536, "cores per node", integer=True),
    "cluster.node_types[].mem_gb": Range(0, 1e6, "GB per node", lo_open=True),
    "cluster.node_types[].count": Range(1, 100_000, "nodes", integer=True),
    "profile.cpu_levels": Range(1e-3, 65536, "cores per GPU"),  # at least 0.001: a node's cores / a level stays finite
    "profile.mem_levels": Range(1e-3, 1e6, "GB per GPU"),
    "profile.speeds": Range(1e-3, 1000),  # as speed_factor: work / speed stays finite (the simulator's round limit)
    "jobs[].value": Range(0, 1e6, lo_open=True),
    "jobs[].soft_deadlines[].value": Range(0, 1e6, lo_open=True),
    "jobs[].speed_factor": Range(1e-3, 1e3),
    "objective.violation_weight": Range(0, 1e9),
    "overheads.base_minutes": Range(0, WEEK_MINUTES, "minutes"),
    "overheads.per_log2_gpu_minutes": Range(0, WEEK_MINUTES, "minutes"),
    "overheads.migration_base_minutes": Range(0, WEEK_MINUTES, "minutes"),
    "overheads.migration_per_log2_gpu_minutes": Range(0, WEEK_MINUTES, "minutes"),
    "overheads.resize_minutes": Range(0, WEEK_MINUTES, "minutes"),
}

# schedule files (validate, plot); a segment also ends by round MAX_ROUNDS
SCHEDULE: dict[str, Range] = {
    "segments[].start": Range(0, MAX_ROUNDS - 1, "round", integer=True),
    "segments[].rounds": Range(1, MAX_ROUNDS, "rounds", integer=True),
    "segments[].placements[].gpus": INSTANCE["cluster.node_types[].gpus"],
    "segments[].placements[].cpus": Range(0, 65536, "cores", integer=True),
    "segments[].placements[].mem_gb": Range(0, 1e6, "GB"),
}

# trace rows (Chronus CSV, Helios CSV, Philly JSON), after conversion to minutes
TRACE: dict[str, Range] = {
    "gpus": Range(0, 1_000_000, "GPUs", integer=True),
    "submit": Range(0, TRACE_MAX_MINUTES, "minutes from the trace origin"),
    "duration": Range(0, TRACE_MAX_MINUTES, "minutes", lo_open=True),
    "deadline": Range(0, TRACE_MAX_MINUTES, "minutes after submission", lo_open=True),
    "value": Range(0, 1e6, lo_open=True),
}

# command-line options, by option name (one meaning per name across commands)
FRACTION = Range(0, 1)
OPTIONS: dict[str, Range] = {
    "time_limit": Range(0, 604800, "seconds", lo_open=True),
    "step_minutes": Range(0, TRACE_MAX_MINUTES, "minutes"),
    "workers": Range(1, 256, integer=True),
    "seed": Range(0, MAX_SEED, integer=True),
    "seeds": Range(1, 1000, "seeds", integer=True),  # experiment --seeds: runs per cell
    "profile_error": Range(0, 1),
    "jobs": Range(1, 1_000_000, "jobs", integer=True),
    "limit": Range(1, 10_000_000, "jobs", integer=True),
    "count": Range(1, 1_000_000, "windows", integer=True),
    "windows": Range(1, 1_000_000, "windows", integer=True),  # experiment gaps: windows per size and seed
    "processes": Range(1, 256, integer=True),  # Dask LocalCluster worker processes (experiment gaps)
    "solver_seed": Range(0, MAX_SEED, integer=True),
    "solver_seeds": Range(1, 1000, "seeds", integer=True),  # experiment gaps --solver-seeds: exact solves per window
    "stride": Range(1, 1_000_000, "jobs", integer=True),
    "first": Range(0, 10_000_000, "jobs", integer=True),
    "nodes": Range(1, 100_000, "nodes", integer=True),
    "max_nodes": Range(1, 100_000, "nodes", integer=True),
    "node_gpus": INSTANCE["cluster.node_types[].gpus"],
    "node_cpus": INSTANCE["cluster.node_types[].cpus"],
    "node_mem_gb": INSTANCE["cluster.node_types[].mem_gb"],
    "cpu_per_gpu": INSTANCE["profile.cpu_levels"],
    "mem_per_gpu": INSTANCE["profile.mem_levels"],
    "round_minutes": INSTANCE["round_minutes"],
    "start": Range(0, TRACE_MAX_MINUTES, "minutes"),
    "days": Range(0, 1000, "days", lo_open=True),
    "helios_days": Range(0, 1000, "days", lo_open=True),
    "load": Range(0, 1000, lo_open=True),
    "sample": Range(0, 1, lo_open=True),
    "scale": Range(0, 1, lo_open=True),
    "sensitive_fraction": FRACTION,
    "best_effort_fraction": FRACTION,
    "work_median": Range(0, TRACE_MAX_MINUTES, "minutes", lo_open=True),
    "work_max": Range(0, TRACE_MAX_MINUTES, "minutes", lo_open=True),
    "deadline_lo": Range(1, 1000),
    "deadline_hi": Range(1, 1000),
    "deadline_round": Range(0, WEEK_MINUTES, "minutes", lo_open=True),
    "window": Range(1, 1000, "rounds", integer=True),
    "horizon": Range(1, MAX_ROUNDS, "rounds", integer=True),
    "bin_minutes": Range(0, TRACE_MAX_MINUTES, "minutes", lo_open=True),
    "dpi": Range(10, 2400, "dots per inch", integer=True),
    "timeout": Range(0, 86400, "seconds", lo_open=True),
    "progress_every": Range(0, 86400, "seconds"),
    "move_cost_scale": Range(0, 1000),
}

# policy knobs (the fields of each policy's config dataclass), by knob name across policies:
# checked by sensaopt.policies.base.check_config for --set, policy_config= and config objects.
# A knob not named here gets GENERIC_KNOB (a finite number of sane size); bools must be
# real booleans, ints real integers (the field's annotation decides which).
KNOBS: dict[str, Range] = {
    # SensaScale
    "demand_tolerance": Range(0, 1),
    "sensitivity_threshold": Range(0, 1000),
    "urgent_rounds": Range(-MAX_ROUNDS, MAX_ROUNDS, "rounds"),  # negative: no job is ever urgent (an experiment's setting)
    "urgency_levels": Range(0, 1_000_000, integer=True),
    "pair_hysteresis": Range(0, 1e6),
    "pairing_window": Range(0, 1000, lo_open=True),
    "weight_scale": Range(1, 1e9, integer=True),  # pair weights x this are cast to int64
    "repack_limit": Range(0, 1_000_000, integer=True),
    "move_cost_weight": Range(0, 1000),
    "min_speed_fraction": Range(0, 1),
    # Chronus
    "lease_minutes": Range(1, WEEK_MINUTES, "minutes"),
    "admission_minutes": Range(1, WEEK_MINUTES, "minutes"),
    "time_limit_s": OPTIONS["time_limit"],
    "threads": OPTIONS["workers"],
    "max_candidates": Range(1, 10_000_000, integer=True),
    # Synergy-TUNE
    "tolerance": Range(0, 1),
    # rolling horizon and other exact-solver knobs (the options' ranges)
    "window": OPTIONS["window"],
    "time_limit": OPTIONS["time_limit"],
    "workers": OPTIONS["workers"],
    "cpsat_workers": OPTIONS["workers"],
    "seed": OPTIONS["seed"],
}
GENERIC_KNOB = Range(-1e9, 1e9)  # a number knob without its own range: finite, |x| <= 10^9


KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false (a bool)", list: "a list",
         dict: "an object"}


def type_problem(tp: type, x: object) -> str:
    """The one message for a value of the wrong type, in files and in code alike
    (``must be an integer, got 'four'``); ``tp`` is the type wanted (:data:`KINDS`)."""
    return f"must be {KINDS.get(tp, getattr(tp, '__name__', str(tp)))}, got {describe(x)}"


def describe(x: object) -> str:
    """A value as it appears in a message: numbers by :func:`fmt`, anything else by repr."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return fmt(x)
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def value_problem(tp: Any, x: object, rng: Range | None = None) -> str | None:
    """None when ``x`` is a value of the annotation ``tp`` (bool, int, float, str, or an
    optional of one; other annotations are not checked) within ``rng`` (numbers without
    one: finite and within :data:`GENERIC_KNOB`), else what is wrong, e.g. ``must be true
    or false (a bool), got 'no'``. No coercion: a string is not a number nor a bool, a
    bool is not a number, 2.5 is not an int."""
    import numbers

    args = typing.get_args(tp)
    if args and typing.get_origin(tp) in (typing.Union, types.UnionType):
        if x is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        problems = [value_problem(a, x, rng) for a in inner]
        if any(p is None for p in problems):
            return None
        return problems[0] if len(inner) == 1 else f"must be {' or '.join(_kind(a) for a in inner)}, got {describe(x)}"
    if tp is bool:
        return None if isinstance(x, bool) or type(x).__name__ == "bool_" else f"must be true or false (a bool), got {describe(x)}"
    if tp is int:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            return f"must be an integer, got {describe(x)}"
    elif tp is float:
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            return f"must be a number, got {describe(x)}"
    elif tp is str:
        return None if isinstance(x, str) else f"must be a string, got {describe(x)}"
    else:
        return None
    r = rng if rng is not None else GENERIC_KNOB
    return r.problem(float(x) if not isinstance(x, int) else x)


def _kind(tp: Any) -> str:
    return {bool: "a bool", int: "an integer", float: "a number", str: "a string"}.get(tp, getattr(tp, "__name__", str(tp)))
