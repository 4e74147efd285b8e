"""HiGHS (highspy, no PuLP in between) as a :class:`~sensaopt.solvers.base.Backend`,
with its own small linear expressions, and one run function.

The model handed to HiGHS is the one PuLP's ``HiGHS`` interface handed it before:
only variables that appear in the objective or a constraint become columns, in order
of their names; rows in the order they were added; zero coefficients dropped; the
objective constant left out (added back to objective and bound here); binaries are
integer columns in [0, 1], ``int_var`` columns are continuous (their integrality is
implied in the exact model). So results are those of the earlier PuLP path.

Statuses: HiGHS's model status (``kOptimal`` → OPTIMAL, time/iteration/solution
limits and interrupts → TIME_LIMIT, ``kInfeasible`` → INFEASIBLE, else ERROR); a
claimed optimum without a primal solution is an ERROR. The bound is ``mip_dual_bound``.

Under a work limit (:mod:`sensaopt.solvers.budget`) one unit is
:data:`HIGHS_NODES_PER_UNIT` branch-and-bound nodes (``mip_max_nodes``; HiGHS's
``simplex_iteration_limit`` does not apply to the LPs of its MIP solver, so presolve,
the root LP and root cuts are not limited: they run to their end or to the safety net,
``time_limit``). HiGHS's MIP search is deterministic for given options and threads.

Where it runs (:func:`in_child`): a model of at least :data:`CHILD_MIN_NONZEROS`
constraint nonzeros is solved in a child process that sensaopt kills. In-process, HiGHS
looks at neither its time limit nor ``cancelSolve`` for long stretches inside large
models (presolve of 9–11 M nonzeros takes 27–50 s; the sub-MIPs of its root heuristics
ignore the interrupt: HiGHS issues #1501, #2226), and exact solves with a 60-s limit
ended up to 110 s (``models/measurements.md``, "Session 19"); the smallest model seen
to overrun had 331,000 nonzeros (Session 20). Smaller models stay in-process, where a
child's start (about 1 s at load 7.6: imports, job file, result) would be a large share
of their solve: the exact models of small instances, the small root LPs, and the
Chronus lease model's ~1,200 solves of ~0.04 s per simulation (which call
:func:`search_highs` directly). Both paths load the same arrays (:func:`model_arrays`,
:func:`~sensaopt.solvers.highs_run.loaded_highs`) with the same options and run them
alike (:mod:`sensaopt.solvers.highs_run`), so they give the same answers.

The child path (:mod:`sensaopt.solvers.highs_child`): the arrays, the options and the
seconds left go into a ``.npz`` file in a temporary folder; a
:class:`~sensaopt.solvers.child.GuardedChild` loads it, runs HiGHS and writes what the
run left into another. A child
still running :data:`~sensaopt.solvers.highs_child.HIGHS_GRACE_S` after the budget's
stop time (the whole call's deadline + ``OVERRUN_S``) is killed with its process group:
a MIP search then ends TIME_LIMIT without solution or bound (under a work limit: the
safety net), an LP without a bound. No child is started once the call's deadline has
passed. The child dies with sensaopt (Ctrl-C, SIGTERM, SIGKILL:
:mod:`sensaopt.solvers.child`), and its folder goes with it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sensaopt.result import Status
from sensaopt.solvers.base import MILP_LIMITS, SolveOutcome, SolverParams
from sensaopt.solvers.budget import MIN_SOLVE_S, SAFETY_NET_NOTE, TimeBudget
from sensaopt.solvers.child import no_solution, stopped_by_clock
from sensaopt.solvers.highs_child import run_child
from sensaopt.solvers.highs_run import HighsArrays, HighsEnd, end_of, loaded_highs, proof_holds, run_lp, run_search
from sensaopt.solvers.highs_run import configure as configure  # re-exported: the Chronus lease model's array path
from sensaopt.solvers.highs_run import new_highs as new_highs
from sensaopt.solvers.highs_run import safe_dual_bound as safe_dual_bound
from sensaopt.solvers.interrupt import thread_setting

Number = int | float
HIGHS_NODES_PER_UNIT = 100  # branch-and-bound nodes per work unit (wall time of a unit here: docs/reliability.md, section 6)
CHILD_MIN_NONZEROS = 200_000  # a model with this many constraint nonzeros or more is solved in a child process (module doc)


class HighsVar:
    """One model variable (a HiGHS column if it is used)."""

    __slots__ = ("index", "name", "lb", "ub", "integer")

    def __init__(self, index: int, name: str, lb: float, ub: float, integer: bool) -> None:
        self.index, self.name, self.lb, self.ub, self.integer = index, name, lb, ub, integer

    __hash__ = object.__hash__  # identity, hashed in C: variables are dict keys millions of times (``__eq__`` builds a constraint)

    def __repr__(self) -> str:
        return self.name

    def _expr(self) -> LinExpr:
        return LinExpr({self: 1}, 0)

    def __add__(self, o: Operand) -> LinExpr:
        return self._expr() + o

    __radd__ = __add__

    def __sub__(self, o: Operand) -> LinExpr:
        return self._expr() - o

    def __rsub__(self, o: Operand) -> LinExpr:
        return -self._expr() + o

    def __neg__(self) -> LinExpr:
        return LinExpr({self: -1}, 0)

    def __mul__(self, c: Number) -> LinExpr:
        return LinExpr({self: c}, 0)

    __rmul__ = __mul__

    def __le__(self, o: Operand) -> LinCons:
        return self._expr() <= o

    def __ge__(self, o: Operand) -> LinCons:
        return self._expr() >= o

    def __eq__(self, o: object) -> LinCons:  # type: ignore[override]
        return self._expr() == o


class LinExpr:
    """Σ coefficient · variable + constant (coefficients kept even when they cancel to 0,
    as PuLP did: such a variable is still a column)."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: dict[HighsVar, Number], const: Number) -> None:
        self.terms, self.const = terms, const

    def _merged(self, o: Operand, sign: int) -> LinExpr:
        terms = dict(self.terms)
        if isinstance(o, HighsVar):
            terms[o] = terms.get(o, 0) + sign
            return LinExpr(terms, self.const)
        if isinstance(o, LinExpr):
            for v, c in o.terms.items():
                terms[v] = terms.get(v, 0) + sign * c
            return LinExpr(terms, self.const + sign * o.const)
        return LinExpr(terms, self.const + sign * o)

    def __add__(self, o: Operand) -> LinExpr:
        return self._merged(o, 1)

    __radd__ = __add__

    def __sub__(self, o: Operand) -> LinExpr:
        return self._merged(o, -1)

    def __rsub__(self, o: Operand) -> LinExpr:
        return (-self)._merged(o, 1)

    def __neg__(self) -> LinExpr:
        return LinExpr({v: -c for v, c in self.terms.items()}, -self.const)

    def __mul__(self, k: Number) -> LinExpr:
        return LinExpr({v: k * c for v, c in self.terms.items()}, k * self.const)

    __rmul__ = __mul__

    def __le__(self, o: Operand) -> LinCons:
        d = self - o
        return LinCons(d.terms, None, -d.const)

    def __ge__(self, o: Operand) -> LinCons:
        d = self - o
        return LinCons(d.terms, -d.const, None)

    def __eq__(self, o: object) -> LinCons:  # type: ignore[override]
        d = self - o  # type: ignore[operator]
        return LinCons(d.terms, -d.const, -d.const)

    __hash__ = None  # type: ignore[assignment]


