"""One round's placement for Chronus: guaranteed jobs, then forced ones, then (inside
a lease) the running jobs keep their place, then [artifact] the odd-minute filling
pass, then the 5-minute order fills the rest; always GPU-proportional."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sensaopt.instance import Cluster
from sensaopt.policies.base import Allocation, JobState, RoundState
from sensaopt.policies.placement import NodePool
from sensaopt.schedule import Placement

from .order import Pair, fill_keys, order_keys
from .rules import ChronusRules
from .state import ChronusState


class ChronusPool(NodePool):
    """:class:`NodePool` with a running count of free GPUs (``free``, kept by ``take`` and
    ``give_back``; nothing here writes the per-node lists directly); the proportional
    placements are cached in the dict the policy keeps for its instance."""

    __slots__ = ("free",)

    def __init__(self, cluster: Cluster, proportional: dict[tuple[int, int], Placement]):
        super().__init__(cluster, proportional)
        self.free = sum(self.gpus)

    def take(self, placements: tuple[Placement, ...]) -> None:
        super().take(placements)
        for p in placements:
            self.free -= p.gpus

    def give_back(self, placements: tuple[Placement, ...]) -> None:
        super().give_back(placements)
        for p in placements:
            self.free += p.gpus


def put(pool: ChronusPool, out: Allocation, round_state: RoundState, js: JobState) -> bool:
    """Place ``js`` GPU-proportionally (on its previous nodes when it was running and
    still fits there) into ``pool`` and ``out``; False if it does not fit this round."""
    if pool.free < js.spec.gpus:
        return False
    pl = pool.place_proportional(js.gpus, js.placements if round_state.was_running(js) else None)
    if pl is None:
        return False
    pool.take(pl)
    out[js.id] = pl
    return True


def place_round(state: ChronusState, rules: ChronusRules, round_state: RoundState, boundary: bool) -> Allocation:
    """This round's allocation (module docstring); counts the rounds each placed job runs."""
    pool = ChronusPool(round_state.cluster, state.placement_cache)
    out: Allocation = {}
    jobs, guaranteed = state.jobs, state.guaranteed
    known = [(job, js) for js in round_state.jobs if (job := jobs[js.spec.id]).queue_class is not None]
    held = sorted((p for p in known if p[0].id in guaranteed), key=lambda p: (-p[0].gpus, p[0].arrival, p[0].id))
    for _job, js in held:
        if not put(pool, out, round_state, js):
            state.stats.guaranteed_unplaced += 1
    others = [p for p in known if p[0].id not in guaranteed]
    keyed = sorted(zip(order_keys(others, round_state.now, rules.overruns_first), others), key=_first)
    rest = [p for _, p in keyed]
    # (every job asks for a GPU at least: once none is free, the passes below place nothing)
    _pass(pool, out, round_state, rest, lambda job, js: rules.placed_with_forced(job))
    if not boundary:
        prev = round_state.round - 1
        _pass(pool, out, round_state, rest, lambda job, js: js.last_round == prev and js.id not in out)  # was running
        if state.fill_budget > 0:
            urgency = {k[-1]: k[2] for k, _ in keyed}  # job id -> urgency, from the keys above
            filling_pass(state, pool, out, round_state, rest, urgency)
    _pass(pool, out, round_state, rest, lambda job, js: js.id not in out)
    for jid in out:
        jobs[jid].rounds_run += 1
    return out


def _pass(pool: ChronusPool, out: Allocation, round_state: RoundState, pairs: list[Pair],
          wanted: Callable[[Any, Any], bool]) -> None:
    """One placement pass over ``pairs`` in order: each (job, job state) ``wanted`` gets
    placed if it fits; the pass stops once no GPU is free."""
    for job, js in pairs:
        if pool.free <= 0:
            break
        if wanted(job, js):
            put(pool, out, round_state, js)


def filling_pass(state: ChronusState, pool: ChronusPool, out: Allocation, round_state: RoundState, rest: list[Pair],
                 urgency: dict[str, float]) -> None:
    """The artifact's odd-minute ``filling_jobs`` on this round's budget of GPUs (those
    freed by jobs that finished in the previous round at minutes it fills), in its
    order (:func:`~.order.fill_key`; ``urgency``: job id -> urgency this round)."""
    budget = state.fill_budget
    pending = [p for p in rest if p[1].spec.id not in out]
    waiting = [p for _, p in sorted(zip(fill_keys(pending, urgency), pending), key=_first)]
    for job, js in waiting:
        if budget <= 0:
            break
        if job.gpus <= budget and put(pool, out, round_state, js):
            budget -= job.gpus
            state.stats.filled += 1


def _first(pair: tuple) -> tuple:
    return pair[0]
