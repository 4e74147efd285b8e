"""CP-SAT backend (OR-Tools) of the time-indexed model.

All model data are integers (see :mod:`sensaopt.exact.data` for the scaling: work
in 1/``work_scale`` minutes, memory in 1/``mem_scale`` GB, objective × n·Q). Warm
start: the SensaScale schedule as a complete CP-SAT hint (``add_hint``).
Status: OPTIMAL only when CP-SAT says OPTIMAL; an incumbent without proof is
TIME_LIMIT when the time limit was reached, else FEASIBLE; the bound is
``best_objective_bound`` converted to metrics units.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from sensaopt.exact.builder import Strength, Vars, build
from sensaopt.exact.common import (
    solve_exact,
    DEFAULT_HORIZON_SLACK,
    DEFAULT_MAX_VARS,
    DEFAULT_WORK_SCALE,
)
from sensaopt.exact.data import ModelData
from sensaopt.exact.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.instance import Instance
from sensaopt.result import Result, Status


class CpSatBackend:
    """The :class:`sensaopt.exact.builder.Backend` interface on a ``CpModel``."""

    def __init__(self) -> None:
        self.model = cp_model.CpModel()

    # variables
    def bool_var(self, name: str):
        return self.model.new_bool_var(name)

    def int_var(self, lb: int, ub: int, name: str):
        return self.model.new_int_var(int(lb), int(ub), name)

    # constraints
    def sum(self, terms):
        return cp_model.LinearExpr.sum(list(terms))

    def add(self, constraint, family: str) -> None:
        self.model.add(constraint)

    # objective
    def minimize(self, expr) -> None:
        self.model.minimize(expr)

    def hint(self, values: dict) -> None:
        """Replace the hint by ``values`` (var -> value)."""
        self.model.clear_hints()
        for var, val in values.items():
            self.model.add_hint(var, int(round(val)))


def build_cpsat(data: ModelData, strength: Strength = Strength(), deadline: float | None = None) -> tuple[CpSatBackend, Vars]:
    be = CpSatBackend()
    v = build(data, be, strength, deadline)
    return be, v


def run_cpsat(be: CpSatBackend, time_limit: float, workers: int, seed: int, log: bool = False):
    """Solve; returns (Status, solver, value function or None, scaled bound or None, message)."""
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    solver.parameters.log_search_progress = log
    t0 = time.perf_counter()
    st = solver.solve(be.model)
    wall = time.perf_counter() - t0
    name = solver.status_name(st)
    if st == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif st == cp_model.FEASIBLE:
        status = Status.TIME_LIMIT if wall >= 0.95 * time_limit else Status.FEASIBLE
    elif st == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif st == cp_model.UNKNOWN:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    has_sol = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    value = solver.value if has_sol else None
    bound = solver.best_objective_bound if st in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN) else None
    msg = f"cp-sat {name}, {wall:.2f} s, {solver.num_branches} branches"
    if has_sol:
        msg += f", model objective {solver.objective_value:g}"
    else:
        msg += ", no solution found"
    return status, solver, value, bound, msg, (solver.objective_value if has_sol else None)


def solve_cpsat(
    instance: Instance,
    time_limit: float = 60,
    workers: int = 2,
    seed: int = 0,
    warm_start: bool = True,
    horizon: int | None = None,
    horizon_slack: int = DEFAULT_HORIZON_SLACK,
    strength: Strength | dict | None = None,
    work_scale: int = DEFAULT_WORK_SCALE,
    max_vars: int = DEFAULT_MAX_VARS,
    log: bool = False,
    lexicographic: bool = True,
    phase1_share: float = DEFAULT_PHASE1_SHARE,
) -> Result:
    """Exact offline optimum with CP-SAT (within ``horizon`` rounds; default: the
    SensaScale makespan + ``horizon_slack``). ``time_limit`` seconds, ``workers``
    search threads, ``seed`` the CP-SAT random seed."""
    def run(be, v, left, hinted):
        status, _solver, value, bound, msg, sobj = run_cpsat(be, left, workers, seed, log)
        return status, value, bound, msg, sobj

    return solve_exact("cpsat", instance, build_cpsat, run, time_limit=time_limit, workers=workers, seed=seed,
                       warm_start=warm_start, horizon=horizon, horizon_slack=horizon_slack, strength=strength,
                       work_scale=work_scale, max_vars=max_vars, lexicographic=lexicographic, phase1_share=phase1_share)
