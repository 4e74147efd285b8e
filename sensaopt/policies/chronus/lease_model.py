"""The Chronus lease-selection MILP (``models/chronus.md``), written once as arrays
(:func:`lease_arrays`) and solved by HiGHS (the arrays passed straight to highspy) or
CP-SAT (the arrays emitted through the solvers layer's backend interface,
:class:`sensaopt.solvers.Backend`, and solved by it).

Jobs ``a`` with deadline options ``k`` (``m`` slots before that deadline, value
``v``), ``r`` rounded GPUs, ``l`` leases still needed; slots ``t`` (0 = the lease
starting now) with ``C_t`` GPUs free::

    max  Σ v·s[a,k] + sign · Σ r·x[a,k,0] / max_t C_t
    s.t. Σ_{t<m} x[a,k,t] = l·s[a,k]    (lease)
         Σ_k s[a,k] = 1                  (one option per job)
         Σ r·x[a,k,t] ≤ C_t              (capacity)

A backend that takes only integer coefficients (CP-SAT) gets this objective times
``1000 · max_t C_t`` (values rounded to 1/1000).

Speed (``models/chronus.md``, "Lease solve speed"): no per-variable Python objects on
the HiGHS path; the columns, rows and coefficients handed to HiGHS are exactly those
the earlier backend-written model handed it (columns ordered by the names ``s_a_k`` /
``x_a_k_t`` as strings, rows job by job, then capacity), so HiGHS takes the same path
and returns the same plans.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sensaopt import solvers
from sensaopt.solvers import Backend, SolveOutcome, SolverParams, TimeBudget
from sensaopt.solvers.budget import MIN_SOLVE_S
from sensaopt.solvers.highs import configure, new_highs, search_highs

LEASE_SOLVERS = ("highs", "highspy", "cpsat")  # "highspy": the former name of the direct HiGHS path, same model
VALUE_DIGITS = 1000  # integer backends: option values in 1/1000

Plan = tuple[int, tuple[int, ...]]
"""(option index into ``LeaseJob.options``, slots)."""


@dataclass(frozen=True)
class LeaseJob:
    """One admitted job that still needs leases: ``r`` rounded GPUs, ``l`` ≥ 1 leases
    (slots), ``options`` (m, value) per deadline option with m ≥ l slots before it."""

    key: Hashable
    r: int
    l: int  # noqa: E741 (the paper's name)
    options: tuple[tuple[int, float], ...]


class HighsArrays:
    """The build target of the HiGHS path: the model goes to highspy as arrays."""

    integer_only = False


@dataclass(frozen=True)
class LeaseArrays:
    """The model in creation order: per option ``o`` (job by job, option by option)
    column ``base[o]`` is ``s[a,k]`` and columns ``base[o]+1+t`` are ``x[a,k,t]``.
    ``cost`` is minimised (the negated objective). Rows in CSR over creation indices:
    lease rows and the one-option row job by job, then one capacity row per used slot.
    ``order[i]``: the creation index of HiGHS column ``i``; ``pos`` its inverse."""

    cost: np.ndarray
    col_job: np.ndarray
    col_opt: np.ndarray  # index into the job's options
    col_slot: np.ndarray  # -1: an s column
    row_lo: np.ndarray
    row_hi: np.ndarray
    row_start: np.ndarray
    row_index: np.ndarray
    row_value: np.ndarray
    order: np.ndarray
    pos: np.ndarray
    base: np.ndarray  # creation index of each option's s column


@dataclass(frozen=True)
class LeaseModel:
    """The model built for ``backend``: the arrays, and for a
    :class:`~sensaopt.solvers.Backend` its variable per column (creation order)."""

    backend: Backend | HighsArrays
    jobs: tuple[LeaseJob, ...]
    arrays: LeaseArrays
    handles: tuple[Any, ...] | None  # None: HiGHS arrays

    @property
    def variables(self) -> int:
        return len(self.arrays.cost)


def _name_ranks(n: int, trailing: bool) -> np.ndarray:
    """Rank of ``str(i)`` (``str(i) + '_'`` when ``trailing``) among i < n in string
    order: the variable names ``s_a_k`` / ``x_a_k_t`` compare field by field this way
    ('_' sorts after the digits; a last field has no '_' after it)."""
    keys = [f"{i}_" if trailing else str(i) for i in range(n)]
    rank = np.empty(n, dtype=np.int64)
    rank[sorted(range(n), key=keys.__getitem__)] = np.arange(n)
    return rank


def lease_arrays(jobs: Sequence[LeaseJob], capacity: Sequence[int], sign: float, integer: bool) -> LeaseArrays:
    """The model's arrays (``integer``: CP-SAT's integer objective); ``capacity``
    holds ``C_t`` for every slot up to the largest ``m``."""
    maxc = max(max(capacity), 1)
    o_job = np.array([a for a, j in enumerate(jobs) for _ in j.options], dtype=np.int64)
    o_k = np.array([k for j in jobs for k in range(len(j.options))], dtype=np.int64)
    o_m = np.array([m for j in jobs for m, _ in j.options], dtype=np.int64)
    o_v = [v for j in jobs for _, v in j.options]
    r = np.array([j.r for j in jobs], dtype=np.int64)
    ell = np.array([j.l for j in jobs], dtype=np.int64)
    n_opt = len(o_m)
    size = o_m + 1
    base = np.concatenate(([0], np.cumsum(size)[:-1])).astype(np.int64) if n_opt else np.zeros(0, dtype=np.int64)
    n = int(size.sum())
    col_opt_of = np.repeat(np.arange(n_opt), size)  # option of each column
    col_slot = np.arange(n) - base[col_opt_of] - 1  # -1 at s columns
    col_job = o_job[col_opt_of]
    is_x = col_slot >= 0
    # objective (minimised): -value on s, -tie-break on x[.,.,0]
    cost = np.zeros(n)
    if integer:
        cost[base] = [-(round(v * VALUE_DIGITS) * maxc) for v in o_v]
        cost[base + 1] = -(int(sign) * r[o_job] * VALUE_DIGITS)
    else:
        cost[base] = [-v for v in o_v]
        cost[base + 1] = [-(sign * int(ri) / maxc) for ri in r[o_job]]
    # rows: per job its lease rows (x's then s) and its one-option row; then capacity
    n_jobs = len(jobs)
    n_opts = np.array([len(j.options) for j in jobs], dtype=np.int64)
    job_row0 = np.concatenate(([0], np.cumsum(n_opts + 1)[:-1])).astype(np.int64) if n_jobs else np.zeros(0, dtype=np.int64)
    lease_row = job_row0[o_job] + o_k  # row of each option's lease constraint
    one_row = job_row0 + n_opts
    n_job_rows = int((n_opts + 1).sum())
    # lease entries in creation order with each option's s moved behind its x's
    l_idx = np.arange(n) + 1
    l_idx[base + o_m] = base
    l_val = np.ones(n)
    l_val[base + o_m] = -ell[o_job]
    l_row = lease_row[col_opt_of]
    # capacity entries: x columns by slot, option order within a slot
    x_cols = np.flatnonzero(is_x)
    by_slot = x_cols[np.argsort(col_slot[x_cols], kind="stable")]
    slots_used = np.unique(col_slot[x_cols])
    slot_row = np.full(int(slots_used.max()) + 1 if len(slots_used) else 0, -1, dtype=np.int64)
    slot_row[slots_used] = n_job_rows + np.arange(len(slots_used))
    rows = np.concatenate((l_row, one_row[o_job], slot_row[col_slot[by_slot]]))
    idx = np.concatenate((l_idx, base, by_slot))
    val = np.concatenate((l_val, np.ones(n_opt), r[col_job[by_slot]].astype(float)))
    perm = np.argsort(rows, kind="stable")
    n_rows = n_job_rows + len(slots_used)
    row_start = np.searchsorted(rows[perm], np.arange(n_rows)).astype(np.int32)
    row_lo = np.concatenate((np.zeros(n_job_rows), np.full(len(slots_used), -np.inf)))
    row_hi = np.zeros(n_rows)
    row_lo[one_row] = row_hi[one_row] = 1.0
    row_hi[n_job_rows:] = [float(capacity[t]) for t in slots_used]
    # HiGHS columns in name order: s before x; fields compared as strings
    ra = _name_ranks(n_jobs, True)
    kmax = int(n_opts.max()) if n_jobs else 0
    tmax = int(o_m.max()) if n_opt else 0
    rk_plain, rk_trail, rt = _name_ranks(kmax, False), _name_ranks(kmax, True), _name_ranks(tmax, False)
    k_of = o_k[col_opt_of]
    k1 = np.where(is_x, rk_trail[k_of], rk_plain[k_of])
    t1 = np.where(is_x, rt[np.maximum(col_slot, 0)], -1)
    order = np.lexsort((t1, k1, ra[col_job], is_x))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    return LeaseArrays(cost=cost, col_job=col_job, col_opt=k_of, col_slot=col_slot, row_lo=row_lo, row_hi=row_hi,
                       row_start=row_start, row_index=idx[perm].astype(np.int32), row_value=val[perm], order=order,
                       pos=pos, base=base)


def build_lease_model(be: Backend | HighsArrays, jobs: list[LeaseJob], capacity: list[int], sign: float) -> LeaseModel:
    """The model for ``be`` (:func:`new_backend`): arrays only for HiGHS; for a
    :class:`~sensaopt.solvers.Backend` the variables (creation order), the three
    constraint families and the objective are also added to it."""
    arr = lease_arrays(jobs, capacity, sign, be.integer_only)
    handles = None if isinstance(be, HighsArrays) else _emit(be, arr)
    return LeaseModel(backend=be, jobs=tuple(jobs), arrays=arr, handles=handles)


def _emit(be: Backend, arr: LeaseArrays) -> tuple[Any, ...]:
    """``arr`` through the backend interface; its variables in creation order."""
    cols = zip(arr.col_job.tolist(), arr.col_opt.tolist(), arr.col_slot.tolist())
    names = [f"s_{a}_{k}" if t < 0 else f"x_{a}_{k}_{t}" for a, k, t in cols]
    v = tuple(be.bool_var(nm) for nm in names)
    starts = arr.row_start.tolist() + [len(arr.row_index)]
    idx, val = arr.row_index.tolist(), arr.row_value.tolist()
    for i, (lo, hi) in enumerate(zip(arr.row_lo.tolist(), arr.row_hi.tolist())):
        expr = be.sum(int(c) * v[j] for j, c in zip(idx[starts[i]:starts[i + 1]], val[starts[i]:starts[i + 1]]))
        be.add(expr == int(hi) if lo == hi else expr <= int(hi), "lease" if lo == hi == 0 else "one_option" if lo == hi else "capacity")
    cost = arr.cost.tolist()
    be.minimize(be.sum((int(c) if be.integer_only else c) * v[j] for j, c in enumerate(cost) if c != 0))
    return v


def new_backend(solver: str) -> Backend | HighsArrays:
    """An empty build target for ``solver`` (one of :data:`LEASE_SOLVERS`)."""
    if solver in ("highs", "highspy"):
        return HighsArrays()
    if solver == "cpsat":
        return solvers.new_backend("cpsat")
    raise ValueError(f"unknown lease solver {solver!r} ({', '.join(LEASE_SOLVERS)}, greedy)")


def run_lease_model(model: LeaseModel, solver: str, budget: TimeBudget, threads: int, seed: int) -> SolveOutcome:
    """Solve with HiGHS (arrays) or the solvers layer's backend for ``solver``."""
    if solver == "cpsat":
        assert not isinstance(model.backend, HighsArrays)
        return model.backend.solve(budget, SolverParams(workers=max(1, threads), seed=seed))
    return run_highs_arrays(model, budget, threads, seed)


