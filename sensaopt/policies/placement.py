"""Free-resource bookkeeping for one round and the placement rules all policies share.

Gang rule (the validator's): a job that fits one node runs on one node; a larger
job takes whole nodes plus at most one partial node, the fewest nodes possible.
"""

from __future__ import annotations

from sensaopt.allocations import job_options, proportional_allocation, proportional_share
from sensaopt.instance import Cluster, Node
from sensaopt.profiles import Option
from sensaopt.schedule import Placement

__all__ = ["NodePool", "job_options", "option_placement", "proportional_placement", "proportional_share"]


def proportional_placement(node: Node, gpus: int) -> Placement:
    """``gpus`` GPUs on ``node`` with CPU and memory in proportion (CPU floored to whole cores).

    Args:
        node: the node.
        gpus: GPUs taken on it.

    Returns:
        The placement.
    """
    return Placement(node.index, gpus, *proportional_allocation(node, gpus))


def option_placement(node: Node, gpus: int, opt: Option) -> Placement:
    """``gpus`` GPUs on ``node`` with an allocation option's cores and GB per GPU.

    Args:
        node: the node.
        gpus: GPUs taken on it.
        opt: the option (``cpu`` cores and ``mem`` GB per GPU; cores rounded to whole ones).

    Returns:
        The placement.
    """
    return Placement(node.index, gpus, round(gpus * opt.cpu), gpus * opt.mem)  # policies give whole cores per GPU


class NodePool:
    """Free GPUs, cores and GB per node during one round's decision. ``proportional``:
    the (node index, GPUs) -> proportional placement cache :meth:`place_proportional`
    reads, a dict a policy may keep for its instance (placements are immutable, and a
    job that keeps its nodes then gets the very same placement objects: later equality
    checks stop at identity); default a fresh one."""

    __slots__ = ("nodes", "gpus", "cpus", "mem", "max_gpus", "proportional")

    def __init__(self, cluster: Cluster, proportional: dict[tuple[int, int], Placement] | None = None):
        self.proportional = proportional if proportional is not None else {}
        self.nodes = cluster.nodes
        self.max_gpus = max(n.gpus for n in self.nodes)  # GPUs of the largest node
        self.gpus = [n.gpus for n in self.nodes]
        self.cpus = [n.cpus for n in self.nodes]
        self.mem = [n.mem_gb for n in self.nodes]

    def copy(self) -> NodePool:
        """A pool with this one's free resources (lists copied; nodes and the
        proportional cache shared): a full pool per round without reading every node.

        Returns:
            The copy.
        """
        new = NodePool.__new__(NodePool)
        new.nodes, new.max_gpus, new.proportional = self.nodes, self.max_gpus, self.proportional
        new.gpus, new.cpus, new.mem = self.gpus[:], self.cpus[:], self.mem[:]
        return new

    def fits(self, p: Placement) -> bool:
        i = p.node
        return p.gpus <= self.gpus[i] and p.cpus <= self.cpus[i] and p.mem_gb <= self.mem[i] + 1e-9

    def take(self, placements: tuple[Placement, ...]) -> None:
        for p in placements:
            self.gpus[p.node] -= p.gpus
            self.cpus[p.node] -= p.cpus
            self.mem[p.node] -= p.mem_gb

    def give_back(self, placements: tuple[Placement, ...]) -> None:
        for p in placements:
            self.gpus[p.node] += p.gpus
            self.cpus[p.node] += p.cpus
            self.mem[p.node] += p.mem_gb

    @property
    def free_gpus(self) -> int:
        return sum(self.gpus)

    def place_proportional(self, gpus: int, prefer: tuple[Placement, ...] | None = None) -> tuple[Placement, ...] | None:
        """Find room for a job at the GPU-proportional share, without taking it.

        Keeps the job where it ran (``prefer``) when that still fits; otherwise best
        fit (the feasible node with the fewest free GPUs; ties: lowest index).
        """
        return self.place(gpus, self._proportional, prefer)

    def _proportional(self, node: Node, gpus: int) -> Placement:
        """:func:`proportional_placement`, through the pool's cache."""
        q = self.proportional.get((node.index, gpus))
        if q is None:
            q = self.proportional[(node.index, gpus)] = proportional_placement(node, gpus)
        return q

    def place_again(self, prefer: tuple[Placement, ...], make) -> tuple[Placement, ...] | None:
        """The job's previous nodes with the same GPUs each, if ``make`` fits on all."""
        again = []
        for p in prefer:
            q = make(self.nodes[p.node], p.gpus)
            if q is None or not self.fits(q):
                return None
            again.append(q)
        return tuple(again)

    def place(self, gpus: int, make, prefer: tuple[Placement, ...] | None = None) -> tuple[Placement, ...] | None:
        """Room for ``gpus`` GPUs where ``make(node, g) -> Placement`` fits.

        ``make`` may return ``None`` when the node cannot host the job. Single-node
        jobs: previous node first, then best fit by free GPUs. Larger jobs: the
        previous nodes if all still fit, else whole free nodes (most GPUs first) plus
        at most one partial node.
        """
        if prefer is not None:
            again = self.place_again(prefer, make)
            if again is not None:
                return again
        if gpus <= self.max_gpus:
            best, best_free = None, None
            for i, node in enumerate(self.nodes):
                fg = self.gpus[i]
                if fg < gpus or (best_free is not None and fg >= best_free):
                    continue
                q = make(node, gpus)
                if q is not None and self.fits(q):
                    best, best_free = q, fg
                    if fg == gpus:
                        break
            return (best,) if best is not None else None
        return self._place_multi(gpus, make)

    def _place_multi(self, gpus: int, make) -> tuple[Placement, ...] | None:
        whole = [i for i, n in enumerate(self.nodes) if self.gpus[i] == n.gpus]
        whole.sort(key=lambda i: (-self.nodes[i].gpus, i))
        out, left, used = [], gpus, set()
        for i in whole:
            node = self.nodes[i]
            if node.gpus > left:
                continue
            q = make(node, node.gpus)
            if q is None or not self.fits(q):
                continue
            out.append(q)
            used.add(i)
            left -= node.gpus
            if left == 0:
                return tuple(out)
        # one partial node for the rest: best fit
        best, best_free = None, None
        for i, node in enumerate(self.nodes):
            fg = self.gpus[i]
            if i in used or fg < left or (best_free is not None and fg >= best_free):
                continue
            q = make(node, left)
            if q is not None and self.fits(q):
                best, best_free = q, fg
        if best is None:
            return None
        return tuple(out) + (best,)
