"""MILP backends of the time-indexed model: HiGHS (default, highspy directly:
:mod:`sensaopt.exact.highs`) or CBC (``backend="cbc"``: the model written as MPS by
PuLP, the CBC binary PuLP ships run here as a child process).

Same integer data as CP-SAT (:mod:`sensaopt.exact.data`); placement, ran-before,
done and deadline indicators are binaries, progress/cumulative work and the units
lost to a change (restart, migration, resize) are continuous (their integrality is
implied or irrelevant).

Warm start: HiGHS gets the SensaScale schedule as a start solution; CBC as a
MIPSTART file (``-mips``; retried without it when CBC crashes on it). Both are
recorded in ``Result.params["hinted"]``.

Statuses: the solver's own proof. HiGHS: its model status (:mod:`sensaopt.exact.highs`).
CBC: the status line of its solution file (PuLP's reader: "Optimal" only → OPTIMAL;
"Stopped on time - objective value …" is an incumbent without proof → TIME_LIMIT),
never OPTIMAL when the log says it stopped. Bounds: HiGHS ``mip_dual_bound``; CBC's
"Lower bound" line of its log (the objective itself when proven optimal).

Time: CBC checks ``-sec`` only between its own steps (on medium models its
preprocessing ran for minutes past a 60 s limit), so it gets the seconds left when it
starts and its process group is killed ``CBC_GRACE_S`` after the phase's deadline,
at the latest ``OVERRUN_S`` after the whole call's (:meth:`TimeBudget.stop_at`;
TIME_LIMIT without a CBC solution, the warm start stays the incumbent); once the
call's time is spent CBC is not started at all. CBC is a
:class:`~sensaopt.exact.child.GuardedChild`: it dies with sensaopt, even on SIGKILL,
and its temporary folder goes with it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pulp

from sensaopt.errors import SensaoptError
from sensaopt.exact.budget import MIN_SOLVE_S, TimeBudget
from sensaopt.exact.builder import Strength, build, objective_offset
from sensaopt.exact.child import GuardedChild
from sensaopt.exact.common import DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE, SolveSettings, prepare, solve_exact
from sensaopt.exact.cpsat import cpsat_partner
from sensaopt.exact.data import ModelData, precheck_size
from sensaopt.exact.highs import ABS_GAP, REL_GAP, HighsOptions, build_highs, run_highs
from sensaopt.exact.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.exact.numeric import MILP_LIMITS
from sensaopt.exact.outcome import ModelBuild, SolveOutcome
from sensaopt.instance import Instance
from sensaopt.result import Result, Status

BACKENDS = ("highs", "cbc")
CBC_GRACE_S = 2.0  # seconds CBC gets past the deadline to write its solution before it is killed
CBC_PATH: str | None = None  # the CBC binary; None: the one PuLP ships
# the scaled objective is integral: an absolute gap < 1 proves optimality; no relative gap


class PulpBackend:
    """The :class:`sensaopt.exact.builder.Backend` interface on a ``pulp.LpProblem``
    (for CBC and for exporting MPS/LP files)."""

    integer_only = False

    def __init__(self, name: str = "sensaopt") -> None:
        self.prob = pulp.LpProblem(re.sub(r"[^A-Za-z0-9_]", "_", name), pulp.LpMinimize)
        self._n = 0

    def bool_var(self, name: str) -> pulp.LpVariable:
        return pulp.LpVariable(name, cat=pulp.LpBinary)

    def int_var(self, lb: int, ub: int, name: str) -> pulp.LpVariable:
        return pulp.LpVariable(name, lowBound=lb, upBound=ub, cat=pulp.LpContinuous)

    def sum(self, terms: Iterable[Any]) -> pulp.LpAffineExpression:
        return pulp.lpSum(terms)

    def add(self, constraint: Any, family: str) -> None:
        self._n += 1
        self.prob += constraint, f"{family}_{self._n}"

    def minimize(self, expr: Any) -> None:
        self.prob.setObjective(expr)

    def hint(self, values: dict) -> None:
        """Initial values (var -> value); solver round-off is cleaned: values within
        1e-6 of an integer are rounded and all are clamped to the variable's bounds."""
        for var, val in values.items():
            r = round(val)
            val = r if abs(val - r) <= 1e-6 else val
            if var.lowBound is not None:
                val = max(val, var.lowBound)
            if var.upBound is not None:
                val = min(val, var.upBound)
            var.setInitialValue(val)


