"""The one wall-clock time budget of a solve, passed down instead of deadlines,
"time left" numbers or closures."""

from __future__ import annotations

import time
from dataclasses import dataclass

MIN_SOLVE_S = 0.05  # seconds a solver run gets at least, even when the budget is spent
OVERRUN_S = 0.3  # seconds a solver may run past the whole call's deadline before it is stopped from outside


@dataclass(frozen=True)
class TimeBudget:
    """``limit_s`` seconds of wall-clock time counted from ``started`` (a
    :func:`time.perf_counter` value); ``outer``: the deadline of the whole call this
    budget is a part of (None: this budget is the whole call)."""

    limit_s: float
    started: float
    outer: float | None = None

    @classmethod
    def start(cls, limit_s: float) -> TimeBudget:
        """A budget of ``limit_s`` seconds starting now."""
        return cls(float(limit_s), time.perf_counter())

    @property
    def deadline(self) -> float:
        """The :func:`time.perf_counter` value at which the budget is spent."""
        return self.started + self.limit_s

    @property
    def outer_deadline(self) -> float:
        """The :func:`time.perf_counter` value at which the whole call's budget is spent."""
        return self.deadline if self.outer is None else self.outer

    def stop_at(self) -> float:
        """When a solver still running must be stopped (or killed) from outside: the whole
        call's deadline + ``OVERRUN_S`` (a solver's own limit is checked only now and then)."""
        return self.outer_deadline + OVERRUN_S

    def elapsed(self) -> float:
        """Seconds since the budget started."""
        return time.perf_counter() - self.started

    def left(self, floor: float = 0.0) -> float:
        """Seconds left (at least ``floor``)."""
        return max(self.deadline - time.perf_counter(), floor)

    def at_most(self, seconds: float) -> TimeBudget:
        """A budget starting now of ``seconds``, or the seconds left if fewer."""
        return TimeBudget(min(self.left(), seconds), time.perf_counter(), self.outer_deadline)

    def split(self, share: float, floor: float = MIN_SOLVE_S) -> TimeBudget:
        """A budget starting now of ``share`` × the seconds left (at least ``floor``)."""
        return TimeBudget(max(self.left() * share, floor), time.perf_counter(), self.outer_deadline)
