"""The simple references: FIFO and EDF, both with GPU-proportional CPU and memory.

Every round the queue is re-planned in priority order (preemptive); a job keeps its
previous node when it still fits there. A job that does not fit is skipped and
later jobs may still start (greedy, no reservations).
"""

from __future__ import annotations

import math
from typing import Any

from sensaopt.policies.base import Allocation, BasePolicy, JobState, RoundState
from sensaopt.policies.placement import NodePool


class _GreedyProportional(BasePolicy):
    def key(self, js: JobState, state: RoundState) -> tuple[Any, ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def decide(self, state: RoundState) -> Allocation:
        pool = NodePool(state.cluster)
        out: Allocation = {}
        for js in sorted(state.jobs, key=lambda js: self.key(js, state)):
            if pool.free_gpus < js.gpus:
                continue
            pl = pool.place_proportional(js.gpus, js.placements if state.was_running(js) else None)
            if pl is not None:
                pool.take(pl)
                out[js.id] = pl
        return out


class FIFOPolicy(_GreedyProportional):
    """First in, first out: earliest arrival first."""

    name = "fifo"

    def key(self, js: JobState, state: RoundState) -> tuple[Any, ...]:
        return (js.spec.arrival, js.id)


class EDFPolicy(_GreedyProportional):
    """Earliest deadline first; best-effort jobs after all deadline jobs, by arrival."""

    name = "edf"

    def key(self, js: JobState, state: RoundState) -> tuple[Any, ...]:
        d = js.spec.deadline
        return (d is None, d if d is not None else math.inf, js.spec.arrival, js.id)
