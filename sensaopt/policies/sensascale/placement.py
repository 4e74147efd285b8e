"""Step 4 of SensaScale: place units (pairs and single jobs) in LST order, searching
open resources (free and not held by a running job) before held ones. The round's
bookkeeping is :class:`~.round_plan.RoundPlan`; the reservations a blocked unit makes
and later units respect are :mod:`.backfill` (safe, EASY backfilling); the
fragmentation repair is :mod:`.repack`. Times in minutes."""

from __future__ import annotations

from collections.abc import Iterable
from operator import sub

from sensaopt.instance import Node
from sensaopt.policies.placement import option_placement
from sensaopt.profiles import Option
from sensaopt.schedule import Placement

from .analysis import JobInfo
from .backfill import allowed
from .round_plan import RoundPlan


class Planner(RoundPlan):
    """The placement search over one round's :class:`~.round_plan.RoundPlan`. Units
    search first among *open* resources (free and not held), so a newcomer does not
    take a running job's GPUs or CPU while another node has room; only if nothing open
    fits does a waiting job take held resources, those of the least urgent holders
    (who then move to open room or pause). A running job whose place was taken moves
    only to open room, never displacing another holder (that would cascade: one
    migration per round per displaced job)."""

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

    # ---- units ----------------------------------------------------------------------------
    def _keep(self, info: JobInfo) -> tuple[tuple[Placement, ...], Option] | None:
        """A running job's placements of the round before, if they still fit (and the
        reservations allow them): no change, no cost."""
        pls = info.last_placements
        pool = self.pool
        if len(pls) == 1:  # the common case: NodePool.fits, inline
            q = pls[0]
            n = q.node
            if q.gpus > pool.gpus[n] or q.cpus > pool.cpus[n] or q.mem_gb > pool.mem[n] + 1e-9:
                return None
        elif not all(pool.fits(q) for q in pls):
            return None
        opt = info.cur or info.current
        assert opt is not None  # running
        if self.reservations:
            end = self.now + info.time_at(opt)
            if not all(allowed(self, q.node, q.gpus, end, info.id) for q in pls):
                return None
        return pls, opt

    def try_stay(self, info: JobInfo) -> bool:
        """:meth:`place_single`'s result without its steps (the caller tries this first)
        in the common case: a running single-node job holding what it ran on, no
        reservation made, a cost table, and staying fits and wins (the checks of
        :meth:`_keep` and :meth:`_keep_wins`, inline). Whether it stayed (if not,
        nothing changed)."""
        pls = info.last_placements
        if len(pls) != 1 or self.reservations or not info.costs or self.held.get(info.id) is not pls:
            return False
        q, pool = pls[0], self.pool
        n = q.node
        if (self.free.total < info.gpus or q.gpus > pool.gpus[n] or q.cpus > pool.cpus[n]
                or q.mem_gb > pool.mem[n] + 1e-9):
            return False
        opt = info.cur or info.current
        now, rem, corr = self.now, info.remaining, info.corr
        end = now + info.c_none + rem / (opt.speed * corr)  # type: ignore[union-attr]  # running: current is set
        if not end <= now + info.least + rem / (info.top * corr) + 1e-9:
            return False
        self.stay(info, pls, opt, end)  # type: ignore[arg-type]
        return True

    def place_single(self, info: JobInfo) -> bool:
        pool = self.pool
        if self.free.total < info.gpus:  # (release changes neither the free pool nor the reservations:
            self.release(info)           # it may come after the checks that read them)
            return False
        keep = self._keep(info) if (info.running and self.cfg.stay_put) else None
        end = None if keep is None else self._keep_wins(info, keep)
        if end is not None:  # staying wins: what the search below would end with, without the search
            self.stay(info, keep[0], keep[1], end)  # type: ignore[index]  # end is set only with keep
            return True
        self.release(info)
        prev = info.js.placements if info.running else None
        chosen: dict[int, Option] = {}
        single = info.gpus <= self.max_gpus

        def make(node: Node, g: int, cpus: int, mem: float) -> Placement | None:
            o = self.option_on(info, node, g, cpus, mem)
            if o is None:
                return None
            q = self.placement(node.index, g, o)
            if self.reservations:
                oh = info.change_minutes((q,)) if single else info.move_minutes
                if not allowed(self, node.index, g, self.now + oh + info.time_at(o), info.id):
                    return None
            chosen[node.index] = o
            return q

        def make_free(node: Node, g: int) -> Placement | None:
            n = node.index
            return make(node, g, pool.cpus[n], pool.mem[n])

        def make_open(node: Node, g: int) -> Placement | None:
            n = node.index
            q = make(node, g, pool.cpus[n] - self.held_cpus[n], pool.mem[n] - self.held_mem[n])
            return q if q is not None and self.fits_open(q) else None

        guard = info.lst if self.cfg.laxity_guard else None
        pls = self._place(info.gpus, make_free, prev, make_open, info.running, guard)
        opt: Option | None = None
        if pls is not None and len(pls) > 1:  # the slowest node sets the pace: all nodes get that option
            opt = min((chosen[p.node] for p in pls), key=lambda o: o.speed)
            pls = tuple(self.placement(p.node, p.gpus, opt) for p in pls)
        elif pls is not None:
            opt = chosen[pls[0].node]
        pls, opt = self._keep_if_as_fast(info, keep, pls, opt)
        if pls is None or opt is None:
            return False
        self.commit(info, pls, opt, self.end(info, opt, pls))
        return True

    def _keep_if_as_fast(self, info: JobInfo, keep: tuple[tuple[Placement, ...], Option] | None, pls: tuple[Placement, ...] | None,
                         opt: Option | None) -> tuple[tuple[Placement, ...] | None, Option | None]:
        """``keep`` (if not None) when staying as it was is as fast as the search's
        ``pls`` at ``opt`` (change costs included; None: the search found nothing),
        else (pls, opt)."""
        if keep is not None and (pls is None or self.end(info, keep[1], keep[0]) <= self.end(info, opt, pls) + 1e-9):  # type: ignore[arg-type]  # opt is set with pls
            return keep
        return pls, opt

    def _keep_wins(self, info: JobInfo, keep: tuple[tuple[Placement, ...], Option]) -> float | None:
        """The end of staying as it was (``keep``) if that is no later than anything
        the search of :meth:`place_single` can return, whatever it returns (else None):
        the search gives a node type's base option or a slower one, so no placement
        ends sooner than at the fastest base speed with the cheapest change. Then the
        search is skipped (its result would lose the ``<=`` comparison to ``keep``)."""
        top = info.facts.top_base_speed
        least = min(info.c_none, info.c_mig, info.c_resize)  # nan (no cost table): never true below
        end = self.now + info.change_minutes(keep[0]) + info.remaining / (keep[1].speed * info.corr)  # self.end, inline
        return end if end <= self.now + least + info.remaining / (top * info.corr) + 1e-9 else None

    def _place(self, gpus: int, make, prefer: tuple[Placement, ...] | None, make_open=None,
               open_only: bool = False, guard: float | None = None) -> tuple[Placement, ...] | None:
        """:meth:`NodePool.place` (same rule: the previous nodes, else best fit) with the
        best-fit search of single-node jobs going through the free-GPU buckets; given
        ``make_open`` and held resources, both steps are tried among open resources
        (``make_open``) before held ones (``make``; the least urgent holders' first;
        not at all with ``open_only``; with ``guard``, the unit's LST, only on nodes
        :meth:`~.round_plan.RoundPlan.displaceable` allows)."""
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
                found = pool._place_multi(gpus, mk) if mk is make_open or not self.held else self._place_multi_displacing(gpus, mk, guard)
                if found is not None:
                    return found
                continue
            nodes = pool.nodes
            if mk is make_open or not self.held:
                order: Iterable[int] = (self.open if mk is make_open else self.free).best_fit(gpus)
            else:  # taking held GPUs: displace the least urgent holders
                order = self._by_victims(gpus, guard)
            for n in order:
                q = mk(nodes[n], gpus)
                if q is not None and pool.fits(q):
                    return (q,)
        return None

    def _by_victims(self, gpus: int, guard: float | None) -> list[int]:
        """The nodes with at least ``gpus`` free GPUs that :meth:`~.round_plan.RoundPlan.displaceable`
        allows (``guard``: the unit's LST), least urgent holder first (by
        :meth:`~.round_plan.RoundPlan.victim_rank`), then fewest free GPUs, then index:
        both methods inline, the holders of each node read once."""
        holders, ranked, free = self.holders, self.ranked, self.pool.gpus
        keyed = []
        for n in self.free.best_fit(gpus):
            h = holders.get(n)
            if h:
                if guard is not None:
                    for r, _ in h:
                        if not ranked[r].lst >= guard:
                            break
                    else:
                        keyed.append((-min(h)[0], free[n], n))
                    continue
                keyed.append((-min(h)[0], free[n], n))
            else:
                keyed.append((-(1 << 30), free[n], n))
        keyed.sort()  # (no two share a node: the order sorted(key=...) gives)
        return [n for _, _, n in keyed]

    def _place_multi_displacing(self, gpus: int, make, guard: float | None = None) -> tuple[Placement, ...] | None:
        """:meth:`NodePool._place_multi` (whole nodes, then at most one partial node)
        with nodes taken in order of their least urgent holders first (with ``guard``:
        only nodes :meth:`~.round_plan.RoundPlan.displaceable` allows)."""
        pool, size = self.pool, self.node_gpus  # (GPUs per node: a property on Node)
        nodes, free = pool.nodes, pool.gpus
        whole = [i for i in range(len(nodes)) if free[i] == size[i] and (guard is None or self.displaceable(i, guard))]
        whole.sort(key=lambda i: (-self.victim_rank(i), -size[i], i))
        out, left, used = [], gpus, set()
        for i in whole:
            if size[i] > left:
                continue
            q = make(nodes[i], size[i])
            if q is None or not pool.fits(q):
                continue
            out.append(q)
            used.add(i)
            left -= size[i]
            if left == 0:
                return tuple(out)
        rest = sorted((i for i in range(len(nodes)) if i not in used and pool.gpus[i] >= left
                       and (guard is None or self.displaceable(i, guard))),
                      key=lambda i: (-self.victim_rank(i), pool.gpus[i], i))
        for i in rest:
            q = make(nodes[i], left)
            if q is not None and pool.fits(q):
                return tuple(out) + (q,)
        return None

    def _cores_and_memory_somewhere(self, cores: float, mem: float, held: bool) -> bool:
        """Whether some node may have ``cores`` cores free and some node ``mem`` GB
        (not held by running jobs, if ``held``): if not, no node can take the pair
        and the best-fit search of :meth:`place_pair` is skipped."""
        pool = self.pool
        if held:
            return max(map(sub, pool.cpus, self.held_cpus)) >= cores and max(map(sub, pool.mem, self.held_mem)) + 1e-9 >= mem
        return max(pool.cpus) >= cores and max(pool.mem) + 1e-9 >= mem

    def place_pair(self, s: JobInfo, i: JobInfo, so: Option, io: Option) -> bool:
        """Both jobs on one node at their pair options; prefers a node either ran on,
        else best fit (fewest free GPUs, then lowest index); with ``stay_put``, open
        resources before resources held by other running jobs. (The open index is
        moved once per node at the end, or before a search reads it: a pair that
        stays where it ran leaves it as it was.)"""
        if self._pair_stays(s, i, so, io):
            return True
        gpus, hg = self.pool.gpus, self.held_gpus
        touched: dict[int, int] = {}  # node -> its open GPUs (uncapped) as the index has them
        for x in (s, i):
            for q in self.held.get(x.id, ()):
                touched[q.node] = gpus[q.node] - hg[q.node]
        self.release(s, move_open=False)
        self.release(i, move_open=False)
        n_best = self._pair_node(s, i, so, io, touched) if self.free.total >= s.gpus + i.gpus else None
        if n_best is None:
            self._sync_open(touched)
            return False
        touched.setdefault(n_best, gpus[n_best] - hg[n_best])
        self.paired.update((s.id, i.id))
        for x, o in ((s, so), (i, io)):
            pls = (self.placement(n_best, x.gpus, o),)
            lp = x.last_placements
            if x.running and len(lp) == 1 and lp[0] is pls[0]:
                pls = lp  # the tuple it ran on: its change check stops at identity
            self.commit(x, pls, o, self.end(x, o, pls), move_open=False)
        self._sync_open(touched)
        return True

    def _pair_stays(self, s: JobInfo, i: JobInfo, so: Option, io: Option) -> bool:
        """:meth:`place_pair`'s result without its search when the pair ran together on
        one node last round (each holding just that) and the search would keep it there
        (the first node it checks; no reservation to respect): a member whose pair
        option gives its very placement of last round :meth:`stay` s, the other is
        released and committed anew (the open index is left as it is: the node's GPUs,
        free and held, drop by what they held). Whether it did (if not, nothing changed)."""
        if not (s.running and i.running and s.costs and i.costs) or self.reservations:
            return False
        ls, li = s.last_placements, i.last_placements
        held = self.held
        if len(ls) != 1 or len(li) != 1 or held.get(s.id) is not ls or held.get(i.id) is not li:
            return False
        qs, qi = ls[0], li[0]
        n = qs.node
        pool, g = self.pool, s.gpus + i.gpus
        if qi.node != n or self.free.total < g:
            return False
        if len(held) > 2:  # _pair_node's first check, with what the two hold released: among open resources
            hg_, hc = (self.held_gpus[n] - qs.gpus) - qi.gpus, (self.held_cpus[n] - qs.cpus) - qi.cpus
            hm = (self.held_mem[n] - qs.mem_gb) - qi.mem_gb
        else:  # no other holder: among free ones
            hg_, hc, hm = 0, 0, 0.0
        if (pool.gpus[n] - hg_ < g or pool.cpus[n] - hc < s.gpus * so.cpu + i.gpus * io.cpu
                or pool.mem[n] - hm + 1e-9 < s.gpus * so.mem + i.gpus * io.mem):
            return False
        self.paired.update((s.id, i.id))
        now = self.now
        for x, o, q in ((s, so, qs), (i, io, qi)):
            if self.placement(n, x.gpus, o) is q:  # as it ran: self.end, inline (no change)
                self.stay(x, x.last_placements, o, now + x.c_none + x.remaining / (o.speed * x.corr))
            else:
                pls = (self.placement(n, x.gpus, o),)
                self.release(x, move_open=False)
                self.commit(x, pls, o, self.end(x, o, pls), move_open=False)
        return True

    def _pair_node(self, s: JobInfo, i: JobInfo, so: Option, io: Option, touched: dict[int, int]) -> int | None:
        """The node for the pair of :meth:`place_pair` (both released), or None.
        ``touched``: the nodes whose open-index moves are pending (made before the
        index is searched)."""
        pool, hg = self.pool, self.held_gpus
        gpus, g = pool.gpus, s.gpus + i.gpus
        need_c = s.gpus * so.cpu + i.gpus * io.cpu
        need_m = s.gpus * so.mem + i.gpus * io.mem
        nodes = pool.nodes

        def feasible(n: int, held: bool) -> bool:
            hg_, hc, hm = (hg[n], self.held_cpus[n], self.held_mem[n]) if held else (0, 0, 0.0)
            if gpus[n] - hg_ < g or pool.cpus[n] - hc < need_c or pool.mem[n] - hm + 1e-9 < need_m:
                return False
            if not self.reservations:
                return True
            ps, pi = (option_placement(nodes[n], s.gpus, so),), (option_placement(nodes[n], i.gpus, io),)
            end_s = self.end(s, so, ps)
            end_both = max(end_s, self.end(i, io, pi))
            return allowed(self, n, s.gpus, end_s, s.id) and allowed(self, n, g, end_both, i.id)

        prefer = {p.node for x in (s, i) if x.running for p in x.last_placements}
        pref = sorted(prefer, key=lambda n: (gpus[n], n)) if len(prefer) > 1 else prefer
        guard = min(s.lst, i.lst) if self.cfg.laxity_guard and self.held else None
        for held in ((True, False) if self.held else (False,)):
            for n in pref:
                if feasible(n, held) and (held or self.displaceable(n, guard)):
                    return n
            if self._cores_and_memory_somewhere(need_c, need_m, held):
                self._sync_open(touched)  # the search below reads the index
                for n in (self.open if held else self.free).best_fit(g):
                    if feasible(n, held) and (held or self.displaceable(n, guard)):
                        return n
        return None
