"""What both backends share: horizon choice, the SensaScale warm start, hint values,
solution extraction into a validated :class:`Schedule`, and the common :class:`Result`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from typing import Callable

from sensaopt.exact.builder import BUILTIN_FAMILIES, FAMILIES, BuildTimeout, HorizonTooShort, Strength, Vars, _is_var, to_objective
from sensaopt.exact.data import (
    DEFAULT_MAX_VARS,
    DEFAULT_WORK_SCALE,
    ModelData,
    build_data,
    check_size,
    extra_options_from,
    pair_of,
    placements_of,
)
from sensaopt.exact.lexicographic import DEFAULT_PHASE1_SHARE, check_phase1_share, solve_lexicographic
from sensaopt.instance import Instance
from sensaopt.metrics import compute_metrics
from sensaopt.result import Result, Status, package_versions
from sensaopt.schedule import Placement, Schedule
from sensaopt.validator import check_schedule

DEFAULT_HORIZON_SLACK = 2  # rounds added to the heuristic's makespan


def relabel_identical_nodes(instance: Instance, schedule: Schedule) -> Schedule:
    """The same schedule with identical nodes renamed so that they are first used in
    index order (what the symmetry-breaking constraints require). Node permutations
    within a node type change neither feasibility nor any metric."""
    nodes = instance.cluster.nodes
    first: dict[int, int] = {}
    for seg in schedule.segments:
        for p in seg.placements:
            first[p.node] = min(first.get(p.node, seg.start), seg.start)
    mapping: dict[int, int] = {}
    groups: dict[int, list[int]] = {}
    gid = 0
    for n in nodes:  # runs of consecutive identical nodes, as in builder._sym_pairs
        if n.index > 0 and nodes[n.index - 1].type is n.type:
            groups[gid].append(n.index)
        else:
            gid = n.index
            groups[gid] = [n.index]
    for idx in groups.values():
        order = sorted(idx, key=lambda i: (first.get(i, math.inf), i))
        for new, old in zip(idx, order):
            mapping[old] = new
    segs = tuple(
        type(s)(s.job, s.start, s.rounds, tuple(Placement(mapping[p.node], p.gpus, p.cpus, p.mem_gb) for p in s.placements))
        for s in schedule.segments
    )
    return Schedule(segs, schedule.round_minutes, schedule.meta)


def prepare(instance: Instance, horizon: int | None, horizon_slack: int, warm_start: bool, work_scale: int,
            max_vars: int, heuristic: str = "sensascale"):
    """Run the heuristic, pick the horizon, extract the model data.

    Returns (data, heuristic Result, hint schedule or None)."""
    from sensaopt.simulator import simulate

    heur = simulate(instance, heuristic)
    R = instance.round_minutes
    mk = int(round(heur.metrics.makespan / R))
    H = horizon if horizon is not None else mk + horizon_slack
    hint = relabel_identical_nodes(instance, heur.schedule) if warm_start and H >= mk else None
    data = build_data(instance, H, work_scale=work_scale, extra_options=extra_options_from(heur.schedule))
    check_size(data, max_vars)
    return data, heur, hint


def hint_values(data: ModelData, v: Vars, schedule: Schedule) -> dict:
    """Values of every model variable for a validator-feasible schedule (the warm start)."""
    ev = check_schedule(data.instance, schedule)
    R = data.R
    out: dict = {}
    by_slot: dict[int, dict[str, tuple]] = {}
    for seg in schedule.segments:
        for r in range(seg.start, seg.end):
            by_slot.setdefault(r - data.start_round, {})[seg.job] = seg.placements
    for jd in data.jobs:
        k = jd.k
        fin = ev.outcomes[jd.id].finish
        fin_slot = int(round(fin / R)) - 1 - data.start_round if fin is not None else data.H
        ran, prev_set, cum = jd.init_ran, jd.init_nodes, 0
        for t in range(data.H):
            if (k, t) not in v.run:
                continue
            pls = by_slot.get(t, {}).get(jd.id)
            pair = pair_of(jd, pls) if pls else None
            if pls and pair is None:
                return {}  # not representable: no hint
            for p in jd.pairs:
                out[v.x[k, t, p]] = 1 if p == pair else 0
            if _is_var(v.rb[k, t]):
                out[v.rb[k, t]] = int(ran)
            rs = pair is not None and ran and prev_set != jd.patterns[pair[0]].nodes
            if (k, t) in v.restart:
                out[v.restart[k, t]] = int(rs)
            lost = 0
            if pair is not None:
                lost = jd.full[pair[1]] - jd.restart[pair[1]] if rs else 0
                cum += jd.full[pair[1]] - lost
            if (k, t) in v.loss:
                out[v.loss[k, t]] = lost
            out[v.cum[k, t]] = cum
            if _is_var(v.done[k, t]):
                out[v.done[k, t]] = int(t >= fin_slot)
            ran = ran or pair is not None
            prev_set = jd.patterns[pair[0]].nodes if pair is not None else None
        for d, (last, _) in enumerate(jd.deadlines):
            m = v.met[k, d]
            if _is_var(m):
                out[m] = int(last >= fin_slot) if last < data.H else int(cum + jd.best_full * (last - data.H + 1) >= jd.work_units)
        if k in v.leftover:
            out[v.leftover[k]] = max(0, -(-(jd.work_units - cum) // jd.best_full))
    used = {(p.node, r - data.start_round) for s in schedule.segments for r in range(s.start, s.end) for p in s.placements}
    for (n, t) in sorted(v.ever, key=lambda a: (a[0], a[1])):
        out[v.ever[n, t]] = int(any((n, u) in used for u in range(0, t + 1)))
    return out


def extract_schedule(data: ModelData, v: Vars, value) -> Schedule:
    """Turn solver values (``value(var) -> number``) into a validated schedule: read the
    chosen (pattern, option) per job and slot, then cut every slot after the job's
    true completion (the validator's float arithmetic may finish a job earlier than
    the model's rounded-up units)."""
    rounds: dict[int, dict[str, tuple]] = {}
    for (k, t, pair), x in v.x.items():
        if value(x) > 0.5:
            jd = data.jobs[k]
            rounds.setdefault(t + data.start_round, {})[jd.id] = placements_of(data, jd, pair)
    sched = Schedule.from_rounds(sorted(rounds.items()), data.R)
    ev = check_schedule(data.instance, sched, require_complete=False)
    cut = False
    for jd in data.jobs:
        fin = ev.outcomes[jd.id].finish
        if fin is None:
            continue
        last = int(round(fin / data.R)) - 1
        for r in list(rounds):
            if r > last and jd.id in rounds[r]:
                del rounds[r][jd.id]
                cut = True
    if cut:
        sched = Schedule.from_rounds(sorted(rounds.items()), data.R)
    return sched


def make_result(solver: str, data: ModelData, v: Vars, status: Status, value, scaled_bound: float | None,
                runtime: float, params: dict, message: str = "", scaled_objective: float | None = None,
                fallback: dict | None = None) -> Result:
    """Common Result: the METRICS objective of the extracted schedule, the solver bound
    converted to the same units, and the honest status.

    ``fallback``: the warm-start values (a known feasible model solution). When the
    solver returns no incumbent they become the incumbent; when it claims the model
    infeasible the claim contradicts them (CBC does so when its preprocessing is cut
    by the time limit), so the status becomes TIME_LIMIT."""
    schedule = metrics = objective = None
    if fallback:
        if status == Status.INFEASIBLE:
            status = Status.TIME_LIMIT
            message += "; solver claimed infeasibility although the warm start is feasible (interrupted presolve?)"
        if value is None:
            value = lambda var: fallback.get(var, 0)  # noqa: E731
            scaled_objective = None
            message += "; incumbent = warm start (solver found none)"
    if value is not None:
        schedule = extract_schedule(data, v, value)
        ev = check_schedule(data.instance, schedule)
        if ev.errors:
            status = Status.ERROR
            message = (message + "; " if message else "") + f"extracted schedule invalid: {ev.errors[0]}"
        else:
            metrics = compute_metrics(data.instance, ev)
            objective = metrics.objective
    bound = to_objective(data, scaled_bound) if scaled_bound is not None else None
    if bound is not None:
        bound = max(bound, 0.0)  # the objective (lost value, average JCT) is never negative
    if scaled_objective is not None:
        params["model_objective"] = to_objective(data, scaled_objective)
    if bound is not None and objective is not None and status == Status.OPTIMAL:
        bound = min(bound, objective)
    return Result(solver, status, objective, bound, runtime, schedule, metrics, params, package_versions(), message)


def strength_from(kw) -> Strength:
    if isinstance(kw, Strength):
        return kw
    return Strength(**(kw or {}))


def base_params(backend: str, time_limit, workers, seed, warm_start, data: ModelData, strength: Strength, v: Vars, extra=None) -> dict:
    p = {
        "backend": backend,
        "time_limit": time_limit,
        "workers": workers,
        "seed": seed,
        "warm_start": warm_start,
        "horizon": data.H,
        "work_scale": data.work_scale,
        "mem_scale": data.mem_scale,
        "obj_scale": data.obj_scale,
        "strength": asdict(strength),
        "model_size": {"x_vars": len(v.x), "constraints": sum(v.families.values()), "families": dict(v.families)},
    }
    if extra:
        p.update(extra)
    return p


def solve_exact(solver: str, instance: Instance, build_fn: Callable, run_fn: Callable, *, time_limit: float, workers: int,
                seed: int, warm_start: bool, horizon: int | None, horizon_slack: int, strength, work_scale: int,
                max_vars: int, lexicographic: bool = True, phase1_share: float = DEFAULT_PHASE1_SHARE) -> Result:
    """The flow every backend shares: data → model → warm-start hint → solve (for the
    time left of ``time_limit`` seconds) → validated Result. ``time_limit`` bounds the
    whole call: a model still being built when it runs out is abandoned (TIME_LIMIT,
    the SensaScale schedule as incumbent, no bound).

    ``build_fn(data, strength) -> (backend, vars)``; ``run_fn(backend, vars,
    seconds_left, hinted) -> (status, value function, scaled bound, message, scaled
    objective)``. ``lexicographic``: deadline loss first, then the whole objective
    (:mod:`sensaopt.exact.lexicographic`; ``phase1_share`` of the time at most for the
    first phase)."""
    t0 = time.perf_counter()
    s = strength_from(strength)
    if lexicographic:
        check_phase1_share(phase1_share)  # before the heuristic run and the build
    data, heur, hint = prepare(instance, horizon, horizon_slack, warm_start, work_scale, max_vars)
    stub_params = {"horizon": data.H, "time_limit": time_limit, "workers": workers, "seed": seed, "warm_start": warm_start}
    try:
        be, v = build_fn(data, s, t0 + time_limit)
    except HorizonTooShort as e:
        return Result(solver, Status.INFEASIBLE, None, None, time.perf_counter() - t0, None, None, stub_params, package_versions(), str(e))
    except BuildTimeout as e:
        if hint is None or set(FAMILIES) != BUILTIN_FAMILIES:
            return Result(solver, Status.TIME_LIMIT, None, None, time.perf_counter() - t0, None, None, stub_params,
                          package_versions(), f"{e}; no solution found")
        return Result(solver, Status.TIME_LIMIT, heur.objective, None, time.perf_counter() - t0, heur.schedule, heur.metrics,
                      stub_params, package_versions(), f"{e}; incumbent = the SensaScale warm start, no bound")
    hinted, vals = False, {}
    if hint is not None:
        vals = hint_values(data, v, hint)
        if vals:
            be.hint(vals)
            hinted = True
    left = max(time_limit - (time.perf_counter() - t0), 0.1)
    if set(FAMILIES) != BUILTIN_FAMILIES:
        vals = {}  # a user-added family may cut off the warm start: it is no fallback incumbent
    lex: dict | bool = False
    if lexicographic:
        status, value, bound, msg, sobj, phase1_vals, lex = solve_lexicographic(data, be, v, run_fn, left, hinted, phase1_share)
        if phase1_vals:
            vals = phase1_vals  # feasible for the phase-2 model (the warm start may not be)
    else:
        status, value, bound, msg, sobj = run_fn(be, v, left, hinted)
    params = base_params(solver, time_limit, workers, seed, warm_start, data, s, v,
                         {"hinted": hinted, "heuristic_objective": heur.objective, "lexicographic": lex})
    if status == Status.OPTIMAL:
        msg += f"; optimal within a horizon of {data.H} rounds"
    return make_result(solver, data, v, status, value, bound, time.perf_counter() - t0, params, msg, sobj, vals)


__all__ = ["solve_exact", "DEFAULT_HORIZON_SLACK", "DEFAULT_MAX_VARS", "DEFAULT_WORK_SCALE", "prepare", "hint_values", "extract_schedule",
           "make_result", "strength_from", "base_params", "relabel_identical_nodes"]
