"""CBC (the binary PuLP ships) as a :class:`~sensaopt.solvers.base.Backend`: the model
is held by a ``pulp.LpProblem`` (also for exporting MPS/LP files), written as MPS and
solved by CBC run here as a child process.

Warm start: a MIPSTART file (``-mips``) of the hinted values; retried without it when
CBC crashes on it.

Statuses: the status line of CBC's solution file (PuLP's reader: "Optimal" only →
OPTIMAL; "Stopped on time - objective value …" is an incumbent without proof →
TIME_LIMIT), never OPTIMAL when the log says it stopped. Bound: CBC's "Lower bound"
line of its log (the objective itself when proven optimal).

Time: CBC checks ``-sec`` only between its own steps (on medium models its
preprocessing ran for minutes past a 60 s limit), so it gets the seconds left when it
starts and its process group is killed ``CBC_GRACE_S`` after the phase's deadline,
at the latest ``OVERRUN_S`` after the whole call's (:meth:`TimeBudget.stop_at`;
TIME_LIMIT without a CBC solution); once the call's time is spent CBC is not started
at all.

Under a work limit (:mod:`sensaopt.solvers.budget`) one unit is
:data:`CBC_NODES_PER_UNIT` nodes (``-maxNodes``: "a repeatable way to limit search",
CBC's help) and more than one thread runs CBC's repeatable parallel mode
(``-threads 100+n``); preprocessing, the root LP and root cuts are not limited by
nodes (they run to their end or to the safety net, ``-sec`` and the kill). The nodes
done are read from the log's "Enumerated nodes" line.

CBC is a :class:`~sensaopt.solvers.child.GuardedChild`: it dies with sensaopt,
even on SIGKILL, and its temporary folder goes with it.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pulp

from sensaopt.result import Status
from sensaopt.solvers.base import MILP_LIMITS, SolveOutcome, SolverParams
from sensaopt.solvers.budget import MIN_SOLVE_S, SAFETY_NET_NOTE, TimeBudget
from sensaopt.solvers.child import no_solution, run_guarded, stopped_by_clock

CBC_GRACE_S = 2.0  # seconds CBC gets past the deadline to write its solution before it is killed
CBC_PATH: str | None = None  # the CBC binary; None: the one PuLP ships
CBC_NODES_PER_UNIT = 100  # nodes per work unit (wall time of a unit here: docs/reliability.md, section 6)
CBC_REPEATABLE_THREADS = 100  # CBC's -threads 100+n: n threads, repeatable search


class PulpBackend:
    """The backend interface on a ``pulp.LpProblem`` (for CBC and for exporting MPS/LP files)."""

    name = "cbc"
    integer_only = False
    limits = MILP_LIMITS

    def __init__(self, model_name: str = "sensaopt") -> None:
        self.prob = pulp.LpProblem(re.sub(r"[^A-Za-z0-9_]", "_", model_name or "sensaopt"), pulp.LpMinimize)
        self._n = 0
        self.hinted = False  # a warm start was given: CBC gets it as MIPSTART

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
        self.hinted = self.hinted or bool(values)

    def solve(self, budget: TimeBudget, params: SolverParams) -> SolveOutcome:
        return run_cbc(self, budget, CbcOptions.of(params), self.hinted)


# ---- CBC -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CbcOptions:
    """``threads``; ``seed`` (CBC gets ``seed + 1``: 0 means "from the clock" to it);
    ``grace_s`` seconds past the budget before the process group is killed; ``path``
    of the binary (None: the one PuLP ships); ``log``: CBC's own log echoed on stderr
    as it is written (``--solver-log``)."""

    threads: int = 1
    seed: int = 0
    grace_s: float = CBC_GRACE_S
    path: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()  # raw CBC options (name, value): ``-name value`` on the command line
    log: bool = False

    @classmethod
    def of(cls, params: SolverParams) -> CbcOptions:
        """``params`` (``extra``: raw CBC options), the binary and grace time of this module."""
        return cls(threads=params.workers, seed=params.seed, grace_s=CBC_GRACE_S, path=CBC_PATH,
                   extra=tuple(params.extra.items()), log=params.log)


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


def _cbc_once(be: PulpBackend, budget: TimeBudget, opts: CbcOptions, warm: bool, tmp: str) -> _CbcRun:
    """Write the MPS (and MIPSTART) into ``tmp``, run CBC with PuLP's command line."""
    prob = be.prob
    seeds = [f"randomSeed {int(opts.seed) + 1}", f"randomCbcSeed {int(opts.seed) + 1}"]
    work = budget.work_left()
    threads = int(opts.threads)
    if work is not None:
        seeds.append(f"maxNodes {max(1, int(work * CBC_NODES_PER_UNIT))}")
        threads += CBC_REPEATABLE_THREADS if threads > 1 else 0
    solver = pulp.PULP_CBC_CMD(msg=False, threads=threads, warmStart=warm,
                               options=seeds + [f"{k} {v}" for k, v in opts.extra])
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
    # killed grace_s after the phase's deadline, at the latest at the whole call's stop time
    code = run_guarded(args, log, min(budget.deadline + opts.grace_s, budget.stop_at()), tmp, echo=opts.log)
    with open(log) as f:
        text = f.read()
    return _CbcRun(returncode=code, log=text, solution=sol, command=solver, variables=vs, var_names=var_names, con_names=con_names)


