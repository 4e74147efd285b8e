"""Where the ``chronus`` artifact reading and the ``chronus-clean`` reading differ, as
two strategy objects; the policy picks one at reset (:func:`rules_for`) and the steps
call it, never the config flag. The differences and how each maps to rounds:
``models/chronus.md``."""

from __future__ import annotations

import math

from sensaopt.changes import classify
from sensaopt.instance import Change
from sensaopt.policies.base import Allocation, JobState, RoundState

from .admission import Request
from .config import ChronusConfig
from .job import ChronusJob
from .lease import ACCEPTED, maximum_lease
from .state import ChronusState


class ChronusRules:
    """The clean reading of the paper (the base; :class:`ArtifactRules` overrides)."""

    name = "clean"
    overruns_first = False
    """Whether fake-forced (overrun) jobs lead the 5-minute order."""
    admission_option = -1
    """Index of the deadline option admission packs a new job against (the last)."""

    def filling_budget(self, state: ChronusState, active: dict[str, JobState], boundary: bool) -> int:
        """GPUs the odd-minute filling pass hands out this round: none."""
        return 0

    def demote_overruns(self, state: ChronusState, round_state: RoundState, active: dict[str, JobState], boundary: bool) -> None:
        """Overrun demotion of running jobs at the start of a round: none (waiting
        admitted jobs are demoted in :meth:`demote_waiting_overrun`)."""

    def predict_endings(self, state: ChronusState, round_state: RoundState, active: dict[str, JobState], out: Allocation) -> None:
        """Remember the jobs this allocation finishes: not needed."""

    def lease_options(self, job: ChronusJob) -> list[int]:
        """Deadline options the lease MILP may choose for ``job``: the option of its first
        plan once it has one."""
        return [job.option] if job.option is not None else list(range(len(job.deadlines)))

    def admitted_deadline_slots(self, job: ChronusJob, slot0_start: float, lease_minutes: float, packed_slots: int) -> int:
        """Slots before the deadline an admitted job is held to (its ``deadline_check``
        is ``slot0_start + slots × lease``): those admission packed it in."""
        return packed_slots

    def rejected_request(self, job: ChronusJob, leases: int, slots: int, packed_slots: int) -> Request | None:
        """The request a rejected job leaves in the rest of the admission step: none."""
        return None

    def is_waiting(self, round_state: RoundState, js: JobState, boundary: bool, guaranteed: set[str]) -> bool:
        """Waiting at this 5-minute step: did not run last round."""
        return not round_state.was_running(js)

    def demote_waiting_overrun(self, state: ChronusState, job: ChronusJob) -> None:
        """A waiting admitted job that ran as long as its estimate becomes unadmitted."""
        if job.queue_class == ACCEPTED and job.overran(state.clock.round_minutes):
            state.overrun(job)

    def held_gpus(self, job: ChronusJob) -> int:
        """GPUs a guaranteed job holds against the force guarantee's spare GPUs: its lease demand."""
        return job.lease_gpus

    def after_force(self, state: ChronusState, job: ChronusJob, lease_start: float) -> None:
        """What else a force guarantee changes: nothing."""

    def placed_with_forced(self, job: ChronusJob) -> bool:
        """Placed with the forced jobs, before the running and the 5-minute order:
        forced and overrun jobs."""
        return job.forced or job.fake_force


