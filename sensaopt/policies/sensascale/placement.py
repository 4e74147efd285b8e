"""Step 4 of SensaScale: place units in LST order with safe (EASY) backfilling.

A unit (a pair or a single job) that does not fit gets a GPU reservation on the node
(or nodes) where enough GPUs free up earliest, judged from the estimated end times of
the units already placed this round. Later units may start now only if they end
before that time or leave the reserved GPUs free ("easy": only the first blocked unit
reserves; "conservative": every blocked unit does). Reservations count GPUs only.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator
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
    exempt: frozenset[str] = frozenset()  # running jobs already counted as busy past `time` (if they stay)


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


def _unit_order(u: tuple) -> tuple:
    """Repack's order of the jobs to move off a node: (added minutes, −GPUs, id)."""
    return u[:3]


class Planner:
    """One round's placement state: the free pool, the units planned so far, the
    reservations, and (``cfg.stay_put``) what running jobs not yet planned held the
    round before. Units search first among *open* resources (free and not held), so a
    newcomer does not take a running job's GPUs or CPU while another node has room;
    only if nothing open fits does a waiting job take held resources, those of the
    least urgent holders (who then move to open room or pause). A running job whose
    place was taken moves only to open room, never displacing another holder (that
    would cascade: one migration per round per displaced job)."""

    def __init__(self, pool: NodePool, now: float, cfg: SensaScaleConfig, infos: list[JobInfo] = (),  # type: ignore[assignment]
                 *, round_minutes: float):
        """``now`` and ``round_minutes`` in minutes (the round length prices repack's budget)."""
        self.pool, self.now, self.cfg, self.round_minutes = pool, now, cfg, round_minutes
        self.paired: set[str] = set()  # jobs placed as a pair this round (repack leaves them together)
        self.repacks_left = cfg.repack_limit
        self.repack_failed = 1 << 30  # smallest job size for which repack found no node this round
        self.planned: dict[str, Planned] = {}
        self.by_node: dict[int, list[Planned]] = {}
        self.reservations: list[Reservation] = []
        self.node_gpus = [nd.gpus for nd in pool.nodes]  # GPUs per node (a property on Node)
        self.max_gpus = max(self.node_gpus)
        self.free = FreeIndex(pool.gpus, self.max_gpus)
        k = len(pool.nodes)
        self.hg, self.hc, self.hm = [0] * k, [0] * k, [0.0] * k  # held GPUs, cores, GB per node
        self.held: dict[str, tuple[Placement, ...]] = {}  # running job id -> what it held
        self.ranked = tuple(infos) if cfg.stay_put else ()  # queue position -> job (ends of held jobs: _held_end)
        self.holders: dict[int, list[tuple[int, str]]] = {}  # node -> (queue position, id) of the jobs holding GPUs there
        self.rank: dict[str, int] = {}
        if cfg.stay_put:
            hg, hc, hm, holders = self.hg, self.hc, self.hm, self.holders
            for k, info in enumerate(infos):  # most urgent first
                if info.running:
                    self.held[info.id] = info.last_placements
                    self.rank[info.id] = k
                    for q in info.last_placements:
                        n = q.node
                        hg[n] += q.gpus
                        hc[n] += q.cpus
                        hm[n] += q.mem_gb
                        h = holders.get(n)
                        if h is None:
                            holders[n] = [(k, info.id)]
                        else:
                            h.append((k, info.id))
        self.open = FreeIndex([max(0, f - h) for f, h in zip(pool.gpus, self.hg)], self.max_gpus)

    @property
    def exhausted(self) -> bool:
        """No GPU is free and no later unit can change the plan (no further
        reservation will be made), so placing more units is pointless."""
        if self.free.total > 0:
            return False
        return self.cfg.backfill == "none" or (self.cfg.backfill == "easy" and bool(self.reservations))

    # ---- held resources ----------------------------------------------------------------
    def _open_gpus(self, n: int) -> int:
        return max(0, self.pool.gpus[n] - self.hg[n])

    def release(self, info: JobInfo, move_open: bool = True) -> None:
        """``info`` is being planned now: what it held is no longer reserved for it.
        (``move_open`` False: the open index is left behind, for :meth:`_stay` only.)"""
        pls = self.held.pop(info.id, None)
        if pls is None:
            return
        gpus, hg = self.pool.gpus, self.hg
        for q in pls:  # _open_gpus inlined
            n = q.node
            old = max(0, gpus[n] - hg[n])
            hg[n] -= q.gpus
            self.hc[n] -= q.cpus
            self.hm[n] -= q.mem_gb
            if move_open:
                self.open.move(n, old, max(0, gpus[n] - hg[n]))
            self.holders[n].remove((self.rank[info.id], info.id))

    def _victim_rank(self, n: int) -> int:
        """Queue position of the most urgent job still holding GPUs on node ``n``
        (a large number if none): taking the node displaces at least that job."""
        h = self.holders.get(n)
        return min(h)[0] if h else 1 << 30

    def _fits_open(self, q: Placement) -> bool:
        n, pool = q.node, self.pool
        return (q.gpus <= pool.gpus[n] - self.hg[n] and q.cpus <= pool.cpus[n] - self.hc[n]
                and q.mem_gb <= pool.mem[n] - self.hm[n] + 1e-9)

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

    def _end(self, info: JobInfo, opt: Option, pls: tuple[Placement, ...]) -> float:
        """Estimated end (minutes): now + the change's cost + the time at ``opt``."""
        return self.now + info.change_minutes(pls) + info.time_at(opt)

    def _allowed(self, node: int, gpus: int, end: float, job: str = "") -> bool:
        """``job`` (``gpus`` GPUs on ``node`` until ``end``) does not delay a reservation."""
        for res in self.reservations:
            spare = res.spare.get(node)
            if spare is not None and end > res.time + 1e-9 and gpus > spare and job not in res.exempt:
                return False
        return True

    def _commit(self, info: JobInfo, pls: tuple[Placement, ...], opt: Option, end: float, move_open: bool = True) -> None:
        pool = self.pool
        gpus = pool.gpus
        p = Planned(info, pls, opt, end)
        self.planned[info.id] = p
        hg = self.hg
        for q in pls:  # _open_gpus inlined
            n = q.node
            old = gpus[n]
            old_open = max(0, old - hg[n])
            gpus[n] = new = old - q.gpus
            pool.cpus[n] -= q.cpus
            pool.mem[n] -= q.mem_gb
            self.free.move(n, old, new)
            if move_open:
                self.open.move(n, old_open, max(0, new - hg[n]))
            on = self.by_node.get(n)
            if on is None:
                self.by_node[n] = [p]
            else:
                on.append(p)
            for res in self.reservations:
                if n in res.spare and end > res.time + 1e-9 and info.id not in res.exempt:
                    res.spare[n] -= q.gpus

    def _uncommit(self, p: Planned) -> None:
        """Undo :meth:`_commit` of ``p``: its resources free again, the reservations'
        spare GPUs given back."""
        pool, gpus, hg = self.pool, self.pool.gpus, self.hg
        del self.planned[p.info.id]
        for q in p.placements:
            n = q.node
            old = gpus[n]
            gpus[n] = new = old + q.gpus
            pool.cpus[n] += q.cpus
            pool.mem[n] += q.mem_gb
            self.free.move(n, old, new)
            self.open.move(n, max(0, old - hg[n]), max(0, new - hg[n]))
            self.by_node[n].remove(p)
            for res in self.reservations:
                if n in res.spare and p.end > res.time + 1e-9 and p.info.id not in res.exempt:
                    res.spare[n] += q.gpus

    # ---- units ----------------------------------------------------------------------------
    def _keep(self, info: JobInfo) -> tuple[tuple[Placement, ...], Option] | None:
        """A running job's placements of the round before, if they still fit (and the
        reservations allow them): no change, no cost."""
        pls = info.last_placements
        pool = self.pool
        if len(pls) == 1:  # the common case, without a generator
            if not pool.fits(pls[0]):
                return None
        elif not all(pool.fits(q) for q in pls):
            return None
        opt = info.current
        assert opt is not None  # running
        if self.reservations:
            end = self.now + info.time_at(opt)
            if not all(self._allowed(q.node, q.gpus, end, info.id) for q in pls):
                return None
        return pls, opt

    def place_single(self, info: JobInfo) -> bool:
        pool = self.pool
        if self.free.total < info.gpus:  # (release changes neither the free pool nor the reservations:
            self.release(info)           # it may come after the checks that read them)
            return False
        keep = self._keep(info) if (self.cfg.stay_put and info.running) else None
        if keep is not None and self._stay_if_it_wins(info, keep):  # what the search below would end with, without the search
            return True
        self.release(info)
        prev = info.js.placements if info.running else None
        chosen: dict[int, Option] = {}
        single = info.gpus <= self.max_gpus

        def make(node: Node, g: int, cpus: int, mem: float) -> Placement | None:
            o = self.option_on(info, node, g, cpus, mem)
            if o is None:
                return None
            q = option_placement(node, g, o)
            if self.reservations:
                oh = info.change_minutes((q,)) if single else info.move_minutes
                if not self._allowed(node.index, g, self.now + oh + info.time_at(o), info.id):
                    return None
            chosen[node.index] = o
            return q

        def make_free(node: Node, g: int) -> Placement | None:
            n = node.index
            return make(node, g, pool.cpus[n], pool.mem[n])

        def make_open(node: Node, g: int) -> Placement | None:
            n = node.index
            q = make(node, g, pool.cpus[n] - self.hc[n], pool.mem[n] - self.hm[n])
            return q if q is not None and self._fits_open(q) else None

        pls = self._place(info.gpus, make_free, prev, make_open, info.running)
        opt: Option | None = None
        if pls is not None and len(pls) > 1:  # the slowest node sets the pace: all nodes get that option
            opt = min((chosen[p.node] for p in pls), key=lambda o: o.speed)
            pls = tuple(option_placement(pool.nodes[p.node], p.gpus, opt) for p in pls)
        elif pls is not None:
            opt = chosen[pls[0].node]
        pls, opt = self._keep_if_as_fast(info, keep, pls, opt)
        if pls is None or opt is None:
            return False
        self._commit(info, pls, opt, self._end(info, opt, pls))
        return True

    def _keep_if_as_fast(self, info: JobInfo, keep: tuple[tuple[Placement, ...], Option] | None, pls: tuple[Placement, ...] | None,
                         opt: Option | None) -> tuple[tuple[Placement, ...] | None, Option | None]:
        """``keep`` (if not None) when staying as it was is as fast as the search's
        ``pls`` at ``opt`` (change costs included; None: the search found nothing),
        else (pls, opt)."""
        if keep is not None and (pls is None or self._end(info, keep[1], keep[0]) <= self._end(info, opt, pls) + 1e-9):  # type: ignore[arg-type]  # opt is set with pls
            return keep
        return pls, opt

    def _stay_if_it_wins(self, info: JobInfo, keep: tuple[tuple[Placement, ...], Option]) -> bool:
        """:meth:`_stay` if :meth:`_keep_wins`; whether it did."""
        end = self._keep_wins(info, keep)
        if end is None:
            return False
        self._stay(info, *keep, end)
        return True

    def _stay(self, info: JobInfo, pls: tuple[Placement, ...], opt: Option, end: float) -> None:
        """:meth:`release` then :meth:`_commit` of a job staying on the placements it
        holds. The open index is not moved: open GPUs are free minus held GPUs, and
        both drop by the same GPUs on each node, so the two moves would cancel out."""
        same = self.held.get(info.id) is pls
        self.release(info, move_open=not same)
        self._commit(info, pls, opt, end, move_open=not same)

    def _keep_wins(self, info: JobInfo, keep: tuple[tuple[Placement, ...], Option]) -> float | None:
        """The end of staying as it was (``keep``) if that is no later than anything
        the search of :meth:`place_single` can return, whatever it returns (else None):
        the search gives a node type's base option or a slower one, so no placement
        ends sooner than at the fastest base speed with the cheapest change. Then the
        search is skipped (its result would lose the ``<=`` comparison to ``keep``)."""
        top = info.facts.top_base_speed
        least = min(info.c_none, info.c_mig, info.c_resize)  # nan (no cost table): never true below
        end = self._end(info, keep[1], keep[0])
        return end if end <= self.now + least + info.remaining / (top * info.corr) + 1e-9 else None

    def _place(self, gpus: int, make, prefer: tuple[Placement, ...] | None, make_open=None,
               open_only: bool = False) -> tuple[Placement, ...] | None:
        """:meth:`NodePool.place` (same rule: the previous nodes, else best fit) with the
        best-fit search of single-node jobs going through the free-GPU buckets; given
        ``make_open`` and held resources, both steps are tried among open resources
        (``make_open``) before held ones (``make``; the least urgent holders' first;
        not at all with ``open_only``)."""
        pool = self.pool
        two = bool(self.held) and make_open is not None
        for mk in ((make_open, make) if two else (make,)):
            if two and mk is make and open_only:
                break
            if prefer is not None:
                again = pool.place_again(prefer, mk)
                if again is not None:
                    return again
            if gpus > self.max_gpus:
                found = pool._place_multi(gpus, mk) if mk is make_open or not self.held else self._place_multi_displacing(gpus, mk)
                if found is not None:
                    return found
                continue
            nodes = pool.nodes
            if mk is make_open or not self.held:
                order: Iterable[int] = (self.open if mk is make_open else self.free).best_fit(gpus)
            else:  # taking held GPUs: displace the least urgent holders
                order = sorted(self.free.best_fit(gpus), key=lambda n: (-self._victim_rank(n), pool.gpus[n], n))
            for n in order:
                q = mk(nodes[n], gpus)
                if q is not None and pool.fits(q):
                    return (q,)
        return None

    def _place_multi_displacing(self, gpus: int, make) -> tuple[Placement, ...] | None:
        """:meth:`NodePool._place_multi` (whole nodes, then at most one partial node)
        with nodes taken in order of their least urgent holders first."""
        pool = self.pool
        nodes = pool.nodes
        whole = [i for i, nd in enumerate(nodes) if pool.gpus[i] == nd.gpus]
        whole.sort(key=lambda i: (-self._victim_rank(i), -nodes[i].gpus, i))
        out, left, used = [], gpus, set()
        for i in whole:
            if nodes[i].gpus > left:
                continue
            q = make(nodes[i], nodes[i].gpus)
            if q is None or not pool.fits(q):
                continue
            out.append(q)
            used.add(i)
            left -= nodes[i].gpus
            if left == 0:
                return tuple(out)
        rest = sorted((i for i in range(len(nodes)) if i not in used and pool.gpus[i] >= left),
                      key=lambda i: (-self._victim_rank(i), pool.gpus[i], i))
        for i in rest:
            q = make(nodes[i], left)
            if q is not None and pool.fits(q):
                return tuple(out) + (q,)
        return None

    def place_pair(self, s: JobInfo, i: JobInfo, so: Option, io: Option) -> bool:
        """Both jobs on one node at their pair options; prefers a node either ran on,
        else best fit (fewest free GPUs, then lowest index); with ``stay_put``, open
        resources before resources held by other running jobs."""
        pool = self.pool
        self.release(s)
        self.release(i)
        g = s.gpus + i.gpus
        if self.free.total < g:
            return False
        need_c = s.gpus * so.cpu + i.gpus * io.cpu
        need_m = s.gpus * so.mem + i.gpus * io.mem
        nodes = pool.nodes

        def feasible(n: int, held: bool) -> bool:
            hg, hc, hm = (self.hg[n], self.hc[n], self.hm[n]) if held else (0, 0, 0.0)
            if pool.gpus[n] - hg < g or pool.cpus[n] - hc < need_c or pool.mem[n] - hm + 1e-9 < need_m:
                return False
            if not self.reservations:
                return True
            ps, pi = (option_placement(nodes[n], s.gpus, so),), (option_placement(nodes[n], i.gpus, io),)
            end_s = self._end(s, so, ps)
            end_both = max(end_s, self._end(i, io, pi))
            return self._allowed(n, s.gpus, end_s, s.id) and self._allowed(n, g, end_both, i.id)

        prefer = set()
        for x in (s, i):
            if x.running:
                prefer |= {p.node for p in x.last_placements}
        pref = sorted(prefer, key=lambda n: (pool.gpus[n], n))
        n_best = None
        for held in ((True, False) if self.held else (False,)):
            n_best = next((n for n in pref if feasible(n, held)), None)
            if n_best is None:
                n_best = next((n for n in (self.open if held else self.free).best_fit(g) if feasible(n, held)), None)
            if n_best is not None:
                break
        if n_best is None:
            return False
        best = nodes[n_best]
        self.paired.update((s.id, i.id))
        for x, o in ((s, so), (i, io)):
            pls = (option_placement(best, x.gpus, o),)
            self._commit(x, pls, o, self._end(x, o, pls))
        return True

    def repack(self, info: JobInfo) -> bool:
        """Make room on one node for a single-node job that fits nowhere although enough
        GPUs are free in total (fragmentation), by moving single jobs planned this round
        (not pair members) off that node into open room elsewhere, at their planned
        per-GPU option; then place ``info`` (:meth:`place_single`). A node qualifies if
        the moves cost less than one round of ``info``'s GPUs (Σ moved GPUs × added
        change minutes < ``info.gpus`` × round minutes; moving a job placed this round
        from a pause or the queue adds nothing, one that stayed put pays a migration)
        and push no moved job past its target deadline; nodes are tried cheapest first.
        Undone if ``info`` still does not fit. At most ``cfg.repack_limit`` tries per
        round, and none for a size at least one that found no node this round.
        Returns whether ``info`` was placed."""
        g = info.gpus
        # the movers go to open room elsewhere and node n ends with g open GPUs: the
        # open GPUs now must add up to g
        if self.repacks_left <= 0 or g > self.max_gpus or self.open.total < g or g >= self.repack_failed:
            return False
        self.repacks_left -= 1
        cands = self._repack_candidates(g)
        if not cands:
            self.repack_failed = g  # not tried again this round for g GPUs or more
            return False
        for _cost, n, movers in sorted(cands, key=lambda c: (c[0], c[1]))[:2]:
            moved = self._move_off(n, movers)
            if moved is not None:
                if self.place_single(info):
                    return True
                self._undo_moves(moved)
        return False

    def _repack_candidates(self, g: int) -> list[tuple[float, int, list[Planned]]]:
        """(cost, node, movers) of the nodes :meth:`repack` may clear for a ``g``-GPU
        job: the planned single jobs to move off (free moves first, then larger jobs)
        until ``g`` GPUs are open there, costing less than one round of ``g`` GPUs.
        Stops at the second node that costs nothing (none after it ranks before it)."""
        gpus, hg, by_node, paired = self.pool.gpus, self.hg, self.by_node, self.paired
        budget = g * self.round_minutes
        cands: list[tuple[float, int, list[Planned]]] = []
        free_moves = 0
        for n, size in enumerate(self.node_gpus):
            if free_moves == 2:
                break
            need = g - max(0, gpus[n] - hg[n])  # open GPUs to clear there (holders stay)
            if size - hg[n] < g or need <= 0:
                continue
            singles, total = [], 0
            for p in by_node.get(n, ()):
                pl = p.placements
                if len(pl) == 1 and p.info.id not in paired:
                    singles.append(p)
                    total += pl[0].gpus
            if total < need:
                continue  # even moving them all would not clear enough
            units = [(self._move_cost(p), -p.placements[0].gpus, p.info.id, p) for p in singles]
            units.sort(key=_unit_order)
            movers, cost, got = [], 0.0, 0
            for added, neg_g, _id, p in units:
                if got >= need:
                    break
                movers.append(p)
                cost -= added * neg_g
                got -= neg_g
            if got >= need and cost < budget:
                cands.append((cost, n, movers))
                free_moves += cost == 0.0
        return cands

    def _undo_moves(self, moved: list[tuple[Planned, Planned]]) -> None:
        """Put the (old, new) plans of :meth:`_move_off` back as they were, last first."""
        for old, new in reversed(moved):
            self._uncommit(new)
            self._commit(old.info, old.placements, old.option, old.end)

    def _move_cost(self, p: Planned) -> float:
        """Minutes a planned single-node job would lose on top of its plan if moved
        to another node (0 if it was not going to stay where it ran). Its planned
        change cost is read off its planned end (now + change minutes + time at its
        option) rather than classified again."""
        planned_change = p.end - self.now - p.info.time_at(p.option)
        return max(0.0, p.info.move_minutes - planned_change)

    def _move_off(self, n: int, movers: list[Planned]) -> list[tuple[Planned, Planned]] | None:
        """Move ``movers`` off node ``n`` into open room on other nodes (best fit, the
        reservations respected, no target deadline newly missed); (old, new) plans, or
        None (and nothing changed) if one of them has nowhere to go."""
        done: list[tuple[Planned, Planned]] = []
        nodes = self.pool.nodes
        for p in movers:
            info, opt, g = p.info, p.option, p.placements[0].gpus
            self._uncommit(p)
            target = None
            for m in self.open.best_fit(g):
                if m == n:
                    continue
                q = option_placement(nodes[m], g, opt)
                end = self._end(info, opt, (q,))
                if info.target is not None and end > info.target + 1e-9 >= p.end:
                    continue
                if self.pool.fits(q) and self._fits_open(q) and (not self.reservations or self._allowed(m, g, end, info.id)):
                    target = (q, end)
                    break
            if target is None:
                self._commit(info, p.placements, opt, p.end)
                self._undo_moves(done)
                return None
            self._commit(info, (target[0],), opt, target[1])
            done.append((p, self.planned[info.id]))
        return done

    def reserve(self, gpus: int) -> None:
        """Reserve GPUs for a blocked unit at the earliest time they free up."""
        if self.cfg.backfill == "none" or (self.cfg.backfill == "easy" and self.reservations):
            return
        if gpus <= max(n.gpus for n in self.pool.nodes):
            self._reserve_on_one_node(gpus)
        else:
            self._reserve_whole_nodes(gpus)

    def _busy(self, n: int) -> list[tuple[float, int, str]]:
        """(end, GPUs, job) on node ``n``: planned units, and running jobs not planned
        yet that still hold GPUs there (ending as they run now)."""
        out = [(p.end, p.placements[0].gpus if len(p.placements) == 1 else sum(q.gpus for q in p.placements if q.node == n), "")
               for p in self.by_node.get(n, ())]
        if self.hg[n]:  # the holders there (not every held job: O(jobs) per node made reserve() slow)
            for k, jid in dict.fromkeys(self.holders[n]):  # once each, should it hold two placements there
                g = sum(q.gpus for q in self.held[jid] if q.node == n)
                if g:
                    out.append((self._held_end(k), g, jid))
        return out

    def _held_end(self, k: int) -> float:
        """End (minutes) of the held job at queue position ``k`` if it stays as it was
        (computed when a reservation needs it, not for every running job every round)."""
        info = self.ranked[k]
        return self.now + info.time_at(info.current)  # type: ignore[arg-type]  # running

    def _reserve_on_one_node(self, gpus: int) -> None:
        """The node where ``gpus`` GPUs free up first, as planned jobs and the running
        jobs still holding GPUs end (those that end later are exempt: counted busy)."""
        pool = self.pool
        best = None
        for n, node in enumerate(pool.nodes):
            if node.gpus < gpus:
                continue
            free, t = pool.gpus[n] - self.hg[n], self.now
            busy = sorted(self._busy(n)) if free < gpus else []
            k = 0
            while free < gpus and k < len(busy):
                free += busy[k][1]
                t = busy[k][0]
                k += 1
            if free >= gpus and (best is None or t < best[0]):
                best = (t, n, free - gpus, frozenset(jid for _, _, jid in busy[k:] if jid))
        if best is not None:
            self.reservations.append(Reservation(best[0], {best[1]: best[2]}, best[3]))

    def _reserve_whole_nodes(self, gpus: int) -> None:
        """A multi-node unit: the earliest-freed whole nodes."""
        pool = self.pool
        free_at = []
        for n in range(len(pool.nodes)):
            ends = [e for e, _, _ in self._busy(n)]
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
