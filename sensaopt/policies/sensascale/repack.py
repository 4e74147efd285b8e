"""Repack: SensaScale's repair of fragmentation. A single-node job that fits nowhere
although enough GPUs are free in total gets room on one node by moving single jobs
planned this round (not pair members) off that node into open room elsewhere, at
their planned per-GPU option. Times in minutes, GPUs per job."""

from __future__ import annotations

from collections.abc import Sequence

from sensaopt.policies.placement import option_placement

from .analysis import JobInfo
from .backfill import allowed
from .placement import Planner
from .round_plan import Planned


def _movable_gpus(plans: Sequence[Planned], paired: set[str]) -> int:
    """GPUs of the single-node jobs among ``plans`` that repack may move (not pair members)."""
    total = 0
    for p in plans:
        pl = p.placements
        if len(pl) == 1 and p.info.id not in paired:
            total += pl[0].gpus
    return total


class Repacker:
    """Repack for one round's :class:`~.placement.Planner`: at most
    ``cfg.repack_limit`` tries, and none for a size at least one that found no node."""

    def __init__(self, planner: Planner) -> None:
        self.planner = planner
        self.tries_left = planner.cfg.repack_limit
        self.failed_size = 1 << 30  # smallest job size (GPUs) for which repack found no node this round
        self._move_costs: dict[Planned, float] = {}  # move_cost of each plan seen (plans are not changed while placing)
        self._units: dict[int, tuple] = {}  # node -> (its plans, their units sorted, their GPUs): see _node_units

    def repack(self, info: JobInfo) -> bool:
        """Make room for ``info`` (module docstring), then place it
        (:meth:`~.placement.Planner.place_single`). A node qualifies if the moves cost
        less than one round of ``info``'s GPUs (Σ moved GPUs × added change minutes <
        ``info.gpus`` × round minutes; moving a job placed this round from a pause or
        the queue adds nothing, one that stayed put pays a migration) and push no
        moved job past its target deadline; nodes are tried cheapest first. Undone if
        ``info`` still does not fit. Returns whether ``info`` was placed."""
        plan, g = self.planner, info.gpus
        # the movers go to open room elsewhere and node n ends with g open GPUs: the
        # open GPUs now must add up to g
        if self.tries_left <= 0 or g > plan.max_gpus or plan.open.total < g or g >= self.failed_size:
            return False
        self.tries_left -= 1
        cands = self.candidates(g)
        if not cands:
            self.failed_size = g  # not tried again this round for g GPUs or more
            return False
        for _cost, n, movers in sorted(cands, key=lambda c: (c[0], c[1]))[:2]:
            moved = self.move_off(n, movers)
            if moved is not None:
                if plan.place_single(info):
                    return True
                self.undo_moves(moved)
        return False

    def candidates(self, g: int) -> list[tuple[float, int, list[Planned]]]:
        """(cost, node, movers) of the nodes :meth:`repack` may clear for a ``g``-GPU
        job: the planned single jobs to move off (free moves first, then larger jobs)
        until ``g`` GPUs are open there, costing less than one round of ``g`` GPUs.
        Stops at the second node that costs nothing (none after it ranks before it)."""
        plan = self.planner
        gpus, hg, by_node, paired = plan.pool.gpus, plan.held_gpus, plan.by_node, plan.paired
        budget = g * plan.round_minutes
        cands: list[tuple[float, int, list[Planned]]] = []
        free_moves = 0
        units_of, memo = self._node_units, self._units
        for n, size in enumerate(plan.node_gpus):
            if free_moves == 2:
                break
            h = hg[n]
            if size - h < g:
                continue
            o = gpus[n] - h
            need = g - o if o > 0 else g  # open GPUs to clear there (holders stay)
            if need <= 0:
                continue
            plans = by_node.get(n, ())
            key = tuple(plans)
            hit = memo.get(n)  # _node_units' memo (1.27 M of 1.56 M lookups on the full trace hit it)
            if hit is None or hit[0] != key:  # first the movable GPUs alone (most nodes have too few)
                hit = memo[n] = (key, None, _movable_gpus(plans, paired))
            if hit[2] < need:
                continue  # even moving them all would not clear enough
            units = hit[1] if hit[1] is not None else units_of(n, plans, paired)[0]
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

    def _node_units(self, n: int, plans: Sequence[Planned], paired: set[str]) -> tuple[list[tuple], int]:
        """(units, GPUs) of the single jobs planned on node ``n`` (``plans``, its
        ``by_node`` entry) that may move: (added minutes, −GPUs, id, plan) in repack's
        order, and their GPUs in all. Kept per node while its plans stay the same
        objects (a plan's placements, move cost and pairing do not change while placing):
        :meth:`candidates`, its one caller, reads the memo (``(plans, units or None,
        GPUs)``: the GPUs alone first) and calls this when the GPUs would do."""
        key = tuple(plans)
        known = self._move_costs
        units, total = [], 0
        for p in plans:
            pl = p.placements
            info = p.info
            if len(pl) == 1 and info.id not in paired:
                mc = known.get(p)
                if mc is None:
                    mc = known[p] = self.move_cost(p)
                g = pl[0].gpus
                units.append((mc, -g, info.id, p))
                total += g
        units.sort()  # by (added minutes, −GPUs, id): ids are unique, so plans are never compared
        self._units[n] = (key, units, total)
        return units, total

    def undo_moves(self, moved: list[tuple[Planned, Planned]]) -> None:
        """Put the (old, new) plans of :meth:`move_off` back as they were, last first."""
        plan = self.planner
        for old, new in reversed(moved):
            plan.uncommit(new)
            plan.commit(old.info, old.placements, old.option, old.end)

    def move_cost(self, p: Planned) -> float:
        """Minutes a planned single-node job would lose on top of its plan if moved
        to another node (0 if it was not going to stay where it ran). Its planned
        change cost is read off its planned end (now + change minutes + time at its
        option) rather than classified again."""
        planned_change = p.end - self.planner.now - p.info.time_at(p.option)
        return max(0.0, p.info.move_minutes - planned_change)

    def move_off(self, n: int, movers: list[Planned]) -> list[tuple[Planned, Planned]] | None:
        """Move ``movers`` off node ``n`` into open room on other nodes (best fit, the
        reservations respected, no target deadline newly missed); (old, new) plans, or
        None (and nothing changed) if one of them has nowhere to go."""
        plan = self.planner
        done: list[tuple[Planned, Planned]] = []
        nodes = plan.pool.nodes
        for p in movers:
            info, opt, g = p.info, p.option, p.placements[0].gpus
            plan.uncommit(p)
            target = None
            for m in plan.open.best_fit(g):
                if m == n:
                    continue
                q = option_placement(nodes[m], g, opt)
                end = plan.end(info, opt, (q,))
                if info.target is not None and end > info.target + 1e-9 >= p.end:
                    continue
                if plan.pool.fits(q) and plan.fits_open(q) and (not plan.reservations or allowed(plan, m, g, end, info.id)):
                    target = (q, end)
                    break
            if target is None:
                plan.commit(info, p.placements, opt, p.end)
                self.undo_moves(done)
                return None
            plan.commit(info, (target[0],), opt, target[1])
            done.append((p, plan.planned[info.id]))
        return done