Operand = HighsVar | LinExpr | int | float


@dataclass(frozen=True)
class LinCons:
    """``lo ≤ Σ terms ≤ hi`` (None: no limit on that side)."""

    terms: dict[HighsVar, Number]
    lo: float | None
    hi: float | None


class HighsBackend:
    """The backend interface for HiGHS."""

    name = "highs"
    integer_only = False  # HiGHS takes fractional objective coefficients
    limits = MILP_LIMITS

    def __init__(self, model_name: str = "") -> None:
        self.variables: list[HighsVar] = []
        self.rows: list[LinCons] = []
        self.objective: LinExpr = LinExpr({}, 0)
        self.start: dict[HighsVar, float] = {}

    def bool_var(self, name: str) -> HighsVar:
        v = HighsVar(len(self.variables), name, 0.0, 1.0, True)
        self.variables.append(v)
        return v

    def int_var(self, lb: int, ub: int, name: str) -> HighsVar:
        v = HighsVar(len(self.variables), name, float(lb), float(ub), False)
        self.variables.append(v)
        return v

    def sum(self, terms: Iterable[Operand]) -> LinExpr:
        out: dict[HighsVar, Number] = {}
        const: Number = 0
        get = out.get
        for t in terms:
            if isinstance(t, HighsVar):
                out[t] = get(t, 0) + 1
            elif isinstance(t, LinExpr):
                for v, c in t.terms.items():
                    out[v] = get(v, 0) + c
                const += t.const
            else:
                const += t
        return LinExpr(out, const)

    def add(self, constraint: LinCons, family: str) -> None:
        self.rows.append(constraint)

    def minimize(self, expr: Operand) -> None:
        self.objective = expr if isinstance(expr, LinExpr) else self.sum([expr])

    def hint(self, values: dict) -> None:
        """Start values (var -> value), replacing earlier ones; solver round-off is
        cleaned: values within 1e-6 of an integer are rounded, all are clamped to the
        variable's bounds."""
        start = {}
        for var, val in values.items():
            r = round(val)
            val = r if abs(val - r) <= 1e-6 else val
            start[var] = min(max(val, var.lb), var.ub)
        self.start = start

    def columns(self) -> list[HighsVar]:
        """The variables HiGHS sees, in column order (by name)."""
        used: dict[HighsVar, None] = dict.fromkeys(self.objective.terms)
        for row in self.rows:
            used.update(dict.fromkeys(row.terms))
        return sorted(used, key=lambda v: v.name)

    def solve(self, budget: TimeBudget, params: SolverParams) -> SolveOutcome:
        """Solve within ``budget``, from the start values if :meth:`hint` gave some."""
        return run_highs(self, budget, params, hinted=bool(self.start))


