"""The one schedule format: run segments per job.

A :class:`Segment` says that a job holds the same placement for ``rounds``
consecutive rounds starting at round ``start`` (round r covers minutes
[r·R, (r+1)·R) with R = ``Instance.round_minutes``). A placement gives, on one node,
the job's GPUs and the **total** CPU cores and memory GB it gets there (not per
GPU). A job's placement may change between rounds (resizing, migration,
preemption): that starts a new segment.

This module is the data only; reading and writing schedule files is
:mod:`sensaopt.io`'s (``parse_schedule_dict``, ``load_schedule``, ``save_schedule``),
which imports this module and never the other way round.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sensaopt.errors import InputError
from sensaopt.limits import INSTANCE, MAX_ROUNDS, SCHEDULE, Range, type_problem

if TYPE_CHECKING:
    from sensaopt.instance import Instance

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Placement:
    """What one job holds on one node during a segment.

    Attributes:
        node: index into ``Instance.cluster.nodes``.
        gpus: GPUs held on the node.
        cpus: CPU cores held on the node (whole cores, all of the job's GPUs there together).
        mem_gb: memory held on the node, GB.
    """

    node: int  # index into Instance.cluster.nodes
    gpus: int
    cpus: int  # whole cores, total on this node for this job (validator rule whole_cores)
    mem_gb: float  # GB, total on this node for this job


@dataclass(frozen=True)
class Segment:
    """A job running with fixed placements over consecutive rounds.

    Attributes:
        job: the job's id.
        start: first round (round ``r`` covers minutes ``[r·R, (r+1)·R)``, ``R`` the round length).
        rounds: number of consecutive rounds.
        placements: one per node the job holds (a gang: all together).
    """

    job: str
    start: int  # first round
    rounds: int  # number of consecutive rounds
    placements: tuple[Placement, ...]

    @property
    def end(self) -> int:
        """First round after the segment."""
        return self.start + self.rounds

    @property
    def nodes(self) -> frozenset[int]:
        return frozenset(p.node for p in self.placements)


@dataclass(frozen=True)
class Schedule:
    """A schedule: segments over rounds of ``round_minutes``; checked by :mod:`sensaopt.validator`.

    Attributes:
        segments: the segments, any order.
        round_minutes: the round length, minutes (the instance's).
        meta: free-form notes (not compared).
    """

    segments: tuple[Segment, ...]
    round_minutes: float
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        check_schedule_data(self)

    @classmethod
    def from_rounds(cls, rounds: Iterable[tuple[int, dict[str, tuple[Placement, ...]]]], round_minutes: float) -> Schedule:
        """Build from per-round allocations ``(round, {job: placements})``, merging
        consecutive rounds with identical placements into one segment."""
        builder = ScheduleBuilder(round_minutes)
        for r, alloc in rounds:
            builder.add_round(r, alloc)
        return builder.build()

    def by_job(self) -> dict[str, list[Segment]]:
        out: dict[str, list[Segment]] = {}
        for s in self.segments:
            out.setdefault(s.job, []).append(s)
        for segs in out.values():
            segs.sort(key=lambda s: s.start)
        return out

    @property
    def num_rounds(self) -> int:
        return max((s.end for s in self.segments), default=0)

    def allocations_at(self, round_: int) -> dict[str, tuple[Placement, ...]]:
        return {s.job: s.placements for s in self.segments if s.start <= round_ < s.end}

    # ---- JSON --------------------------------------------------------------------
    def to_dict(self, instance: Instance) -> dict[str, Any]:
        """The schedule file's JSON object (nodes by name; read back by :func:`sensaopt.io.parse_schedule_dict`)."""
        names = [n.name for n in instance.cluster.nodes]
        return {
            "format_version": FORMAT_VERSION,
            "instance": instance.name,
            "round_minutes": self.round_minutes,
            "segments": [
                {
                    "job": s.job,
                    "start": s.start,
                    "rounds": s.rounds,
                    "placements": [
                        {"node": names[p.node], "gpus": p.gpus, "cpus": p.cpus, "mem_gb": p.mem_gb}
                        for p in s.placements
                    ],
                }
                for s in self.segments
            ],
        }


def check_schedule_data(schedule: Schedule) -> None:
    """The rules of the schedule format, alike for schedule files
    (:func:`sensaopt.io.parse_schedule_dict`) and schedules built in code: the round
    length and every segment's and placement's numbers of the right type and within
    :data:`sensaopt.limits.SCHEDULE`, a segment ending by round
    :data:`~sensaopt.limits.MAX_ROUNDS`, at least one placement. Lists are taken as
    tuples. Whether the schedule fits its instance is the validator's question
    (:func:`sensaopt.validator.check_schedule`). Raises
    :class:`~sensaopt.errors.InputError` (``schedule``, the field, the segment's job)."""
    segs = schedule.segments
    if not isinstance(segs, tuple):
        if not isinstance(segs, (list, Iterable)) or isinstance(segs, (str, bytes, dict)):
            raise InputError("schedule", "segments", type_problem(list, segs))
        object.__setattr__(schedule, "segments", segs := tuple(segs))
    _number(schedule, "round_minutes", "round_minutes", INSTANCE["round_minutes"], None)
    for k, seg in enumerate(segs):
        if not _plain_segment(seg):  # the common case checked fast; else each field, for the message
            _check_segment(k, seg)


_START, _ROUNDS = SCHEDULE["segments[].start"], SCHEDULE["segments[].rounds"]
_GPUS, _CPUS, _MEM = (SCHEDULE[f"segments[].placements[].{n}"] for n in ("gpus", "cpus", "mem_gb"))
_NODE = Range(0, 10**9, "node index", integer=True)  # the validator checks it against the instance's nodes


def _plain_segment(seg: object) -> bool:
    """True when ``seg`` passes every rule of :func:`check_schedule_data` with plain
    Python values (ints, floats, tuples): the fast path (about 1 µs per placement)."""
    if type(seg) is not Segment or type(seg.job) is not str:
        return False
    s, r, pls = seg.start, seg.rounds, seg.placements
    if not (type(s) is int and type(r) is int and _START.lo <= s and _ROUNDS.lo <= r and s + r <= MAX_ROUNDS):
        return False
    if type(pls) is not tuple or not pls:
        return False
    for p in pls:
        if type(p) is not Placement:
            return False
        n, g, c, m = p.node, p.gpus, p.cpus, p.mem_gb
        if not (type(n) is int and type(g) is int and type(c) is int and (type(m) is float or type(m) is int)):
            return False
        if not (0 <= n <= _NODE.hi and _GPUS.lo <= g <= _GPUS.hi and _CPUS.lo <= c <= _CPUS.hi and _MEM.lo <= m <= _MEM.hi):
            return False
    return True


def _check_segment(k: int, seg: object) -> None:
    """Segment ``k``'s rules one by one: :class:`~sensaopt.errors.InputError` for the first broken
    (a whole float or numpy integer where an integer is due is stored as an ``int``)."""
    if not isinstance(seg, Segment):
        raise InputError("schedule", f"segments[{k}]", f"must be a Segment, got {type(seg).__name__}")
    job = seg.job if isinstance(seg.job, str) else None
    if job is None:
        raise InputError("schedule", f"segments[{k}].job", type_problem(str, seg.job))
    _number(seg, "start", f"segments[{k}].start", _START, job)
    _number(seg, "rounds", f"segments[{k}].rounds", _ROUNDS, job)
    if seg.start + seg.rounds > MAX_ROUNDS:
        raise InputError("schedule", f"segments[{k}].rounds", f"the segment ends at round {seg.start + seg.rounds}; "
                                                             f"at most {MAX_ROUNDS} rounds are supported", job)
    pls = seg.placements
    if not isinstance(pls, tuple) or not pls:
        if isinstance(pls, list) and pls:
            object.__setattr__(seg, "placements", pls := tuple(pls))
        else:
            what = "none" if isinstance(pls, (tuple, list)) else type(pls).__name__
            raise InputError("schedule", f"segments[{k}].placements", f"must hold at least one placement, got {what}", job)
    for q, p in enumerate(pls):
        f = f"segments[{k}].placements[{q}]"
        if not isinstance(p, Placement):
            raise InputError("schedule", f, f"must be a Placement, got {type(p).__name__}", job)
        _number(p, "node", f"{f}.node", _NODE, job)
        for name, rng in (("gpus", _GPUS), ("cpus", _CPUS), ("mem_gb", _MEM)):
            _number(p, name, f"{f}.{name}", rng, job)


def _number(obj: object, name: str, field_: str, rng: Range, job: str | None) -> None:
    """``obj.name`` a number within ``rng``; for an integer range an integer (a whole
    float such as 3.0 or a numpy integer is stored as an ``int``)."""
    x: Any = getattr(obj, name)
    real = isinstance(x, numbers.Real) and not isinstance(x, bool)  # (a flag: x stays Any for int() below)
    if not real:
        raise InputError("schedule", field_, type_problem(int if rng.integer else float, x), job)
    if rng.integer and type(x) is not int:
        if not (isinstance(x, numbers.Integral) or (math.isfinite(x) and float(x).is_integer())):
            raise InputError("schedule", field_, type_problem(int, x), job)
        x = int(x)
        object.__setattr__(obj, name, x)
    problem = rng.problem(x)
    if problem is not None:
        raise InputError("schedule", field_, problem, job)



@dataclass(slots=True)
class _OpenSegment:
    """A segment still growing in a :class:`ScheduleBuilder`."""

    start: int  # first round
    rounds: int
    placements: tuple[Placement, ...]


class ScheduleBuilder:
    """Accumulates per-round allocations into segments (used by the simulator)."""

    def __init__(self, round_minutes: float) -> None:
        self.round_minutes = round_minutes
        self._open: dict[str, _OpenSegment] = {}  # by job
        self._done: list[Segment] = []

    def add_round(self, r: int, alloc: dict[str, tuple[Placement, ...]]) -> None:
        for job in [j for j, o in self._open.items() if o.start + o.rounds != r or alloc.get(j) != o.placements]:
            self._close(job)
        for job, pl in alloc.items():
            cur = self._open.get(job)
            if cur is None:
                self._open[job] = _OpenSegment(r, 1, pl)
            else:
                cur.rounds += 1

    def _close(self, job: str) -> None:
        o = self._open.pop(job)
        self._done.append(Segment(job, o.start, o.rounds, o.placements))

    def build(self, meta: dict[str, Any] | None = None) -> Schedule:
        for job in list(self._open):
            self._close(job)
        segs = sorted(self._done, key=lambda s: (s.start, s.job))
        return Schedule(tuple(segs), self.round_minutes, meta or {})

