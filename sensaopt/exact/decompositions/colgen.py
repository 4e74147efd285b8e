"""Column generation over whole per-job schedules (issue 15, item 4): the
Dantzig–Wolfe bound of the time-indexed model, and the master that
:mod:`sensaopt.exact.decompositions.branch_price` searches with.

The **master** chooses, for every job, a convex combination of columns — complete
schedules of that job (:class:`~sensaopt.exact.decompositions.pricing.Column`) — so that in every
slot every node's GPUs, cores and memory hold (the model's capacity rows, same units:
GPUs, cores, ``1/mem_scale`` GB). Every other constraint of the model concerns one job
and is inside the columns: release, the change losses, completion, deadlines (the
column's cost is the job's objective contribution). Its LP relaxation is therefore at
least as strong as the compact model's, and equal to the Lagrangian dual of the
capacity rows.

**Pricing** (:mod:`sensaopt.exact.decompositions.pricing`) is exact, so for any prices ``π ≥ 0`` on the
capacity rows

    L(π) = Σ_j min_{schedules s of j} (cost_j(s) + π·use(s)) − π·cap

is a valid lower bound of the model's optimum (Lagrangian relaxation), whatever state
the master is in. :func:`column_generation` reports the best ``L`` seen, rounded up to
a multiple of the objective's granularity (:func:`~sensaopt.exact.model.builder.round_bound`), in scaled model units
(:func:`sensaopt.exact.model.builder.to_objective` converts). The loop stops when no column
prices out (then the bound equals the master LP: the Dantzig–Wolfe bound) or on time
(:meth:`Master.solve` also stops at a node's cutoff).

**Price and branch** (:meth:`Master.restricted_mip`): the master restricted to the
generated columns, solved as an integer program by HiGHS, gives a feasible schedule
(every column is a real schedule; :func:`schedule_of_columns` builds it) — an
incumbent, not a proof.

Only offline models with every job required to finish are priced (not a rolling
window, whose leftover term prices unfinished work, nor the shortfall model).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import highspy
import numpy as np

from sensaopt import solvers
from sensaopt.exact.decompositions.pricing import NO_RULE, Column, JobPricer, JobRule
from sensaopt.exact.model.builder import objective_step, round_bound
from sensaopt.exact.model.data import JobData, ModelData, pair_of, placements_of
from sensaopt.exact.model.values import schedule_of_rounds
from sensaopt.schedule import Placement, Schedule
from sensaopt.solvers import SolverParams, TimeBudget
from sensaopt.solvers.highs import limit_from_now, mip_limit
from sensaopt.solvers.highs_run import new_highs, proof_holds, run_search

RC_EPS = 1e-6  # a column prices out when its reduced cost is below −RC_EPS (scaled units)
BOUND_EPS = 1e-6  # relative: a converged master LP value is taken this much lower as a bound (float error)
MIN_MIP_S = 1.0  # seconds: never less for the restricted-master MIP (if time is left)
MIP_STOP_SLACK_S = 0.3  # seconds past its limit at which a restricted-master MIP is stopped from outside


@dataclass(frozen=True)
class ColgenOutcome:
    """What column generation at the root did. ``bound``: the best Lagrangian bound,
    rounded up to the objective's granularity, scaled model units (None if some job
    cannot finish in its slots: the model is infeasible); ``lp``: the last
    restricted-master LP value (scaled; an upper end of the Dantzig–Wolfe bound until
    ``stop == "converged"``); ``stop``: ``converged``, ``time``, ``infeasible``, or the
    master LP's failure; ``seconds`` wall time."""

    bound: float | None
    lp: float | None
    iterations: int
    columns: int
    seconds: float
    stop: str
    chosen: tuple[Column, ...] | None = None  # the restricted master MIP's columns, one per job (``mip_s``)