def model_arrays(be: HighsBackend, cols: list[HighsVar], hinted: bool, relaxed: bool = False) -> HighsArrays:
    """``be``'s model on the columns ``cols`` as arrays (zero coefficients dropped);
    ``hinted``: with its start values (a column without one starts at its lower bound);
    ``relaxed``: its LP relaxation (no column integral)."""
    inf = float("inf")  # highspy.kHighsInf
    pos = {v: i for i, v in enumerate(cols)}
    obj = be.objective.terms
    starts: list[int] = []
    index: list[int] = []
    value: list[float] = []
    lo: list[float] = []
    hi: list[float] = []
    for row in be.rows:
        starts.append(len(index))
        for v, c in row.terms.items():
            if c != 0:
                index.append(pos[v])
                value.append(float(c))
        lo.append(-inf if row.lo is None else float(row.lo))
        hi.append(inf if row.hi is None else float(row.hi))
    start = np.array([float(be.start.get(v, v.lb)) for v in cols]) if hinted and be.start else None
    return HighsArrays(cost=np.array([float(obj.get(v, 0.0)) for v in cols], dtype=float),
                       col_lower=np.array([v.lb for v in cols], dtype=float), col_upper=np.array([v.ub for v in cols], dtype=float),
                       integers=np.array([] if relaxed else [i for i, v in enumerate(cols) if v.integer], dtype=np.int32),
                       row_lower=np.array(lo, dtype=float), row_upper=np.array(hi, dtype=float), start=np.array(starts, dtype=np.int32),
                       index=np.array(index, dtype=np.int32), value=np.array(value, dtype=float), start_values=start)


def _in_process(a: HighsArrays, params: SolverParams, budget: TimeBudget) -> Any:
    """A ``highspy.Highs`` in this process holding the model ``a``, with the time ``budget``
    has left as its time limit (building took time: HiGHS gets what is left)."""
    h = loaded_highs(a, params)
    h.setOptionValue("time_limit", budget.left(MIN_SOLVE_S))
    return h


def _highs_model(be: HighsBackend, cols: list[HighsVar], params: SolverParams, budget: TimeBudget,
                 hinted: bool, relaxed: bool = False) -> tuple[Any, dict[HighsVar, int]]:
    """A configured ``highspy.Highs`` holding ``be``'s model (columns ``cols``), and each column's
    position; ``relaxed``: its LP relaxation (no column integral)."""
    return _in_process(model_arrays(be, cols, hinted, relaxed), params, budget), {v: i for i, v in enumerate(cols)}


@dataclass(frozen=True)
class HighsSearch:
    """What one HiGHS MIP search left: the common status, whether HiGHS holds a feasible
    solution, its dual bound (without any objective constant; None if infeasible or
    unbounded), a one-line message, the work charged, whether the work limit's safety net
    fired, and the objective HiGHS reports for its solution (no constant; NaN: unread)."""

    status: Status
    has_solution: bool
    dual_bound: float | None
    message: str
    work: float = 0.0
    safety_net: bool = False
    reported: float = float("nan")

    def of_answer(self, cost: float) -> HighsSearch:
        """This search, its OPTIMAL kept only when HiGHS's reported objective is ``cost``,
        the cost of the solution it returned (no constant; :func:`~sensaopt.solvers.highs_run.proof_holds`).
        Otherwise TIME_LIMIT: the answer is a valid solution, not a proven one, and the
        bound is kept no higher than its cost."""
        if self.status != Status.OPTIMAL or proof_holds(self.reported, cost):
            return self
        bound = cost if self.dual_bound is None else min(self.dual_bound, cost)
        note = f", OPTIMAL not counted: HiGHS reported {self.reported:g} for an answer costing {cost:g}"
        return replace(self, status=Status.TIME_LIMIT, dual_bound=bound, message=self.message + note)


