"""What the Chronus baseline knows of one job: its planning estimate, queue class,
deadline option, lease plan and flags. Times in minutes, GPUs per job."""

from __future__ import annotations

from dataclasses import dataclass

from sensaopt.policies.base import JobState

from .lease import BEST_EFFORT, UNACCEPTED, estimate_duration, rounded_gpus


@dataclass(eq=False)
class ChronusJob:
    id: str
    gpus: int
    lease_gpus: int
    """GPUs the lease accounting holds for it (:func:`~.lease.rounded_gpus`)."""
    arrival: float
    work: float
    proportional_speed: float
    """Profile speed at the cluster's GPU-proportional share (> 0)."""
    duration: float
    """Planned run time at the proportional share (``work / proportional_speed``), minutes."""
    estimate: int
    """The artifact's padded estimate of the whole run (:func:`~.lease.estimate_duration`), minutes."""
    deadlines: tuple[tuple[float, float], ...]
    """(deadline in minutes, value) options, earliest first; empty: best effort."""
    queue_class: int | None = None
    """Artifact queue priority (:data:`~.lease.CLASS_NAMES`); None: not seen by admission yet."""
    deadline_check: float | None = None
    """Admitted: the last deadline snapped to a lease boundary; otherwise the deadline
    its hope is judged against (minutes)."""
    option: int | None = None
    """Index of the deadline option of its current plan."""
    plan: tuple[int, ...] | None = None
    """Absolute lease indices it holds."""
    leases_left: int = 0
    """Leases still needed (artifact: only ever decreases)."""
    forced: bool = False
    """Force-guaranteed for the rest of the current lease."""
    fake_force: bool = False
    """The artifact's never-reset force flag of an overrun job."""
    lease_planned: bool = True
    """The artifact's ``require_mip_optimization``: planned by the lease MILP when admitted."""
    was_hopeless: bool = False
    rounds_run: int = 0

    @classmethod
    def of(cls, js: JobState, share: tuple[float, float], lease_minutes: float) -> ChronusJob:
        """The job of ``js`` planned at ``share`` = (cores, GB) per GPU; ``lease_minutes``:
        the configured lease (the estimate's overhead term)."""
        spec = js.spec
        speed = spec.profile.speed(*share)
        speed = speed if speed > 0 else 1.0
        duration = spec.work / speed
        return cls(
            id=spec.id, gpus=spec.gpus, lease_gpus=rounded_gpus(spec.gpus), arrival=spec.arrival, work=spec.work,
            proportional_speed=speed, duration=duration, estimate=estimate_duration(duration, spec.gpus, lease_minutes),
            deadlines=spec.deadlines(),
        )

    def progress_minutes(self, js: JobState) -> float:
        """Planned minutes already done (fraction of work done × duration)."""
        return (self.work - js.remaining) / self.work * self.duration

    def estimate_left(self, js: JobState) -> float:
        """The padded estimate minus the planned minutes done (minutes)."""
        return self.estimate - self.progress_minutes(js)

    def observed_left(self, js: JobState) -> float:
        """Observed remaining run time at the proportional share, minutes."""
        return js.remaining / (self.proportional_speed * js.speed_correction)

    def overran(self, round_minutes: float) -> bool:
        """Has run (``rounds_run`` rounds of ``round_minutes``) as long as its padded estimate."""
        return self.rounds_run * round_minutes >= self.estimate

    def urgency(self, js: JobState, now: float) -> float:
        """The artifact's ``-emergence`` (GPU-minutes): remaining estimate × GPUs for
        unadmitted and best-effort jobs, slack (deadline − now − remaining estimate) ×
        GPUs for admitted and hopeless ones (negative once late)."""
        left = self.estimate_left(js)
        if self.queue_class in (UNACCEPTED, BEST_EFFORT):
            return left * self.gpus
        deadline = self.deadline_check if self.deadline_check is not None else now
        return (deadline - now - left) * self.gpus
