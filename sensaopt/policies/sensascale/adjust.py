"""Step 5 of SensaScale: deadline-aware resource adjustment (and spare filling).

For a placed job projected to miss its target deadline, move CPU and memory toward
its optimal demand: first what is free on its node, then what co-located donors can
give without hurting themselves — insensitive jobs down to their optimal demand,
deadline jobs down to what still meets their own target, best-effort jobs down to
``(1 - demand_tolerance)`` of their current speed. Only single-node jobs are resized.
"""

from __future__ import annotations

from sensaopt.instance import Change
from sensaopt.policies.placement import NodePool
from sensaopt.profiles import Option

from .config import SensaScaleConfig
from .round_plan import Planned, RoundPlan


def _resized_minutes(p: Planned) -> float:
    """Minutes ``p`` loses this round if its CPU/memory changes from the plan: its
    planned change's cost, or a resize's if the plan kept it as it was."""
    info = p.info
    kind = info.change(p.placements)
    return info.costs[Change.RESIZE] if kind is Change.NONE and info.running else info.costs[kind]


def _needed_speed(p: Planned, now: float) -> float | None:
    """Speed ``p`` needs to meet its target if resized now (the resize's cost counted)."""
    info = p.info
    if info.target is None:
        return None
    avail = info.target - now - _resized_minutes(p)
    if avail <= 0:
        return float("inf")
    return info.remaining / (avail * info.corr)


def _donor_target(p: Planned, now: float, cfg: SensaScaleConfig, short_c: int, short_m: float) -> Option:
    """The option a donor drops to: the fastest one that frees the shortfall (or as
    much of it as the donor's floor allows)."""
    if not p.info.facts.sensitive:
        need = p.info.facts.opt.speed
    elif (needed := _needed_speed(p, now)) is not None:  # None exactly when it has no target
        need = needed
    else:
        need = (1 - cfg.demand_tolerance) * p.option.speed
    g = p.info.gpus
    floor = min(need, p.option.speed) - 1e-12
    cand = [o for o in p.info.facts.options if o.speed >= floor and o.cpu <= p.option.cpu and o.mem <= p.option.mem + 1e-9]
    if not cand:
        return p.option
    covers = [o for o in cand if (p.option.cpu - o.cpu) * g >= short_c and (p.option.mem - o.mem) * g >= short_m - 1e-9]
    if covers:
        return max(covers, key=lambda o: (o.speed, -o.cpu, -o.mem))
    return min(cand, key=lambda o: (o.cpu, o.mem))


def _resize(planner: RoundPlan, p: Planned, o: Option) -> None:
    pool: NodePool = planner.pool
    pool.give_back(p.placements)
    p.placements = (planner.placement(p.placements[0].node, p.info.gpus, o),)
    pool.take(p.placements)
    p.option = o
    p.end = planner.now + p.info.change_minutes(p.placements) + p.info.time_at(o)


def _pays(planner: RoundPlan, p: Planned, o: Option) -> bool:
    """Moving ``p`` to option ``o`` on its node ends it sooner, the change's cost
    counted (a kept running job pays a resize; one already changing pays nothing more)."""
    pls = (planner.placement(p.placements[0].node, p.info.gpus, o),)
    return planner.now + p.info.change_minutes(pls) + p.info.time_at(o) < p.end - 1e-9


def _best_fitting(p: Planned, free_c: int, free_m: float, cap: float) -> Option | None:
    """Fastest option within the job's current + free resources, speed ≤ cap."""
    g = p.info.gpus
    c_max = p.option.cpu * g + free_c
    m_max = p.option.mem * g + free_m
    best = None
    for o in p.info.facts.options:
        if o.speed > cap + 1e-12:
            break
        if o.speed > p.option.speed and o.cpu * g <= c_max and o.mem * g <= m_max + 1e-9:
            best = o
    return best


def spare_bounds(p: Planned) -> tuple[Option, float, float, float, float]:
    """(``p.option``, the fewest cores, the fewest GB) any option :func:`_best_fitting`
    may return for ``p`` in :func:`fill_spare` (cap: the optimal demand's speed) takes
    for the job's GPUs (inf if there is none): with fewer free than that on top of
    its own, it returns None (x × GPUs grows with x in floating point too); then the
    option's own cores and GB for the job's GPUs (``option.cpu × GPUs``, ``option.mem × GPUs``)."""
    g, cap, cur = p.info.gpus, p.info.facts.opt.speed, p.option.speed
    c = m = float("inf")
    for o in p.info.facts.options:
        if o.speed > cap + 1e-12:
            break
        if o.speed > cur:
            c, m = min(c, o.cpu * g), min(m, o.mem * g)
    return p.option, c, m, p.option.cpu * g, p.option.mem * g


