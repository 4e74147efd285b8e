"""Large-neighbourhood search on the exact model (issue 33 item 3; ``models/formulation.md``,
"Large-neighbourhood search").

A primal heuristic: rounds in which every job but a few is fixed to the incumbent (its
placement variables set to the incumbent's values) and CP-SAT re-optimises the free ones
for a short time, from the incumbent as a hint. A round's schedule is validated and scored
by the metrics module; it replaces the incumbent only when its objective is lower. The
neighbourhood is one job drawn at random (seeded) and the jobs that share a node with it
in the incumbent, most overlap first, then random jobs, up to ``size`` jobs; the size grows
by one after a round that CP-SAT closed (the neighbourhood was solved to optimality) and
shrinks by one after one it did not. Nothing here is a proof: the bound comes from the
solve that ran before.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sensaopt.exact.model.builder import BuildTimeout, ModelSpec
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.model.values import extract_schedule, hint_values
from sensaopt.exact.outcome import build_model, exact_params
from sensaopt.metrics import compute_metrics
from sensaopt.result import Status
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget
from sensaopt.validator import check_schedule

ROUND_S = 2.0  # seconds per round at most
MIN_ROUND_S = 0.5  # a round needs at least this much time left


@dataclass(frozen=True)
class LnsOutcome:
    """What the search did: the best schedule and its objective (metrics units), the
    objective of the start it took, rounds run, rounds that improved the incumbent, the
    neighbourhood size at the end, seconds."""

    schedule: Schedule
    objective: float
    start: float
    rounds: int
    improved: int
    size: int
    seconds: float


def score(data: ModelData, schedule: Schedule) -> float | None:
    """The metrics objective of ``schedule`` on ``data``'s instance, or None when the
    validator rejects it."""
    ev = check_schedule(data.instance, schedule)
    return None if ev.errors else compute_metrics(data.instance, ev).objective


def neighbourhood(data: ModelData, schedule: Schedule, rng: random.Random, size: int) -> set[str]:
    """Job ids to free: a random job and the jobs sharing a node with it in ``schedule``
    (most shared node-rounds first), then random jobs, ``size`` in all."""
    ids = [jd.id for jd in data.jobs]
    anchor = rng.choice(ids)
    where: dict[str, set[tuple[int, int]]] = {}
    for seg in schedule.segments:
        cells = where.setdefault(seg.job, set())
        for r in range(seg.start, seg.end):
            cells.update((p.node, r) for p in seg.placements)
    mine = where.get(anchor, set())
    near = sorted((j for j in ids if j != anchor), key=lambda j: (-len(where.get(j, set()) & mine), rng.random()))
    return {anchor, *near[: max(size - 1, 0)]}


def improve(data: ModelData, starts: list[Schedule], spec: ModelSpec, budget: TimeBudget, seed: int = 0,
            size: int | None = None) -> LnsOutcome:
    """Rounds of large-neighbourhood search until ``budget`` runs out, from the best of
    ``starts`` (valid schedules; the first is kept when no other is valid, better and
    representable in ``data``'s model); each round CP-SAT, 1 worker, seed ``seed`` +
    round, at most :data:`ROUND_S` seconds. ``size``: the first neighbourhood's jobs
    (default: a third of the jobs, at least 4)."""
    rng = random.Random(seed)
    best, best_obj = starts[0], score(data, starts[0])
    if best_obj is None:
        raise ValueError("the LNS start schedule is not valid")
    n = len(data.jobs)
    size = min(n, max(4, n // 3)) if size is None else min(max(size, 1), n)
    rounds = improved = 0
    try:
        mb = build_model(data, "cpsat", spec, budget)  # built once; each round narrows domains
    except BuildTimeout:
        return LnsOutcome(best, best_obj, best_obj, 0, 0, size, budget.elapsed())
    proto = mb.backend.model.proto
    vals = hint_values(data, mb.vars, best)
    for other in starts[1:]:
        obj = score(data, other)
        if obj is not None and obj < best_obj - 1e-9 and (ov := hint_values(data, mb.vars, other)):
            best, best_obj, vals = other, obj, ov
    first = best_obj
    while vals and budget.left() >= MIN_ROUND_S:
        free = neighbourhood(data, best, rng, size)
        mb.backend.hint(vals)
        fixed = [(x.index, int(vals[x])) for (k, _t, _p), x in mb.vars.x.items() if data.jobs[k].id not in free]
        for i, val in fixed:  # fix every other job's placements to the incumbent's
            dom = proto.variables[i].domain
            dom[0], dom[1] = val, val
        try:
            out = mb.backend.solve(budget.at_most(ROUND_S), exact_params("cpsat", 1, seed + rounds))
        finally:
            for i, _ in fixed:
                dom = proto.variables[i].domain
                dom[0], dom[1] = 0, 1
        rounds += 1
        size = min(size + 1, n) if out.status == Status.OPTIMAL else max(size - 1, 2)
        if out.value is None:
            continue
        sched = extract_schedule(data, mb.vars, out.value)
        obj = score(data, sched)
        if obj is not None and obj < best_obj - 1e-9:
            best, best_obj, improved = sched, obj, improved + 1
            vals = hint_values(data, mb.vars, best)
    return LnsOutcome(best, best_obj, first, rounds, improved, size, budget.elapsed())
