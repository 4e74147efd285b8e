"""SensaScale: deadline-aware, resource-sensitivity-aware scheduling, one round at a time."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from sensaopt.instance import Instance
from sensaopt.policies.base import Allocation, BasePolicy, RoundState

from .adjust import adjust, fill_spare
from .analysis import ProfileFacts, QueueMemo, analyse, profile_facts, protect_running
from .backfill import reserve
from .config import SensaScaleConfig, SensaScalePaperConfig
from .pairing import make_pairs, pair_options
from .placement import Planner
from .repack import Repacker
from .round_plan import NodeShape

_key = attrgetter("key")  # a JobInfo's sort key


class SensaScalePolicy(BasePolicy):
    """The five steps of SPEC §2 each round: classify → LST order → pair → place with
    safe backfill → deadline-aware adjustment. Knobs: :class:`SensaScaleConfig`."""

    name = "sensascale"
    config_class = SensaScaleConfig
    config: SensaScaleConfig

    def __init__(self, config: SensaScaleConfig | None = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._facts: dict[tuple[int, int], tuple[object, ProfileFacts]] = {}
        self.last_stats: dict[str, int] = {}  # this round's counts (``stats``: their sums since reset)
        self._constants: dict = {}  # job id -> analysis.JobConstants, per run (active jobs, see analyse)
        self._queue = QueueMemo()  # the last round's queue (analyse's sort starts from its order), per run
        self._tables: dict = {}  # change-cost tables by job size (analysis._constants_of), per run
        self._gains: dict = {}  # type pair -> pair gains (pairing.weight_matrix), per run
        self._pair_opts: dict = {}  # type pair -> pair options, per run
        self._partners: dict[str, str] = {}  # job id -> partner it ran with as a pair last round
        self._shape: NodeShape | None = None  # the cluster's nodes, per run

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self.last_stats = {}
        self._facts = {}
        self._constants = {}
        self._queue = QueueMemo()
        self._tables = {}
        self._gains = {}
        self._pair_opts = {}
        self._partners = {}
        self._shape = None

    def facts(self, profile, gpus: int) -> ProfileFacts:
        key = (id(profile), gpus)
        hit = self._facts.get(key)
        if hit is None:  # the profile is kept in the value so that its id stays unique
            hit = self._facts[key] = (profile, profile_facts(profile, gpus, self.instance.cluster, self.config))
        return hit[1]

    def pair_options(self, s, i, cluster):
        """:func:`pairing.pair_options`, memoised per type pair for the run."""
        key = (id(s.facts), s.gpus, id(i.facts), i.gpus)
        hit = self._pair_opts.get(key, False)
        if hit is False:
            hit = self._pair_opts[key] = pair_options(s, i, cluster)
        return hit

    def decide(self, state: RoundState) -> Allocation:
        cfg = self.config
        infos = analyse(state, self.facts, cfg, self._constants, self._tables, self._queue)  # steps 1-2
        n_protect = protect_running(infos, state) if cfg.protect_running else 0
        shape = self._shape
        if shape is None or shape.pool.nodes is not state.cluster.nodes:
            shape = self._shape = NodeShape(state.cluster)
        planner = Planner(shape, state.now, cfg, infos, round_minutes=state.round_minutes)
        held = planner.held_gpus if cfg.stay_put else None  # as the round starts: what the running jobs hold
        pairs = make_pairs(infos, state.cluster, cfg, state.now, state.round_minutes, self._gains, self._partners,
                           held, shape.capacity)  # step 3
        partners: dict[str, str] = {}
        repacker = Repacker(planner)
        done: set[str] = set()  # pair members placed (a job is listed once: only a pair's partner comes again)
        free = planner.free
        try_stay, place_single, repack = planner.try_stay, planner.place_single, repacker.repack
        for info in infos:  # step 4, units in LST order
            if free.total <= 0 and planner.exhausted:  # nothing below can be placed or reserve anything
                break
            pair = pairs.get(info.id) if pairs else None
            if pair is None:
                if not (try_stay(info) or place_single(info)) and not repack(info):
                    reserve(planner, info.gpus)
                continue
            if info.id in done:
                continue
            s, i = pair
            done.update((s.id, i.id))
            po = self.pair_options(s, i, state.cluster)
            if po is not None and planner.place_pair(s, i, *po):
                partners[s.id], partners[i.id] = i.id, s.id
                continue
            for m in sorted(pair, key=_key):
                if not (try_stay(m) or place_single(m)) and not repack(m):
                    reserve(planner, m.gpus)
        self._partners = partners
        n_adj = adjust(planner, cfg) if cfg.adjust else 0  # step 5
        if cfg.fill_spare:
            fill_spare(planner, cfg)
        self.last_stats = {"jobs": len(infos), "pairs": len(pairs) // 2, "placed": len(planner.planned), "adjusted": n_adj,
                           "demoted": n_protect, "reservations": len(planner.reservations)}
        self.stats["rounds"] = self.stats.get("rounds", 0) + 1
        for k, v in self.last_stats.items():
            self.stats[k] = self.stats.get(k, 0) + v
        return {jid: p.placements for jid, p in planner.planned.items()}


class SensaScalePaperPolicy(SensaScalePolicy):
    """SensaScale with the paper's configuration (:class:`SensaScalePaperConfig`)."""

    name = "sensascale-paper"
    config_class = SensaScalePaperConfig
