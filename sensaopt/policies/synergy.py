"""Synergy-TUNE (OSDI 2022): sensitivity-aware, deadline-blind.

Every round the queue is re-planned in job order (FIFO by arrival, Synergy's; or
shortest remaining time, EDF or least laxity as options, with late-job demotion and
sticky placement as in :mod:`sensaopt.policies.queue`: ``edf-tune`` and
``edf-tune-demote`` are the named configurations). For each job, on one node (or whole nodes plus at most
one partial node for jobs larger than a node):

1. its *optimal demand* if it fits: the smallest per-GPU option (least dominant share
   relative to the node type's GPU-proportional share) within ``tolerance`` of the
   profile's peak speed, chosen from :func:`~sensaopt.policies.placement.job_options`
   so that every allocation stays in the common option set;
2. else its GPU-proportional share if that fits;
3. else, on a single node with enough free GPUs, resources are taken back from
   jobs already placed there this round above their proportional share in CPU or
   memory (latest placed first; each is set to exactly its proportional share, which
   may raise its other resource when that is free) until the job's proportional
   share fits;
4. else the job waits this round.

A job keeps its previous node(s) when its allocation still fits there (no restart).
Units: CPU in cores, memory in GB, times in minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sensaopt.instance import Cluster, Instance
from sensaopt.policies.base import Allocation, BasePolicy, JobState, RoundState
from sensaopt.policies.placement import NodePool, job_options, option_placement, proportional_placement
from sensaopt.policies.queue import check_order, queue_order, sticky_order
from sensaopt.profiles import Option, SensitivityProfile
from sensaopt.schedule import Placement


@dataclass(frozen=True)
class SynergyConfig:
    tolerance: float = 0.1
    """Optimal demand = smallest option within this fraction of the peak speed."""
    order: str = "fifo"
    """"fifo" (arrival order, Synergy's default), "srtf" (shortest remaining time:
    remaining work in minutes at speed 1.0, then arrival), "edf" or "lst" (least laxity
    at the optimal demand's speed; :mod:`sensaopt.policies.queue`)."""
    demote_late: bool = False
    """With "edf"/"lst": a deadline job that cannot meet any deadline even at its optimal
    demand joins the best-effort tier (shortest remaining first)."""
    sticky: bool = False
    """Jobs admitted this round are placed running-first (they keep their nodes)."""

    def __post_init__(self) -> None:
        check_order(self.order, "synergy-tune")
        if not 0 <= self.tolerance < 1:
            raise ValueError("synergy-tune tolerance must be within [0, 1)")


@dataclass(frozen=True)
class EDFTuneConfig(SynergyConfig):
    """``edf-tune``: EDF order with Synergy-TUNE allocation."""

    order: str = "edf"


@dataclass(frozen=True)
class EDFTuneDemoteConfig(EDFTuneConfig):
    """``edf-tune-demote``: EDF order, TUNE allocation, late-job demotion, sticky placement."""

    demote_late: bool = True
    sticky: bool = True


def optimal_option(profile: SensitivityProfile, cluster: Cluster, tolerance: float) -> Option:
    """Synergy's optimal demand, per GPU, within the common option set.

    Among :func:`job_options`, the options reaching ``(1 - tolerance) * best speed``
    (best over the option set), the one with the least dominant share relative to the
    cluster's reference node type's proportional share; ties: less CPU, then memory.
    """
    opts = job_options(profile, cluster)
    ref = cluster.reference_type
    sc, sm = ref.cpus / ref.gpus, ref.mem_gb / ref.gpus
    target = (1 - tolerance) * max(o.speed for o in opts) - 1e-9
    good = [o for o in opts if o.speed >= target]
    return min(good, key=lambda o: (max(o.cpu / sc, o.mem / sm), o.cpu, o.mem))


class SynergyTunePolicy(BasePolicy):
    """Synergy-TUNE; see the module docstring. ``config`` is a :class:`SynergyConfig`."""

    name = "synergy-tune"
    config_class = SynergyConfig
    config: SynergyConfig

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self._opt: dict[str, Option] = {}
        self.stats = {"optimal": 0, "proportional": 0, "took_back": 0, "waited": 0}

    def _optimal(self, js: JobState, cluster: Cluster) -> Option:
        o = self._opt.get(js.id)
        if o is None:
            o = self._opt[js.id] = optimal_option(js.spec.profile, cluster, self.config.tolerance)
        return o

    def order(self, jobs: list[JobState], state: RoundState) -> list[JobState]:
        cfg = self.config
        if cfg.order == "srtf":
            jobs = sorted(jobs, key=lambda js: (js.remaining, js.spec.arrival, js.id))
        elif cfg.order == "fifo":
            jobs = sorted(jobs, key=lambda js: (js.spec.arrival, js.id))
        else:
            jobs = queue_order(jobs, state, cfg.order, cfg.demote_late, lambda js: self._optimal(js, state.cluster).speed)
        return sticky_order(jobs, state) if cfg.sticky else jobs

    def decide(self, state: RoundState) -> Allocation:
        pool = NodePool(state.cluster)
        out: Allocation = {}
        on_node: dict[int, list[str]] = {}  # node -> job ids placed there this round, in order
        for js in self.order(state.jobs, state):
            if pool.free_gpus < js.gpus:
                self.stats["waited"] += 1
                continue
            prefer = js.placements if state.was_running(js) else None
            opt = self._optimal(js, state.cluster)
            pl = pool.place(js.gpus, lambda node, g, o=opt: option_placement(node, g, o), prefer)
            kind = "optimal"
            if pl is None:
                pl = pool.place_proportional(js.gpus, prefer)
                kind = "proportional"
            if pl is None and js.gpus <= state.cluster.max_node_gpus:
                pl = self._take_back(js, pool, out, on_node, state.cluster)
                kind = "took_back"
            if pl is None:
                self.stats["waited"] += 1
                continue
            pool.take(pl)
            out[js.id] = pl
            for p in pl:
                on_node.setdefault(p.node, []).append(js.id)
            self.stats[kind] += 1
        return out

    def _take_back(self, js: JobState, pool: NodePool, out: Allocation, on_node: dict[int, list[str]], cluster: Cluster):
        """Cut co-located over-share jobs back to their proportional share until the
        job's own proportional share fits on one node; returns its placement or None.
        Nodes are tried in best-fit order (fewest free GPUs first, then index)."""
        cands = [i for i in range(len(pool.nodes)) if pool.gpus[i] >= js.gpus]
        cands.sort(key=lambda i: (pool.gpus[i], i))
        for i in cands:
            node = pool.nodes[i]
            want = proportional_placement(node, js.gpus)
            # how much could be reclaimed here
            cuts: list[tuple[str, Placement, Placement]] = []
            free_c, free_m = pool.cpus[i], pool.mem[i]
            for jid in reversed(on_node.get(i, [])):
                if free_c >= want.cpus and free_m >= want.mem_gb - 1e-9:
                    break
                pls = out[jid]
                if len(pls) != 1:
                    continue  # multi-node jobs keep their allocation
                p = pls[0]
                q = proportional_placement(node, p.gpus)
                if p.cpus <= q.cpus and p.mem_gb <= q.mem_gb + 1e-9:
                    continue  # not over its share
                nc, nm = free_c + p.cpus - q.cpus, free_m + p.mem_gb - q.mem_gb
                if nc < 0 or nm < -1e-9:
                    continue  # its proportional share needs more of the other resource than is free
                cuts.append((jid, p, q))
                free_c, free_m = nc, nm
            if free_c >= want.cpus and free_m >= want.mem_gb - 1e-9:
                for jid, p, q in cuts:
                    pool.give_back((p,))
                    pool.take((q,))
                    out[jid] = (q,)
                return (want,)
        return None


class EDFTunePolicy(SynergyTunePolicy):
    """EDF order with Synergy-TUNE allocation (no demotion)."""

    name = "edf-tune"
    config_class = EDFTuneConfig


class EDFTuneDemotePolicy(SynergyTunePolicy):
    """EDF order, Synergy-TUNE allocation, late-job demotion and sticky placement: the
    strongest simple sensitivity-aware baseline (``models/baselines.md``)."""

    name = "edf-tune-demote"
    config_class = EDFTuneDemoteConfig


__all__ = ["EDFTuneConfig", "EDFTuneDemoteConfig", "EDFTuneDemotePolicy", "EDFTunePolicy", "SynergyConfig", "SynergyTunePolicy",
           "optimal_option"]