def build_milp(data: ModelData, strength: Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    """The model on PuLP (CBC, export)."""
    be = PulpBackend(data.instance.name)
    return ModelBuild(data=data, backend=be, vars=build(data, be, strength or Strength(), budget))


# ---- CBC -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CbcOptions:
    """``threads``; ``seed`` (CBC gets ``seed + 1``: 0 means "from the clock" to it);
    ``grace_s`` seconds past the budget before the process group is killed; ``path``
    of the binary (None: the one PuLP ships)."""

    threads: int = 1
    seed: int = 0
    grace_s: float = CBC_GRACE_S
    path: str | None = None


@dataclass(frozen=True)
class _CbcRun:
    """One CBC process: its return code (None: killed), log text, solution file, and
    what PuLP's solution reader needs (the command object, the MPS names)."""

    returncode: int | None
    log: str
    solution: str
    command: Any  # pulp.PULP_CBC_CMD
    variables: list
    var_names: dict
    con_names: dict

    def read(self, prob: Any) -> tuple[int, dict, int]:
        """PuLP's reader of the solution file: (LP status, values by variable name, solution status)."""
        lp_status, values, _dj, _pi, _slack, sol_status = self.command.readsol_MPS(
            self.solution, prob, self.variables, self.var_names, self.con_names)
        return lp_status, values, sol_status


def _run_cbc_process(args: list[str], log_path: str, budget: TimeBudget, grace_s: float, folder: str) -> int | None:
    """Run CBC as a :class:`~sensaopt.exact.child.GuardedChild` (own process group,
    killed with sensaopt, ``folder`` removed if sensaopt dies); kill the group
    ``grace_s`` after the budget's deadline (at the latest at :meth:`TimeBudget.stop_at`)
    or on Ctrl-C/SIGTERM. Returns the exit code, None when killed."""
    with open(log_path, "w") as log_file, GuardedChild(args, log_file, folder) as child:
        try:
            kill_at = min(budget.deadline + grace_s, budget.stop_at())
            return child.wait(timeout=max(kill_at - time.perf_counter(), 0.0))
        except subprocess.TimeoutExpired:
            child.kill()
            return None


def _cbc_once(be: PulpBackend, budget: TimeBudget, opts: CbcOptions, warm: bool, tmp: str) -> _CbcRun:
    """Write the MPS (and MIPSTART) into ``tmp``, run CBC with PuLP's command line."""
    prob = be.prob
    solver = pulp.PULP_CBC_CMD(msg=False, threads=int(opts.threads), gapRel=REL_GAP, gapAbs=ABS_GAP, warmStart=warm,
                               options=[f"randomSeed {int(opts.seed) + 1}", f"randomCbcSeed {int(opts.seed) + 1}"])
    mps, sol, mst, log = (os.path.join(tmp, f"model.{ext}") for ext in ("mps", "sol", "mst", "log"))
    with contextlib.suppress(FileNotFoundError):  # a crashed earlier attempt's solution is no solution
        os.unlink(sol)
    wasNone, dummy = prob.fixObjective()
    vs, var_names, con_names, _obj = prob.writeMPS(mps, rename=1)
    prob.restoreObjective(wasNone, dummy)
    args = [opts.path or solver.path, mps]
    if warm:
        solver.writesol(mst, prob, vs, var_names, con_names)  # PuLP's MIPSTART writer
        args += ["-mips", mst]
    args += ["-sec", f"{budget.left(MIN_SOLVE_S):.3f}"]
    for option in solver.options + solver.getOptions():
        args += ("-" + option).split()  # e.g. "-ratio 0.0", as PuLP's command line
    args += ["-solve", "-printingOptions", "all", "-solution", sol]
    if time.perf_counter() >= budget.stop_at():  # writing the files used up the time: no run
        return _CbcRun(returncode=None, log="", solution=sol, command=solver, variables=vs, var_names=var_names,
                       con_names=con_names)
    code = _run_cbc_process(args, log, budget, opts.grace_s, tmp)
    with open(log) as f:
        text = f.read()
    return _CbcRun(returncode=code, log=text, solution=sol, command=solver, variables=vs, var_names=var_names, con_names=con_names)


def _no_solution(status: Status, message: str, t0: float) -> SolveOutcome:
    return SolveOutcome(status=status, value=None, objective=None, bound=None, wall_s=time.perf_counter() - t0, message=message)


def _cbc_attempts(be: PulpBackend, budget: TimeBudget, opts: CbcOptions, hinted: bool, tmp: str,
                  t0: float) -> tuple[_CbcRun, str] | SolveOutcome:
    """Run CBC with the MIPSTART (when ``hinted``), again without it if CBC crashed on
    it: (the run that wrote a solution, a note on the retry), or the outcome without one."""
    note = ""
    for warm in ((True, False) if hinted else (False,)):
        if time.perf_counter() >= budget.outer_deadline:  # writing the MPS file alone takes seconds on large models
            return _no_solution(Status.TIME_LIMIT, f"cbc not run: the time limit was spent{note}", t0)
        run = _cbc_once(be, budget, opts, warm, tmp)
        wall = time.perf_counter() - t0
        if run.returncode is None:
            return _no_solution(Status.TIME_LIMIT, f"cbc killed after {wall:.2f} s on a {budget.limit_s:.1f} s limit "
                                                   f"(it did not stop on its own){note}", t0)
        if run.returncode == 0 and os.path.exists(run.solution):
            return run, note
        if not warm:  # CBC 2.10.3 crashes on some MIPSTART files: then retried without
            return _no_solution(Status.ERROR, f"cbc failed (exit code {run.returncode}){note}", t0)
        note = "; cbc crashed with the MIPSTART warm start, retried without it"
    raise AssertionError("unreachable: the last attempt returns")


def run_cbc(be: PulpBackend, budget: TimeBudget, opts: CbcOptions, hinted: bool) -> SolveOutcome:
    """Solve with CBC within ``budget``; the temporary files are always removed."""
    prob = be.prob
    const = prob.objective.constant if prob.objective is not None else 0  # CBC drops it: add it back to the bound
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sensaopt-cbc-") as tmp:
        got = _cbc_attempts(be, budget, opts, hinted, tmp, t0)
        if isinstance(got, SolveOutcome):
            return got
        run, note = got
        lp_status, values, ss = run.read(prob)
    prob.assignVarsVals(values)
    prob.assignStatus(lp_status, ss)
    text = run.log
    has_sol = ss in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    stopped = re.search(r"Result - Stopped|Stopped on time|time limit", text, re.I) is not None
    if ss == pulp.LpSolutionOptimal and lp_status == pulp.LpStatusOptimal and not stopped:
        status = Status.OPTIMAL
    elif lp_status == pulp.LpStatusInfeasible and not stopped and re.search(r"infeasible", text, re.I):
        status = Status.INFEASIBLE
    elif ss in (pulp.LpSolutionIntegerFeasible, pulp.LpSolutionNoSolutionFound):
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    m = re.search(r"Lower bound:\s*([-+0-9.eE]+)", text)
    bound = None
    if status == Status.OPTIMAL:
        bound = pulp.value(prob.objective)
    elif m:
        bound = float(m.group(1)) + const
    if status == Status.OPTIMAL and not has_sol:
        status = Status.ERROR
    msg = f"cbc {pulp.LpStatus[lp_status]}/sol_status {ss}{note}"
    objective = pulp.value(prob.objective) if has_sol else None
    msg += f", model objective {objective:g}" if has_sol else ", no solution found"
    wall = time.perf_counter() - t0

    def value(x: Any) -> float:
        return x if isinstance(x, (int, float)) else (x.varValue or 0.0)

    return SolveOutcome(status=status, value=value if has_sol else None, objective=objective, bound=bound,
                        message=f"{msg}, {wall:.2f} s", wall_s=wall)


def solve_milp(
    instance: Instance,
    backend: str = "highs",
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
    """Exact offline optimum with a MILP solver (``backend`` "highs" or "cbc").
    ``cooperate``: in the deadline-hard phase, CP-SAT continues from the MILP
    solver's incumbent after its first 10 % of the time left (both bounds count).
    ``branch_price``: as in :func:`sensaopt.exact.cpsat.solve_cpsat`."""
    if backend not in BACKENDS:
        raise SensaoptError(f"unknown MILP backend {backend!r}; known: {', '.join(BACKENDS)}")
    partner = cpsat_partner(workers, seed) if cooperate else None
    settings = SolveSettings(time_limit=time_limit, workers=workers, seed=seed, warm_start=warm_start, horizon=horizon,
                             horizon_slack=horizon_slack, strength=strength, work_scale=work_scale, max_vars=max_vars,
                             lexicographic=lexicographic, phase1_share=phase1_share, partner=partner,
                             branch_price=branch_price)
    if backend == "highs":
        hopts = HighsOptions(threads=workers, seed=seed, rel_gap=REL_GAP, abs_gap=ABS_GAP, log=log)

        def run_h(mb: ModelBuild, budget: TimeBudget, hinted: bool) -> SolveOutcome:
            return run_highs(mb.backend, budget, hopts, hinted)  # type: ignore[arg-type]

        return solve_exact("milp:highs", instance, build_highs, run_h, settings, MILP_LIMITS)
    copts = CbcOptions(threads=workers, seed=seed, grace_s=CBC_GRACE_S, path=CBC_PATH)

    def run_c(mb: ModelBuild, budget: TimeBudget, hinted: bool) -> SolveOutcome:
        return run_cbc(mb.backend, budget, copts, hinted)  # type: ignore[arg-type]

    return solve_exact("milp:cbc", instance, build_milp, run_c, settings, MILP_LIMITS)


def export_model(instance: Instance, path: str, fmt: str = "mps", horizon: int | None = None,
                 horizon_slack: int = DEFAULT_HORIZON_SLACK, max_vars: int = DEFAULT_MAX_VARS) -> dict:
    """Write the offline MILP as MPS or LP (for SCIP, Gurobi, ...). Returns size info.
    The file's objective is the scaled model objective; see ``params`` for the scaling."""
    precheck_size(instance, horizon, horizon_slack, max_vars)  # before the heuristic run
    data = prepare(instance, horizon, horizon_slack, False, DEFAULT_WORK_SCALE, max_vars).data
    mb = build_milp(data)
    prob = mb.backend.prob  # type: ignore[attr-defined]
    if fmt == "mps":
        prob.writeMPS(path)
    elif fmt == "lp":
        prob.writeLP(path)
    else:
        raise SensaoptError(f"unknown export format {fmt!r}; use mps or lp")
    scale = max(data.n, 1) * data.obj_scale
    # MPS/LP files drop the objective constant: add it back through the offset
    return {"horizon": data.H, "variables": len(prob.variables()), "constraints": len(prob.constraints),
            "objective_scale": scale, "objective_offset_minutes": objective_offset(data) + mb.vars.objective_const / scale}
