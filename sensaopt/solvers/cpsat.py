"""CP-SAT (OR-Tools) as a :class:`~sensaopt.solvers.base.Backend`.

Integer coefficients only. Status: OPTIMAL only when CP-SAT says OPTIMAL; an incumbent
without proof is TIME_LIMIT when the time limit was reached (always under a work
limit), else FEASIBLE; the bound is ``best_objective_bound``.

Under a work limit (:mod:`sensaopt.solvers.budget`) one unit is one second of CP-SAT's
deterministic time (``max_deterministic_time``) and more than one worker runs the
deterministic parallel search (``interleave_search``: "deterministic independently of
num_workers", sat_parameters.proto); ``max_time_in_seconds`` is the safety net.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ortools.sat.python import cp_model

from sensaopt.errors import SensaoptError
from sensaopt.result import Status
from sensaopt.solvers.base import CPSAT_LIMITS, SolveOutcome, SolverParams
from sensaopt.solvers.budget import MIN_SOLVE_S, SAFETY_NET_NOTE, TimeBudget
from sensaopt.solvers.interrupt import CANCEL_NOTE, cancelled, run_stoppable


class CpSatBackend:
    """The backend interface on a ``CpModel``."""

    name = "cpsat"
    integer_only = True
    limits = CPSAT_LIMITS

    def __init__(self, model_name: str = "") -> None:
        self.model = cp_model.CpModel()

    # variables
    def bool_var(self, name: str) -> Any:
        return self.model.new_bool_var(name)

    def int_var(self, lb: int, ub: int, name: str) -> Any:
        return self.model.new_int_var(int(lb), int(ub), name)

    # constraints
    def sum(self, terms: Iterable[Any]) -> Any:
        return cp_model.LinearExpr.sum(list(terms))

    def add(self, constraint: Any, family: str) -> None:
        self.model.add(constraint)

    # objective
    def minimize(self, expr: Any) -> None:
        self.model.minimize(expr)

    def hint(self, values: dict) -> None:
        """Replace the hint by ``values`` (var -> value)."""
        self.model.clear_hints()
        for var, val in values.items():
            self.model.add_hint(var, int(round(val)))

    def solve(self, budget: TimeBudget, params: SolverParams) -> SolveOutcome:
        return run_cpsat(self, budget, params)


def run_cpsat(be: CpSatBackend, budget: TimeBudget, params: SolverParams) -> SolveOutcome:
    """Solve ``be``'s model with what is left of ``budget``."""
    limit = budget.left(MIN_SOLVE_S)
    work = budget.work_left()
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(limit)
    if work is not None:
        solver.parameters.max_deterministic_time = float(work)
        solver.parameters.interleave_search = params.workers > 1
    solver.parameters.num_workers = int(params.workers)
    solver.parameters.random_seed = int(params.seed)
    solver.parameters.log_search_progress = params.log
    solver.parameters.catch_sigint_signal = False  # Ctrl-C reaches Python: run_stoppable stops the search
    for key, val in params.extra.items():  # raw SatParameters fields
        try:
            setattr(solver.parameters, key, val)
        except (AttributeError, TypeError, ValueError) as e:
            raise SensaoptError(f"CP-SAT refused the parameter {key}={val!r}: {e}") from e
    t0 = time.perf_counter()
    st = run_stoppable(lambda: solver.solve(be.model), solver.stop_search, budget.stop_at())
    wall = time.perf_counter() - t0
    name = solver.status_name(st)
    if st == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif st == cp_model.FEASIBLE:
        status = Status.TIME_LIMIT if work is not None or wall >= 0.95 * limit else Status.FEASIBLE
    elif st == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif st == cp_model.UNKNOWN:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    has_sol = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    bound = solver.best_objective_bound if st in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN) else None
    spent = float(solver.deterministic_time)
    # the safety net: stopped unproven by the clock before the deterministic limit
    fired = work is not None and st in (cp_model.FEASIBLE, cp_model.UNKNOWN) and spent < work and wall >= 0.95 * limit
    budget.charge(spent, fired)
    msg = f"cp-sat {name}, {wall:.2f} s, {solver.num_branches} branches"
    if work is not None:
        msg += f", {spent:.3f} of {work:.3f} work units" + (f" ({SAFETY_NET_NOTE})" if fired else "")
    msg += f", model objective {solver.objective_value:g}" if has_sol else ", no solution found"
    if cancelled() and st != cp_model.OPTIMAL:
        msg += f"; stopped {CANCEL_NOTE}"
    return SolveOutcome(status=status, value=solver.value if has_sol else None,
                        objective=solver.objective_value if has_sol else None, bound=bound, message=msg, wall_s=wall,
                        work=spent, safety_net=fired)
