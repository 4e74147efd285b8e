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
constraint nonzeros is solved in a child process that is killed when it outlives the
budget (:mod:`sensaopt.solvers.highs_child`): on the exact pipeline's long-horizon
models in-process HiGHS ignored its time limit and ``cancelSolve`` for up to 50 s.
Smaller models stay in-process, where starting a child (about 0.6 s of imports) would
cost more than HiGHS ever overran: the exact models of small instances, and the
Chronus lease model's ~1,200 solves of ~0.04 s per simulation (which call
:func:`search_highs` directly). Both paths load the same arrays (:func:`model_arrays`,
:func:`loaded_highs`) with the same options, so they give the same answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sensaopt.errors import SensaoptError
from sensaopt.quiet import quiet_stdout
from sensaopt.result import Status
from sensaopt.solvers.base import MILP_LIMITS, SolveOutcome, SolverParams
from sensaopt.solvers.budget import MIN_SOLVE_S, SAFETY_NET_NOTE, TimeBudget
from sensaopt.solvers.interrupt import run_stoppable

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


def configure(h: Any, params: SolverParams) -> None:
    """``params`` on a ``highspy.Highs``: output, threads, seed, then the raw options."""
    if not params.log:
        h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(params.workers))
    h.setOptionValue("random_seed", int(params.seed))
    import highspy

    for key, val in params.extra.items():
        if h.setOptionValue(key, val) == highspy.HighsStatus.kError:
            raise SensaoptError(f"HiGHS refused the option {key}={val!r} (unknown name or a value of the wrong type)")


def new_highs() -> Any:
    """An empty ``highspy.Highs``, quiet, with the process's thread scheduler reset."""
    import highspy

    with quiet_stdout():  # highspy prints its banner from C++ on construction
        h = highspy.Highs()
    # one global thread scheduler per process: a run with another thread count fails unless it is reset
    highspy.Highs.resetGlobalScheduler(True)
    return h


@dataclass(frozen=True)
class HighsArrays:
    """A model as HiGHS takes it: the columns' costs, bounds and integral positions, the
    rows' bounds and coefficients in CSR form (``start``, ``index``, ``value``), and the
    columns' start values (None: no start). Built once by :func:`model_arrays`; loaded
    in-process or in a child process (:mod:`sensaopt.solvers.highs_child`) alike."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integers: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    start: np.ndarray
    index: np.ndarray
    value: np.ndarray
    start_values: np.ndarray | None = None

    @property
    def nonzeros(self) -> int:
        """The constraint matrix's nonzeros."""
        return len(self.value)


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