class _Rows:
    """The capacity rows: one per (node, slot, resource) some pair of some job can use."""

    def __init__(self, data: ModelData) -> None:
        self.index: dict[tuple[int, int, int], int] = {}
        self.cap: list[float] = []
        nodes = data.instance.cluster.nodes
        caps = [(n.gpus, data.cpu_units(n.cpus, up=False), data.mem_units(n.mem_gb, up=False)) for n in nodes]
        self.use: dict[int, list[list[tuple[tuple[int, float], ...]]]] = {}  # k -> [slot i][pair b] -> ((row, coef), ...)
        for jd in data.jobs:
            per_slot = []
            per_pair = [self._pair_use(data, jd, b) for b in range(len(jd.pairs))]
            for t in data.slots(jd):
                row = []
                for parts in per_pair:
                    items = []
                    for (nd, res), coef in parts:
                        key = (nd, t, res)
                        if key not in self.index:
                            self.index[key] = len(self.cap)
                            self.cap.append(caps[nd][res])
                        items.append((self.index[key], coef))
                    row.append(tuple(items))
                per_slot.append(row)
            self.use[jd.k] = per_slot

    @staticmethod
    def _pair_use(data: ModelData, jd: JobData, b: int) -> list[tuple[tuple[int, int], float]]:
        """((node, resource), coefficient) of pair ``b``: the builder's capacity terms
        (:meth:`~sensaopt.exact.model.data.ModelData.charges`; in the relaxation a gang
        job's whole nodes are charged GPUs only)."""
        out = []
        for nd, g, c, m in data.charges(jd.patterns[jd.pairs[b][0]], jd.options[jd.pairs[b][1]]):
            out += [((nd, res), float(q)) for res, q in enumerate((g, c, m)) if q]
        return out


def start_columns(data: ModelData, pricers: dict[int, JobPricer], schedule: Schedule) -> list[Column]:
    """The columns of a schedule: per job, the pairs it runs slot by slot up to the
    slot where the model's progress reaches ``W``; a job the schedule does not complete
    within its slots (in the model's units), or runs in a placement the model lacks, gets none."""
    by_slot: dict[str, dict[int, tuple[Placement, ...]]] = {}
    for seg in schedule.segments:
        for r in range(seg.start, seg.end):
            by_slot.setdefault(seg.job, {})[r - data.start_round] = seg.placements
    out = []
    for jd in data.jobs:
        slots = by_slot.get(jd.id, {})
        runs: list[tuple[int, int]] = []
        prog, prev, ran = 0, None, False
        for t in data.slots(jd):
            pls = slots.get(t)
            if pls is None:
                prev = None
                continue
            pair = pair_of(jd, pls)
            if pair is None:
                break
            kind = data.change(jd, ran, prev, pair)
            prog += jd.units(kind, pair[1])
            runs.append((t, jd.pairs.index(pair)))
            prev, ran = placements_of(data, jd, pair), True
            if prog >= jd.work_units:
                out.append(Column(jd.k, tuple(runs), t, pricers[jd.k].cost_at[t]))
                break
    return out


