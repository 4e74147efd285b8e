"""The one schedule format: run segments per job.

A :class:`Segment` says that a job holds the same placement for ``rounds``
consecutive rounds starting at round ``start`` (round r covers minutes
[r·R, (r+1)·R) with R = ``Instance.round_minutes``). A placement gives, on one node,
the job's GPUs and the **total** CPU cores and memory GB it gets there (not per
GPU). A job's placement may change between rounds (resizing, migration,
preemption): that starts a new segment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


FORMAT_VERSION = 1


@dataclass(frozen=True)
class Placement:
    node: int  # index into Instance.cluster.nodes
    gpus: int
    cpus: int  # cores, total on this node for this job
    mem_gb: float  # GB, total on this node for this job


@dataclass(frozen=True)
class Segment:
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
    segments: tuple[Segment, ...]
    round_minutes: float
    meta: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_rounds(cls, rounds: Iterable[tuple[int, dict[str, tuple[Placement, ...]]]], round_minutes: float) -> "Schedule":
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
    def to_dict(self, instance) -> dict:
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

    @classmethod
    def from_dict(cls, d: dict, instance, source: str = "<schedule>") -> "Schedule":
        """Parse a schedule; checks types and names (not feasibility: that is the
        validator's job). Raises :class:`InputError`."""
        from sensaopt.io import parse_schedule_dict

        return parse_schedule_dict(d, instance, source)


class ScheduleBuilder:
    """Accumulates per-round allocations into segments (used by the simulator)."""

    def __init__(self, round_minutes: float):
        self.round_minutes = round_minutes
        self._open: dict[str, list] = {}  # job -> [start, rounds, placements]
        self._done: list[Segment] = []

    def add_round(self, r: int, alloc: dict[str, tuple[Placement, ...]]) -> None:
        for job in [j for j, (start, n, pl) in self._open.items() if start + n != r or alloc.get(j) != pl]:
            self._close(job)
        for job, pl in alloc.items():
            cur = self._open.get(job)
            if cur is None:
                self._open[job] = [r, 1, pl]
            else:
                cur[1] += 1

    def _close(self, job: str) -> None:
        start, n, pl = self._open.pop(job)
        self._done.append(Segment(job, start, n, pl))

    def build(self, meta: dict | None = None) -> Schedule:
        for job in list(self._open):
            self._close(job)
        segs = sorted(self._done, key=lambda s: (s.start, s.job))
        return Schedule(tuple(segs), self.round_minutes, meta or {})


def save_schedule(schedule: Schedule, instance, path: str | Path) -> None:
    from sensaopt.io import atomic_write_text

    atomic_write_text(path, json.dumps(schedule.to_dict(instance), indent=1))
