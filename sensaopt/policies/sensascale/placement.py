"""Step 4 of SensaScale: place units in LST order with safe (EASY) backfilling.

A unit (a pair or a single job) that does not fit gets a GPU reservation on the node
(or nodes) where enough GPUs free up earliest, judged from the estimated end times of
the units already placed this round. Later units may start now only if they end
before that time or leave the reserved GPUs free ("easy": only the first blocked unit
reserves; "conservative": every blocked unit does). Reservations count GPUs only.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from dataclasses import dataclass, field

from sensaopt.instance import Node
from sensaopt.policies.placement import NodePool, option_placement
from sensaopt.profiles import Option
from sensaopt.schedule import Placement

from .analysis import JobInfo
from .config import SensaScaleConfig


@dataclass(eq=False, slots=True)
class Planned:
    info: JobInfo
    placements: tuple[Placement, ...]
    option: Option  # per-GPU allocation
    end: float  # estimated end, minutes


@dataclass
class Reservation:
    time: float  # minutes
    spare: dict[int, int] = field(default_factory=dict)  # node -> GPUs others may still use past `time`


class FreeIndex:
    """Nodes bucketed by free GPUs (each bucket sorted by node index), so that a
    best-fit search visits nodes in (free GPUs, index) order without scanning the
    full nodes. ``total`` is the pool's free GPUs."""

    __slots__ = ("buckets", "total")

    def __init__(self, free: list[int], max_gpus: int):
        self.buckets: list[list[int]] = [[] for _ in range(max_gpus + 1)]
        for n, f in enumerate(free):
            self.buckets[f].append(n)
        self.total = sum(free)

    def move(self, node: int, old: int, new: int) -> None:
        """Node ``node`` now has ``new`` free GPUs instead of ``old``."""
        if old == new:
            return
        b = self.buckets[old]
        del b[bisect_left(b, node)]
        insort(self.buckets[new], node)
        self.total += new - old

    def best_fit(self, gpus: int) -> Iterator[int]:
        """Nodes with at least ``gpus`` free GPUs, fewest free first, then by index.
        The index must not change while the iterator is in use."""
        for f in range(gpus, len(self.buckets)):
            yield from self.buckets[f]