def limit_from_now(h: Any, seconds: float) -> None:
    """Let ``h``'s next run take at most ``seconds`` more: HiGHS compares its
    ``time_limit`` with the run time summed over every run of the object (HiGHS issue
    #1477), so a re-solved model needs the time already used added."""
    h.setOptionValue("time_limit", h.getRunTime() + max(seconds, 0.01))


def mip_limit(h: Any, seconds: float) -> None:
    """Let ``h``'s next run, a MIP, take at most ``seconds``. HiGHS 1.16's MIP solver
    compares ``time_limit`` with the time of the run itself, not with the run time summed
    over the object's runs that :func:`limit_from_now` adds (measured: a restricted master
    MIP after column generation, given 3 s by :func:`limit_from_now` three times in a row,
    ran 3.3, 6.5 and 13.1 s)."""
    h.setOptionValue("time_limit", max(seconds, 0.01))


def node_limit(work: float) -> int:
    """``mip_max_nodes`` for ``work`` work units (module doc)."""
    return max(1, int(work * HIGHS_NODES_PER_UNIT))


TIME_LIMITS = ("kTimeLimit", "kInterrupt", "kIterationLimit", "kSolutionLimit")  # model statuses of a search stopped early


def searched(end: HighsEnd, budget: TimeBudget, work: float | None) -> HighsSearch:
    """``end`` in the common terms: OPTIMAL only when HiGHS proved it and holds a feasible
    solution; time/iteration/solution limits and interrupts TIME_LIMIT. ``work``: the
    work units the search was given (None: no work limit); the nodes done are charged to
    ``budget``."""
    if end.status == "kOptimal":
        status = Status.OPTIMAL if end.has_solution else Status.ERROR
    elif end.status == "kInfeasible":
        status = Status.INFEASIBLE
    elif end.status in TIME_LIMITS:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    bound = end.dual_bound if end.status != "kInfeasible" and abs(end.dual_bound) < 1e30 else None
    msg = f"highs {end.text}, gap {end.gap:.3g}, {end.nodes} nodes"
    spent = max(end.nodes, 0) / HIGHS_NODES_PER_UNIT
    fired = work is not None and end.status in ("kTimeLimit", "kInterrupt")
    budget.charge(spent, fired)
    if work is not None:
        msg += f", {spent:g} of {work:g} work units" + (f" ({SAFETY_NET_NOTE})" if fired else "")
    return HighsSearch(status, end.has_solution, bound, msg, spent, fired, end.reported)


def search_highs(h: Any, budget: TimeBudget) -> HighsSearch:
    """Run the MIP search of the prepared ``h`` (a ``highspy.Highs``) until it ends or
    ``budget``'s stop time (:func:`run_search`), and map its end to the common Status
    (:func:`searched`). Under ``budget``'s work limit the search stops after the nodes it
    allows (module doc), and the nodes done are charged to it. Shared by
    :class:`HighsBackend` and the Chronus lease model's array path."""
    work = budget.work_left()
    if work is not None:
        h.setOptionValue("mip_max_nodes", node_limit(work))
    run_search(h, budget.stop_at())
    return searched(end_of(h), budget, work)


_thread = threading.local()  # .isolated: this thread's HiGHS runs all go to child processes (isolated_runs)


def isolated_runs() -> contextlib.AbstractContextManager[None]:
    """Within the block, in this thread, every HiGHS run (search or LP) whose caller does
    not say where is solved in a child process: for a thread that runs HiGHS while another
    thread may run it in-process (one thread scheduler per process, reset by each run:
    :func:`~sensaopt.solvers.highs_run.new_highs`)."""
    return thread_setting(_thread, "isolated", True)


def in_child(a: HighsArrays, isolated: bool | None) -> bool:
    """Whether the model ``a`` is solved in a child process: ``isolated`` when given, else
    in an :func:`isolated_runs` block, else when it has at least
    :data:`CHILD_MIN_NONZEROS` nonzeros (module doc)."""
    if isolated is None:
        isolated = getattr(_thread, "isolated", None)
    return a.nonzeros >= CHILD_MIN_NONZEROS if isolated is None else isolated


