"""One round's placement bookkeeping for SensaScale: the free pool and its free-GPU
index, the units planned so far (by job and by node), and (``cfg.stay_put``) what
the running jobs not yet planned held the round before, with the *open* index (free
and not held). Committing a plan keeps all of them and the reservations' spare GPUs
consistent. The search is :class:`~.placement.Planner`, the reservations
:mod:`.backfill`, the fragmentation repair :mod:`.repack`. Times in minutes, GPUs,
cores and GB per node."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from sensaopt.instance import Cluster
from sensaopt.policies.placement import NodePool, option_placement
from sensaopt.profiles import Option
from sensaopt.schedule import Placement

from .analysis import JobInfo
from .config import SensaScaleConfig


@dataclass
class Reservation:
    """A blocked unit's GPU reservation (:mod:`.backfill` makes them): from ``time``
    (minutes) on, others may use at most ``spare[node]`` GPUs of each reserved node."""

    time: float  # minutes
    spare: dict[int, int] = field(default_factory=dict)  # node -> GPUs others may still use past `time`
    exempt: frozenset[str] = frozenset()  # running jobs already counted as busy past `time` (if they stay)


@dataclass(eq=False, slots=True)
class Planned:
    info: JobInfo
    placements: tuple[Placement, ...]
    option: Option  # per-GPU allocation
    end: float  # estimated end, minutes


class FreeIndex:
    """Nodes bucketed by free GPUs (each bucket sorted by node index), so that a
    best-fit search visits nodes in (free GPUs, index) order without scanning the
    full nodes. ``total`` is the pool's free GPUs. Given ``source`` (the list of free
    GPUs per node it indexes), a node's moves may be left pending (:meth:`defer`)
    and are made when the buckets are next read: rounds where every job stays where
    it ran never search and never move a bucket."""

    __slots__ = ("buckets", "total", "pending", "source")

    def __init__(self, free: list[int], max_gpus: int, source: list[int] | None = None):
        """``free``: free GPUs per node; ``max_gpus``: the largest node's GPUs;
        ``source``: the live list of free GPUs per node (None: moves are never deferred)."""
        self.buckets: list[list[int]] = [[] for _ in range(max_gpus + 1)]
        for n, f in enumerate(free):
            self.buckets[f].append(n)
        self.total = sum(free)
        self.pending: dict[int, int] = {}  # node -> the bucket it is filed in (its free GPUs before the deferred moves)
        self.source = source

    def copy(self, source: list[int] | None = None) -> FreeIndex:
        """An independent copy (the buckets copied, pending moves made first) indexing ``source``."""
        self.flush()
        new = FreeIndex.__new__(FreeIndex)
        new.buckets, new.total, new.pending, new.source = [b[:] for b in self.buckets], self.total, {}, source
        return new

    def defer(self, node: int, old: int, new: int) -> None:
        """Node ``node`` now has ``new`` free GPUs (``source[node]``) instead of ``old``:
        ``total`` follows now, the buckets when next read."""
        self.pending.setdefault(node, old)
        self.total += new - old

    def flush(self) -> None:
        """Make the deferred moves (each node filed under ``source[node]``)."""
        if not self.pending:
            return
        src, buckets = self.source, self.buckets
        assert src is not None  # only an index with a source defers
        for n, old in self.pending.items():
            new = src[n]
            if old != new:
                b = buckets[old]
                del b[bisect_left(b, n)]
                insort(buckets[new], n)
        self.pending.clear()

    def move(self, node: int, old: int, new: int) -> None:
        """Node ``node`` now has ``new`` free GPUs instead of ``old``."""
        if old == new:
            return
        if self.pending:
            self.flush()
        b = self.buckets[old]
        del b[bisect_left(b, node)]
        insort(self.buckets[new], node)
        self.total += new - old

    def best_fit(self, gpus: int) -> Iterator[int]:
        """Nodes with at least ``gpus`` free GPUs, fewest free first, then by index.
        The index must not change while the iterator is in use."""
        if self.pending:
            self.flush()
        for f in range(gpus, len(self.buckets)):
            yield from self.buckets[f]


class NodeShape:
    """What a :class:`RoundPlan` needs of the cluster's nodes that no round changes,
    kept by the policy for a run: the full pool, GPUs per node, the largest node's
    GPUs, and the free-GPU index of the full pool."""

    __slots__ = ("pool", "node_gpus", "max_gpus", "free", "placements", "capacity", "fitting")

    def __init__(self, cluster: Cluster):
        """``cluster``: the run's cluster."""
        self.pool = NodePool(cluster)
        self.node_gpus = list(self.pool.gpus)  # GPUs per node (a property on Node)
        self.max_gpus = max(self.node_gpus)
        self.free = FreeIndex(self.node_gpus, self.max_gpus)
        self.placements: dict = {}  # RoundPlan.placement's memo, per run
        self.capacity = np.array(self.node_gpus, dtype=np.int64)  # GPUs per node (the pairing's arrays)
        self.fitting: dict = {}  # adjust.fill_spare's memo of _best_fitting, per run


