"""The lease-slot selection MILP of Chronus, solved with open solvers, and the
artifact's greedy fallback. The model is written out in ``models/chronus.md``.

Jobs j, each with deadline options k (m_jk slots before that deadline, value v_jk),
``r_j`` rounded GPUs, ``l_j`` leases still needed; slots t = 0..T-1 (slot 0 = the
lease starting now), ``C_t`` GPUs free for planning in slot t::

    max  sum_jk v_jk s_jk + sign * sum_jk r_j x_jk0 / max_t C_t
    s.t. sum_{t<m_jk} x_jkt = l_j s_jk        for all j, k
         sum_k s_jk = 1                        for all j   (every admitted job is guaranteed)
         sum_jk r_j x_jkt <= C_t               for all t
         x, s binary   (x_jkt exists only for t < m_jk)

``sign`` is +1 or -1 (the artifact's "adaptive" objective: -1 when an unadmitted SLO
job is waiting, to leave the current lease free for it). A job with a fixed option
(it was planned before) has only that option.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from sensaopt.quiet import quiet_stdout

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseJob:
    key: object
    r: int  # rounded GPUs
    l: int  # leases needed (>= 1)
    options: tuple[tuple[int, float], ...]  # (m, value) per deadline option; m >= l for all


@dataclass
class Selection:
    plans: dict  # key -> (option index, tuple of slots)
    status: str  # "optimal", "time_limit" (incumbent used), "fallback"
    solver: str
    reason: str = ""  # why the fallback was used
    solve_s: float = 0.0
    objective: float | None = None
    variables: int = 0
    extra: dict = field(default_factory=dict)


def objective_value(jobs: list[LeaseJob], plans: dict, capacity: list[int], sign: float) -> float:
    maxc = max(capacity) if capacity else 1
    maxc = maxc if maxc > 0 else 1
    v = 0.0
    for j in jobs:
        if j.key in plans:
            k, slots = plans[j.key]
            v += j.options[k][1] + sign * j.r * (1 if 0 in slots else 0) / maxc
    return v


def check_plans(jobs: list[LeaseJob], plans: dict, capacity: list[int]) -> None:
    """Raise AssertionError if ``plans`` break the model's constraints (partial
    selections allowed: used to check fallbacks and solver output alike)."""
    use = [0] * len(capacity)
    byk = {j.key: j for j in jobs}
    for key, (k, slots) in plans.items():
        j = byk[key]
        m = j.options[k][0]
        assert len(slots) == j.l and len(set(slots)) == j.l, (key, slots, j.l)
        assert all(0 <= t < m for t in slots), (key, slots, m)
        for t in slots:
            use[t] += j.r
    assert all(u <= c for u, c in zip(use, capacity)), "capacity exceeded"


def greedy_selection(jobs: list[LeaseJob], capacity: list[int]) -> dict:
    """The artifact's fallback: candidates (job, option) sorted by
    (-value, -r, slack m - l, -m); each job takes its first candidate whose ``l``
    latest feasible slots (from m-1 backwards) have room. Jobs may stay unplanned."""
    cap = list(capacity)
    cands = [(j, k) for j in jobs for k in range(len(j.options))]
    cands.sort(key=lambda c: (-c[0].options[c[1]][1], -c[0].r, c[0].options[c[1]][0] - c[0].l, -c[0].options[c[1]][0]))
    plans: dict = {}
    for j, k in cands:
        if j.key in plans:
            continue
        m = min(j.options[k][0], len(cap))
        got = []
        t = m - 1
        while t >= 0 and len(got) < j.l:
            if cap[t] >= j.r:
                got.append(t)
            t -= 1
        if len(got) < j.l:
            continue
        for t in got:
            cap[t] -= j.r
        plans[j.key] = (k, tuple(sorted(got)))
    return plans


def solve_selection(
    jobs: list[LeaseJob],
    capacity: list[int],
    sign: float = 1.0,
    *,
    solver: str = "highs",
    time_limit: float = 5.0,
    threads: int = 1,
    seed: int = 0,
) -> Selection:
    """Solve the lease MILP; on any solver failure (no incumbent in the time limit,
    infeasible model, solver error) fall back to :func:`greedy_selection` and say so
    in the returned status and reason (never silently)."""
    t0 = time.perf_counter()
    if not jobs:
        return Selection({}, "optimal", solver, solve_s=0.0, objective=0.0)
    horizon = max(m for j in jobs for m, _ in j.options)
    cap = list(capacity[:horizon]) + [0] * max(0, horizon - len(capacity))
    if solver == "greedy":
        plans = greedy_selection(jobs, cap)
        return Selection(plans, "fallback", solver, reason="greedy selected by configuration",
                         solve_s=time.perf_counter() - t0, objective=objective_value(jobs, plans, cap, sign))
    try:
        if solver == "highs":
            plans, status, nvar = _solve_pulp_highs(jobs, cap, sign, time_limit, threads, seed)
        elif solver == "highspy":
            plans, status, nvar = _solve_highspy(jobs, cap, sign, time_limit, threads, seed)
        elif solver == "cpsat":
            plans, status, nvar = _solve_cpsat(jobs, cap, sign, time_limit, threads, seed)
        else:
            raise ValueError(f"unknown lease solver {solver!r} (highs, highspy, cpsat, greedy)")
    except ValueError:
        raise
    except Exception as exc:  # solver crash: fall back, loudly
        plans, status, nvar = None, f"error: {type(exc).__name__}: {exc}", 0
    if plans is None:
        reason = status
        plans = greedy_selection(jobs, cap)
        log.warning("chronus lease MILP (%s) failed (%s); greedy fallback planned %d of %d jobs", solver, reason, len(plans), len(jobs))
        return Selection(plans, "fallback", solver, reason=reason, solve_s=time.perf_counter() - t0,
                         objective=objective_value(jobs, plans, cap, sign), variables=nvar)
    check_plans(jobs, plans, cap)
    return Selection(plans, status, solver, solve_s=time.perf_counter() - t0,
                     objective=objective_value(jobs, plans, cap, sign), variables=nvar)


def _solve_pulp_highs(jobs, cap, sign, time_limit, threads, seed):
    import pulp

    maxc = max(max(cap), 1)
    prob = pulp.LpProblem("chronus_lease", pulp.LpMaximize)
    if hasattr(prob, "add_variable"):  # PuLP >= 3.3
        def newvar(name):
            return prob.add_variable(name, 0, 1, cat=pulp.LpBinary)
    else:
        def newvar(name):
            return pulp.LpVariable(name, cat=pulp.LpBinary)
    obj = []
    xs: dict = {}
    ss: dict = {}
    slot_terms: list[list] = [[] for _ in cap]
    nvar = 0
    for a, j in enumerate(jobs):
        svars = []
        for k, (m, v) in enumerate(j.options):
            s = newvar(f"s_{a}_{k}")
            ss[a, k] = s
            svars.append(s)
            obj.append((s, v))
            xv = []
            for t in range(m):
                x = newvar(f"x_{a}_{k}_{t}")
                xs[a, k, t] = x
                xv.append((x, 1))
                slot_terms[t].append((x, j.r))
            if m > 0:
                obj.append((xs[a, k, 0], sign * j.r / maxc))
            nvar += 1 + m
            prob += pulp.LpAffineExpression(xv + [(s, -j.l)]) == 0, f"lease_{a}_{k}"
        prob += pulp.lpSum(svars) == 1, f"one_{a}"
    for t, terms in enumerate(slot_terms):
        if terms:
            prob += pulp.LpAffineExpression(terms) <= cap[t], f"cap_{t}"
    prob += pulp.LpAffineExpression(obj)
    opts = {"random_seed": seed}
    with quiet_stdout():  # highspy prints its banner from C++ on construction
        prob.solve(pulp.HiGHS(msg=False, timeLimit=time_limit, threads=threads, **opts))
    sol = prob.sol_status
    if sol not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        return None, f"no solution ({pulp.LpStatus.get(prob.status, prob.status)}, sol_status {sol})", nvar
    status = "optimal" if sol == pulp.LpSolutionOptimal else "time_limit"
    plans = {}
    for a, j in enumerate(jobs):
        for k, (m, _) in enumerate(j.options):
            if (ss[a, k].value() or 0) > 0.5:
                slots = tuple(t for t in range(m) if (xs[a, k, t].value() or 0) > 0.5)
                plans[j.key] = (k, slots)
    return plans, status, nvar


def _solve_cpsat(jobs, cap, sign, time_limit, threads, seed):
    from ortools.sat.python import cp_model

    maxc = max(max(cap), 1)
    md = cp_model.CpModel()
    ss, xs = {}, {}
    slot_terms: list[list] = [[] for _ in cap]
    obj = []
    nvar = 0
    # integer objective: values x1000 x (maxc+1), so the tie-break (<= maxc) stays below one unit
    for a, j in enumerate(jobs):
        svars = []
        for k, (m, v) in enumerate(j.options):
            s = md.NewBoolVar(f"s_{a}_{k}")
            ss[a, k] = s
            svars.append(s)
            obj.append(round(v * 1000) * (maxc + 1) * s)
            xv = [md.NewBoolVar(f"x_{a}_{k}_{t}") for t in range(m)]
            for t, x in enumerate(xv):
                xs[a, k, t] = x
                slot_terms[t].append(j.r * x)
            if m > 0:
                obj.append(int(sign) * j.r * xv[0])
            md.Add(sum(xv) == j.l * s)
            nvar += 1 + m
        md.AddExactlyOne(svars)
    for t, terms in enumerate(slot_terms):
        if terms:
            md.Add(sum(terms) <= cap[t])
    md.Maximize(sum(obj))
    sv = cp_model.CpSolver()
    sv.parameters.max_time_in_seconds = time_limit
    sv.parameters.num_workers = max(1, threads)
    sv.parameters.random_seed = seed
    st = sv.Solve(md)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, f"no solution (CP-SAT {sv.StatusName(st)})", nvar
    plans = {}
    for a, j in enumerate(jobs):
        for k, (m, _) in enumerate(j.options):
            if sv.Value(ss[a, k]):
                plans[j.key] = (k, tuple(t for t in range(m) if sv.Value(xs[a, k, t])))
    return plans, ("optimal" if st == cp_model.OPTIMAL else "time_limit"), nvar


def _solve_highspy(jobs, cap, sign, time_limit, threads, seed):
    """The same model and solver (HiGHS) as :func:`_solve_pulp_highs`, passed to
    highspy directly as a column-wise matrix: ~10x less model-building time on the
    large lease problems of the Philly traces."""
    import highspy
    import numpy as np

    maxc = max(max(cap), 1)
    n_opt = sum(len(j.options) for j in jobs)
    row_one0, row_cap0 = n_opt, n_opt + len(jobs)
    n_rows = row_cap0 + len(cap)
    cost, starts, index, value = [], [], [], []
    cols = []  # (a, k, t) with t = -1 for s
    p = 0
    for a, j in enumerate(jobs):
        for k, (m, v) in enumerate(j.options):
            starts.append(len(index))
            index += [p, row_one0 + a]
            value += [-float(j.l), 1.0]
            cost.append(float(v))
            cols.append((a, k, -1))
            for t in range(m):
                starts.append(len(index))
                index += [p, row_cap0 + t]
                value += [1.0, float(j.r)]
                cost.append(sign * j.r / maxc if t == 0 else 0.0)
                cols.append((a, k, t))
            p += 1
    n = len(cost)
    starts.append(len(index))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, n_rows
    lp.col_cost_ = np.array(cost)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.array([0.0] * n_opt + [1.0] * len(jobs) + [-highspy.kHighsInf] * len(cap))
    lp.row_upper_ = np.array([0.0] * n_opt + [1.0] * len(jobs) + [float(c) for c in cap])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    with quiet_stdout():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", int(seed))
    h.passModel(lp)
    h.run()
    ms = h.getModelStatus()
    info = h.getInfo()
    if info.primal_solution_status != highspy.SolutionStatus.kSolutionStatusFeasible:
        return None, f"no solution (HiGHS {h.modelStatusToString(ms)})", n
    x = h.getSolution().col_value
    chosen = {}
    slots: dict = {}
    for c, (a, k, t) in enumerate(cols):
        if x[c] > 0.5:
            if t < 0:
                chosen[a] = k
            else:
                slots.setdefault((a, k), []).append(t)
    plans = {}
    for a, j in enumerate(jobs):
        if a in chosen:
            k = chosen[a]
            plans[j.key] = (k, tuple(sorted(slots.get((a, k), []))))
    status = "optimal" if ms == highspy.HighsModelStatus.kOptimal else "time_limit"
    return plans, status, n
