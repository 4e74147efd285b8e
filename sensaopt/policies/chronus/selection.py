"""Lease-slot selection of Chronus: the MILP of ``models/chronus.md``
(:mod:`.lease_model`, written once, solved by HiGHS or CP-SAT) and the artifact's
greedy fallback, used — loudly — when the solver returns no incumbent.

Certified greedy (``certify_greedy``): the artifact's greedy is tried first, and its
plans are used without the MILP when they reach the model's per-job upper bound
(:func:`certified_greedy`): then they are an optimal solution of the MILP (exactly
optimal, where HiGHS stops within its 1e-4 relative gap). Which optimal plan is taken
among ties differs from HiGHS's (``models/chronus.md``, "Certified greedy").
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from sensaopt.result import Status
from sensaopt.solvers import TimeBudget, gc_paused, parse_budget

from . import lease_model
from .lease_model import LEASE_SOLVERS, LeaseJob, build_lease_model, new_backend, plans_of

log = logging.getLogger(__name__)

Plans = dict[Hashable, tuple[int, tuple[int, ...]]]
"""job key -> (chosen option index, its slots)."""

__all__ = ["LeaseJob", "Plans", "Selection", "certified_greedy", "check_plans", "greedy_selection", "objective_value", "solve_selection"]


@dataclass(frozen=True)
class Selection:
    """The plans of one lease solve. ``status``: the solver's (OPTIMAL; TIME_LIMIT: its
    incumbent is used); for a fallback (``fallback`` True) why it was needed
    (INFEASIBLE, TIME_LIMIT without incumbent, ERROR), FEASIBLE when greedy was
    configured. ``solve_s`` wall seconds; ``objective`` of the plans (model units);
    ``safety_net``: under a work budget the wall-clock limit stopped the solve (not deterministic)."""

    plans: Plans
    status: Status
    solver: str
    fallback: bool = False
    reason: str = ""  # why the fallback was used
    solve_s: float = 0.0
    objective: float | None = None
    variables: int = 0
    safety_net: bool = False
    certified: bool = False  # the greedy's plans, proven optimal by the upper bound (no MILP solved)


def objective_value(jobs: list[LeaseJob], plans: Plans, capacity: list[int], sign: float) -> float:
    """The model objective of ``plans`` (values plus the signed slot-0 tie-break)."""
    maxc = max(capacity) if capacity else 1
    maxc = maxc if maxc > 0 else 1
    v = 0.0
    for j in jobs:
        if j.key in plans:
            k, slots = plans[j.key]
            v += j.options[k][1] + sign * j.r * (1 if 0 in slots else 0) / maxc
    return v


def check_plans(jobs: list[LeaseJob], plans: Plans, capacity: list[int]) -> None:
    """Raise AssertionError if ``plans`` break the model's constraints (partial
    selections allowed: used to check fallbacks and solver output alike)."""
    byk = {j.key: j for j in jobs}
    used: list[int] = []  # every slot taken, once per job taking it
    gpus: list[int] = []  # the GPUs of the job taking it
    for key, (k, slots) in plans.items():
        j = byk[key]
        m = j.options[k][0]
        assert len(slots) == j.l and len(set(slots)) == j.l, (key, slots, j.l)
        assert not slots or (min(slots) >= 0 and max(slots) < m), (key, slots, m)
        used += slots
        gpus += [j.r] * j.l
    use = np.bincount(np.asarray(used, dtype=np.int64), weights=np.asarray(gpus, dtype=float), minlength=len(capacity))
    assert len(use) == len(capacity) and bool((use <= np.asarray(capacity, dtype=float)).all()), "capacity exceeded"


def greedy_selection(jobs: list[LeaseJob], capacity: list[int]) -> Plans:
    """The artifact's fallback: candidates (job, option) sorted by
    (-value, -r, slack m - l, -m); each job takes its first candidate whose ``l``
    latest feasible slots (from m-1 backwards) have room. Jobs may stay unplanned."""
    cap = list(capacity)
    cands = [(j, k) for j in jobs for k in range(len(j.options))]
    cands.sort(key=lambda c: (-c[0].options[c[1]][1], -c[0].r, c[0].options[c[1]][0] - c[0].l, -c[0].options[c[1]][0]))
    plans: Plans = {}
    for j, k in cands:
        if j.key in plans:
            continue
        m = min(j.options[k][0], len(cap))
        got: list[int] = []
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


def upper_bound(jobs: list[LeaseJob], capacity: list[int], sign: float) -> float:
    """An upper bound on the model objective: each job alone at its best option, the
    slot-0 tie-break counted as if capacity never bound (sign > 0: every job in slot 0;
    sign < 0: only a job whose option leaves no other choice, ``l == m``)."""
    maxc = max(capacity) if capacity else 1
    maxc = maxc if maxc > 0 else 1
    if sign > 0:
        return sum(max(v for _, v in j.options) + sign * j.r / maxc for j in jobs)
    return sum(max(v + sign * j.r * (1 if j.l == m else 0) / maxc for m, v in j.options) for j in jobs)


def certified_greedy(jobs: list[LeaseJob], capacity: list[int], sign: float) -> tuple[Plans, float] | None:
    """:func:`greedy_selection`'s plans and their objective when every job is planned
    and the objective reaches :func:`upper_bound` (so the plans are optimal for the
    MILP); else None. ``capacity`` covers every slot below the largest ``m``."""
    plans = greedy_selection(jobs, capacity)
    if len(plans) < len(jobs):
        return None
    value = objective_value(jobs, plans, capacity, sign)
    return (plans, value) if value >= upper_bound(jobs, capacity, sign) - 1e-9 else None


def solve_selection(
    jobs: list[LeaseJob],
    capacity: list[int],
    sign: float = 1.0,
    *,
    solver: str = "highs",
    time_limit: float = 5.0,
    threads: int = 1,
    seed: int = 0,
    budget: str | None = None,
    certify_greedy: bool = False,
) -> Selection:
    """Solve the lease MILP (``solver``: highs, cpsat, or greedy for the fallback only)
    within ``time_limit`` seconds (under a work ``budget``, "work:N", within N work units,
    ``time_limit`` the safety net); on any solver failure (no incumbent in the time
    limit, infeasible model, solver error) fall back to :func:`greedy_selection` and
    say so in the returned ``fallback``, status and reason (never silently).
    ``certify_greedy``: first try :func:`certified_greedy`; when it certifies, its
    plans are returned (OPTIMAL, ``certified``) and no MILP is built."""
    clock = TimeBudget.start(time_limit, parse_budget(budget, "chronus budget"))
    if not jobs:
        return Selection(plans={}, status=Status.OPTIMAL, solver=solver, objective=0.0)
    horizon = max(m for j in jobs for m, _ in j.options)
    cap = list(capacity[:horizon]) + [0] * max(0, horizon - len(capacity))
    if solver == "greedy":
        plans = greedy_selection(jobs, cap)
        return Selection(plans=plans, status=Status.FEASIBLE, solver=solver, fallback=True, reason="greedy selected by configuration",
                         solve_s=clock.elapsed(), objective=objective_value(jobs, plans, cap, sign))
    if solver not in LEASE_SOLVERS:
        raise ValueError(f"unknown lease solver {solver!r} ({', '.join(LEASE_SOLVERS)}, greedy)")
    if certify_greedy and (got := certified_greedy(jobs, cap, sign)) is not None:
        return Selection(plans=got[0], status=Status.OPTIMAL, solver=solver, solve_s=clock.elapsed(), objective=got[1],
                         certified=True)
    nvar, status, reason = 0, Status.ERROR, ""
    found: Plans | None = None
    try:
        with gc_paused():
            model = build_lease_model(new_backend(solver), jobs, cap, sign)
            nvar = model.variables
            out = lease_model.run_lease_model(model, solver, clock, threads, seed)
            status = out.status
            if out.value is not None:
                found = plans_of(model, out)
            else:
                reason = f"no solution ({out.message})"
    except Exception as exc:  # solver crash: fall back, loudly
        reason = f"error: {type(exc).__name__}: {exc}"
    if found is None:
        plans = greedy_selection(jobs, cap)
        log.warning("chronus lease MILP (%s) failed (%s); greedy fallback planned %d of %d jobs", solver, reason, len(plans), len(jobs))
        return Selection(plans=plans, status=status, solver=solver, fallback=True, reason=reason, solve_s=clock.elapsed(),
                         objective=objective_value(jobs, plans, cap, sign), variables=nvar, safety_net=fired(clock))
    check_plans(jobs, found, cap)
    return Selection(plans=found, status=status if status == Status.OPTIMAL else Status.TIME_LIMIT, solver=solver,
                     solve_s=clock.elapsed(), objective=objective_value(jobs, found, cap, sign), variables=nvar,
                     safety_net=fired(clock))


def fired(clock: TimeBudget) -> bool:
    """Under a work limit, whether the wall-clock safety net stopped the solve."""
    return clock.work is not None and clock.work.safety_net
