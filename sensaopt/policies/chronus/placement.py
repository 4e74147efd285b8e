"""One round's placement for Chronus: guaranteed jobs, then forced ones, then (inside
a lease) the running jobs keep their place, then [artifact] the odd-minute filling
pass, then the 5-minute order fills the rest; always GPU-proportional."""

from __future__ import annotations

import heapq

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
    placements are cached in the dict the policy keeps for its instance.

    ``no_room``: the fewest GPUs of a one-node job that found no node this round. Free
    resources only shrink while a round is placed (nothing is given back), and a
    proportional placement of more GPUs needs more of each resource on a node, so a
    one-node job of at least that many GPUs finds none either (:func:`put` skips it)."""

    __slots__ = ("free", "no_room")

    def __init__(self, cluster: Cluster, proportional: dict[tuple[int, int], Placement]):
        super().__init__(cluster, proportional)
        self.free = sum(self.gpus)
        self.no_room = self.max_gpus + 1

    @property
    def full(self) -> bool:
        """No job fits any more: no GPU free, or no node has room for a one-GPU job
        (then no node is wholly free either)."""
        return self.free <= 0 or self.no_room <= 1

    def take(self, placements: tuple[Placement, ...]) -> None:
        gpus, cpus, mem = self.gpus, self.cpus, self.mem
        for p in placements:  # NodePool.take, inlined (every placed job passes here)
            i = p.node
            gpus[i] -= p.gpus
            cpus[i] -= p.cpus
            mem[i] -= p.mem_gb
            self.free -= p.gpus

    def place_job(self, gpus: int, prefer: tuple[Placement, ...] | None) -> tuple[Placement, ...] | None:
        """:meth:`~sensaopt.policies.placement.NodePool.place_proportional`, with its first
        step (the previous nodes, when they still fit) inlined: most jobs a round places
        ran in the last one.

        Args:
            gpus: GPUs of the job.
            prefer: its placements of the last round (None: place it anew).

        Returns:
            The placements (not taken yet), or None if it does not fit.
        """
        if prefer is not None:
            cache, free_gpus, free_cpus, free_mem = self.proportional, self.gpus, self.cpus, self.mem
            again = []
            for p in prefer:
                i = p.node
                q = cache.get((i, p.gpus))
                if q is None:
                    q = self._proportional(self.nodes[i], p.gpus)
                if q.gpus > free_gpus[i] or q.cpus > free_cpus[i] or q.mem_gb > free_mem[i] + 1e-9:  # not NodePool.fits
                    break
                again.append(q)
            else:
                return tuple(again)
        return self.place(gpus, self._proportional)

    def give_back(self, placements: tuple[Placement, ...]) -> None:
        super().give_back(placements)
        self.no_room = self.max_gpus + 1  # room again
        for p in placements:
            self.free += p.gpus


def put(pool: ChronusPool, out: Allocation, round_state: RoundState, js: JobState) -> bool:
    """Place ``js`` GPU-proportionally (on its previous nodes when it was running and
    still fits there) into ``pool`` and ``out``; False if it does not fit this round."""
    gpus = js.spec.gpus
    if pool.free < gpus or pool.no_room <= gpus <= pool.max_gpus:
        return False
    pl = pool.place_job(gpus, js.placements if round_state.was_running(js) else None)
    if pl is None:
        if gpus <= pool.max_gpus:
            pool.no_room = gpus
        return False
    pool.take(pl)
    out[js.spec.id] = pl
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
    # the 5-minute order; its keys end with the job id, so they are distinct: any subset
    # sorted alone, or the whole drawn from a heap, comes in the order of the whole sorted
    keyed = list(zip(order_keys(others, round_state.now, rules.overruns_first), range(len(others))))
    # (every job asks for a GPU at least: once none fits, the passes below place nothing)
    forced = rules.placed_with_forced
    _pass(pool, out, round_state, [others[i] for _, i in sorted(ki for ki in keyed if forced(others[ki[1]][0]))])
    if not boundary:
        prev = round_state.round - 1
        if not pool.full:  # was running
            ran = sorted(ki for ki in keyed if others[ki[1]][1].last_round == prev and others[ki[1]][0].id not in out)
            _pass(pool, out, round_state, [others[i] for _, i in ran])
        if state.fill_budget > 0 and not pool.full:
            urgency = {k[-1]: k[2] for k, _ in keyed}  # job id -> urgency, from the keys above
            filling_pass(state, pool, out, round_state, others, urgency)
    if not pool.full:
        heapq.heapify(keyed)
        while keyed and not pool.full:
            js = others[heapq.heappop(keyed)[1]][1]
            if js.spec.id not in out:
                put(pool, out, round_state, js)
    for jid in out:
        jobs[jid].rounds_run += 1
    return out


def _pass(pool: ChronusPool, out: Allocation, round_state: RoundState, pairs: list[Pair]) -> None:
    """One placement pass over ``pairs`` in order: each (job, job state) not placed yet
    gets placed if it fits; the pass stops once no job fits any more."""
    for _job, js in pairs:
        if pool.full:
            break
        if js.spec.id not in out:
            put(pool, out, round_state, js)


def filling_pass(state: ChronusState, pool: ChronusPool, out: Allocation, round_state: RoundState, rest: list[Pair],
                 urgency: dict[str, float]) -> None:
    """The artifact's odd-minute ``filling_jobs`` on this round's budget of GPUs (those
    freed by jobs that finished in the previous round at minutes it fills), in its
    order (:func:`~.order.fill_key`, distinct keys: the order of ``rest`` does not
    matter; ``urgency``: job id -> urgency this round). Once no job fits (``pool.full``)
    the rest would be refused too."""
    budget = state.fill_budget
    pending = [p for p in rest if p[1].spec.id not in out]
    # drawn from a heap (distinct keys: the sorted order) until the budget is spent or no job fits
    keyed = list(zip(fill_keys(pending, urgency), range(len(pending))))
    heapq.heapify(keyed)
    while keyed and budget > 0 and not pool.full:
        job, js = pending[heapq.heappop(keyed)[1]]
        if job.gpus <= budget and put(pool, out, round_state, js):
            budget -= job.gpus
            state.stats.filled += 1