def _cbc_attempts(be: PulpBackend, budget: TimeBudget, opts: CbcOptions, hinted: bool, tmp: str,
                  t0: float) -> tuple[_CbcRun, str] | SolveOutcome:
    """Run CBC with the MIPSTART (when ``hinted``), again without it if CBC crashed on
    it: (the run that wrote a solution, a note on the retry), or the outcome without one."""
    note = ""
    for warm in ((True, False) if hinted else (False,)):
        if time.perf_counter() >= budget.outer_deadline:  # writing the MPS file alone takes seconds on large models
            return stopped_by_clock(budget, f"cbc not run: the time limit was spent{note}", t0)
        run = _cbc_once(be, budget, opts, warm, tmp)
        wall = time.perf_counter() - t0
        if run.returncode is None:
            return stopped_by_clock(budget, f"cbc killed after {wall:.2f} s on a {budget.limit_s:.1f} s limit "
                                            f"(it did not stop on its own){note}", t0)
        if run.returncode == 0 and os.path.exists(run.solution):
            return run, note
        if not warm:  # CBC 2.10.3 crashes on some MIPSTART files: then retried without
            return no_solution(Status.ERROR, f"cbc failed (exit code {run.returncode}){note}", t0)
        note = "; cbc crashed with the MIPSTART warm start, retried without it"
    raise AssertionError("unreachable: the last attempt returns")


def run_cbc(be: PulpBackend, budget: TimeBudget, opts: CbcOptions, hinted: bool) -> SolveOutcome:
    """Solve with CBC within ``budget``; the temporary files are always removed."""
    prob = be.prob
    const = prob.objective.constant if prob.objective is not None else 0  # CBC drops it: add it back to the bound
    work = budget.work_left()
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
    spent, fired = cbc_work(text, budget)
    if work is not None:
        msg += f", {spent:g} of {work:g} work units" + (f" ({SAFETY_NET_NOTE})" if fired else "")
    objective = pulp.value(prob.objective) if has_sol else None
    msg += f", model objective {objective:g}" if has_sol else ", no solution found"
    wall = time.perf_counter() - t0

    def value(x: Any) -> float:
        return x if isinstance(x, (int, float)) else (x.varValue or 0.0)

    return SolveOutcome(status=status, value=value if has_sol else None, objective=objective, bound=bound,
                        message=f"{msg}, {wall:.2f} s", wall_s=wall, work=spent, safety_net=fired)


def cbc_work(log: str, budget: TimeBudget) -> tuple[float, bool]:
    """The work units a CBC run spent (its log's "Enumerated nodes", per
    :data:`CBC_NODES_PER_UNIT`) and whether, under a work limit, its time limit stopped
    it (the safety net); both charged to ``budget``."""
    m = re.search(r"Enumerated nodes:\s*(\d+)", log)
    spent = int(m.group(1)) / CBC_NODES_PER_UNIT if m else 0.0
    fired = budget.deterministic and re.search(r"Stopped on time|Result - Stopped on (iterations or )?time", log, re.I) is not None
    budget.charge(spent, fired)
    return spent, fired
