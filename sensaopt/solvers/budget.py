"""The one budget of a solve, passed down instead of deadlines, "time left" numbers or
closures: wall-clock seconds, and optionally a deterministic work limit.

With a work limit (:class:`WorkMeter`, asked for as ``budget="work:N"``, the command
line's ``--budget work:N``) each backend stops on its own deterministic measure, so
the same command gives the same numbers on a quiet and on a loaded machine:

* CP-SAT: one unit is one second of CP-SAT's deterministic time
  (``max_deterministic_time``); more than one worker then runs CP-SAT's deterministic
  parallel search (``interleave_search``);
* HiGHS: one unit is :data:`~sensaopt.solvers.highs.HIGHS_NODES_PER_UNIT`
  branch-and-bound nodes (``mip_max_nodes``);
* CBC: one unit is :data:`~sensaopt.solvers.cbc.CBC_NODES_PER_UNIT` nodes
  (``-maxNodes``); more than one thread runs CBC's repeatable parallel mode (100 + n).

The wall-clock limit (``limit_s``) then stays as a safety net only. A solve the safety
net stops is not deterministic: its outcome and the meter say so (``safety_net``).
Node limits do not cover presolve and the root node of HiGHS and CBC: those always run
to their end (or to the safety net).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from sensaopt.errors import SensaoptError

MIN_SOLVE_S = 0.05  # seconds a solver run gets at least, even when the budget is spent
MIN_SOLVE_WORK = 0.01  # work units a solver run gets at least, even when the work is spent
OVERRUN_S = 0.3  # seconds a solver may run past the whole call's deadline before it is stopped from outside
MAX_WORK = 1e7  # work units: a larger budget is refused (CP-SAT: deterministic seconds)
WALL_CLOCK = "time"  # the budget spec of a wall-clock limit only (the default outside the table commands)
SAFETY_NET_NOTE = "the wall-clock safety net stopped a solve: not deterministic"


class WorkMeter:
    """A deterministic work limit: ``limit`` work units (module doc), the units the solves
    under it have spent so far, and whether the wall-clock safety net stopped one of them.
    A meter made by :meth:`child` passes what is charged to it on to its parent (under one
    lock: solves side by side charge from two threads)."""

    _lock = threading.Lock()

    def __init__(self, limit: float, parent: WorkMeter | None = None) -> None:
        self.limit = float(limit)
        self.parent = parent
        self.spent = 0.0
        self.safety_net = False

    def left(self) -> float:
        """Work units left (at least 0)."""
        return max(self.limit - self.spent, 0.0)

    def child(self, units: float) -> WorkMeter:
        """A meter of ``units`` (at most what is left here), charging this one too."""
        return WorkMeter(min(units, self.left()), self)

    def charge(self, units: float, safety_net: bool = False) -> None:
        """Record ``units`` spent (and whether the safety net stopped the solve) here and in every parent."""
        with WorkMeter._lock:
            m: WorkMeter | None = self
            while m is not None:
                m.spent += units
                m.safety_net = m.safety_net or safety_net
                m = m.parent


def parse_budget(spec: str | None, where: str = "--budget") -> float | None:
    """The work units of a budget ``spec``: ``"work:N"`` (N > 0 units) gives N; ``"time"``
    or None (wall-clock only) gives None. :class:`~sensaopt.errors.SensaoptError`
    naming ``where`` for anything else."""
    if spec is None or spec == WALL_CLOCK:
        return None
    kind, _, amount = str(spec).partition(":")
    try:
        units = float(amount) if kind == "work" else math.nan
    except ValueError:
        units = math.nan
    if not 0 < units <= MAX_WORK:
        raise SensaoptError(f"{where}: {spec!r} is not a budget; use work:N (0 < N <= {MAX_WORK:g} work units) or {WALL_CLOCK}")
    return units


def budget_spec(units: float | None) -> str:
    """The spec :func:`parse_budget` reads back: ``"work:N"`` or ``"time"``."""
    return WALL_CLOCK if units is None else f"work:{units:g}"


@dataclass(frozen=True)
class TimeBudget:
    """``limit_s`` seconds of wall-clock time counted from ``started`` (a
    :func:`time.perf_counter` value); ``outer``: the deadline of the whole call this
    budget is a part of (None: this budget is the whole call); ``work``: a deterministic
    work limit (None: none; else ``limit_s`` is only the safety net, module doc)."""

    limit_s: float
    started: float
    outer: float | None = None
    work: WorkMeter | None = None

    @classmethod
    def start(cls, limit_s: float, work: float | None = None) -> TimeBudget:
        """A budget of ``limit_s`` seconds starting now; ``work`` units (None: no work limit)."""
        return cls(float(limit_s), time.perf_counter(), None, None if work is None else WorkMeter(work))

    @property
    def deterministic(self) -> bool:
        """True under a work limit."""
        return self.work is not None

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

    def work_left(self, floor: float = MIN_SOLVE_WORK) -> float | None:
        """Work units left (at least ``floor``); None without a work limit."""
        return None if self.work is None else max(self.work.left(), floor)

    def short_of(self, amount: float) -> bool:
        """Too little left to start another solve: under a work limit, fewer than ``amount``
        work units (a unit is about a second, module doc) or the safety net's seconds spent
        (then recorded as fired); else fewer than ``amount`` seconds."""
        if self.work is None:
            return self.left() < amount
        if self.left() <= 0:
            self.work.charge(0.0, safety_net=True)
            return True
        return self.work.left() < amount

    def charge(self, units: float, safety_net: bool = False) -> None:
        """Record a solve's work units (and whether the safety net stopped it); nothing without a work limit."""
        if self.work is not None:
            self.work.charge(units, safety_net)

    def at_most(self, seconds: float, work: float | None = None) -> TimeBudget:
        """A budget starting now of ``seconds``, or the seconds left if fewer; under a
        work limit, of ``work`` units or those left if fewer (None: those left), with
        all the seconds left as its safety net."""
        if self.work is None:
            return TimeBudget(min(self.left(), seconds), time.perf_counter(), self.outer_deadline)
        meter = self.work.child(self.work.left() if work is None else work)
        return TimeBudget(self.left(), time.perf_counter(), self.outer_deadline, meter)

    def split(self, share: float, floor: float = MIN_SOLVE_S) -> TimeBudget:
        """A budget starting now of ``share`` × the seconds left (at least ``floor``); under
        a work limit, of ``share`` × the work units left, with all the seconds left as its
        safety net."""
        if self.work is None:
            return TimeBudget(max(self.left() * share, floor), time.perf_counter(), self.outer_deadline)
        meter = self.work.child(self.work.left() * share)
        return TimeBudget(max(self.left(), floor), time.perf_counter(), self.outer_deadline, meter)
