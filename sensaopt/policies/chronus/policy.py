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
  the plan is cached (clean reading: its option stays fixed afterwards).
* **admission rounds** (every round if R >= 5 min, else every round(5/R) rounds):
  new SLO jobs are admitted by greedy packing against the slots of the *next*
  lease onwards (as in the artifact, where the lease step runs before arrivals);
  waiting SLO jobs that cannot meet their deadline any more become hopeless;
  unadmitted jobs that fit in the rest of the lease are force-guaranteed.
* **every round**: guaranteed jobs are placed first (same nodes as before when
  possible: no restart overhead), then forced jobs, then (inside a lease) the
  opportunistic jobs already running keep their place, then the remaining GPUs are
  filled in the artifact's 5-minute order: unadmitted and best-effort first by least
  remaining service (remaining estimate × GPUs), then admitted jobs by least slack ×
  GPUs, hopeless jobs last.

``chronus`` (``ChronusConfig.artifact = True``) reproduces the artifact's scheduling
where it departs from a clean reading; ``chronus-clean`` (:class:`ChronusCleanPolicy`)
does not. The artifact's behaviours, each mapped to rounds (``models/chronus.md``):

* the odd-minute ``filling_jobs`` pass: inside a lease, the GPUs of jobs that finished
  in the previous round at a minute the artifact fills (:func:`filled_by_filling`) are
  handed out first in ascending queue priority, hopeless jobs first;
* overrun demotion of *any* job that ran last round (best effort and hopeless
  included) to unadmitted with the never-reset fake-force flag, which puts it first in
  the 5-minute order (not before running jobs);
* admission packs every unplanned job on its *first* deadline (for a soft job the
  most valuable one); a rejected job is judged hopeless against its first deadline,
  and its request stays in the packing for the rest of its admission step (a soft
  job's then blocks every later arrival of the step);
* every deadline option is offered again at each lease (the clean reading keeps the
  option of the first plan);
* at a lease boundary every job not guaranteed is checked for hope (all were
  preempted), not only those that did not run in the last round;
* force-guaranteed jobs submitted in the current lease are relabelled admitted (out
  of the lease MILP and admission), and the spare GPUs count guaranteed jobs by their
  GPUs, not their rounded demand.

CPU and memory are strictly GPU-proportional. Durations for planning: the job's
run time at the cluster's GPU-proportional share (``work / speed``), which is what a
GPU-proportional scheduler observes. Time in minutes.

Restart overhead: the simulator's rule applies (0.5 + 0.5·log2 g minutes lost in
the first round of a segment that resumes after a gap; a move to other nodes pays the
migration cost). The artifact charges (0.1 + 0.4)·(1 + log2 g) per resume, added to
the finish time; in both, a job that keeps running across a lease boundary on the
same nodes pays nothing.