class RoundPlan:
    """The state of one round's placement (module docstring); ``infos`` in queue
    order, most urgent first (a job's position ranks it as a holder)."""

    def __init__(self, pool: NodePool | NodeShape, now: float, cfg: SensaScaleConfig, infos: list[JobInfo] = (),  # type: ignore[assignment]
                 *, round_minutes: float):
        """``pool``: the free resources, or a :class:`NodeShape` for a full pool (its
        copy); ``now`` and ``round_minutes`` in minutes (the round length prices
        repack's budget)."""
        if isinstance(pool, NodeShape):
            shape, pool = pool, pool.pool.copy()
            self.node_gpus, self.max_gpus, self.free = shape.node_gpus, shape.max_gpus, shape.free.copy(pool.gpus)
            self._placements, self.fitting = shape.placements, shape.fitting
        else:
            self.node_gpus = [nd.gpus for nd in pool.nodes]  # GPUs per node (a property on Node)
            self.max_gpus = max(self.node_gpus)
            self.free = FreeIndex(pool.gpus, self.max_gpus, pool.gpus)
            self._placements, self.fitting = {}, {}
        self.pool, self.now, self.cfg, self.round_minutes = pool, now, cfg, round_minutes
        self.paired: set[str] = set()  # jobs placed as a pair this round (repack leaves them together)
        self.planned: dict[str, Planned] = {}
        self.by_node: dict[int, list[Planned]] = {}
        self.reservations: list[Reservation] = []
        k = len(pool.nodes)
        self.held_gpus, self.held_cpus, self.held_mem = [0] * k, [0] * k, [0.0] * k  # per node
        self.held: dict[str, tuple[Placement, ...]] = {}  # running job id -> what it held
        self.queue = infos  # every job of the round in queue order (key order: adjust.fill_spare)
        self.ranked = tuple(infos) if cfg.stay_put else ()  # queue position -> job (ends of held jobs: backfill.held_end)
        self._holders: dict[int, list[tuple[int, str]]] | None = None  # see holders (built when first read)
        self.rank: dict[str, int] = {}  # running job id -> queue position
        if cfg.stay_put:
            self._hold(infos)
        self.open = FreeIndex([f - h if f > h else 0 for f, h in zip(pool.gpus, self.held_gpus)], self.max_gpus)

    def _hold(self, infos: list[JobInfo]) -> None:
        """The running jobs of ``infos`` hold what they ran on (``held``, ``rank``
        and the held resources per node)."""
        hg, hc, hm, held, rank = self.held_gpus, self.held_cpus, self.held_mem, self.held, self.rank
        for k, info in enumerate(infos):  # most urgent first
            if info.running:
                held[info.id] = pls = info.last_placements
                rank[info.id] = k
                for q in pls:
                    n = q.node
                    hg[n] += q.gpus
                    hc[n] += q.cpus
                    hm[n] += q.mem_gb

    @property
    def holders(self) -> dict[int, list[tuple[int, str]]]:
        """Node -> (queue position, id) of the running jobs not planned yet that hold
        GPUs there, most urgent first. Built from ``held`` when first read (most rounds
        never read it), then kept by :meth:`release` and :meth:`stay`."""
        if self._holders is None:
            holders: dict[int, list[tuple[int, str]]] = {}
            rank = self.rank
            for jid, pls in self.held.items():  # in queue order: _hold fills held so, the rest only removes
                r = rank[jid]
                for q in pls:
                    holders.setdefault(q.node, []).append((r, jid))
            self._holders = holders
        return self._holders

    @property
    def exhausted(self) -> bool:
        """No GPU is free and no later unit can change the plan (no further
        reservation will be made), so placing more units is pointless."""
        if self.free.total > 0:
            return False
        return self.cfg.backfill == "none" or (self.cfg.backfill == "easy" and bool(self.reservations))

    # ---- held resources ----------------------------------------------------------------
    def release(self, info: JobInfo, move_open: bool = True) -> None:
        """``info`` is being planned now: what it held is no longer reserved for it.
        (``move_open`` False: the open index is left behind; the caller moves it, see :meth:`_sync_open`.)"""
        pls = self.held.pop(info.id, None)
        if pls is None:
            return
        gpus, hg = self.pool.gpus, self.held_gpus
        for q in pls:
            n = q.node
            old = max(0, gpus[n] - hg[n])
            hg[n] -= q.gpus
            self.held_cpus[n] -= q.cpus
            self.held_mem[n] -= q.mem_gb
            if move_open:
                self.open.move(n, old, max(0, gpus[n] - hg[n]))
            if self._holders is not None:
                self._holders[n].remove((self.rank[info.id], info.id))

    def _sync_open(self, touched: dict[int, int]) -> None:
        """Move each node of ``touched`` (node -> free minus held GPUs when the open
        index was last moved for it, possibly negative) to its bucket now, then
        forget them: one move per node for any number of unmoved releases and commits."""
        gpus, hg, opn = self.pool.gpus, self.held_gpus, self.open
        for n, was in touched.items():
            now = gpus[n] - hg[n]
            opn.move(n, was if was > 0 else 0, now if now > 0 else 0)
        touched.clear()

    def victim_rank(self, n: int) -> int:
        """Queue position of the most urgent job still holding GPUs on node ``n``
        (a large number if none): taking the node displaces at least that job."""
        h = self.holders.get(n)
        return min(h)[0] if h else 1 << 30

    def displaceable(self, n: int, lst: float | None) -> bool:
        """Whether a unit with latest start time ``lst`` (minutes; None: no laxity guard)
        may take GPUs held on node ``n``: every running job not planned yet that holds
        GPUs there has an LST of at least ``lst`` (``laxity_guard``)."""
        if lst is None:
            return True
        ranked = self.ranked
        return all(ranked[r].lst >= lst for r, _ in self.holders.get(n, ()))

    def fits_open(self, q: Placement) -> bool:
        """``q`` fits in the free resources not held by running jobs."""
        n, pool = q.node, self.pool
        return (q.gpus <= pool.gpus[n] - self.held_gpus[n] and q.cpus <= pool.cpus[n] - self.held_cpus[n]
                and q.mem_gb <= pool.mem[n] - self.held_mem[n] + 1e-9)

    def placement(self, n: int, gpus: int, opt: Option) -> Placement:
        """:func:`option_placement` of ``gpus`` GPUs on node ``n`` at ``opt``, the same
        object for the same arguments during a run (a job that keeps it then passes
        the next round's change check at identity)."""
        hit = self._placements.get((n, gpus, id(opt)))
        if hit is None:  # the option is kept in the value so that its id stays unique
            hit = self._placements[(n, gpus, id(opt))] = (opt, option_placement(self.pool.nodes[n], gpus, opt))
        return hit[1]

    # ---- plans ----------------------------------------------------------------------------
    def end(self, info: JobInfo, opt: Option, pls: tuple[Placement, ...]) -> float:
        """Estimated end (minutes): now + the change's cost + the time at ``opt``."""
        return self.now + info.change_minutes(pls) + info.time_at(opt)

    def commit(self, info: JobInfo, pls: tuple[Placement, ...], opt: Option, end: float, move_open: bool = True) -> None:
        """Plan ``info`` on ``pls`` at ``opt`` until ``end``: its resources leave the pool
        (and, past a reservation's time, that reservation's spare GPUs)."""
        pool = self.pool
        gpus = pool.gpus
        p = Planned(info, pls, opt, end)
        self.planned[info.id] = p
        hg = self.held_gpus
        free, opn, by_node = self.free, self.open, self.by_node
        pend = free.pending
        for q in pls:
            n = q.node
            old = gpus[n]
            gpus[n] = new = old - q.gpus
            pool.cpus[n] -= q.cpus
            pool.mem[n] -= q.mem_gb
            if old != new:  # FreeIndex.defer, inline (the hot path)
                if n not in pend:
                    pend[n] = old
                free.total += new - old
                if move_open:
                    h = hg[n]
                    opn.move(n, old - h if old > h else 0, new - h if new > h else 0)
            on = by_node.get(n)
            if on is None:
                by_node[n] = [p]
            else:
                on.append(p)
            if self.reservations:
                for res in self.reservations:
                    if n in res.spare and end > res.time + 1e-9 and info.id not in res.exempt:
                        res.spare[n] -= q.gpus

    def stay(self, info: JobInfo, pls: tuple[Placement, ...], opt: Option, end: float) -> None:
        """:meth:`release` then :meth:`commit` of a running job staying on ``pls``, what
        it holds, in one pass (the same arithmetic per node). The open index is not
        moved: open GPUs are free minus held GPUs, and both drop by the same GPUs on
        each node. Falls back to the two steps if ``pls`` is not what it holds."""
        jid = info.id
        if self.held.get(jid) is not pls:
            self.release(info)
            self.commit(info, pls, opt, end)
            return
        del self.held[jid]
        holders = self._holders
        hg, hc, hm, free, by_node = self.held_gpus, self.held_cpus, self.held_mem, self.free, self.by_node
        gpus, cpus, mem = self.pool.gpus, self.pool.cpus, self.pool.mem
        pend = free.pending
        p = self.planned[jid] = Planned(info, pls, opt, end)
        for q in pls:
            n, g = q.node, q.gpus
            hg[n] -= g
            hc[n] -= q.cpus
            hm[n] -= q.mem_gb
            if holders is not None:
                holders[n].remove((self.rank[jid], jid))
            old = gpus[n]
            gpus[n] = old - g
            cpus[n] -= q.cpus
            mem[n] -= q.mem_gb
            if g:  # FreeIndex.defer, inline
                if n not in pend:
                    pend[n] = old
                free.total -= g
            on = by_node.get(n)
            if on is None:
                by_node[n] = [p]
            else:
                on.append(p)
            for res in self.reservations:
                if n in res.spare and end > res.time + 1e-9 and jid not in res.exempt:
                    res.spare[n] -= g

    def uncommit(self, p: Planned) -> None:
        """Undo :meth:`commit` of ``p``: its resources free again, the reservations'
        spare GPUs given back."""
        pool, gpus, hg = self.pool, self.pool.gpus, self.held_gpus
        del self.planned[p.info.id]
        for q in p.placements:
            n = q.node
            old = gpus[n]
            gpus[n] = new = old + q.gpus
            pool.cpus[n] += q.cpus
            pool.mem[n] += q.mem_gb
            self.free.defer(n, old, new)
            self.open.move(n, max(0, old - hg[n]), max(0, new - hg[n]))
            self.by_node[n].remove(p)
            for res in self.reservations:
                if n in res.spare and p.end > res.time + 1e-9 and p.info.id not in res.exempt:
                    res.spare[n] += q.gpus
