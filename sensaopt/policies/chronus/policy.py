"""The Chronus policy: leases, admission, lease MILP, opportunistic filling.

Per round (length R minutes; a lease is ``k = max(1, floor(L / R + 1/2))`` rounds):

* **lease boundary** (first round of lease b, time T_b = b·k·R): every job is
  preempted and re-planned. Admitted jobs' lease counts ``l`` follow the artifact
  (a granted lease counts as one lease done; recomputed from observed progress and
  the padded estimate only when that is smaller); jobs that ran past their estimate
  are demoted to unadmitted (with the artifact's force flag); jobs that can no
  longer fit ``l`` slots before any deadline become hopeless. The lease MILP
  (:mod:`.selection`) picks one deadline option and ``l`` slots per admitted job;
  jobs with ``x[j,0] = 1`` are *guaranteed* their GPUs for this lease, the rest of
  the plan is cached (options stay fixed afterwards).
* **admission rounds** (every round if R >= 5 min, else every round(5/R) rounds):
  new SLO jobs are admitted by greedy packing against the slots of the *next*
  lease onwards (as in the artifact, where the lease step runs before arrivals);
  waiting SLO jobs that cannot meet their deadline any more become hopeless;
  unadmitted jobs that fit in the rest of the lease are force-guaranteed.
* **every round**: guaranteed jobs are placed first (same nodes as before when
  possible: no restart overhead), then forced jobs, then (inside a lease) the
  opportunistic jobs already running keep their place, then the remaining GPUs are
  filled in the artifact's order: unadmitted and best-effort first by least
  remaining service (remaining estimate × GPUs), then admitted jobs by least slack ×
  GPUs, hopeless jobs last.

CPU and memory are strictly GPU-proportional. Durations for planning: the job's
run time at the cluster's GPU-proportional share (``work / speed``), which is what a
GPU-proportional scheduler observes. Time in minutes.

Restart overhead: the validator's rule applies (0.5 + 0.5·log2 g minutes lost in
the first round of a segment that resumes after a gap or on other nodes). The
artifact charges the same amount, (0.1 + 0.4)·(1 + log2 g), per resume, added to
the finish time; in both, a job that keeps running across a lease boundary on the
same nodes pays nothing. Unlike the artifact, a move to other nodes also pays it.

Artifact behaviour deliberately not copied: ``compute_progress`` = 1.0 (here speed
follows the profile), the night-time node turn-off, the odd-minute
``filling_jobs`` pass (ascending priority, hopeless first), and force-guaranteed jobs
submitted in the current lease being relabelled admitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sensaopt.instance import Instance
from sensaopt.policies.base import Allocation, BasePolicy, JobState, RoundState
from sensaopt.policies.placement import NodePool
from sensaopt.result import Status

from .admission import Request, admit
from .config import ChronusConfig
from .lease import (
    ACCEPTED,
    BEST_EFFORT,
    CLASS_NAMES,
    LOWEST,
    UNACCEPTED,
    estimate_duration,
    leases_needed,
    maximum_lease,
    rounded_gpus,
)
from .selection import LeaseJob, Selection, solve_selection


@dataclass(eq=False)
class _CJob:
    id: str
    gpus: int
    r: int
    arrival: float
    work: float
    speed_prop: float
    duration: float  # planned run time at the proportional share, minutes
    est_total: int  # artifact's padded estimate, minutes
    deadlines: tuple[tuple[float, float], ...]
    cls: int | None = None  # None: not seen by admission yet
    deadline_check: float | None = None  # admitted: snapped deadline; else last deadline
    option: int | None = None  # fixed deadline option once planned
    plan: tuple[int, ...] | None = None  # absolute lease indices it holds
    leases: int = 0  # leases still needed (artifact: only ever decreases)
    forced: bool = False
    fake_force: bool = False
    rounds_run: int = 0


class ChronusPolicy(BasePolicy):
    """Chronus; see the module docstring. Counters in ``self.stats``, each job's
    final class in ``self.classes`` (admitted / unadmitted / best_effort / hopeless)."""

    name = "chronus"
    config_class = ChronusConfig
    config: ChronusConfig

    # ------------------------------------------------------------------ setup
    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        cfg = self.config
        R = instance.round_minutes
        self.R = R
        self.k = max(1, math.floor(cfg.lease_minutes / R + 0.5))
        self.Lm = self.k * R
        self.adm_every = 1 if cfg.admission_minutes - 1e-9 <= R else max(1, math.floor(cfg.admission_minutes / R + 0.5))
        self.max_cands = cfg.max_candidates if cfg.max_candidates is not None else int(1200 * cfg.lease_minutes // 60)
        self.total = instance.cluster.total_gpus
        ref = instance.cluster.reference_type
        self._share = (math.floor(ref.cpus / ref.gpus + 1e-9), ref.mem_gb / ref.gpus)
        self.jobs: dict[str, _CJob] = {}
        self.classes: dict[str, str] = {}
        self._new: list[str] = []
        self._lease: int | None = None
        self.G: set[str] = set()
        self.stats = {
            "lease_rounds": self.k,
            "lease_minutes_effective": self.Lm,
            "admission_every_rounds": self.adm_every,
            "lease_solves": 0,
            "milp_optimal": 0,
            "milp_time_limit": 0,
            "fallbacks": 0,
            "fallback_reasons": {},
            "unplanned_by_fallback": 0,
            "solve_s_total": 0.0,
            "solve_s_max": 0.0,
            "max_lease_jobs": 0,
            "max_variables": 0,
            "kept_plans": 0,
            "admitted": 0,
            "unadmitted": 0,
            "best_effort": 0,
            "hopeless": 0,
            "overruns": 0,
            "forced": 0,
            "guaranteed_unplaced": 0,
        }

    def _cjob(self, js: JobState) -> _CJob:
        spec = js.spec
        sp = spec.profile.speed(*self._share)
        sp = sp if sp > 0 else 1.0
        dur = spec.work / sp
        return _CJob(
            id=spec.id, gpus=spec.gpus, r=rounded_gpus(spec.gpus), arrival=spec.arrival, work=spec.work,
            speed_prop=sp, duration=dur, est_total=estimate_duration(dur, spec.gpus, self.config.lease_minutes),
            deadlines=spec.deadlines(),
        )

    def _set_class(self, cj: _CJob, cls: int) -> None:
        cj.cls = cls
        self.classes[cj.id] = CLASS_NAMES[cls]

    # ------------------------------------------------------------------ helpers
    def _progress_min(self, cj: _CJob, js: JobState) -> float:
        """Planned minutes of the job already done (fraction of work × duration)."""
        return (cj.work - js.remaining) / cj.work * cj.duration

    def _true_remaining_min(self, cj: _CJob, js: JobState) -> float:
        """Observed remaining run time at the proportional share, minutes."""
        return js.remaining / (cj.speed_prop * js.speed_correction)

    def _est_remaining(self, cj: _CJob, js: JobState) -> float:
        return cj.est_total - self._progress_min(cj, js)

    def _key(self, cj: _CJob, js: JobState, now: float):
        """Filling order (the artifact's best_func, reversed sort): unadmitted and
        best effort first (least remaining × GPUs), then admitted (least slack ×
        GPUs), hopeless last; ties: earlier arrival."""
        rem = self._est_remaining(cj, js)
        if cj.cls in (UNACCEPTED, BEST_EFFORT):
            e = rem * cj.gpus
        else:
            d = cj.deadline_check if cj.deadline_check is not None else now
            e = (d - now - rem) * cj.gpus
        assert cj.cls is not None  # only jobs admission has classified are ordered
        return (-(min(cj.cls, 1)), e, cj.arrival, cj.id)

    # ------------------------------------------------------------------ decide
    def decide(self, state: RoundState) -> Allocation:
        active = {js.id: js for js in state.jobs}
        for jid in [j for j in self.jobs if j not in active]:
            del self.jobs[jid]
            self.G.discard(jid)
        for js in state.jobs:
            if js.id not in self.jobs:
                self.jobs[js.id] = self._cjob(js)
                self._new.append(js.id)
        b = state.round // self.k
        boundary = b != self._lease
        if boundary:
            self._lease = b
            self._lease_boundary(state, active, b)
        if boundary or state.round % self.adm_every == 0:
            self._admit_new(state, active, b)
            self._check_waiting(state, active)
            if self.config.force_guarantee:
                self._force(state, active, b)
        return self._place(state, active, boundary)

    # ------------------------------------------------------------------ lease step
    def _lease_boundary(self, state: RoundState, active: dict[str, JobState], b: int) -> None:
        """Re-plan every admitted job at the start of lease ``b`` (see the module doc)."""
        for cj in self.jobs.values():
            cj.forced = False
        sign = -1.0 if self.config.adaptive and any(cj.cls == UNACCEPTED for cj in self.jobs.values()) else 1.0
        lease_jobs, opt_idx = self._lease_requests(active, b * self.Lm)
        horizon = max([max(m for m, _ in j.options) for j in lease_jobs] + [1])
        cap = [self.total] * horizon
        lease_jobs = self._keep_cached_plans(lease_jobs, cap, b)
        if lease_jobs:
            cfg = self.config
            sel = solve_selection(lease_jobs, cap, sign, solver=cfg.solver, time_limit=cfg.time_limit_s, threads=cfg.threads, seed=cfg.seed)
            self._count_selection(sel, len(lease_jobs))
            for j in lease_jobs:
                jid = str(j.key)  # lease jobs are keyed by job id
                cj = self.jobs[jid]
                if jid in sel.plans:
                    k, slots = sel.plans[jid]
                    cj.option = opt_idx[jid][k]
                    cj.plan = tuple(b + t for t in slots)
                else:  # only a fallback leaves an admitted job out: it becomes unadmitted
                    cj.plan, cj.option = None, None
                    self._set_class(cj, UNACCEPTED)
                    self.stats["unplanned_by_fallback"] += 1
        self.G = {jid for jid, cj in self.jobs.items() if cj.cls == ACCEPTED and cj.plan is not None and b in cj.plan}
        for jid in self.G:
            self.jobs[jid].leases -= 1

    def _lease_requests(self, active: dict[str, JobState], T: float) -> tuple[list[LeaseJob], dict[str, list[int]]]:
        """The lease MILP's jobs at lease start ``T`` (minutes): admitted jobs with leases
        left and their still-reachable deadline options (index map in the second value);
        overrun and hopeless jobs are reclassified on the way."""
        lease_jobs: list[LeaseJob] = []
        opt_idx: dict[str, list[int]] = {}
        for jid, cj in self.jobs.items():
            if cj.cls != ACCEPTED:
                continue
            js = active[jid]
            if cj.rounds_run * self.R >= cj.est_total:
                self._overrun(cj)
                continue
            # artifact: a granted lease counts as one lease done; the count is
            # recomputed from progress only when that makes it smaller
            cj.leases = n_leases = min(cj.leases, leases_needed(self._est_remaining(cj, js), self.Lm))
            if n_leases <= 0:
                cj.plan = None  # no lease left to plan: runs opportunistically until done or overrun
                continue
            ks = [cj.option] if cj.option is not None else list(range(len(cj.deadlines)))
            opts, idx = [], []
            for kk in ks:
                at, v = cj.deadlines[kk]
                m = maximum_lease(at, T, self.Lm)
                if m >= n_leases:
                    opts.append((m, v))
                    idx.append(kk)
            if not opts:
                self._hopeless(cj)
                continue
            lease_jobs.append(LeaseJob(jid, cj.r, n_leases, tuple(opts)))
            opt_idx[jid] = idx
        return lease_jobs, opt_idx

    def _keep_cached_plans(self, lease_jobs: list[LeaseJob], cap: list[int], b: int) -> list[LeaseJob]:
        """Candidate limit: beyond ``max_cands`` (job, option) candidates, planned jobs keep
        their cached plan (largest first; their GPUs leave ``cap``). The jobs left to solve."""
        n_cands = sum(len(j.options) for j in lease_jobs)
        if n_cands <= self.max_cands:
            return lease_jobs
        kept: set[str] = set()
        order = sorted(lease_jobs, key=lambda j: (-j.r, -max(m for m, _ in j.options), self.jobs[str(j.key)].arrival, str(j.key)))
        for j in order:
            if n_cands <= self.max_cands:
                break
            cj = self.jobs[str(j.key)]
            if cj.plan is None:
                continue
            slots = sorted(s - b for s in cj.plan if s >= b)
            if len(slots) < j.l:
                continue
            slots = slots[len(slots) - j.l:]  # drop the earliest extra slots (artifact)
            if any(t >= j.options[0][0] for t in slots) or any(cap[t] < j.r for t in slots):
                continue
            for t in slots:
                cap[t] -= j.r
            cj.plan = tuple(b + t for t in slots)
            kept.add(str(j.key))
            n_cands -= len(j.options)
        self.stats["kept_plans"] += len(kept)
        return [j for j in lease_jobs if str(j.key) not in kept]

    def _count_selection(self, sel: Selection, n_jobs: int) -> None:
        """Add one lease solve to the counters (fallbacks by reason, never silent)."""
        st = self.stats
        st["lease_solves"] += 1
        st["solve_s_total"] += sel.solve_s
        st["solve_s_max"] = max(st["solve_s_max"], sel.solve_s)
        st["max_lease_jobs"] = max(st["max_lease_jobs"], n_jobs)
        st["max_variables"] = max(st["max_variables"], sel.variables)
        if sel.fallback:
            st["fallbacks"] += 1
            reason = sel.reason.split("(")[0].strip() or "unknown"
            st["fallback_reasons"][reason] = st["fallback_reasons"].get(reason, 0) + 1
        elif sel.status == Status.OPTIMAL:
            st["milp_optimal"] += 1
        else:  # TIME_LIMIT with an incumbent
            st["milp_time_limit"] += 1

    def _overrun(self, cj: _CJob) -> None:
        cj.plan, cj.option, cj.fake_force = None, None, True
        self._set_class(cj, UNACCEPTED)
        self.G.discard(cj.id)
        self.stats["overruns"] += 1

    def _hopeless(self, cj: _CJob) -> None:
        cj.plan, cj.option, cj.forced = None, None, False
        self._set_class(cj, LOWEST)
        self.G.discard(cj.id)
        self.stats["hopeless"] += 1

    # ------------------------------------------------------------------ admission
    def _planned_capacity(self, first_lease: int) -> list[int]:
        """GPUs free for planning per slot, slot 0 = lease ``first_lease``."""
        last = max([max(cj.plan) for cj in self.jobs.values() if cj.cls == ACCEPTED and cj.plan] + [first_lease])
        cap = [self.total] * (last - first_lease + 1)
        for cj in self.jobs.values():
            if cj.cls == ACCEPTED and cj.plan:
                for s in cj.plan:
                    if s >= first_lease:
                        cap[s - first_lease] -= cj.r
        return cap

    def _admit_new(self, state: RoundState, active: dict[str, JobState], b: int) -> None:
        if not self._new:
            return
        T0 = (b + 1) * self.Lm
        cap = self._planned_capacity(b + 1)
        others: list[Request] = []
        for jid, cj in self.jobs.items():
            if cj.cls == ACCEPTED and cj.plan is None:
                cj.leases = n_leases = min(cj.leases, leases_needed(self._est_remaining(cj, active[jid]), self.Lm))
                m = maximum_lease(cj.deadlines[-1][0], T0, self.Lm)
                if 0 < n_leases <= m:
                    others.append((jid, cj.r, n_leases, m))
        for jid in self._new:
            cj = self.jobs[jid]
            if not cj.deadlines:
                self._set_class(cj, BEST_EFFORT)
                self.stats["best_effort"] += 1
                continue
            last_at = cj.deadlines[-1][0]
            n_leases = max(1, leases_needed(cj.est_total, self.Lm))
            m = maximum_lease(last_at, T0, self.Lm)
            dec = admit(others, (jid, cj.r, n_leases, m), cap, self.total, last_m=m)
            if dec.admitted:
                self._set_class(cj, ACCEPTED)
                cj.leases = n_leases
                cj.deadline_check = T0 + dec.m * self.Lm
                others.append((jid, cj.r, n_leases, dec.m))
                self.stats["admitted"] += 1
            else:
                self._set_class(cj, UNACCEPTED)
                cj.deadline_check = last_at
                self.stats["unadmitted"] += 1
        self._new = []

    def _check_waiting(self, state: RoundState, active: dict[str, JobState]) -> None:
        """Waiting SLO jobs (not guaranteed, not running): hopeless if they cannot
        finish by their deadline even if run from now on; admitted jobs that ran
        past their estimate become unadmitted (artifact)."""
        for jid, cj in self.jobs.items():
            if cj.cls not in (ACCEPTED, UNACCEPTED) or jid in self.G:
                continue
            js = active[jid]
            if state.was_running(js):
                continue
            if cj.cls == ACCEPTED and cj.rounds_run * self.R >= cj.est_total:
                self._overrun(cj)
            assert cj.deadline_check is not None  # set when admission classified it (SLO jobs)
            if state.now + self._true_remaining_min(cj, js) > cj.deadline_check + 1e-9:
                self._hopeless(cj)

    def _force(self, state: RoundState, active: dict[str, JobState], b: int) -> None:
        left = (b + 1) * self.Lm - state.now
        spot = self.total - sum(self.jobs[j].r for j in self.G) - sum(cj.gpus for cj in self.jobs.values() if cj.forced)
        cands = []
        for jid, cj in self.jobs.items():
            if cj.cls != UNACCEPTED or cj.forced or state.was_running(active[jid]):
                continue
            rem = self._true_remaining_min(cj, active[jid])
            if rem <= left + 1e-9:
                cands.append((rem * cj.gpus, cj.arrival, jid))
        for _, _, jid in sorted(cands):
            cj = self.jobs[jid]
            if cj.gpus <= spot:
                spot -= cj.gpus
                cj.forced = True
                self.stats["forced"] += 1

    # ------------------------------------------------------------------ placement
    def _place(self, state: RoundState, active: dict[str, JobState], boundary: bool) -> Allocation:
        pool = NodePool(state.cluster)
        out: Allocation = {}
        now = state.now

        known = [(self.jobs[js.id], js) for js in state.jobs if self.jobs[js.id].cls is not None]
        g = sorted((p for p in known if p[0].id in self.G), key=lambda p: (-p[0].gpus, p[0].arrival, p[0].id))
        for _cj, js in g:
            if not _put(pool, out, state, js):
                self.stats["guaranteed_unplaced"] += 1
        rest = sorted((p for p in known if p[0].id not in self.G), key=lambda p: self._key(p[0], p[1], now))
        for cj, js in rest:
            if cj.forced or cj.fake_force:
                _put(pool, out, state, js)
        if not boundary:
            for _cj, js in rest:
                if js.id not in out and state.was_running(js):
                    _put(pool, out, state, js)
        for _cj, js in rest:
            if js.id not in out:
                _put(pool, out, state, js)
        for jid in out:
            self.jobs[jid].rounds_run += 1
        return out


def _put(pool: NodePool, out: Allocation, state: RoundState, js: JobState) -> bool:
    """Place ``js`` GPU-proportionally (on its previous nodes when it was running and
    still fits there) into ``pool`` and ``out``; False if it does not fit this round."""
    if pool.free_gpus < js.gpus:
        return False
    pl = pool.place_proportional(js.gpus, js.placements if state.was_running(js) else None)
    if pl is None:
        return False
    pool.take(pl)
    out[js.id] = pl
    return True