def _column_arrays(rows: _Rows, col: Column, data: ModelData, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    first = data.slots(data.jobs[col.k]).start
    acc: dict[int, float] = {n_rows + col.k: 1.0}  # the job's convexity row
    for t, b in col.runs:
        for r, c in rows.use[col.k][t - first][b]:
            acc[r] = acc.get(r, 0.0) + c
    idx = np.fromiter(acc.keys(), dtype=np.int32, count=len(acc))
    return idx, np.fromiter(acc.values(), dtype=np.float64, count=len(acc))


@dataclass
class NodeSolve:
    """Column generation at one node: ``bound`` the best Lagrangian bound (float, scaled;
    ``inf``: no schedule obeys the node's rules), ``lp`` the last master LP value,
    ``values`` the LP's column values, ``stop``: ``converged``, ``cutoff`` (the bound
    reached the cutoff), ``time``, or the master LP's failure."""

    bound: float
    lp: float | None
    values: np.ndarray | None
    iterations: int
    stop: str


class Master:
    """The restricted master: one HiGHS LP over every column generated so far
    (:meth:`add`), an artificial column per job (usage-free, dearer than any whole
    schedule: it keeps every node's LP feasible), and the pricers. :meth:`solve` runs
    column generation under per-job branching rules (columns that break a rule get
    upper bound 0)."""

    def __init__(self, data: ModelData, start: Schedule | None = None) -> None:
        if data.window or data.shortfall:
            raise ValueError("column generation prices offline models whose jobs must finish")
        self.data = data
        self.step = objective_step(data)  # the objective's granularity (scaled units)
        self.pricers = {jd.k: JobPricer.of(data, jd) for jd in data.jobs}
        self.rows = _Rows(data)
        self.n_rows = len(self.rows.cap)
        self.cap = np.asarray(self.rows.cap, dtype=np.float64)
        n_jobs = data.n
        h = self.h = new_highs()  # the process's HiGHS thread scheduler reset: an earlier run may have had other threads
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        lower = np.concatenate([np.full(self.n_rows, -inf), np.ones(n_jobs)])
        upper = np.concatenate([self.cap, np.ones(n_jobs)])
        h.addRows(self.n_rows + n_jobs, lower, upper, 0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.columns: list[Column | None] = []
        self.owner: list[int] = []  # job index of each column
        dearest = max((max(p.cost_at.values(), default=0) for p in self.pricers.values()), default=0)
        self.artificial_cost = float(n_jobs * dearest + 1)
        for jd in data.jobs:
            self.add(jd.k, None)
        self.seeded: list[int] = []  # the start's columns (indices), one per job it completes in the model
        self.mip_proven = False  # the last restricted_mip's answer is optimal over the columns
        for col in start_columns(data, self.pricers, start) if start is not None else []:
            self.seeded.append(len(self.columns))
            self.add(col.k, col)

    def add(self, k: int, col: Column | None) -> None:
        """A column of job ``k`` (None: its artificial column)."""
        if col is None:
            idx, val, cost = np.array([self.n_rows + k], dtype=np.int32), np.array([1.0]), self.artificial_cost
        else:
            (idx, val), cost = _column_arrays(self.rows, col, self.data, self.n_rows), float(col.cost)
        self.h.addCol(cost, 0.0, highspy.kHighsInf, len(idx), idx, val)
        self.columns.append(col)
        self.owner.append(k)

    def use(self, col: Column) -> tuple[np.ndarray, np.ndarray]:
        """The capacity rows ``col`` uses, each once, and how much of each (its convexity row left out)."""
        idx, val = _column_arrays(self.rows, col, self.data, self.n_rows)
        keep = idx < self.n_rows
        return idx[keep], val[keep]

    def row_prices(self) -> np.ndarray:
        """The last master LP's prices of the capacity rows (≥ 0, scaled units per unit of
        capacity; zeros before any LP was solved)."""
        sol = self.h.getSolution()
        if not sol.dual_valid:
            return np.zeros(self.n_rows)
        return np.maximum(-np.asarray(sol.row_dual)[:self.n_rows], 0.0)

    def restrict(self, rules: dict[int, JobRule]) -> None:
        """Upper bound 0 on every column that breaks its job's rule, 1 (∞) on the others."""
        n = len(self.columns)
        ub = np.array([highspy.kHighsInf if c is None or c.k not in rules or rules[c.k].allows(c) else 0.0
                       for c in self.columns])
        self.h.changeColsBounds(n, np.arange(n, dtype=np.int32), np.zeros(n), ub)

    def _run_lp(self, stop_at: float) -> str | None:
        h = self.h
        limit_from_now(h, stop_at - time.monotonic())
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:  # a numerical failure: once more from scratch
            h.clearSolver()
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                return f"master LP: {h.modelStatusToString(h.getModelStatus())}"
        return None

    def solve(self, stop_at: float, rules: dict[int, JobRule] | None = None, cutoff: float | None = None,
              lagrangian: bool = True) -> NodeSolve:
        """Column generation until no column prices out, the bound reaches ``cutoff``
        (scaled; rounded up, the objective being integral) or ``stop_at`` (monotonic
        seconds). ``lagrangian=False``: each job's pricing seeks only columns that price
        out (below its convexity dual), which is faster; the bound of an unconverged
        run is then the master LP plus the negative reduced costs, weaker than the
        Lagrangian one (valid all the same; at convergence both are the LP)."""
        rules = rules or {}
        self.restrict(rules)
        best, lp, values, it = -math.inf, None, None, 0
        while time.monotonic() < stop_at:
            err = self._run_lp(stop_at)
            if err is not None:
                return NodeSolve(best, lp, values, it, err)
            lp = self.h.getInfo().objective_function_value
            sol = self.h.getSolution()
            duals = np.asarray(sol.row_dual)
            values = np.asarray(sol.col_value)
            pi = np.maximum(-duals[:self.n_rows], 0.0)
            mu = duals[self.n_rows:]
            it += 1
            lag = -float(pi @ self.cap)
            new: list[Column] = []
            for jd in self.data.jobs:
                prices = [[sum(pi[r] * c for r, c in items) for items in per_pair] for per_pair in self.rows.use[jd.k]]
                cut = math.inf if lagrangian else float(mu[jd.k]) - RC_EPS
                total, col = self.pricers[jd.k].price(prices, rules.get(jd.k, NO_RULE), cut)
                if total == math.inf:
                    return NodeSolve(math.inf, lp, values, it, "converged")  # no schedule obeys the rules
                lag += total  # (without a column: a lower bound of the job's cheapest schedule, at least its cutoff)
                if col is not None and total - mu[jd.k] < -RC_EPS:
                    new.append(col)
            best = max(best, lag)
            if cutoff is not None and round_bound(self.data, best, self.step) >= cutoff - 0.5:
                return NodeSolve(best, lp, values, it, "cutoff")
            if not new:
                return NodeSolve(max(best, lp - BOUND_EPS * max(1.0, abs(lp))), lp, values, it, "converged")
            for col in new:
                self.add(col.k, col)
        return NodeSolve(best, lp, values, it, "time")

    def restricted_mip(self, seconds: float, from_start: bool = False) -> list[Column] | None:
        """The master over the generated columns with integral choices (HiGHS, for
        ``seconds``; the columns' bounds as :meth:`restrict` left them): one column per
        job, or None. ``from_start``: HiGHS starts from the start schedule's columns
        when they cover every job (then it returns at worst those). The model is an LP
        again afterwards; ``self.mip_proven`` says whether HiGHS proved its answer
        optimal over the columns."""
        h, n = self.h, len(self.columns)
        idx = np.arange(n, dtype=np.int32)
        h.changeColsIntegrality(n, idx, np.full(n, highspy.HighsVarType.kInteger))
        if from_start and len(self.seeded) == self.data.n:
            sol = highspy.HighsSolution()
            x = np.zeros(n)
            x[self.seeded] = 1.0
            sol.col_value = list(x)
            sol.value_valid = True
            h.setSolution(sol)
        mip_limit(h, seconds)
        run_search(h, time.perf_counter() + seconds + MIP_STOP_SLACK_S)  # Ctrl-C and SIGTERM stop it (cancelSolve)
        optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        reported = h.getInfo().objective_function_value
        sol = h.getSolution()
        chosen = [self.columns[i] for i, x in enumerate(sol.col_value) if x > 0.5] if sol.value_valid else []
        h.changeColsIntegrality(n, idx, np.full(n, highspy.HighsVarType.kContinuous))
        self.mip_proven = False
        if not chosen or any(c is None for c in chosen):
            return None
        # a proof counts only when HiGHS's reported optimum is its answer's cost (proof_holds)
        self.mip_proven = optimal and proof_holds(reported, float(sum(c.cost for c in chosen if c is not None)))
        return [c for c in chosen if c is not None]

    def restricted_cpsat(self, seconds: float, from_start: bool = False, seed: int = 0,
                         hint: list[Column] | None = None, workers: int = 1) -> list[Column] | None:
        """The master over the generated columns with integral choices, solved by CP-SAT
        (``workers`` workers, ``seed``, for ``seconds``; every generated column, no branching
        rules): one column per job, or None (no solution in time, or a capacity
        coefficient that is not an integer: CP-SAT takes integers only). ``from_start``:
        the start schedule's columns are CP-SAT's (partial) hint; ``hint``: these
        columns instead. Where it beats HiGHS's MIP and where not: ``models/measurements.md``,
        session 26."""
        be = solvers.new_backend("cpsat")
        x: dict[int, Any] = {}
        by_job: list[list[Any]] = [[] for _ in range(self.data.n)]
        terms: dict[int, list[tuple[Any, int]]] = {}
        cost = []
        for i, col in enumerate(self.columns):
            if col is None:
                continue
            v = x[i] = be.bool_var(f"c{i}")
            by_job[col.k].append(v)
            cost.append(int(col.cost) * v)
            idx, val = _column_arrays(self.rows, col, self.data, self.n_rows)
            for r, q in zip(idx.tolist(), val.tolist()):
                if r < self.n_rows:
                    if q != int(q):
                        return None
                    terms.setdefault(r, []).append((v, int(q)))
        for vs in by_job:
            be.add(be.sum(vs) == 1, "one_column")
        for r, ts in terms.items():
            be.add(be.sum(q * v for v, q in ts) <= int(math.floor(self.cap[r] + 1e-9)), "capacity")
        be.minimize(be.sum(cost))
        if hint is not None:
            on = {id(c) for c in hint}
            be.hint({v: 1 for i, v in x.items() if id(self.columns[i]) in on})
        elif from_start and len(self.seeded) == self.data.n:
            be.hint({x[i]: 1 for i in self.seeded})
        out = be.solve(TimeBudget.start(seconds), SolverParams(workers=workers, seed=seed))
        if out.value is None:
            return None
        chosen = [col for i, col in enumerate(self.columns) if col is not None and out.value(x[i]) > 0.5]
        return chosen if len(chosen) == self.data.n else None


def schedule_of_columns(data: ModelData, cols: list[Column]) -> Schedule:
    """The schedule running every column (one per job)."""
    rounds: dict[int, dict[str, tuple[Placement, ...]]] = {}
    for col in cols:
        jd = data.jobs[col.k]
        for t, b in col.runs:
            rounds.setdefault(t + data.start_round, {})[jd.id] = placements_of(data, jd, jd.pairs[b])
    return schedule_of_rounds(data, rounds)


def column_generation(data: ModelData, time_limit: float, start: Schedule | None = None, mip_s: float = 0.0
                      ) -> ColgenOutcome:
    """Column generation at the root of ``data`` (the Dantzig–Wolfe bound; see the module
    docstring) for at most ``time_limit`` seconds; ``start``: a schedule whose columns
    seed the master; ``mip_s`` > 0: then the restricted master as a MIP for at most that
    many seconds (:meth:`Master.restricted_mip`: price and branch), its columns in
    ``ColgenOutcome.chosen``."""
    t0 = time.monotonic()
    master = Master(data, start)
    node = master.solve(t0 + time_limit)
    if node.bound == math.inf:
        return ColgenOutcome(None, node.lp, node.iterations, len(master.columns), time.monotonic() - t0, "infeasible")
    bound = round_bound(data, node.bound, master.step) if node.bound > -math.inf else None
    chosen = master.restricted_mip(mip_s) if mip_s > 0 else None
    return ColgenOutcome(bound, node.lp, node.iterations, len(master.columns), time.monotonic() - t0, node.stop,
                         None if chosen is None else tuple(chosen))