def adjust(planner: RoundPlan, cfg: SensaScaleConfig) -> int:
    """Upgrade at-risk jobs; returns how many were upgraded. With ``cfg.resize_pays``
    an upgrade happens only if it ends the job sooner, its resize cost counted."""
    pool, now = planner.pool, planner.now
    upgraded = 0
    for p in sorted(planner.planned.values(), key=lambda p: p.info.key):
        if len(p.placements) != 1 or p.info.tier != 0:
            continue
        need = _needed_speed(p, now)
        if need is None or p.option.speed >= need:
            continue
        opt = p.info.facts.opt
        # the cheapest option that meets the deadline, else the optimal demand
        goal = next((o for o in p.info.facts.options if o.speed >= need and o.speed <= opt.speed + 1e-12), opt)
        n = p.placements[0].node
        g = p.info.gpus
        short_c = max(0, round(goal.cpu * g - p.option.cpu * g - pool.cpus[n]))  # whole cores
        short_m = max(0.0, goal.mem * g - p.option.mem * g - pool.mem[n])
        if short_c > 0 or short_m > 1e-9:
            donors = [d for d in planner.by_node.get(n, ()) if d is not p and len(d.placements) == 1
                      and (not d.info.facts.sensitive or d.info.tier == 1 or d.info.key > p.info.key)]
            donors.sort(key=lambda d: (d.info.facts.sensitive, -d.info.tier, -(d.info.lst - d.end)))
            for d in donors:
                if short_c <= 0 and short_m <= 1e-9:
                    break
                fl = _donor_target(d, now, cfg, max(short_c, 0), max(short_m, 0.0))
                if fl == d.option:
                    continue
                gc = round((d.option.cpu - fl.cpu) * d.info.gpus)  # whole cores
                gm = (d.option.mem - fl.mem) * d.info.gpus
                if (short_c > 0 and gc > 0) or (short_m > 1e-9 and gm > 1e-9):
                    _resize(planner, d, fl)
                    short_c -= gc
                    short_m -= gm
        o = _best_fitting(p, pool.cpus[n], pool.mem[n], goal.speed)
        if o is not None and (not cfg.resize_pays or _pays(planner, p, o)):
            _resize(planner, p, o)
            upgraded += 1
    return upgraded


def fill_spare(planner: RoundPlan, cfg: SensaScaleConfig) -> None:
    """Hand out CPU/memory still free on each node, most urgent job first (with
    ``cfg.resize_pays``: only where it ends the job sooner, the resize cost counted)."""
    pool, planned = planner.pool, planner.planned
    cpus, mem = pool.cpus, pool.mem
    if planner.queue:  # the jobs in key order already: the planned ones among them, no sort
        get = planned.get
        order = [p for x in planner.queue if (p := get(x.id)) is not None]
    else:
        order = sorted(planned.values(), key=lambda p: p.info.key)
    memo = planner.fitting
    for p in order:
        # single-node jobs below their optimal demand (at it, _best_fitting finds nothing faster)
        pls, opt, info = p.placements, p.option, p.info
        if len(pls) != 1 or not opt.speed < info.opt_speed + 1e-12:
            continue
        n = pls[0].node
        free_c, free_m = cpus[n], mem[n]
        if free_c <= 0 and free_m <= 1e-9:
            continue
        bounds = info.spare
        if bounds is None or bounds[0] is not opt:
            bounds = info.spare = spare_bounds(p)
        if bounds[1] > bounds[3] + free_c or bounds[2] > bounds[4] + free_m + 1e-9:
            continue  # no faster option fits (_best_fitting's limits, the same floats)
        facts = info.facts
        g = info.gpus
        key = (id(facts), g, id(opt), free_c, free_m)
        hit = memo.get(key)
        if hit is None:  # facts and option kept in the value so that their ids stay unique
            hit = memo[key] = (facts, p.option, _best_fitting(p, free_c, free_m, facts.opt.speed))
        o = hit[2]
        if o is not None and (not cfg.resize_pays or _pays(planner, p, o)):
            _resize(planner, p, o)