class ArtifactRules(ChronusRules):
    """The Chronus artifact's scheduling where it departs from the clean reading."""

    name = "artifact"
    overruns_first = True
    admission_option = 0  # its packing check takes a job's first (earliest) deadline

    def __init__(self, admission_minutes: float) -> None:
        self.admission_minutes = admission_minutes

    def filling_budget(self, state: ChronusState, active: dict[str, JobState], boundary: bool) -> int:
        """Inside a lease: GPUs freed in the previous round that the artifact's filling
        pass would have handed out before this round's 5-minute step (:func:`filled_by_filling`)."""
        if boundary:
            return 0
        return sum(g for jid, (fin, g) in state.endings.items()
                   if jid not in active and filled_by_filling(fin, self.admission_minutes))

    def demote_overruns(self, state: ChronusState, round_state: RoundState, active: dict[str, JobState], boundary: bool) -> None:
        """Any job that ran last round (whatever its class) and has run as long as its
        padded estimate becomes unadmitted with the (never reset) fake-force flag; a
        job holding a lease only at a lease boundary."""
        round_minutes = state.clock.round_minutes
        for jid, job in state.jobs.items():
            if job.queue_class is None or not job.overran(round_minutes) or not round_state.was_running(active[jid]):
                continue
            if boundary or jid not in state.guaranteed:
                state.overrun(job)

    def predict_endings(self, state: ChronusState, round_state: RoundState, active: dict[str, JobState], out: Allocation) -> None:
        """Remember the jobs this allocation finishes within the round and when
        (minutes: the change cost of this round plus the remaining run time)."""
        round_minutes = state.clock.round_minutes
        end = round_state.now + round_minutes
        for jid, pls in out.items():
            job, js = state.jobs[jid], active[jid]
            left = job.observed_left(js)
            if left > round_minutes + 1e-9:
                continue
            kind = Change.NONE if js.last_round is None else classify(js.placements, js.last_round + 1, pls, round_state.round)
            fin = round_state.now + round_state.overheads.minutes(kind, js.gpus) + left
            if fin <= end + 1e-9:
                state.endings[jid] = (fin, js.gpus)

    def lease_options(self, job: ChronusJob) -> list[int]:
        """Every deadline option at every lease (a plan's option may change)."""
        return list(range(len(job.deadlines)))

    def admitted_deadline_slots(self, job: ChronusJob, slot0_start: float, lease_minutes: float, packed_slots: int) -> int:
        """The slots before its last deadline (the job was packed on its first)."""
        return maximum_lease(job.deadlines[-1][0], slot0_start, lease_minutes)

    def rejected_request(self, job: ChronusJob, leases: int, slots: int, packed_slots: int) -> Request | None:
        """The artifact's lists keep a rejected job's request for the rest of the step
        (a soft job's on its first deadline, which blocks every later arrival)."""
        return (job.id, job.lease_gpus, leases, slots if len(job.deadlines) > 1 else packed_slots)

    def is_waiting(self, round_state: RoundState, js: JobState, boundary: bool, guaranteed: set[str]) -> bool:
        """At a lease boundary every job not guaranteed (all were preempted); else as clean."""
        if boundary:
            return js.spec.id not in guaranteed
        return not round_state.was_running(js)

    def demote_waiting_overrun(self, state: ChronusState, job: ChronusJob) -> None:
        """None here: the artifact demotes running jobs (:meth:`demote_overruns`)."""

    def held_gpus(self, job: ChronusJob) -> int:
        """Its GPUs, not its rounded demand."""
        return job.gpus

    def after_force(self, state: ChronusState, job: ChronusJob, lease_start: float) -> None:
        """Out of the lease MILP; relabelled admitted when submitted in the current lease
        (``lease_start``, minutes)."""
        job.lease_planned = False
        if job.arrival >= lease_start - 1e-9:
            state.set_class(job, ACCEPTED)
            state.stats.relabelled_admitted += 1

    def placed_with_forced(self, job: ChronusJob) -> bool:
        """Forced jobs only (overrun jobs lead the 5-minute order instead)."""
        return job.forced


def rules_for(config: ChronusConfig) -> ChronusRules:
    return ArtifactRules(config.admission_minutes) if config.artifact else ChronusRules()


def filled_by_filling(finish: float, step_minutes: float = 5.0) -> bool:
    """Whether the artifact hands out the GPUs of a job finishing at ``finish`` (minutes)
    in its odd-minute filling pass rather than at its next 5-minute step.

    The artifact releases them at minute ``M = ceil(finish)``; at each minute it first
    releases, then (every ``step_minutes``) admits and fills in its 5-minute order,
    then (at odd minutes) runs ``filling_jobs``. So the filling pass gets them unless
    ``M`` is a 5-minute step, or ``M`` is even and ``M + 1`` is one."""
    M = math.ceil(finish - 1e-9)
    step = max(1, round(step_minutes))
    return M % step != 0 and (M % 2 == 1 or (M + 1) % step != 0)