def loaded_highs(a: HighsArrays, params: SolverParams) -> Any:
    """A new ``highspy.Highs`` configured with ``params`` (:func:`configure`) holding the
    model ``a`` (and its start values, if any); no time limit set yet."""
    import highspy

    h = new_highs()
    configure(h, params)
    n = len(a.cost)
    h.addCols(n, a.cost, a.col_lower, a.col_upper, 0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    if len(a.integers):
        h.changeColsIntegrality(len(a.integers), a.integers, np.array([highspy.HighsVarType.kInteger] * len(a.integers)))
    if len(a.row_lower):
        h.addRows(len(a.row_lower), a.row_lower, a.row_upper, len(a.index), a.start, a.index, a.value)
    if a.start_values is not None:
        sol = highspy.HighsSolution()
        sol.col_value = a.start_values.tolist()
        sol.value_valid = True
        h.setSolution(sol)
    return h


def _highs_model(be: HighsBackend, cols: list[HighsVar], params: SolverParams, budget: TimeBudget,
                 hinted: bool, relaxed: bool = False) -> tuple[Any, dict[HighsVar, int]]:
    """A configured ``highspy.Highs`` holding ``be``'s model (columns ``cols``), and each column's
    position; ``relaxed``: its LP relaxation (no column integral)."""
    h = loaded_highs(model_arrays(be, cols, hinted, relaxed), params)
    h.setOptionValue("time_limit", budget.left(MIN_SOLVE_S))  # building took time: HiGHS gets what is left
    return h, {v: i for i, v in enumerate(cols)}


@dataclass(frozen=True)
class HighsSearch:
    """What one HiGHS MIP search left: the common status, whether HiGHS holds a feasible
    solution, its dual bound (without any objective constant; None if infeasible or
    unbounded) and a one-line message."""

    status: Status
    has_solution: bool
    dual_bound: float | None
    message: str
    work: float = 0.0
    safety_net: bool = False


def limit_from_now(h: Any, seconds: float) -> None:
    """Let ``h``'s next run take at most ``seconds`` more: HiGHS compares its
    ``time_limit`` with the run time summed over every run of the object (HiGHS issue
    #1477), so a re-solved model needs the time already used added."""
    h.setOptionValue("time_limit", h.getRunTime() + max(seconds, 0.01))


def stopper(h: Any) -> Callable[[], None]:
    """What stops ``h``'s run from outside (:func:`run_stoppable`): cancelSolve, and a time
    limit of 0, since the interrupt callback is not reached in every part of a solve."""
    def stop() -> None:
        h.cancelSolve()
        h.setOptionValue("time_limit", 0.0)
    return stop


@dataclass(frozen=True)
class HighsEnd:
    """What a HiGHS run left, as read from it: the model status (its enum name, e.g.
    ``kOptimal``, and HiGHS's text), whether it holds a feasible primal solution,
    ``mip_dual_bound`` (without any objective constant), ``mip_gap`` and the nodes done."""

    status: str
    text: str
    has_solution: bool
    dual_bound: float
    gap: float
    nodes: int


def end_of(h: Any) -> HighsEnd:
    """What the run of ``h`` (a ``highspy.Highs``) left."""
    import highspy

    ms = h.getModelStatus()
    info = h.getInfo()
    return HighsEnd(ms.name, h.modelStatusToString(ms), info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible,
                    float(info.mip_dual_bound), float(info.mip_gap), int(info.mip_node_count))


def node_limit(work: float) -> int:
    """``mip_max_nodes`` for ``work`` work units (module doc)."""
    return max(1, int(work * HIGHS_NODES_PER_UNIT))


def run_search(h: Any, stop_at: float) -> None:
    """Run the prepared ``h`` until it ends or, at ``stop_at`` (a :func:`time.perf_counter`
    value), is stopped from outside (cancelSolve and time limit 0; Ctrl-C too)."""
    import highspy

    h.HandleUserInterrupt = True  # cancelSolve (on Ctrl-C) interrupts the search

    def search() -> None:
        h.run()
        highspy.Highs.resetThreadScheduler(False)  # as highspy's own threaded solve does

    run_stoppable(search, stopper(h), stop_at)


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
    return HighsSearch(status, end.has_solution, bound, msg, spent, fired)


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


def in_child(a: HighsArrays, isolated: bool | None) -> bool:
    """Whether the model ``a`` is solved in a child process: ``isolated`` when given, else
    when it has at least :data:`CHILD_MIN_NONZEROS` nonzeros (module doc)."""
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
        from sensaopt.solvers.highs_child import lp_in_child

        safe = lp_in_child(arrays, params, budget)
    else:
        h = loaded_highs(arrays, params)
        h.setOptionValue("time_limit", budget.left(MIN_SOLVE_S))
        safe = run_lp(h, budget.stop_at())
    return None if safe is None else safe + be.objective.const


def run_lp(h: Any, stop_at: float) -> float | None:
    """Run the LP loaded in ``h`` until it ends or is stopped from outside at ``stop_at``
    (a :func:`time.perf_counter` value): its safe dual bound (:func:`safe_dual_bound`)
    when it ends optimal, else None."""
    import highspy

    h.HandleUserInterrupt = True
    run_stoppable(h.run, stopper(h), stop_at)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return safe_dual_bound(h)


def safe_dual_bound(h: Any) -> float | None:
    """A lower bound of the LP loaded in ``h`` (minimisation, objective offset excluded)
    from its row duals alone, valid whatever their accuracy (Neumaier & Shcherbina's
    safe bound): for any y, ``c·x = y·(Ax) + (c − Aᵀy)·x``, and each term is bounded
    below over the row and column bounds. A dual whose needed row bound is infinite is
    taken as 0; a reduced cost whose needed column bound is infinite gives None. An
    interior-point solution without crossover, or a simplex one within tolerances, may
    have an objective a little above the LP optimum; this bound never is (up to the
    float error of the sums).

    Args:
        h: a ``highspy.Highs`` after an optimal LP solve.

    Returns:
        The bound (the LP's units, with the offset the model holds), or None."""
    import highspy
    import scipy.sparse as sp

    lp = h.getLp()
    a = lp.a_matrix_
    n, m = lp.num_col_, lp.num_row_
    kind = sp.csr_matrix if a.format_ == highspy.MatrixFormat.kRowwise else sp.csc_matrix
    A = kind((np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_)), shape=(m, n))
    y = np.asarray(h.getSolution().row_dual, dtype=float)
    lo, up = np.asarray(lp.row_lower_, dtype=float), np.asarray(lp.row_upper_, dtype=float)
    y = np.where((y > 0) & ~np.isfinite(lo), 0.0, y)
    y = np.where((y < 0) & ~np.isfinite(up), 0.0, y)
    rows = np.where(y > 0, y * np.where(np.isfinite(lo), lo, 0.0), y * np.where(np.isfinite(up), up, 0.0))
    d = np.asarray(lp.col_cost_, dtype=float) - A.T @ y
    cl, cu = np.asarray(lp.col_lower_, dtype=float), np.asarray(lp.col_upper_, dtype=float)
    if np.any((d > 0) & ~np.isfinite(cl)) or np.any((d < 0) & ~np.isfinite(cu)):
        return None
    cols = np.where(d > 0, d * np.where(np.isfinite(cl), cl, 0.0), np.where(d < 0, d * np.where(np.isfinite(cu), cu, 0.0), 0.0))
    return float(rows.sum() + cols.sum() + lp.offset_)


def run_highs(be: HighsBackend, budget: TimeBudget, params: SolverParams, hinted: bool = False,
              isolated: bool | None = None) -> SolveOutcome:
    """Solve ``be``'s model within ``budget`` (``hinted``: pass the start values;
    ``isolated``: in a child process, None: by size, :func:`in_child`)."""
    t0 = time.perf_counter()
    cols = be.columns()
    arrays = model_arrays(be, cols, hinted)
    if in_child(arrays, isolated):
        from sensaopt.solvers.highs_child import search_in_child

        got = search_in_child(arrays, params, budget)
        if isinstance(got, SolveOutcome):  # killed, not run or failed: no solution
            return got
        run, col = got
    else:
        h = loaded_highs(arrays, params)
        h.setOptionValue("time_limit", budget.left(MIN_SOLVE_S))  # building took time: HiGHS gets what is left
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

        objective = const + sum(c * vals[pos[v]] for v, c in be.objective.terms.items())
        msg += f", model objective {objective:g}"
    else:
        msg += ", no solution found"
    wall = time.perf_counter() - t0
    return SolveOutcome(status=run.status, value=value, objective=objective, bound=bound, message=f"{msg}, {wall:.2f} s", wall_s=wall,
                        work=run.work, safety_net=run.safety_net)