def lp_bound(be: HighsBackend, budget: TimeBudget, params: SolverParams, isolated: bool | None = None) -> float | None:
    """The optimum of ``be``'s LP relaxation (every integrality dropped), in the model's own
    units with the objective constant: a lower bound of the MIP's optimum. None when the
    LP does not end optimal within ``budget``'s time (a work limit does not apply: the LP
    has no nodes, and it ends in a bounded number of iterations).

    Args:
        be: the built model.
        budget: the time it may take (its stop time).
        params: threads, seed and raw options (as for the MIP).
        isolated: solve it in a child process (None: by size, :func:`in_child`).

    Returns:
        The LP optimum (model units), or None."""
    arrays = model_arrays(be, be.columns(), False, relaxed=True)
    if in_child(arrays, isolated):
        safe = _lp_in_child(arrays, params, budget)
    else:
        safe = run_lp(_in_process(arrays, params, budget), budget.stop_at())
    return None if safe is None else safe + be.objective.const


def _search_in_child(a: HighsArrays, params: SolverParams, budget: TimeBudget) -> tuple[HighsSearch, np.ndarray | None] | SolveOutcome:
    """The MIP search of the model ``a`` in a child within ``budget``: the search's end in
    common terms (:func:`searched`, nodes charged to ``budget``)
    and the column values of its solution (None without one); or the outcome without a
    solution when the child was killed, not started or failed."""
    t0 = time.perf_counter()
    work = budget.work_left()
    got = run_child(a, params, budget, "mip", None if work is None else node_limit(work))
    if got.meta is None:
        if got.killed:
            return stopped_by_clock(budget, got.note, t0)
        return no_solution(Status.ERROR, got.note, t0)
    run = searched(HighsEnd(**got.meta["end"]), budget, work)
    return run, (got.col if run.has_solution else None)


def _lp_in_child(a: HighsArrays, params: SolverParams, budget: TimeBudget) -> float | None:
    """The safe dual bound of the LP ``a`` solved in a child within ``budget``
    (:func:`~sensaopt.solvers.highs_run.run_lp`); None when it did not end optimal, was
    killed or failed."""
    got = run_child(a, params, budget, "lp", None)
    return None if got.meta is None else got.meta["lp_bound"]


def run_highs(be: HighsBackend, budget: TimeBudget, params: SolverParams, hinted: bool = False,
              isolated: bool | None = None) -> SolveOutcome:
    """Solve ``be``'s model within ``budget`` (``hinted``: pass the start values;
    ``isolated``: in a child process, None: by size, :func:`in_child`)."""
    t0 = time.perf_counter()
    cols = be.columns()
    arrays = model_arrays(be, cols, hinted)
    if in_child(arrays, isolated):
        got = _search_in_child(arrays, params, budget)
        if isinstance(got, SolveOutcome):  # killed, not run or failed: no solution
            return got
        run, col = got
    else:
        h = _in_process(arrays, params, budget)
        run = search_highs(h, budget)
        col = np.asarray(h.getSolution().col_value, dtype=float) if run.has_solution else None
    return _outcome(be, cols, run, col, t0)


def _outcome(be: HighsBackend, cols: list[HighsVar], run: HighsSearch, col: np.ndarray | None, t0: float) -> SolveOutcome:
    """The outcome of a search of ``be``'s model (``col``: the column values of its
    solution, None without one), started at ``t0`` (a :func:`time.perf_counter` value)."""
    msg = run.message
    const = be.objective.const
    bound = None if run.dual_bound is None else run.dual_bound + const
    value = objective = None
    if col is not None:
        pos = {v: i for i, v in enumerate(cols)}
        vals = col.tolist()

        def value(x: Any) -> float:
            if isinstance(x, (int, float)):
                return x
            i = pos.get(x)
            return vals[i] if i is not None else 0.0

        cost = sum(c * vals[pos[v]] for v, c in be.objective.terms.items())
        run = run.of_answer(cost)
        msg = run.message
        objective = const + cost
        msg += f", model objective {objective:g}"
    else:
        msg += ", no solution found"
    wall = time.perf_counter() - t0
    return SolveOutcome(status=run.status, value=value, objective=objective, bound=bound, message=f"{msg}, {wall:.2f} s", wall_s=wall,
                        work=run.work, safety_net=run.safety_net)