class Planner:
    def __init__(self, pool: NodePool, now: float, cfg: SensaScaleConfig):
        self.pool, self.now, self.cfg = pool, now, cfg
        self.planned: dict[str, Planned] = {}
        self.by_node: dict[int, list[Planned]] = {}
        self.reservations: list[Reservation] = []
        self.max_gpus = max(n.gpus for n in pool.nodes)
        self.free = FreeIndex(pool.gpus, self.max_gpus)

    @property
    def exhausted(self) -> bool:
        """No GPU is free and no later unit can change the plan (no further
        reservation will be made), so placing more units is pointless."""
        if self.free.total > 0:
            return False
        return self.cfg.backfill == "none" or (self.cfg.backfill == "easy" and bool(self.reservations))

    # ---- allocation of one job on one node --------------------------------------------------
    def option_on(self, info: JobInfo, node: Node, gpus: int, free_cpu: int, free_mem: float) -> Option | None:
        """Base option if it fits the free CPU/memory, else the fastest smaller option
        keeping ``min_speed_fraction`` of the base speed."""
        base = info.facts.base[node.type]
        if base.cpu * gpus <= free_cpu and base.mem * gpus <= free_mem + 1e-9:
            return base
        floor_speed = self.cfg.min_speed_fraction * base.speed
        best = None
        for o in info.facts.options:
            if o.speed > base.speed:
                break
            if o.speed >= floor_speed and o.cpu * gpus <= free_cpu and o.mem * gpus <= free_mem + 1e-9:
                best = o
        return best

    def _end(self, info: JobInfo, opt: Option, nodes: frozenset[int]) -> float:
        return self.now + info.start_overhead(nodes) + info.time_at(opt)

    def _allowed(self, node: int, gpus: int, end: float) -> bool:
        for res in self.reservations:
            spare = res.spare.get(node)
            if spare is not None and end > res.time + 1e-9 and gpus > spare:
                return False
        return True

    def _commit(self, info: JobInfo, pls: tuple[Placement, ...], opt: Option, end: float) -> None:
        pool = self.pool
        gpus = pool.gpus
        p = Planned(info, pls, opt, end)
        self.planned[info.id] = p
        for q in pls:
            n = q.node
            old = gpus[n]
            gpus[n] = old - q.gpus
            pool.cpus[n] -= q.cpus
            pool.mem[n] -= q.mem_gb
            self.free.move(n, old, old - q.gpus)
            on = self.by_node.get(n)
            if on is None:
                self.by_node[n] = [p]
            else:
                on.append(p)
            for res in self.reservations:
                if n in res.spare and end > res.time + 1e-9:
                    res.spare[n] -= q.gpus

    # ---- units ----------------------------------------------------------------------------
    def place_single(self, info: JobInfo) -> bool:
        pool = self.pool
        if self.free.total < info.gpus:
            return False
        prev = info.js.placements if info.running else None
        chosen: dict[int, Option] = {}

        def make(node: Node, g: int) -> Placement | None:
            o = self.option_on(info, node, g, pool.cpus[node.index], pool.mem[node.index])
            if o is None:
                return None
            if self.reservations:
                end = self.now + info.overhead + info.time_at(o)  # pessimistic: a move pays overhead
                if not self._allowed(node.index, g, end):
                    return None
            chosen[node.index] = o
            return option_placement(node, g, o)

        pls = self._place(info.gpus, make, prev)
        if pls is None:
            return False
        if len(pls) == 1:  # already at its node's option
            opt = chosen[pls[0].node]
        else:  # the slowest node sets the pace: all nodes get that option
            opt = min((chosen[p.node] for p in pls), key=lambda o: o.speed)
            pls = tuple(option_placement(pool.nodes[p.node], p.gpus, opt) for p in pls)
        self._commit(info, pls, opt, self._end(info, opt, frozenset(p.node for p in pls)))
        return True

    def _place(self, gpus: int, make, prefer: tuple[Placement, ...] | None) -> tuple[Placement, ...] | None:
        """:meth:`NodePool.place` (same rule, same result) with the best-fit search
        of single-node jobs going through the free-GPU buckets."""
        pool = self.pool
        if prefer is not None:
            again = pool.place_again(prefer, make)
            if again is not None:
                return again
        if gpus > self.max_gpus:
            return pool._place_multi(gpus, make)
        nodes = pool.nodes
        for n in self.free.best_fit(gpus):
            q = make(nodes[n], gpus)
            if q is not None and pool.fits(q):
                return (q,)
        return None

    def place_pair(self, s: JobInfo, i: JobInfo, so: Option, io: Option) -> bool:
        """Both jobs on one node at their pair options; prefers a node either ran on,
        else best fit (fewest free GPUs, then lowest index)."""
        pool = self.pool
        g = s.gpus + i.gpus
        if self.free.total < g:
            return False
        need_c = s.gpus * so.cpu + i.gpus * io.cpu
        need_m = s.gpus * so.mem + i.gpus * io.mem
        end_s = self.now + s.overhead + s.time_at(so)
        end_i = self.now + i.overhead + i.time_at(io)
        end_both = max(end_s, end_i)

        def feasible(n: int) -> bool:
            if pool.gpus[n] < g or pool.cpus[n] < need_c or pool.mem[n] + 1e-9 < need_m:
                return False
            return not self.reservations or (self._allowed(n, s.gpus, end_s) and self._allowed(n, g, end_both))

        prefer = set()
        for x in (s, i):
            if x.running:
                prefer |= {p.node for p in x.last_placements}
        n_best = next((n for n in sorted(prefer, key=lambda n: (pool.gpus[n], n)) if feasible(n)), None)
        if n_best is None:
            n_best = next((n for n in self.free.best_fit(g) if feasible(n)), None)
        if n_best is None:
            return False
        best = pool.nodes[n_best]
        for x, o in ((s, so), (i, io)):
            pls = (option_placement(best, x.gpus, o),)
            self._commit(x, pls, o, self._end(x, o, frozenset({best.index})))
        return True

    def reserve(self, gpus: int) -> None:
        """Reserve GPUs for a blocked unit at the earliest time they free up."""
        if self.cfg.backfill == "none" or (self.cfg.backfill == "easy" and self.reservations):
            return
        if gpus <= max(n.gpus for n in self.pool.nodes):
            self._reserve_on_one_node(gpus)
        else:
            self._reserve_whole_nodes(gpus)

    def _reserve_on_one_node(self, gpus: int) -> None:
        """The node where ``gpus`` GPUs free up first, as planned jobs end."""
        pool = self.pool
        best = None
        for n, node in enumerate(pool.nodes):
            if node.gpus < gpus:
                continue
            free, t = pool.gpus[n], self.now
            for p in sorted(self.by_node.get(n, ()), key=lambda p: p.end):
                if free >= gpus:
                    break
                free += sum(q.gpus for q in p.placements if q.node == n)
                t = p.end
            if free >= gpus and (best is None or t < best[0]):
                best = (t, n, free - gpus)
        if best is not None:
            self.reservations.append(Reservation(best[0], {best[1]: best[2]}))

    def _reserve_whole_nodes(self, gpus: int) -> None:
        """A multi-node unit: the earliest-freed whole nodes."""
        pool = self.pool
        free_at = []
        for n in range(len(pool.nodes)):
            ends = [p.end for p in self.by_node.get(n, ())]
            free_at.append((max(ends, default=self.now), n))
        free_at.sort()
        chosen, left = [], gpus
        for t, n in free_at:
            if left <= 0:
                break
            chosen.append((t, n))
            left -= pool.nodes[n].gpus
        if left <= 0:
            self.reservations.append(Reservation(max(t for t, _ in chosen), {n: 0 for _, n in chosen}))
