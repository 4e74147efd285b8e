"""MILP backend (PuLP) of the time-indexed model: HiGHS (default, ``pulp.HiGHS`` on
highspy) or CBC (``backend="cbc"``, ``pulp.PULP_CBC_CMD``).

Same integer data as CP-SAT (:mod:`sensaopt.exact.data`); placement, ran-before,
restart, done and deadline indicators are binaries, progress/cumulative work and
lost units are continuous (their integrality is implied or irrelevant).

Warm start: HiGHS gets the SensaScale schedule through ``Highs.setSolution`` (a
subclass of ``pulp.HiGHS``); CBC through PuLP's ``warmStart=True`` (initial values
written as a MIPSTART file). Both are recorded in ``Result.params["hinted"]``.

Statuses: PuLP maps HiGHS/CBC time limits to LpStatus "Optimal", so the status is
read from HiGHS's model status (``kOptimal`` → OPTIMAL, ``kTimeLimit`` with a
solution → TIME_LIMIT, …) and, for CBC, from ``prob.sol_status``
(``LpSolutionOptimal`` only → OPTIMAL). Bounds: HiGHS ``mip_dual_bound``; CBC's
"Lower bound" line of its log (the objective itself when proven optimal).
"""

from __future__ import annotations

import os
import re
import tempfile
import time

import pulp

from sensaopt.errors import SensaoptError
from sensaopt.exact.builder import Strength, Vars, build, objective_offset
from sensaopt.exact.common import (
    solve_exact,
    DEFAULT_HORIZON_SLACK,
    DEFAULT_MAX_VARS,
    DEFAULT_WORK_SCALE,
    prepare,
)
from sensaopt.exact.data import ModelData
from sensaopt.exact.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.instance import Instance
from sensaopt.quiet import quiet_stdout
from sensaopt.result import Result, Status

BACKENDS = ("highs", "cbc")


class PulpBackend:
    """The :class:`sensaopt.exact.builder.Backend` interface on a ``pulp.LpProblem``."""

    def __init__(self, name: str = "sensaopt") -> None:
        self.prob = pulp.LpProblem(re.sub(r"[^A-Za-z0-9_]", "_", name), pulp.LpMinimize)
        self._n = 0

    def bool_var(self, name: str):
        return pulp.LpVariable(name, cat=pulp.LpBinary)

    def int_var(self, lb: int, ub: int, name: str):
        return pulp.LpVariable(name, lowBound=lb, upBound=ub, cat=pulp.LpContinuous)

    def sum(self, terms):
        return pulp.lpSum(terms)

    def add(self, constraint, family: str) -> None:
        self._n += 1
        self.prob += constraint, f"{family}_{self._n}"

    def minimize(self, expr) -> None:
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


def build_milp(data: ModelData, strength: Strength = Strength(), deadline: float | None = None) -> tuple[PulpBackend, Vars]:
    be = PulpBackend(data.instance.name)
    v = build(data, be, strength, deadline)
    return be, v


class _HiGHSWarm(pulp.HiGHS):
    """pulp.HiGHS that passes the variables' initial values to HiGHS as a start."""

    def __init__(self, *a, warm: bool = False, deadline: float | None = None, **kw):
        super().__init__(*a, **kw)
        self.warm = warm
        self.deadline = deadline  # time.perf_counter() value: the time limit counts from the call

    def createAndConfigureSolver(self, lp):
        if self.msg:
            return super().createAndConfigureSolver(lp)
        with quiet_stdout():  # highspy's banner would corrupt `--json` output
            return super().createAndConfigureSolver(lp)

    def callSolver(self, lp):
        import highspy

        # HiGHS keeps one global thread scheduler per process; a run asking for another
        # thread count than the first one fails with kError unless it is reset
        highspy.Highs.resetGlobalScheduler(True)
        if self.warm:
            cols = sorted(lp.variables(), key=lambda x: x.index)
            sol = highspy.HighsSolution()
            sol.col_value = [float(c.varValue) if c.varValue is not None else float(c.lowBound or 0.0) for c in cols]
            sol.value_valid = True
            lp.solverModel.setSolution(sol)
        if self.deadline is not None:  # passing the model to HiGHS took time: HiGHS gets what is left
            lp.solverModel.setOptionValue("time_limit", max(self.deadline - time.perf_counter(), 0.05))
        lp.solverModel.run()


