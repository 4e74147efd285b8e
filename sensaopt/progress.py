"""THE progress arithmetic: what one segment of rounds does for a job — the minutes
its first round loses to the change it starts with, the work it does, and whether
(and after how many rounds) it completes the job. One pure function,
:func:`segment_progress` (its first round: :func:`first_round`, which the simulator
calls for every job and round), used by the simulator, the validator (segment by
segment) and the exact models' values (:func:`sensaopt.exact.model.values.finish_minutes`;
model units are converted from these minutes once, in :mod:`sensaopt.exact.model.data`).

Rules (README "Units and definitions"): a round is ``R`` minutes; the first round of a
change loses its cost (:class:`sensaopt.changes.ChangeCosts`), never more than the
round; work is speed × minutes run; the job is complete at the end of the round in
which its work left is done (within :data:`WORK_EPS`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

WORK_EPS = 1e-6  # minutes of work: a job with less than this left is done


class SegmentProgress(NamedTuple):
    """One segment's progress: ``minutes`` run in its first round (R less the change
    cost, at least 0), ``first`` the work of that round, ``per_round`` the work of each
    later one, ``rounds_to_done`` the rounds of the segment after which the job's work
    is done (None: not within the segment). A named tuple: the simulator makes one per
    job and round."""

    minutes: float
    first: float
    per_round: float
    rounds_to_done: int | None

    def work(self, rounds: int) -> float:
        """Work done over the segment's ``rounds`` rounds when it does not complete the job."""
        return self.first + self.per_round * (rounds - 1)


def first_round(left: float, speed: float, round_minutes: float, cost: float) -> tuple[float, float, bool]:
    """The first round of a segment: minutes run (the round less the change cost, at
    least 0), the work done in them, and whether that completes the job's ``left``
    minutes of work. A plain tuple: the simulator calls this for every job and round."""
    minutes = round_minutes - cost
    if not minutes >= 0.0:  # as max(R - cost, 0.0)
        minutes = 0.0
    first = speed * minutes
    return minutes, first, first >= left - WORK_EPS


def segment_progress(left: float, speed: float, round_minutes: float, cost: float, rounds: int) -> SegmentProgress:
    """Progress of a job with ``left`` minutes of work (at speed 1.0) left, running
    ``rounds`` rounds at ``speed`` after a change costing ``cost`` minutes in the first."""
    minutes, first, done_first = first_round(left, speed, round_minutes, cost)
    per_round = speed * round_minutes
    k: int | None  # rounds until the work is done
    if done_first:
        k = 1
    elif per_round <= 0 or rounds == 1:  # a single round cannot complete it later
        k = None
    else:
        k = 1 + math.ceil((left - first - WORK_EPS) / per_round)
    return SegmentProgress(minutes, first, per_round, k if k is not None and k <= rounds else None)
