"""How a solve ended: the status every :class:`sensaopt.result.Result` carries (its own
module so that the rules of a result file, :mod:`sensaopt.result_checks`, need not import
the result module, which reads schedules through :mod:`sensaopt.io`)."""

from __future__ import annotations

import enum


class Status(str, enum.Enum):
    """How a solve ended.

    Attributes:
        OPTIMAL: proven optimal by an exact solver, over every schedule the validator accepts.
        FEASIBLE: a valid schedule, optimality not proven (every heuristic).
        INFEASIBLE: proven to have no solution.
        TIME_LIMIT: stopped by the time limit; may carry an incumbent.
        ERROR: the solver failed (``message`` says why).
    """

    OPTIMAL = "OPTIMAL"  # proven by an exact solver
    FEASIBLE = "FEASIBLE"  # a valid schedule, optimality not proven (every heuristic)
    INFEASIBLE = "INFEASIBLE"  # proven to have no solution
    TIME_LIMIT = "TIME_LIMIT"  # stopped by the limit; may carry an incumbent
    ERROR = "ERROR"