CBC_GRACE_S = 2.0  # seconds CBC gets past the deadline to write its solution before it is killed


class _CbcWallClock(pulp.PULP_CBC_CMD):
    """PuLP's CBC command with a wall-clock deadline. CBC checks ``-sec`` only between
    its own steps: on medium models its preprocessing and root LP ran for minutes past a
    60 s limit. So ``-sec`` is set to the time left when CBC starts (PuLP's MPS writing
    comes first), and the process is killed ``CBC_GRACE_S`` after the deadline
    (``killed`` is then True and the caller reports TIME_LIMIT without a CBC solution)."""

    def __init__(self, *a, deadline: float, **kw):
        super().__init__(*a, **kw)
        self.deadline = deadline
        self.killed = False

    def solve_CBC(self, lp, use_mps=True):
        import subprocess
        import threading

        from pulp.apis import coin_api

        outer = self

        class _Popen(subprocess.Popen):
            def __init__(self, args, *pa, **pk):
                args = list(args)
                if "-sec" in args:
                    i = args.index("-sec") + 1
                    args[i] = f"{max(outer.deadline - time.perf_counter(), 0.05):.3f}"
                super().__init__(args, *pa, **pk)
                wait = max(outer.deadline + CBC_GRACE_S - time.perf_counter(), 0.0)
                self._guard = threading.Timer(wait, self._stop)
                self._guard.daemon = True
                self._guard.start()

            def _stop(self):
                if self.poll() is None:
                    outer.killed = True
                    self.kill()

            def wait(self, *wa, **wk):
                try:
                    return super().wait(*wa, **wk)
                finally:
                    self._guard.cancel()

        class _Subprocess:  # the subprocess module as coin_api sees it, with the guarded Popen
            Popen = _Popen

            def __getattr__(self, name):
                return getattr(subprocess, name)

        saved = coin_api.subprocess
        coin_api.subprocess = _Subprocess()
        with tempfile.TemporaryDirectory(prefix="sensaopt-cbc-") as tmp:
            self.tmpDir = tmp  # PuLP leaves its MPS/solution files behind when CBC fails
            try:
                return super().solve_CBC(lp, use_mps)
            finally:
                coin_api.subprocess = saved


