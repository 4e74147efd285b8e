"""One HiGHS run on a loaded ``highspy.Highs``, the same in sensaopt's process and in the
child process of :mod:`sensaopt.solvers.highs_child`: the model's arrays
(:class:`HighsArrays`) loaded with the options (:func:`loaded_highs`), the search or LP
run until it ends or is stopped from outside (:func:`run_search`, :func:`run_lp`), and
what it left (:class:`HighsEnd`, :func:`safe_dual_bound`). The backend and the mapping
to common statuses are :mod:`sensaopt.solvers.highs`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sensaopt.errors import SensaoptError
from sensaopt.quiet import quiet_stdout
from sensaopt.solvers.base import SolverParams
from sensaopt.solvers.interrupt import run_stoppable


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
    columns' start values (None: no start). Built once by :func:`sensaopt.solvers.highs.model_arrays`; loaded
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
    ``mip_dual_bound`` (without any objective constant), ``mip_gap``, the nodes done and
    the objective HiGHS reports for its solution (``objective_function_value``; NaN when
    unread: records written before it was kept)."""

    status: str
    text: str
    has_solution: bool
    dual_bound: float
    gap: float
    nodes: int
    reported: float = float("nan")


def end_of(h: Any) -> HighsEnd:
    """What the run of ``h`` (a ``highspy.Highs``) left."""
    import highspy

    ms = h.getModelStatus()
    info = h.getInfo()
    return HighsEnd(ms.name, h.modelStatusToString(ms), info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible,
                    float(info.mip_dual_bound), float(info.mip_gap), int(info.mip_node_count), float(info.objective_function_value))


def proof_holds(reported: float, cost: float) -> bool:
    """Whether HiGHS's OPTIMAL can be taken for a proof of the solution it returns: its
    reported objective ``reported`` is that solution's cost ``cost`` (both in the loaded
    model's units, no constant), up to 1e-6 relative. HiGHS 1.16 can end ``kOptimal`` with
    an objective its answer does not have: on the 40-job window w18 it reported 7320 for a
    MIP start costing 7520, evaluated in its presolved space, while CP-SAT proved 7460
    (``models/measurements.md``, session 27). A NaN ``reported`` (unread) holds."""
    return reported != reported or abs(reported - cost) <= 1e-6 * max(1.0, abs(cost))


def run_search(h: Any, stop_at: float) -> None:
    """Run the prepared ``h`` until it ends or, at ``stop_at`` (a :func:`time.perf_counter`
    value), is stopped from outside (cancelSolve and time limit 0; Ctrl-C too)."""
    import highspy

    h.HandleUserInterrupt = True  # cancelSolve (on Ctrl-C) interrupts the search

    def search() -> None:
        h.run()
        highspy.Highs.resetThreadScheduler(False)  # as highspy's own threaded solve does

    run_stoppable(search, stopper(h), stop_at)


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
