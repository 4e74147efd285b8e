"""The lease boundary: every admitted job is re-planned by the lease MILP
(:mod:`.selection`) over its still-reachable deadline options; jobs whose plan holds
this lease are guaranteed their GPUs for it. Times in minutes, slots are leases."""

from __future__ import annotations

from sensaopt.policies.base import JobState

from .config import ChronusConfig
from .lease import ACCEPTED, UNACCEPTED, leases_needed, maximum_lease
from .rules import ChronusRules
from .selection import LeaseJob, solve_selection
from .state import ChronusState


def plan_lease(state: ChronusState, rules: ChronusRules, config: ChronusConfig, active: dict[str, JobState], lease: int) -> None:
    """Re-plan every admitted job at the start of lease ``lease`` and set the guaranteed jobs."""
    jobs = state.jobs
    for job in jobs.values():
        job.forced = False
    sign = -1.0 if config.adaptive and any(job.queue_class == UNACCEPTED for job in jobs.values()) else 1.0
    lease_jobs, option_index = lease_requests(state, rules, active, lease * state.clock.lease_minutes)
    horizon = max([max(j.options)[0] for j in lease_jobs] + [1])  # (m, value) pairs: the largest m
    capacity = [state.total_gpus] * horizon
    lease_jobs = keep_cached_plans(state, lease_jobs, option_index, capacity, lease)
    if lease_jobs:
        selection = solve_selection(lease_jobs, capacity, sign, solver=config.solver, time_limit=config.time_limit_s,
                                    threads=config.threads, seed=config.seed, budget=config.budget,
                                    certify_greedy=config.certify_greedy)
        state.stats.count_selection(selection, len(lease_jobs))
        for lj in lease_jobs:
            jid = str(lj.key)  # lease jobs are keyed by job id
            job = jobs[jid]
            if jid in selection.plans:
                k, slots = selection.plans[jid]
                job.option = option_index[jid][k]
                job.plan = tuple([lease + t for t in slots])
            else:  # only a fallback leaves an admitted job out: it becomes unadmitted
                job.plan, job.option = None, None
                state.set_class(job, UNACCEPTED)
                state.stats.unplanned_by_fallback += 1
    state.guaranteed = {jid for jid, job in jobs.items() if job.queue_class == ACCEPTED and job.plan is not None and lease in job.plan}
    for jid in state.guaranteed:
        jobs[jid].leases_left -= 1


def lease_requests(state: ChronusState, rules: ChronusRules, active: dict[str, JobState],
                   lease_start: float) -> tuple[list[LeaseJob], dict[str, list[int]]]:
    """The lease MILP's jobs at ``lease_start`` (minutes): admitted jobs with leases
    left and their still-reachable deadline options (job id -> option indices in the
    second value); overrun and hopeless jobs are reclassified on the way."""
    lease_minutes = state.clock.lease_minutes
    lease_jobs: list[LeaseJob] = []
    option_index: dict[str, list[int]] = {}
    for jid, job in state.jobs.items():
        if job.queue_class != ACCEPTED or not job.lease_planned:
            continue
        js = active[jid]
        if job.overran(state.clock.round_minutes):
            state.overrun(job)
            continue
        # artifact: a granted lease counts as one lease done; the count is
        # recomputed from progress only when that makes it smaller
        job.leases_left = leases = min(job.leases_left, leases_needed(job.estimate_left(js), lease_minutes))
        if leases <= 0:
            job.plan = None  # no lease left to plan: runs opportunistically until done or overrun
            continue
        options, index = [], []
        for k in rules.lease_options(job):
            at, value = job.deadlines[k]
            slots = maximum_lease(at, lease_start, lease_minutes)
            if slots >= leases:
                options.append((slots, value))
                index.append(k)
        if not options:
            state.hopeless(job)
            continue
        lease_jobs.append(LeaseJob(jid, job.lease_gpus, leases, tuple(options)))
        option_index[jid] = index
    return lease_jobs, option_index


def keep_cached_plans(state: ChronusState, lease_jobs: list[LeaseJob], option_index: dict[str, list[int]],
                      capacity: list[int], lease: int) -> list[LeaseJob]:
    """Candidate limit: beyond ``state.max_candidates`` (job, option) candidates, planned
    jobs keep their cached plan and option (largest first; their GPUs leave
    ``capacity``). The jobs left to solve."""
    candidates = sum(len(j.options) for j in lease_jobs)
    if candidates <= state.max_candidates:
        return lease_jobs
    jobs = state.jobs
    kept: set[str] = set()
    # largest first: (-r, -largest m, arrival, id); ids are distinct, so the order is that of a sort by key
    order = sorted([(-lj.r, -max(lj.options)[0], jobs[jid].arrival, jid, lj) for lj in lease_jobs if (jid := str(lj.key))],
                   key=_first_four)
    for *_, jid, lj in order:
        if candidates <= state.max_candidates:
            break
        job = jobs[jid]
        if job.plan is None:
            continue
        slots = sorted([s - lease for s in job.plan if s >= lease])
        if len(slots) < lj.l:
            continue
        slots = slots[len(slots) - lj.l:]  # drop the earliest extra slots (artifact)
        if job.option not in option_index[jid]:
            continue
        reachable = lj.options[option_index[jid].index(job.option)][0]
        r = lj.r
        if slots[-1] >= reachable or min([capacity[t] for t in slots]) < r:  # slots ascending, at least one
            continue
        for t in slots:
            capacity[t] -= r
        job.plan = tuple([lease + t for t in slots])
        kept.add(jid)
        candidates -= len(lj.options)
    state.stats.kept_plans += len(kept)
    return [j for j in lease_jobs if str(j.key) not in kept]


def _first_four(item: tuple) -> tuple:
    return item[:4]