Artifact behaviour not copied (simulator-level, in both policies): ``compute_progress``
= 1.0 (here speed follows the profile), one model for all jobs, the night-time node
turn-off (off in the paper's runs: ``--disable_turn_off=True``), the free progress a job
started by the filling pass gets for the minutes since the last 5-minute step, and
1-minute steps (here R-minute rounds: a finished job's GPUs wait for the next round).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sensaopt.changes import classify
from sensaopt.instance import Change, Instance
from sensaopt.policies.base import Allocation, BasePolicy, JobState, RoundState
from sensaopt.policies.placement import NodePool, proportional_placement
from sensaopt.result import Status
from sensaopt.schedule import Placement

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
    mip: bool = True  # artifact's require_mip_optimization: planned by the lease MILP when admitted
    was_hopeless: bool = False
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
        self._ending: dict[str, tuple[float, int]] = {}  # job -> (predicted finish, GPUs), this round
        self._fill_budget = 0  # GPUs the odd-minute filling pass hands out this round
        self._prop: dict[tuple[int, int], Placement] = {}  # (node index, GPUs) -> proportional placement
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
            "relabelled_admitted": 0,
            "filled": 0,
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

    def _urgency(self, cj: _CJob, js: JobState, now: float) -> float:
        """The artifact's ``-emergence`` (GPU-minutes): remaining estimate × GPUs for
        unadmitted and best-effort jobs, slack (deadline − now − remaining estimate) ×
        GPUs for admitted and hopeless ones (negative once late)."""
        rem = self._est_remaining(cj, js)
        if cj.cls in (UNACCEPTED, BEST_EFFORT):
            return rem * cj.gpus
        d = cj.deadline_check if cj.deadline_check is not None else now
        return (d - now - rem) * cj.gpus

    def _key(self, cj: _CJob, js: JobState, now: float):
        """Filling order at the 5-minute steps (the artifact's best_func, reversed sort):
        [artifact: fake-forced (overrun) jobs first,] unadmitted and best effort (least
        remaining × GPUs), then admitted (least slack × GPUs), hopeless last; ties:
        earlier arrival."""
        assert cj.cls is not None  # only jobs admission has classified are ordered
        force = -int(cj.fake_force) if self.config.artifact else 0
        return (force, -(min(cj.cls, 1)), self._urgency(cj, js, now), cj.arrival, cj.id)

    def _keys(self, pairs: list[tuple[_CJob, JobState]], now: float) -> list[tuple]:
        """:meth:`_key` of every pair, inlined (the same arithmetic, so the same floats):
        the placement sorts these every round."""
        art = self.config.artifact
        keys = []
        for cj, js in pairs:
            cls = cj.cls
            assert cls is not None  # only jobs admission has classified are ordered
            rem = cj.est_total - (cj.work - js.remaining) / cj.work * cj.duration  # _est_remaining
            if cls in (UNACCEPTED, BEST_EFFORT):
                u = rem * cj.gpus
            else:
                d = cj.deadline_check if cj.deadline_check is not None else now
                u = (d - now - rem) * cj.gpus
            keys.append((-int(cj.fake_force) if art else 0, -(min(cls, 1)), u, cj.arrival, cj.id))
        return keys

    def _fill_key(self, cj: _CJob, js: JobState, now: float):
        """The artifact's odd-minute ``filling_jobs`` order: ascending (priority,
        emergence): hopeless first (least late × GPUs), then admitted (most slack ×
        GPUs), unadmitted, best effort (most remaining × GPUs); ties: earlier arrival."""
        assert cj.cls is not None
        return (cj.cls, -self._urgency(cj, js, now), cj.arrival, cj.id)

    # ------------------------------------------------------------------ decide
    def decide(self, state: RoundState) -> Allocation:
        art = self.config.artifact
        active = {js.id: js for js in state.jobs}
        b = state.round // self.k
        boundary = b != self._lease
        self._fill_budget = self._filling_budget(active) if art and not boundary else 0
        self._ending = {}
        for jid in [j for j in self.jobs if j not in active]:
            del self.jobs[jid]
            self.G.discard(jid)
        for js in state.jobs:
            if js.id not in self.jobs:
                self.jobs[js.id] = self._cjob(js)
                self._new.append(js.id)
        if art:
            self._demote_overruns(state, active, boundary)
        if boundary:
            self._lease = b
            self._lease_boundary(state, active, b)
        if boundary or state.round % self.adm_every == 0:
            self._admit_new(state, active, b)
            self._check_waiting(state, active, boundary)
            if self.config.force_guarantee:
                self._force(state, active, b, boundary)
        out = self._place(state, active, boundary)
        if art:
            self._predict_endings(state, active, out)
        return out

    # ------------------------------------------------------------------ artifact: filling, overruns
    def _predict_endings(self, state: RoundState, active: dict[str, JobState], out: Allocation) -> None:
        """Remember the jobs this allocation finishes within the round and when
        (minutes: the change cost of this round plus the remaining run time)."""
        end = state.now + self.R
        for jid, pls in out.items():
            cj, js = self.jobs[jid], active[jid]
            rem = self._true_remaining_min(cj, js)
            if rem > self.R + 1e-9:
                continue
            kind = Change.NONE if js.last_round is None else classify(js.placements, js.last_round + 1, pls, state.round)
            fin = state.now + state.overheads.minutes(kind, js.gpus) + rem
            if fin <= end + 1e-9:
                self._ending[jid] = (fin, js.gpus)

    def _filling_budget(self, active: dict[str, JobState]) -> int:
        """GPUs freed in the previous round that the artifact's odd-minute filling pass
        would have handed out before this round's 5-minute step (see :func:`filled_by_filling`)."""
        return sum(g for jid, (fin, g) in self._ending.items()
                   if jid not in active and filled_by_filling(fin, self.config.admission_minutes))

    def _demote_overruns(self, state: RoundState, active: dict[str, JobState], boundary: bool) -> None:
        """Artifact: any job that ran last round (whatever its class) and has run as long
        as its padded estimate becomes unadmitted with the (never reset) fake-force flag;
        a job holding a lease only at a lease boundary."""
        for jid, cj in self.jobs.items():
            if cj.cls is None or cj.rounds_run * self.R < cj.est_total or not state.was_running(active[jid]):
                continue
            if boundary or jid not in self.G:
                self._overrun(cj)

    # ------------------------------------------------------------------ lease step
    def _lease_boundary(self, state: RoundState, active: dict[str, JobState], b: int) -> None:
        """Re-plan every admitted job at the start of lease ``b`` (see the module doc)."""
        for cj in self.jobs.values():
            cj.forced = False
        sign = -1.0 if self.config.adaptive and any(cj.cls == UNACCEPTED for cj in self.jobs.values()) else 1.0
        lease_jobs, opt_idx = self._lease_requests(active, b * self.Lm)
        horizon = max([max(m for m, _ in j.options) for j in lease_jobs] + [1])
        cap = [self.total] * horizon
        lease_jobs = self._keep_cached_plans(lease_jobs, opt_idx, cap, b)
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
            if cj.cls != ACCEPTED or not cj.mip:
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
            # the artifact offers every option at every lease (a plan's option may change);
            # the clean reading keeps the option of the job's first plan
            ks = [cj.option] if cj.option is not None and not self.config.artifact else list(range(len(cj.deadlines)))
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

    def _keep_cached_plans(self, lease_jobs: list[LeaseJob], opt_idx: dict[str, list[int]], cap: list[int], b: int) -> list[LeaseJob]:
        """Candidate limit: beyond ``max_cands`` (job, option) candidates, planned jobs keep
        their cached plan and option (largest first; their GPUs leave ``cap``). The jobs
        left to solve."""
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
            if cj.option not in opt_idx[str(j.key)]:
                continue
            m = j.options[opt_idx[str(j.key)].index(cj.option)][0]
            if any(t >= m for t in slots) or any(cap[t] < j.r for t in slots):
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
        """Ran as long as its padded estimate: unadmitted, out of the lease MILP, with
        the artifact's fake-force flag (first in the 5-minute filling order)."""
        if not cj.fake_force:
            self.stats["overruns"] += 1
        cj.plan, cj.option, cj.fake_force, cj.mip = None, None, True, False
        self._set_class(cj, UNACCEPTED)
        self.G.discard(cj.id)

    def _hopeless(self, cj: _CJob) -> None:
        """Cannot meet its deadline any more: lowest priority (counted once per job; in
        the artifact an overrun can lift a hopeless job to unadmitted for a while)."""
        if not cj.was_hopeless:
            self.stats["hopeless"] += 1
        cj.plan, cj.option, cj.forced, cj.was_hopeless = None, None, False, True
        self._set_class(cj, LOWEST)
        self.G.discard(cj.id)

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
        """Admission of the jobs seen for the first time (slots from lease ``b + 1``).

        A soft job is packed with its last deadline in the clean reading; the artifact
        packs every unplanned job with its *first* deadline (its packing check takes the
        first of a job's (job, option) entries in its order, the earliest deadline) and
        judges a rejected job against its first deadline. Both give an admitted job the
        last deadline snapped down to a lease boundary (``deadline_check``).

        In the artifact a rejected job's entries stay in the packing lists until the end
        of the admission step (``process_unaccepted_jobs`` truncates only its local
        copies), its last entry moved to the end of its binary search. A strict job's
        only entry then packs late and does no harm; a soft job is packed on its first
        entry, which still does not pack, so every later arrival of the step is rejected."""
        if not self._new:
            return
        art = self.config.artifact
        pick = 0 if art else -1  # the deadline option admission packs against
        T0 = (b + 1) * self.Lm
        cap = self._planned_capacity(b + 1)
        others: list[Request] = []
        for jid, cj in self.jobs.items():
            if cj.cls == ACCEPTED and cj.mip and cj.plan is None:
                cj.leases = n_leases = min(cj.leases, leases_needed(self._est_remaining(cj, active[jid]), self.Lm))
                m = maximum_lease(cj.deadlines[pick][0], T0, self.Lm)
                if 0 < n_leases <= m:
                    others.append((jid, cj.r, n_leases, m))
        for jid in self._new:
            cj = self.jobs[jid]
            if not cj.deadlines:
                self._set_class(cj, BEST_EFFORT)
                self.stats["best_effort"] += 1
                continue
            n_leases = max(1, leases_needed(cj.est_total, self.Lm))
            m = maximum_lease(cj.deadlines[pick][0], T0, self.Lm)
            dec = admit(others, (jid, cj.r, n_leases, m), cap, self.total, last_m=m)
            if dec.admitted:
                self._set_class(cj, ACCEPTED)
                cj.leases = n_leases
                m_last = maximum_lease(cj.deadlines[-1][0], T0, self.Lm) if art else dec.m
                cj.deadline_check = T0 + m_last * self.Lm
                others.append((jid, cj.r, n_leases, dec.m))
                self.stats["admitted"] += 1
            else:
                self._set_class(cj, UNACCEPTED)
                cj.deadline_check = cj.deadlines[pick][0]
                self.stats["unadmitted"] += 1
                if art:  # its request stays in the artifact's lists for the rest of this step
                    others.append((jid, cj.r, n_leases, m if len(cj.deadlines) > 1 else dec.m))
        self._new = []

    def _pending(self, state: RoundState, js: JobState, boundary: bool) -> bool:
        """Waiting at this 5-minute step: the clean reading counts jobs that did not run
        last round; the artifact at a lease boundary also the ones it just preempted
        (every job not guaranteed this lease)."""
        if self.config.artifact and boundary:
            return js.id not in self.G
        return not state.was_running(js)

    def _check_waiting(self, state: RoundState, active: dict[str, JobState], boundary: bool = False) -> None:
        """Waiting SLO jobs (not guaranteed, not running): hopeless if they cannot
        finish by their deadline even if run from now on; [clean reading:] admitted jobs
        that ran past their estimate become unadmitted (the artifact demotes only
        running jobs, in :meth:`_demote_overruns`)."""
        art = self.config.artifact
        for jid, cj in self.jobs.items():
            if cj.cls not in (ACCEPTED, UNACCEPTED) or jid in self.G:
                continue
            js = active[jid]
            if not self._pending(state, js, boundary):
                continue
            if not art and cj.cls == ACCEPTED and cj.rounds_run * self.R >= cj.est_total:
                self._overrun(cj)
            if cj.deadline_check is None:  # artifact: a best-effort job demoted by an overrun
                continue
            if state.now + self._true_remaining_min(cj, js) > cj.deadline_check + 1e-9:
                self._hopeless(cj)

    def _force(self, state: RoundState, active: dict[str, JobState], b: int, boundary: bool = False) -> None:
        """Force guarantee: unadmitted waiting jobs that can finish within the rest of the
        lease get the spare (not guaranteed) GPUs, least remaining × GPUs first. The
        artifact relabels those submitted in the current lease admitted (kept out of the
        lease MILP and of admission packing)."""
        art = self.config.artifact
        left = (b + 1) * self.Lm - state.now
        held = sum(self.jobs[j].gpus if art else self.jobs[j].r for j in self.G)
        spot = self.total - held - sum(cj.gpus for cj in self.jobs.values() if cj.forced)
        cands = []
        for jid, cj in self.jobs.items():
            if cj.cls != UNACCEPTED or cj.forced or not self._pending(state, active[jid], boundary):
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
                if art:
                    cj.mip = False
                    if cj.arrival >= b * self.Lm - 1e-9:
                        self._set_class(cj, ACCEPTED)
                        self.stats["relabelled_admitted"] += 1

    # ------------------------------------------------------------------ placement
    def _place(self, state: RoundState, active: dict[str, JobState], boundary: bool) -> Allocation:
        """Guaranteed jobs, then forced ones, then (inside a lease) the jobs already
        running keep their place, then [artifact, inside a lease] the odd-minute filling
        pass hands out the GPUs freed last round, then the 5-minute order fills the rest.
        The clean reading places fake-forced (overrun) jobs with the forced ones."""
        art = self.config.artifact
        pool = _ChronusPool(state.cluster, self._prop)
        out: Allocation = {}
        now = state.now

        jobs = self.jobs
        known = [(cj, js) for js in state.jobs if (cj := jobs[js.spec.id]).cls is not None]
        G = self.G
        g = sorted((p for p in known if p[0].id in G), key=lambda p: (-p[0].gpus, p[0].arrival, p[0].id))
        for _cj, js in g:
            if not _put(pool, out, state, js):
                self.stats["guaranteed_unplaced"] += 1
        others = [p for p in known if p[0].id not in G]
        keyed = sorted(zip(self._keys(others, now), others), key=_first)
        rest = [p for _, p in keyed]
        for cj, js in rest:
            if cj.forced or (cj.fake_force and not art):
                _put(pool, out, state, js)
        if not boundary:
            for _cj, js in rest:
                if js.id not in out and state.was_running(js):
                    _put(pool, out, state, js)
            if self._fill_budget > 0:
                urgency = {k[-1]: k[2] for k, _ in keyed}  # job id -> _urgency, from the keys above
                self._filling_pass(pool, out, state, rest, urgency)
        for _cj, js in rest:
            if js.id not in out:
                _put(pool, out, state, js)
        for jid in out:
            self.jobs[jid].rounds_run += 1
        return out

    def _fill_keys(self, pairs: list[tuple[_CJob, JobState]], urgency: dict[str, float]) -> list[tuple]:
        """:meth:`_fill_key` of every pair from the urgencies this round's :meth:`_keys`
        already computed (job id -> :meth:`_urgency`; nothing they read changes in between)."""
        keys = []
        for cj, _js in pairs:
            assert cj.cls is not None
            keys.append((cj.cls, -urgency[cj.id], cj.arrival, cj.id))
        return keys

    def _filling_pass(self, pool: _ChronusPool, out: Allocation, state: RoundState, rest: list[tuple[_CJob, JobState]],
                      urgency: dict[str, float]) -> None:
        """The artifact's odd-minute ``filling_jobs`` on this round's budget of GPUs (those
        freed by jobs that finished in the previous round at minutes it fills), in its
        order: ascending queue priority, so hopeless jobs first (:meth:`_fill_key`;
        ``urgency``: job id -> :meth:`_urgency` this round)."""
        budget = self._fill_budget
        pending = [p for p in rest if p[1].spec.id not in out]
        waiting = [p for _, p in sorted(zip(self._fill_keys(pending, urgency), pending), key=_first)]
        for cj, js in waiting:
            if budget <= 0:
                break
            if cj.gpus <= budget and _put(pool, out, state, js):
                budget -= cj.gpus
                self.stats["filled"] += 1


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


class ChronusCleanPolicy(ChronusPolicy):
    """Chronus as a clean reading of the paper (``ChronusConfig.artifact = False``):
    none of the artifact's scheduling quirks listed in ``models/chronus.md``."""

    name = "chronus-clean"

    def __init__(self, config: ChronusConfig | None = None, **overrides) -> None:
        super().__init__(config if config is not None else ChronusConfig(artifact=False), **overrides)


def _first(pair: tuple) -> tuple:
    return pair[0]


class _ChronusPool(NodePool):
    """:class:`NodePool` with a running count of free GPUs (``free``, kept by ``take`` and
    ``give_back``; nothing here writes the per-node lists directly) and the proportional
    placements cached per (node index, GPUs) in ``prop``, a dict the policy keeps for
    its instance (placements are immutable)."""

    __slots__ = ("free", "prop")

    def __init__(self, cluster, prop: dict[tuple[int, int], Placement]):
        super().__init__(cluster)
        self.free = sum(self.gpus)
        self.prop = prop

    def take(self, placements: tuple[Placement, ...]) -> None:
        super().take(placements)
        for p in placements:
            self.free -= p.gpus

    def give_back(self, placements: tuple[Placement, ...]) -> None:
        super().give_back(placements)
        for p in placements:
            self.free += p.gpus

    def _proportional(self, node, gpus: int) -> Placement:
        q = self.prop.get((node.index, gpus))
        if q is None:
            q = self.prop[(node.index, gpus)] = proportional_placement(node, gpus)
        return q

    def place_proportional(self, gpus: int, prefer: tuple[Placement, ...] | None = None) -> tuple[Placement, ...] | None:
        return self.place(gpus, self._proportional, prefer)


def _put(pool: _ChronusPool, out: Allocation, state: RoundState, js: JobState) -> bool:
    """Place ``js`` GPU-proportionally (on its previous nodes when it was running and
    still fits there) into ``pool`` and ``out``; False if it does not fit this round."""
    if pool.free < js.spec.gpus:
        return False
    pl = pool.place_proportional(js.gpus, js.placements if state.was_running(js) else None)
    if pl is None:
        return False
    pool.take(pl)
    out[js.id] = pl
    return True
