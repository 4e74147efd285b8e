"""Safe (EASY) backfilling for SensaScale's placement.

A unit (a pair or a single job) that does not fit gets a GPU reservation on the node
(or nodes) where enough GPUs free up earliest, judged from the estimated end times of
the units already placed this round. Later units may start now only if they end
before that time or leave the reserved GPUs free ("easy": only the first blocked unit
reserves; "conservative": every blocked unit does). Reservations count GPUs only.
With ``round_reservations`` a reservation starts at the end of the round in which its
GPUs free up (a unit placed now holds its GPUs until the end of its last round), so a
unit that ends within that round may still start now. Times in minutes."""

from __future__ import annotations

import math

from .round_plan import Reservation, RoundPlan


def allowed(plan: RoundPlan, node: int, gpus: int, end: float, job: str = "") -> bool:
    """``job`` (``gpus`` GPUs on ``node`` until ``end``) does not delay a reservation."""
    for res in plan.reservations:
        spare = res.spare.get(node)
        if spare is not None and end > res.time + 1e-9 and gpus > spare and job not in res.exempt:
            return False
    return True


def reserve(plan: RoundPlan, gpus: int) -> None:
    """Reserve GPUs for a blocked unit at the earliest time they free up."""
    cfg = plan.cfg
    if cfg.backfill == "none" or (cfg.backfill == "easy" and plan.reservations):
        return
    if gpus <= plan.max_gpus:  # (the largest node's GPUs)
        _reserve_on_one_node(plan, gpus)
    else:
        _reserve_whole_nodes(plan, gpus)


def _starts(plan: RoundPlan, t: float) -> float:
    """The time (minutes) a reservation whose GPUs free up at ``t`` starts: ``t``, or with
    ``round_reservations`` the end of the round in which ``t`` falls (at least this round's
    end). Units ending by a round's end then pass :func:`allowed` exactly when their last
    round ends by it."""
    if not plan.cfg.round_reservations:
        return t
    R = plan.round_minutes
    return plan.now + R * max(1, math.ceil((t - plan.now) / R - 1e-9))


def busy(plan: RoundPlan, n: int) -> list[tuple[float, int, str]]:
    """(end, GPUs, job) on node ``n``: planned units, and running jobs not planned
    yet that still hold GPUs there (ending as they run now)."""
    out = [(p.end, p.placements[0].gpus if len(p.placements) == 1 else sum(q.gpus for q in p.placements if q.node == n), "")
           for p in plan.by_node.get(n, ())]
    if plan.held_gpus[n]:  # the holders there (not every held job: O(jobs) per node made reserve() slow)
        for k, jid in dict.fromkeys(plan.holders.get(n, ())):  # once each, should it hold two placements there
            g = sum(q.gpus for q in plan.held[jid] if q.node == n)
            if g:
                out.append((held_end(plan, k), g, jid))
    return out


def held_end(plan: RoundPlan, k: int) -> float:
    """End (minutes) of the held job at queue position ``k`` if it stays as it was
    (computed when a reservation needs it, not for every running job every round)."""
    info = plan.ranked[k]
    return plan.now + info.time_at(info.current)  # type: ignore[arg-type]  # running


def _reserve_on_one_node(plan: RoundPlan, gpus: int) -> None:
    """The node where ``gpus`` GPUs free up first, as planned jobs and the running
    jobs still holding GPUs end (those that end later are exempt: counted busy)."""
    free_gpus, held, now = plan.pool.gpus, plan.held_gpus, plan.now
    best = None  # (time, node, spare GPUs, its ends, how many of them free the GPUs)
    for n, size in enumerate(plan.node_gpus):
        if size < gpus:
            continue
        free, t = free_gpus[n] - held[n], now
        ends = sorted(busy(plan, n)) if free < gpus else []
        k = 0
        while free < gpus and k < len(ends):
            free += ends[k][1]
            t = ends[k][0]
            k += 1
        if free >= gpus and (best is None or t < best[0]):
            best = (t, n, free - gpus, ends, k)
    if best is not None:  # the running jobs ending later are exempt (counted busy)
        t, n, spare, ends, k = best
        plan.reservations.append(Reservation(_starts(plan, t), {n: spare}, frozenset(jid for _, _, jid in ends[k:] if jid)))


def _reserve_whole_nodes(plan: RoundPlan, gpus: int) -> None:
    """A multi-node unit: the earliest-freed whole nodes."""
    pool = plan.pool
    free_at = []
    for n in range(len(pool.nodes)):
        ends = [e for e, _, _ in busy(plan, n)]
        free_at.append((max(ends, default=plan.now), n))
    free_at.sort()
    chosen, left = [], gpus
    for t, n in free_at:
        if left <= 0:
            break
        chosen.append((t, n))
        left -= pool.nodes[n].gpus
    if left <= 0:
        plan.reservations.append(Reservation(_starts(plan, max(t for t, _ in chosen)), {n: 0 for _, n in chosen}))
