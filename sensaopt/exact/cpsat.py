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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from sensaopt.exact.budget import MIN_SOLVE_S, TimeBudget
from sensaopt.exact.builder import Strength, build
from sensaopt.exact.common import DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE, SolveSettings, solve_exact
from sensaopt.exact.data import ModelData
from sensaopt.exact.highs import highs_partner
from sensaopt.exact.interrupt import run_stoppable
from sensaopt.exact.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.exact.numeric import CPSAT_LIMITS
from sensaopt.exact.outcome import ModelBuild, Partner, SolveOutcome
from sensaopt.instance import Instance
from sensaopt.result import Result, Status


class CpSatBackend:
    """The :class:`sensaopt.exact.builder.Backend` interface on a ``CpModel``."""

    integer_only = True

    def __init__(self) -> None:
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


@dataclass(frozen=True)
class CpSatOptions:
    """``workers`` search threads, ``seed`` CP-SAT's random seed, ``log`` its search log."""

    workers: int = 1
    seed: int = 0
    log: bool = False


def build_cpsat(data: ModelData, strength: Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    be = CpSatBackend()
    return ModelBuild(data=data, backend=be, vars=build(data, be, strength or Strength(), budget))


def run_cpsat(be: CpSatBackend, budget: TimeBudget, opts: CpSatOptions) -> SolveOutcome:
    """Solve ``be``'s model with what is left of ``budget``."""
    limit = budget.left(MIN_SOLVE_S)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(limit)
    solver.parameters.num_workers = int(opts.workers)
    solver.parameters.random_seed = int(opts.seed)
    solver.parameters.log_search_progress = opts.log
    solver.parameters.catch_sigint_signal = False  # Ctrl-C reaches Python: run_stoppable stops the search
    t0 = time.perf_counter()
    st = run_stoppable(lambda: solver.solve(be.model), solver.stop_search, budget.stop_at())
    wall = time.perf_counter() - t0
    name = solver.status_name(st)
    if st == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif st == cp_model.FEASIBLE:
        status = Status.TIME_LIMIT if wall >= 0.95 * limit else Status.FEASIBLE
    elif st == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif st == cp_model.UNKNOWN:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    has_sol = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    bound = solver.best_objective_bound if st in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN) else None
    msg = f"cp-sat {name}, {wall:.2f} s, {solver.num_branches} branches"
    msg += f", model objective {solver.objective_value:g}" if has_sol else ", no solution found"
    return SolveOutcome(status=status, value=solver.value if has_sol else None,
                        objective=solver.objective_value if has_sol else None, bound=bound, message=msg, wall_s=wall)


def cpsat_partner(workers: int, seed: int) -> Partner:
    """CP-SAT as the cooperating backend of another solve's deadline-hard phase."""
    opts = CpSatOptions(workers=workers, seed=seed)

    def run(mb: ModelBuild, budget: TimeBudget, hinted: bool) -> SolveOutcome:
        return run_cpsat(mb.backend, budget, opts)  # type: ignore[arg-type]

    return Partner("cp-sat", build_cpsat, run)


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
    cooperate: bool = False,
    branch_price: bool = False,
) -> Result:
    """Exact offline optimum with CP-SAT (within ``horizon`` rounds; default: the
    SensaScale makespan + ``horizon_slack``). ``time_limit`` seconds, ``workers``
    search threads, ``seed`` the CP-SAT random seed. ``cooperate``: in the
    deadline-hard phase, CP-SAT gets 10 % of the time left (``COOPERATE_SHARE``), then HiGHS
    continues from its incumbent for the rest (both bounds count). ``branch_price``: in the deadline-hard phase,
    branch and price (:mod:`sensaopt.exact.branch_price`) from the solver's incumbent
    for the second half of the phase's time (its bound and schedule count)."""
    opts = CpSatOptions(workers=workers, seed=seed, log=log)

    def run(mb: ModelBuild, budget: TimeBudget, hinted: bool) -> SolveOutcome:
        return run_cpsat(mb.backend, budget, opts)  # type: ignore[arg-type]

    settings = SolveSettings(time_limit=time_limit, workers=workers, seed=seed, warm_start=warm_start, horizon=horizon,
                             horizon_slack=horizon_slack, strength=strength, work_scale=work_scale, max_vars=max_vars,
                             lexicographic=lexicographic, phase1_share=phase1_share,
                             partner=highs_partner(workers, seed) if cooperate else None, branch_price=branch_price)
    return solve_exact("cpsat", instance, build_cpsat, run, settings, CPSAT_LIMITS)
