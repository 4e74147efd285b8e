"""The Chronus baseline's state across rounds: the lease clock, the jobs it knows, the
guaranteed set, the artifact's predicted endings, and the class transitions that keep
them and the counters consistent. Times in minutes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sensaopt.allocations import proportional_share
from sensaopt.instance import Instance
from sensaopt.schedule import Placement

from .config import ChronusConfig
from .job import ChronusJob
from .lease import CLASS_NAMES, LOWEST, UNACCEPTED
from .stats import ChronusStats


@dataclass(frozen=True)
class LeaseClock:
    """Round, lease and admission periods of one run."""

    round_minutes: float
    lease_rounds: int
    """Rounds per lease: ``max(1, floor(lease_minutes / R + 1/2))``."""
    admission_every_rounds: int
    """Admission runs in rounds that are a multiple of this (every round when R >= 5 min)."""

    @classmethod
    def of(cls, config: ChronusConfig, round_minutes: float) -> LeaseClock:
        lease_rounds = max(1, math.floor(config.lease_minutes / round_minutes + 0.5))
        every = (1 if config.admission_minutes - 1e-9 <= round_minutes
                 else max(1, math.floor(config.admission_minutes / round_minutes + 0.5)))
        return cls(round_minutes, lease_rounds, every)

    @property
    def lease_minutes(self) -> float:
        """Effective lease length (the planning slot), minutes."""
        return self.lease_rounds * self.round_minutes

    def lease_of(self, round_index: int) -> int:
        return round_index // self.lease_rounds


@dataclass
class ChronusState:
    """Everything the policy remembers between rounds (one instance)."""

    clock: LeaseClock
    total_gpus: int
    share: tuple[float, float]
    """The GPU-proportional share planning assumes: (whole cores, GB) per GPU."""
    max_candidates: int
    """Most (job, deadline option) candidates per lease MILP."""
    stats: ChronusStats
    jobs: dict[str, ChronusJob] = field(default_factory=dict)
    """Active jobs by id, in arrival order."""
    classes: dict[str, str] = field(default_factory=dict)
    """Each job's latest class name (kept after it finishes)."""
    new_jobs: list[str] = field(default_factory=list)
    """Ids seen since the last admission step."""
    current_lease: int | None = None
    guaranteed: set[str] = field(default_factory=set)
    """Admitted jobs whose plan holds the current lease."""
    endings: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Artifact: job id -> (predicted finish in minutes, GPUs) of the jobs this round ends."""
    fill_budget: int = 0
    """Artifact: GPUs the odd-minute filling pass hands out this round."""
    placement_cache: dict[tuple[int, int], Placement] = field(default_factory=dict)
    """(node index, GPUs) -> proportional placement (placements are immutable)."""

    @classmethod
    def of(cls, config: ChronusConfig, instance: Instance) -> ChronusState:
        clock = LeaseClock.of(config, instance.round_minutes)
        ref = instance.cluster.reference_type
        max_candidates = config.max_candidates if config.max_candidates is not None else int(1200 * config.lease_minutes // 60)
        stats = ChronusStats(clock.lease_rounds, clock.lease_minutes, clock.admission_every_rounds)
        return cls(clock, instance.cluster.total_gpus, proportional_share(ref),
                   max_candidates, stats)

    def set_class(self, job: ChronusJob, queue_class: int) -> None:
        job.queue_class = queue_class
        self.classes[job.id] = CLASS_NAMES[queue_class]

    def overrun(self, job: ChronusJob) -> None:
        """Ran as long as its padded estimate: unadmitted, out of the lease MILP, with
        the artifact's fake-force flag (first in the 5-minute filling order)."""
        if not job.fake_force:
            self.stats.overruns += 1
        job.plan, job.option, job.fake_force, job.lease_planned = None, None, True, False
        self.set_class(job, UNACCEPTED)
        self.guaranteed.discard(job.id)

    def hopeless(self, job: ChronusJob) -> None:
        """Cannot meet its deadline any more: lowest priority (counted once per job; in
        the artifact an overrun can lift a hopeless job to unadmitted for a while)."""
        if not job.was_hopeless:
            self.stats.hopeless += 1
        job.plan, job.option, job.forced, job.was_hopeless = None, None, False, True
        self.set_class(job, LOWEST)
        self.guaranteed.discard(job.id)