def run_milp(be: PulpBackend, v: Vars, backend: str, time_limit: float, workers: int, seed: int, warm: bool, log: bool = False):
    """Solve; returns (Status, value function or None, scaled bound or None, message)."""
    prob = be.prob
    # HiGHS and CBC drop the objective constant: add it back to their bounds
    const = prob.objective.constant if prob.objective is not None else 0
    t0 = time.perf_counter()
    if backend == "highs":
        import highspy

        # the scaled objective is integral: absolute gap < 1 proves optimality; no relative gap
        solver = _HiGHSWarm(msg=log, timeLimit=float(time_limit), threads=int(workers), gapRel=0.0, gapAbs=0.5,
                            random_seed=int(seed), warm=warm, deadline=t0 + float(time_limit))
        prob.solve(solver)
        h = prob.solverModel
        ms = h.getModelStatus()
        info = h.getInfo()
        S = highspy.HighsModelStatus
        has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
        if ms == S.kOptimal:
            status = Status.OPTIMAL
        elif ms == S.kInfeasible:
            status = Status.INFEASIBLE
        elif ms in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit):
            status = Status.TIME_LIMIT
        else:
            status = Status.ERROR
        bound = info.mip_dual_bound + const if ms not in (S.kInfeasible,) and abs(info.mip_dual_bound) < 1e30 else None
        msg = f"highs {h.modelStatusToString(ms)}, gap {info.mip_gap:.3g}, {info.mip_node_count} nodes"
    elif backend == "cbc":
        note = ""
        for attempt_warm in ((True, False) if warm else (False,)):
            fd, logp = tempfile.mkstemp(suffix=".log")
            os.close(fd)
            left = max(float(time_limit) - (time.perf_counter() - t0), 0.1)
            solver = _CbcWallClock(msg=False, timeLimit=left, threads=int(workers), warmStart=attempt_warm,
                                   gapRel=0.0, gapAbs=0.5, deadline=t0 + float(time_limit),
                                   options=[f"randomSeed {int(seed) + 1}", f"randomCbcSeed {int(seed) + 1}"], logPath=logp)
            try:
                prob.solve(solver)
                break
            except pulp.PulpSolverError as e:  # CBC 2.10.3 crashes on some MIPSTART files
                os.unlink(logp)
                if solver.killed:
                    wall = time.perf_counter() - t0
                    return (Status.TIME_LIMIT, None, None,
                            f"cbc killed {CBC_GRACE_S:g} s after the {time_limit:.1f} s limit (it did not stop on its own){note}, {wall:.2f} s",
                            None)
                if not attempt_warm:
                    return Status.ERROR, None, None, f"cbc failed: {e}".splitlines()[0] + note, None
                note = "; cbc crashed with the MIPSTART warm start, retried without it"
        text = open(logp).read()
        os.unlink(logp)
        ss = prob.sol_status
        has_sol = ss in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
        stopped = re.search(r"Result - Stopped|Stopped on time|time limit", text, re.I) is not None
        if ss == pulp.LpSolutionOptimal and prob.status == pulp.LpStatusOptimal and not stopped:
            status = Status.OPTIMAL
        elif prob.status == pulp.LpStatusInfeasible and not stopped and re.search(r"infeasible", text, re.I):
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
        msg = f"cbc {pulp.LpStatus[prob.status]}/sol_status {ss}{note}"
    else:
        raise SensaoptError(f"unknown MILP backend {backend!r}; known: {', '.join(BACKENDS)}")
    wall = time.perf_counter() - t0
    if status == Status.OPTIMAL and not has_sol:
        status = Status.ERROR
    value = (lambda x: x.varValue or 0.0) if has_sol else None
    if has_sol:
        msg += f", model objective {pulp.value(prob.objective):g}"
    else:
        msg += ", no solution found"
    return status, value, bound, f"{msg}, {wall:.2f} s", (pulp.value(prob.objective) if has_sol else None)


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
) -> Result:
    """Exact offline optimum with a MILP solver (``backend`` "highs" or "cbc")."""
    if backend not in BACKENDS:
        raise SensaoptError(f"unknown MILP backend {backend!r}; known: {', '.join(BACKENDS)}")
    def run(be, v, left, hinted):
        return run_milp(be, v, backend, left, workers, seed, hinted, log)

    return solve_exact(f"milp:{backend}", instance, build_milp, run, time_limit=time_limit, workers=workers, seed=seed,
                       warm_start=warm_start, horizon=horizon, horizon_slack=horizon_slack, strength=strength,
                       work_scale=work_scale, max_vars=max_vars, lexicographic=lexicographic, phase1_share=phase1_share)


def export_model(instance: Instance, path: str, fmt: str = "mps", horizon: int | None = None,
                 horizon_slack: int = DEFAULT_HORIZON_SLACK, max_vars: int = DEFAULT_MAX_VARS) -> dict:
    """Write the offline MILP as MPS or LP (for SCIP, Gurobi, ...). Returns size info.
    The file's objective is the scaled model objective; see ``params`` for the scaling."""
    data, _heur, _hint = prepare(instance, horizon, horizon_slack, False, DEFAULT_WORK_SCALE, max_vars)
    be, v = build_milp(data)
    if fmt == "mps":
        be.prob.writeMPS(path)
    elif fmt == "lp":
        be.prob.writeLP(path)
    else:
        raise SensaoptError(f"unknown export format {fmt!r}; use mps or lp")
    scale = max(data.n, 1) * data.obj_scale
    # MPS/LP files drop the objective constant: add it back through the offset
    return {"horizon": data.H, "variables": len(be.prob.variables()), "constraints": len(be.prob.constraints),
            "objective_scale": scale, "objective_offset_minutes": objective_offset(data) + v.objective_const / scale}
