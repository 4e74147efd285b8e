"""The 5-minute admission step of Chronus: new SLO jobs are admitted by greedy
packing against the slots of the next lease onwards, waiting jobs that cannot meet
their deadline become hopeless, and unadmitted jobs that fit in the rest of the lease
are force-guaranteed. Times in minutes, slots are leases, GPUs per job."""

from __future__ import annotations

from itertools import chain

import numpy as np

from sensaopt.policies.base import JobState, RoundState

from .admission import Packer, Request, admit
from .lease import ACCEPTED, BEST_EFFORT, UNACCEPTED, leases_needed, maximum_lease
from .rules import ChronusRules
from .state import ChronusState


def planned_capacity(state: ChronusState, first_lease: int) -> list[int]:
    """GPUs free for planning per slot, slot 0 = lease ``first_lease``."""
    planned = [(job.lease_gpus, plan) for job in state.jobs.values() if job.queue_class == ACCEPTED and (plan := job.plan)]
    slots = np.fromiter(chain.from_iterable([plan for _, plan in planned]), dtype=np.int64)
    held = np.repeat(np.asarray([gpus for gpus, _ in planned], dtype=np.int64), [len(plan) for _, plan in planned])
    later = slots >= first_lease
    last = max(int(slots.max()) if len(slots) else first_lease, first_lease)
    use = np.bincount(slots[later] - first_lease, weights=held[later], minlength=last - first_lease + 1)
    return (state.total_gpus - use.astype(np.int64)).tolist()  # GPU counts: the float sums are exact


def admit_new(state: ChronusState, rules: ChronusRules, active: dict[str, JobState], lease: int) -> None:
    """Admission of the jobs seen for the first time (slots from lease ``lease + 1``).

    A new job is packed against its deadline option ``rules.admission_option`` (clean:
    the last; artifact: the first, which its packing check takes) and a rejected one is
    judged against it; an admitted job gets the deadline of
    :meth:`~.rules.ChronusRules.admitted_deadline_slots` snapped down to a lease
    boundary (``deadline_check``).

    In the artifact a rejected job's entries stay in the packing lists until the end
    of the admission step (``process_unaccepted_jobs`` truncates only its local
    copies), its last entry moved to the end of its binary search. A strict job's
    only entry then packs late and does no harm; a soft job is packed on its first
    entry, which still does not pack, so every later arrival of the step is rejected."""
    if not state.new_jobs:
        return
    stats = state.stats
    pick = rules.admission_option
    lease_minutes = state.clock.lease_minutes
    slot0_start = (lease + 1) * lease_minutes
    capacity = planned_capacity(state, lease + 1)
    others: list[Request] = []
    for jid, job in state.jobs.items():
        if job.queue_class == ACCEPTED and job.lease_planned and job.plan is None:
            job.leases_left = leases = min(job.leases_left, leases_needed(job.estimate_left(active[jid]), lease_minutes))
            slots = maximum_lease(job.deadlines[pick][0], slot0_start, lease_minutes)
            if 0 < leases <= slots:
                others.append((jid, job.lease_gpus, leases, slots))
    packer: Packer | None = None  # built at the first SLO arrival
    for jid in state.new_jobs:
        job = state.jobs[jid]
        if not job.deadlines:
            state.set_class(job, BEST_EFFORT)
            stats.best_effort += 1
            continue
        leases = max(1, leases_needed(job.estimate, lease_minutes))
        slots = maximum_lease(job.deadlines[pick][0], slot0_start, lease_minutes)
        packer = packer or Packer(others, capacity, state.total_gpus)
        decision = admit(packer, (jid, job.lease_gpus, leases, slots), last_m=slots)
        if decision.admitted:
            state.set_class(job, ACCEPTED)
            job.leases_left = leases
            job.deadline_check = slot0_start + rules.admitted_deadline_slots(job, slot0_start, lease_minutes, decision.m) * lease_minutes
            packer.add((jid, job.lease_gpus, leases, decision.m))
            stats.admitted += 1
        else:
            state.set_class(job, UNACCEPTED)
            job.deadline_check = job.deadlines[pick][0]
            stats.unadmitted += 1
            kept = rules.rejected_request(job, leases, slots, decision.m)
            if kept is not None:
                packer.add(kept)
    state.new_jobs = []


def check_waiting(state: ChronusState, rules: ChronusRules, round_state: RoundState, active: dict[str, JobState],
                  boundary: bool) -> None:
    """Waiting SLO jobs (not guaranteed, waiting by ``rules.is_waiting``): hopeless if
    they cannot finish by their deadline even if run from now on; [clean reading:]
    admitted ones that ran past their estimate become unadmitted first."""
    for jid, job in state.jobs.items():
        if job.queue_class not in (ACCEPTED, UNACCEPTED) or jid in state.guaranteed:
            continue
        js = active[jid]
        if not rules.is_waiting(round_state, js, boundary, state.guaranteed):
            continue
        rules.demote_waiting_overrun(state, job)
        if job.deadline_check is None:  # artifact: a best-effort job demoted by an overrun
            continue
        if round_state.now + job.observed_left(js) > job.deadline_check + 1e-9:
            state.hopeless(job)


def force_guarantee(state: ChronusState, rules: ChronusRules, round_state: RoundState, active: dict[str, JobState],
                    lease: int, boundary: bool) -> None:
    """Force guarantee: unadmitted waiting jobs that can finish within the rest of the
    lease get the spare (not guaranteed, not forced) GPUs, least remaining × GPUs first."""
    jobs = state.jobs
    lease_minutes = state.clock.lease_minutes
    left = (lease + 1) * lease_minutes - round_state.now
    held = sum(rules.held_gpus(jobs[j]) for j in state.guaranteed)
    spare = state.total_gpus - held - sum(job.gpus for job in jobs.values() if job.forced)
    candidates = []
    for jid, job in jobs.items():
        if job.queue_class != UNACCEPTED or job.forced or not rules.is_waiting(round_state, active[jid], boundary, state.guaranteed):
            continue
        remaining = job.observed_left(active[jid])
        if remaining <= left + 1e-9:
            candidates.append((remaining * job.gpus, job.arrival, jid))
    for _, _, jid in sorted(candidates):
        job = jobs[jid]
        if job.gpus <= spare:
            spare -= job.gpus
            job.forced = True
            state.stats.forced += 1
            rules.after_force(state, job, lease * lease_minutes)
