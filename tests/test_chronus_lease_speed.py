"""The array path of the Chronus lease model (``lease_model.py``, "Lease solve speed"
in ``models/chronus.md``): the arrays hand HiGHS exactly the model the per-variable
backend writing handed it, so the plans are the same; optimal against brute force;
CP-SAT on the same arrays reaches the same optimum."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from sensaopt.solvers import SolverParams, TimeBudget
from sensaopt.solvers.highs import HighsBackend, run_highs
from sensaopt.policies.chronus import lease_model as lm
from sensaopt.policies.chronus.lease_model import LeaseJob, build_lease_model, lease_arrays, new_backend, plans_of
from sensaopt.policies.chronus.selection import check_plans, objective_value
from sensaopt.result import Status


def _reference(be: HighsBackend, jobs: list[LeaseJob], capacity: list[int], sign: float) -> dict:
    """The lease model written variable by variable through the backend interface (the
    code before the array path, commit e64bef0); s and x by (a, k) / (a, k, t)."""
    maxc = max(max(capacity), 1)
    s, x, objective = {}, {}, []
    slot_terms: list[list] = [[] for _ in capacity]
    for a, j in enumerate(jobs):
        options = []
        for k, (m, v) in enumerate(j.options):
            s[a, k] = sk = be.bool_var(f"s_{a}_{k}")
            options.append(sk)
            objective.append(v * sk)
            xs = []
            for t in range(m):
                x[a, k, t] = xt = be.bool_var(f"x_{a}_{k}_{t}")
                xs.append(xt)
                slot_terms[t].append(j.r * xt)
            objective.append(sign * j.r / maxc * xs[0])
            be.add(be.sum(xs) - j.l * sk == 0, "lease")
        be.add(be.sum(options) == 1, "one_option")
    for t, terms in enumerate(slot_terms):
        if terms:
            be.add(be.sum(terms) <= capacity[t], "capacity")
    be.minimize(-be.sum(objective))
    return {"s": s, "x": x}


def _highs_inputs(be: HighsBackend):
    """What ``sensaopt.solvers.highs`` hands HiGHS for ``be``: column names, costs, CSR rows."""
    cols = be.columns()
    pos = {v: i for i, v in enumerate(cols)}
    cost = [float(be.objective.terms.get(v, 0.0)) for v in cols]
    start, index, value, lo, hi = [], [], [], [], []
    for row in be.rows:
        start.append(len(index))
        for v, c in row.terms.items():
            index.append(pos[v])
            value.append(float(c))
        lo.append(-np.inf if row.lo is None else float(row.lo))
        hi.append(np.inf if row.hi is None else float(row.hi))
    return [c.name for c in cols], cost, start, index, value, lo, hi


def _random_problem(rng: random.Random, n_jobs: int, horizon: int, max_options: int = 4):
    jobs = []
    for a in range(n_jobs):
        ell = rng.randint(1, min(horizon, 6))
        opts = tuple((rng.randint(ell, horizon), rng.choice([10.0, 8.0, 5.0, 2.0, 0.5])) for _ in range(rng.randint(1, max_options)))
        jobs.append(LeaseJob(f"j{a}", rng.choice([1, 2, 4, 8]), ell, opts))
    return jobs, [rng.randint(0, 16) for _ in range(horizon)], rng.choice([1.0, -1.0])


def test_arrays_are_the_backend_model_column_for_column():
    """Same columns (in the backend's name order, e.g. x_1_0_10 before x_1_0_2 and
    x_12_.. before x_1_..), costs and rows: HiGHS sees the model it saw before."""
    rng = random.Random(3)
    for case in range(60):
        jobs, cap, sign = _random_problem(rng, rng.randint(1, 14), rng.randint(1, 13))
        be = HighsBackend()
        _reference(be, jobs, cap, sign)
        names, cost, start, index, value, lo, hi = _highs_inputs(be)
        arr = lease_arrays(jobs, cap, sign, integer=False)
        mine = [f"s_{a}_{k}" if t < 0 else f"x_{a}_{k}_{t}" for a, k, t in zip(arr.col_job, arr.col_opt, arr.col_slot)]
        assert [mine[i] for i in arr.order] == names, case
        assert arr.cost[arr.order].tolist() == cost, case
        assert arr.row_start.tolist() == start and arr.pos[arr.row_index].tolist() == index, case
        assert arr.row_value.tolist() == value and arr.row_lo.tolist() == lo and arr.row_hi.tolist() == hi, case


def _solve(jobs, cap, sign):
    model = build_lease_model(new_backend("highs"), jobs, cap, sign)
    out = lm.run_lease_model(model, "highs", TimeBudget.start(10.0), 1, 0)
    return model, out


def test_same_plans_as_the_backend_path():
    """The array path and the backend-written model solved by ``run_highs`` choose the
    same plans (not only the same objective)."""
    rng = random.Random(5)
    for case in range(25):
        jobs, cap, sign = _random_problem(rng, rng.randint(2, 12), rng.randint(2, 10))
        be = HighsBackend()
        ref = _reference(be, jobs, cap, sign)
        ro = run_highs(be, TimeBudget.start(10.0), SolverParams(workers=1, seed=0))
        model, out = _solve(jobs, cap, sign)
        assert out.status == ro.status, case
        if ro.value is None:
            continue
        ref_plans = {}
        for (a, k), sk in ref["s"].items():
            if ro.value(sk) > 0.5:
                m = jobs[a].options[k][0]
                ref_plans[jobs[a].key] = (k, tuple(t for t in range(m) if ro.value(ref["x"][a, k, t]) > 0.5))
        assert plans_of(model, out) == ref_plans, case


def _brute(jobs, cap, sign):
    """Best objective over every (option, slot subset) per job; None when infeasible."""
    per_job = [[(k, sl) for k, (m, _) in enumerate(j.options) for sl in itertools.combinations(range(m), j.l)] for j in jobs]
    best = None
    for combo in itertools.product(*per_job):
        use = [0] * len(cap)
        for j, (_k, sl) in zip(jobs, combo):
            for t in sl:
                use[t] += j.r
        if all(u <= c for u, c in zip(use, cap)):
            v = objective_value(jobs, {j.key: c for j, c in zip(jobs, combo)}, cap, sign)
            best = v if best is None else max(best, v)
    return best


def test_array_path_equals_brute_force():
    """Tiny problems: the array path's plans are valid and their objective is the
    brute-force optimum (infeasible problems reported as such)."""
    rng = random.Random(11)
    feasible = infeasible = 0
    for case in range(60):
        horizon = rng.randint(2, 4)
        jobs = []
        for a in range(rng.randint(1, 3)):
            ell = rng.randint(1, 2)
            opts = tuple((rng.randint(ell, horizon), rng.choice([10.0, 8.0, 5.0])) for _ in range(rng.randint(1, 3)))
            jobs.append(LeaseJob(f"j{a}", rng.choice([1, 2, 4]), ell, opts))
        cap = [rng.choice([2, 4, 5]) for _ in range(horizon)]
        sign = rng.choice([1.0, -1.0])
        best = _brute(jobs, cap, sign)
        model, out = _solve(jobs, cap, sign)
        if best is None:
            assert out.status == Status.INFEASIBLE, case
            infeasible += 1
            continue
        feasible += 1
        plans = plans_of(model, out)
        assert set(plans) == {j.key for j in jobs}, case
        check_plans(jobs, plans, cap)
        assert objective_value(jobs, plans, cap, sign) == pytest.approx(best, abs=1e-9), case
    assert feasible >= 20 and infeasible >= 1


def test_cpsat_on_the_arrays_same_optimum():
    rng = random.Random(19)
    for case in range(8):
        jobs, cap, sign = _random_problem(rng, rng.randint(2, 8), rng.randint(2, 6))
        _, h = _solve(jobs, cap, sign)
        model = build_lease_model(new_backend("cpsat"), jobs, cap, sign)
        c = lm.run_lease_model(model, "cpsat", TimeBudget.start(10.0), 1, 0)
        assert (h.value is None) == (c.value is None), case
        if c.value is not None:
            plans = plans_of(model, c)
            check_plans(jobs, plans, cap)
            hv = objective_value(jobs, plans_of(*_solve(jobs, cap, sign)), cap, sign)
            assert objective_value(jobs, plans, cap, sign) == pytest.approx(hv, abs=1e-3), case


def test_outcome_objective_is_the_plans_objective():
    """The outcome's objective (minimised cost, summed without BLAS) is minus the model
    objective of the plans it holds, on problems of over 10,000 columns (where a threaded
    BLAS dot would start)."""
    rng = random.Random(23)
    for case in range(3):
        jobs = [LeaseJob(f"j{a}", rng.choice([1, 2, 4, 8]), rng.randint(1, 4), ((rng.randint(40, 60), 10.0),)) for a in range(250)]
        cap = [rng.randint(200, 400) for _ in range(60)]
        model, out = _solve(jobs, cap, -1.0)
        assert model.variables > 10_000 and out.objective is not None, case
        plans = plans_of(model, out)
        assert out.objective == pytest.approx(-objective_value(jobs, plans, cap, -1.0), abs=1e-9), case