def run_highs_arrays(model: LeaseModel, budget: TimeBudget, threads: int, seed: int) -> SolveOutcome:
    """HiGHS on the model's arrays, configured and read as :func:`sensaopt.solvers.highs.run_highs`
    does (same calls, same status mapping); ``value`` of the outcome takes creation
    indices (or a slice / index array: the whole vector at once)."""
    t0 = time.perf_counter()
    arr = model.arrays
    order = arr.order
    n = len(order)
    h = new_highs()
    configure(h, SolverParams(workers=threads, seed=seed))
    h.addCols(n, arr.cost[order], np.zeros(n), np.ones(n), 0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.ones(n, dtype=np.uint8))  # 1 = HighsVarType.kInteger
    if len(arr.row_lo):
        h.addRows(len(arr.row_lo), arr.row_lo, arr.row_hi, len(arr.row_index), arr.row_start,
                  arr.pos[arr.row_index].astype(np.int32), arr.row_value)
    h.setOptionValue("time_limit", budget.left(MIN_SOLVE_S))  # building took time: HiGHS gets what is left
    run = search_highs(h, budget)
    value = objective = None
    if run.has_solution:
        vals = np.asarray(h.getSolution().col_value)[arr.pos]  # creation order
        value = vals.__getitem__
        objective = float((arr.cost * vals).sum())  # not `@`: OpenBLAS's threaded dot leaves a thread spinning (models/chronus.md)
        run = run.of_answer(objective)
    status, has_sol, bound, msg = run.status, run.has_solution, run.dual_bound, run.message
    if has_sol:
        msg += f", model objective {objective:g}"
    else:
        msg += ", no solution found"
    wall = time.perf_counter() - t0
    return SolveOutcome(status=status, value=value, objective=objective, bound=bound, message=f"{msg}, {wall:.2f} s", wall_s=wall,
                        work=run.work, safety_net=run.safety_net)


def plans_of(model: LeaseModel, outcome: SolveOutcome) -> dict[Hashable, Plan]:
    """key -> (chosen option, its slots) read from the incumbent (jobs without a chosen
    option are left out); option indices refer to ``LeaseJob.options``."""
    value = outcome.value
    assert value is not None
    arr = model.arrays
    if model.handles is None:
        vals = np.asarray(value(slice(None)))
    else:
        vals = np.array([value(v) for v in model.handles], dtype=float)
    on = vals > 0.5
    chosen = np.flatnonzero(on[arr.base])  # options whose s is set
    # set x columns in creation order: grouped by option, slots ascending within one
    x_on = np.flatnonzero(on & (arr.col_slot >= 0))
    x_opt = np.searchsorted(arr.base, x_on, side="right") - 1
    first, last = np.searchsorted(x_opt, chosen).tolist(), np.searchsorted(x_opt, chosen, side="right").tolist()
    slots = arr.col_slot[x_on].tolist()
    b = arr.base[chosen]
    plans: dict[Hashable, Plan] = {}
    for a, k, i, e in zip(arr.col_job[b].tolist(), arr.col_opt[b].tolist(), first, last):
        plans[model.jobs[a].key] = (k, tuple(slots[i:e]))
    return plans
