"""The simple references with GPU-proportional CPU and memory: FIFO, EDF, least laxity,
and EDF with the two ingredients a reviewer adds (late-job demotion, sticky placement).

Every round the queue is re-planned in priority order (preemptive, see
:mod:`sensaopt.policies.queue` for the orders and the two ingredients); a job keeps
its previous node when it still fits there. A job that does not fit is skipped and
later jobs may still start (greedy, no reservations). No job ever runs above its
proportional-share speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sensaopt.allocations import proportional_share
from sensaopt.instance import Instance
from sensaopt.policies.base import Allocation, BasePolicy, JobState, RoundState
from sensaopt.policies.placement import NodePool
from sensaopt.policies.queue import check_order, queue_order, sticky_order
from sensaopt.schedule import Placement


@dataclass(frozen=True)
class EDFConfig:
    order: str = "edf"
    """"edf" (earliest deadline), "lst" (least laxity at the proportional-share speed),
    "fifo" (arrival) or "srtf" (shortest remaining time)."""
    demote_late: bool = False
    """A deadline job that can no longer meet any deadline at its proportional-share
    speed joins the best-effort tier (ordered shortest remaining first)."""
    sticky: bool = False
    """Jobs admitted this round are placed running-first (they keep their nodes)."""

    def __post_init__(self) -> None:
        check_order(self.order, "edf")


@dataclass(frozen=True)
class EDFDemoteConfig(EDFConfig):
    """``edf-demote``: EDF with sticky placement and late-job demotion."""

    demote_late: bool = True
    sticky: bool = True


@dataclass(frozen=True)
class LSTConfig(EDFConfig):
    """``lst``: least laxity first (latest start time), proportional share."""

    order: str = "lst"


class _GreedyProportional(BasePolicy):
    """Greedy placement at the GPU-proportional share in the order of :meth:`ordered`."""

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._placements: dict[tuple[int, int], Placement] = {}  # NodePool's proportional cache, kept for the run

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self._placements = {}

    def ordered(self, state: RoundState) -> list[JobState]:  # pragma: no cover - abstract
        raise NotImplementedError

    def decide(self, state: RoundState) -> Allocation:
        pool = NodePool(state.cluster, self._placements)
        free = pool.free_gpus  # kept here as jobs are placed (a placement holds exactly the job's GPUs)
        out: Allocation = {}
        for js in self.ordered(state):
            gpus = js.gpus
            if free < gpus:
                continue
            pl = pool.place_proportional(gpus, js.placements if state.was_running(js) else None)
            if pl is not None:
                pool.take(pl)
                free -= gpus
                out[js.id] = pl
        return out


class FIFOPolicy(_GreedyProportional):
    """First in, first out: earliest arrival first."""

    name = "fifo"

    def ordered(self, state: RoundState) -> list[JobState]:
        return sorted(state.jobs, key=lambda js: (js.spec.arrival, js.id))


class EDFPolicy(_GreedyProportional):
    """Earliest deadline first (by default); best-effort jobs after all deadline jobs, by
    arrival. Knobs (:class:`EDFConfig`): the order, late-job demotion, sticky placement."""

    name = "edf"
    config_class = EDFConfig
    config: EDFConfig

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self._speed: dict[tuple[int, int], float] = {}  # (id(profile), gpus) -> proportional-share speed
        self._profiles: list[object] = []  # keeps the profiles alive, so that their ids stay unique

    def best_speed(self, js: JobState) -> float:
        """Per-GPU speed at the proportional share, fastest node type (floored cores)."""
        prof = js.spec.profile
        key = (id(prof), js.gpus)
        s = self._speed.get(key)
        if s is None:
            self._profiles.append(prof)
            s = self._speed[key] = max(prof.speed(*proportional_share(nt)) for nt in self.instance.cluster.node_types)
        return s

    def ordered(self, state: RoundState) -> list[JobState]:
        cfg = self.config
        jobs = queue_order(state.jobs, state, cfg.order, cfg.demote_late, self.best_speed)
        return sticky_order(jobs, state) if cfg.sticky else jobs


class EDFDemotePolicy(EDFPolicy):
    """EDF + sticky placement + late-job demotion, proportional share: the strongest
    speed-up-free baseline a reviewer writes (``models/baselines.md``)."""

    name = "edf-demote"
    config_class = EDFDemoteConfig


class LSTPolicy(EDFPolicy):
    """Least laxity (latest start time) first, proportional share."""

    name = "lst"
    config_class = LSTConfig


__all__ = ["EDFConfig", "EDFDemoteConfig", "EDFDemotePolicy", "EDFPolicy", "FIFOPolicy", "LSTConfig", "LSTPolicy"]
