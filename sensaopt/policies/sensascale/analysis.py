"""Step 1 (classify, optimal demand) and step 2 (LST order) of SensaScale.

All times are minutes. A job's remaining time at an allocation is its observed
remaining work ÷ (profile speed × observed speed correction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter

from sensaopt.allocations import fits
from sensaopt.changes import MIGRATION, NONE, RESIZE, RESTART, classify
from sensaopt.instance import Change, Cluster, NodeType
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.placement import NodePool, job_options, proportional_share
from sensaopt.profiles import Option, SensitivityProfile
from sensaopt.schedule import Placement

from .config import SensaScaleConfig


@dataclass(frozen=True)
class ProfileFacts:
    """Per-profile facts that do not change during a run."""

    sensitive: bool
    options: tuple[Option, ...]
    opt: Option  # optimal demand, per GPU
    base: dict[NodeType, Option]  # cheapest option keeping (1 - tol) of the proportional-share speed
    profile: SensitivityProfile
    _alloc: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # option_of's memo

    def option_of(self, p: Placement) -> Option:
        """The per-GPU option of one placement (its profile speed; any allocation,
        also one that is not among ``options``)."""
        key = (p.gpus, p.cpus, p.mem_gb)
        o = self._alloc.get(key)
        if o is None:
            c, m = p.cpus / p.gpus, p.mem_gb / p.gpus
            o = self._alloc[key] = Option(int(c) if c == int(c) else c, m, round(self.profile.speed(c, m), 12))
        return o

    @cached_property
    def top_base_speed(self) -> float:
        """The fastest node type's base speed (the fastest a placement search gives)."""
        return max(o.speed for o in self.base.values())

    def current(self, placements: tuple[Placement, ...]) -> Option:
        """Per-GPU option of a job on ``placements`` (the slowest node's)."""
        if len(placements) == 1:
            return self.option_of(placements[0])
        return min((self.option_of(p) for p in placements), key=lambda o: o.speed)


def profile_facts(profile: SensitivityProfile, gpus: int, cluster: Cluster, cfg: SensaScaleConfig) -> ProfileFacts:
    """Facts for a ``gpus``-GPU job: options are limited to what one node of the main
    type can give that many GPUs (an 8-GPU job on a 24-core node cannot get 12 cores
    per GPU), so the optimal demand and the LST are achievable, not wishful."""
    ref = cluster.reference_type
    share = (ref.cpu_per_gpu, ref.mem_per_gpu)
    per_node = min(gpus, ref.gpus)
    opts = tuple(o for o in job_options(profile, cluster) if fits(ref, per_node, o, whole=False))
    peak = max(o.speed for o in opts)
    target = (1 - cfg.demand_tolerance) * peak - 1e-12
    opt = min((o for o in opts if o.speed >= target), key=lambda o: (max(o.cpu / share[0], o.mem / share[1]), o.cpu, o.mem))
    base = {}
    for nt in cluster.node_types:
        c, m = proportional_share(nt)
        target = (1 - cfg.demand_tolerance) * profile.speed(c, m) - 1e-12
        fit = [o for o in opts if o.speed >= target]
        base[nt] = min(fit, key=lambda o: (max(o.cpu / c, o.mem / m), o.cpu, o.mem)) if fit else opts[-1]
    return ProfileFacts(profile.is_sensitive(cfg.sensitivity_threshold, share), opts, opt, base, profile)


class JobInfo:
    """One job's analysis in one round (built by :func:`analyse`). Fields (times in minutes):

    ``js`` its JobState; ``facts`` its ProfileFacts; ``running``: ran in the previous
    round; ``overhead``: restart overhead (paused -> running); ``target``: deadline aimed
    at (None: best effort or hopeless); ``tier``: 0 deadline still reachable, 1 best
    effort or hopeless; ``key``: sort key, smaller = more urgent; ``lst``: latest start
    time (inf in tier 1); ``costs``: minutes lost per kind of change
    (Overheads.table); ``cur``: per-GPU option of the previous round if running
    (ProfileFacts.current). Copied for the inner loops: ``id``, ``gpus``, ``remaining``
    (observed remaining work, minutes at speed 1.0), ``corr`` (observed speed
    correction), ``started`` (it has run before), ``last_placements`` (where it ran in
    the last round it ran; empty if never), and ``c_none``, ``c_mig``, ``c_resize``:
    those entries of ``costs`` as plain floats (an Enum key hashes in Python); ``least``
    their minimum (nan without a cost table), ``top`` ``facts.top_base_speed`` and
    ``opt_speed`` ``facts.opt.speed``;
    ``spare``: spare filling's bounds for the job at one option (``adjust.spare_bounds``);
    ``mark``: the :class:`QueueMemo` stamp of the last :func:`analyse` call that listed it;
    ``pair_type``: its type number in a pairing gain table (``pairing.GainTable.numbers``).
    """

    __slots__ = ("js", "facts", "running", "overhead", "target", "tier", "key", "lst", "costs", "cur", "id", "gpus",
                 "remaining", "corr", "started", "last_placements", "c_none", "c_mig", "c_resize", "least", "top", "spare",
                 "mark", "opt_speed", "pair_type")

    def __init__(self, js: JobState, facts: ProfileFacts, running: bool, overhead: float, target: float | None,
                 tier: int, key: tuple, lst: float, costs: dict[Change, float] | None = None, cur: Option | None = None,
                 corr: float | None = None, plain_costs: tuple[float, float, float] | None = None):
        """``corr`` (``js.speed_correction``) and ``plain_costs`` (``costs``' NONE,
        MIGRATION and RESIZE entries) may be given when the caller has them already."""
        self.js, self.facts, self.running, self.overhead = js, facts, running, overhead
        self.target, self.tier, self.key, self.lst = target, tier, key, lst
        self.costs: dict[Change, float] = {} if costs is None else costs
        self.cur = cur
        spec = js.spec
        self.id: str = spec.id
        self.gpus: int = spec.gpus
        self.remaining: float = js.remaining
        self.corr: float = js.speed_correction if corr is None else corr
        self.started = js.last_round is not None
        self.last_placements: tuple[Placement, ...] = js.placements or ()
        if plain_costs is not None:
            self.c_none, self.c_mig, self.c_resize = plain_costs
        elif costs:
            self.c_none, self.c_mig, self.c_resize = costs[NONE], costs[MIGRATION], costs[RESIZE]
        else:  # no table given: change_minutes looks it up (and fails) as before
            self.c_none = self.c_mig = self.c_resize = math.nan
        self.least = min(self.c_none, self.c_mig, self.c_resize)
        self.top = facts.top_base_speed
        self.opt_speed: float = facts.opt.speed
        self.spare: tuple | None = None
        self.mark: object = None
        self.pair_type: tuple | None = None

    def __repr__(self) -> str:
        return f"JobInfo({self.id!r}, tier={self.tier}, key={self.key!r})"

    @property
    def current(self) -> Option | None:
        """Per-GPU option it ran at in the previous round (the slowest node's), None
        unless running."""
        if not self.running:
            return None
        if self.cur is None:
            self.cur = self.facts.current(self.last_placements)
        return self.cur

    def time_at(self, opt: Option) -> float:
        """Minutes to finish at this per-GPU option (observed speed correction applied)."""
        return self.remaining / (opt.speed * self.corr)

    def change(self, placements: tuple[Placement, ...]) -> Change:
        """Kind of change if it runs on ``placements`` this round (:func:`classify`)."""
        if not self.started:
            return Change.NONE
        if not self.running:
            return Change.RESTART
        r = self.js.last_round + 1  # type: ignore[operator]  # started: last_round is set
        return classify(self.last_placements, r, placements, r)

    def change_minutes(self, placements: tuple[Placement, ...]) -> float:
        """Minutes lost this round if it runs on ``placements`` (the simulator's charge):
        ``costs[change(placements)]``, without hashing the Enum."""
        if not self.started:
            return 0.0
        if not self.running or not self.costs:
            return self.costs[self.change(placements)]
        if placements is self.last_placements:  # staying as it ran: classify gives NONE
            return self.c_none
        r = self.js.last_round + 1  # type: ignore[operator]  # started: last_round is set
        kind = classify(self.last_placements, r, placements, r)
        if kind is NONE:
            return self.c_none
        if kind is MIGRATION:
            return self.c_mig
        if kind is RESIZE:
            return self.c_resize
        return self.costs[kind]

    @property
    def move_minutes(self) -> float:
        """Minutes lost if it runs anywhere but where it ran: 0 if it never ran,
        the restart cost if paused, the migration cost if running."""
        if not self.started:
            return 0.0
        return self.c_mig if self.running else self.overhead


@dataclass(frozen=True)
class JobConstants:
    """What :func:`analyse` needs of a job that never changes during a run."""

    facts: ProfileFacts
    costs: dict[Change, float]  # minutes lost per kind of change (Overheads.table)
    deadlines: tuple[tuple[float, float], ...]  # (absolute minute, value), earliest first
    restart: float  # costs[RESTART], minutes (read every round)
    base_ref: Option  # facts.base[the cluster's reference type] (a NodeType key hashes in Python)
    plain_costs: tuple[float, float, float]  # costs[NONE], costs[MIGRATION], costs[RESIZE] (an Enum key hashes in Python too)
    last: list = field(default_factory=lambda: [None, None], compare=False)  # [placements, facts.current of them], the last seen
    info: list = field(default_factory=lambda: [None], compare=False)  # [its JobInfo of the last round analysed] (see analyse)

    @cached_property
    def opt_speed(self) -> float:
        """``facts.opt.speed`` (read every round)."""
        return self.facts.opt.speed

    def current(self, placements: tuple[Placement, ...]) -> Option:
        """``facts.current(placements)``, kept for the placements last asked (a job
        that stays where it ran keeps the very tuple, round after round)."""
        last = self.last
        if last[0] is not placements:
            last[1] = self.facts.option_of(placements[0]) if len(placements) == 1 else self.facts.current(placements)
            last[0] = placements
        return last[1]


def _constants_of(js: JobState, state: RoundState, facts_of, cfg: SensaScaleConfig, tables: dict) -> JobConstants:
    """:class:`JobConstants` of ``js``'s job (its change costs, scaled by
    ``cfg.move_cost_weight``: the policy's own price of a change, not the charge).
    ``tables``: (overheads id, GPUs) -> (overheads, cost table, its RESTART entry,
    its NONE / MIGRATION / RESIZE entries), kept with the constants (jobs of one
    size share one table: it is never changed)."""
    spec = js.spec
    key = (id(state.overheads), spec.gpus)
    hit = tables.get(key)
    if hit is None:  # the overheads are kept in the value so that their id stays unique
        costs = state.overheads.table(spec.gpus)
        if cfg.move_cost_weight != 1.0:
            costs = {k: v * cfg.move_cost_weight for k, v in costs.items()}
        hit = tables[key] = (state.overheads, costs, costs[RESTART], (costs[NONE], costs[MIGRATION], costs[RESIZE]))
    f = facts_of(spec.profile, spec.gpus)
    return JobConstants(f, hit[1], spec.deadlines(), hit[2], f.base[state.cluster.reference_type], hit[3])


class QueueMemo:
    """What :func:`analyse` keeps of its last call in a run: the queue it returned
    (``infos``, most urgent first) and the stamp it marked them with. The next call
    lists its jobs in that order (newcomers last) before sorting them: the sort's
    result is the same from any starting order, since no two jobs share a key (the
    key ends with the job id, unique in an instance), but from nearly sorted input
    it takes ~n comparisons of key tuples instead of ~n log n. The constants of jobs
    no longer in the state are dropped from ``constants`` when they outnumber the
    active jobs by :data:`EVICT_SLACK` (a finished job never returns; one that did
    would get its constants again, the same values): a run keeps O(active jobs) of
    them, not one per job of the trace."""

    __slots__ = ("infos", "stamp")

    def __init__(self) -> None:
        self.infos: list[JobInfo] = []
        self.stamp: object = object()  # (never a fresh JobInfo's mark, None)


EVICT_SLACK = 1024  # the constants of jobs gone are dropped once they outnumber the active jobs by this many


def analyse(state: RoundState, facts_of, cfg: SensaScaleConfig, constants: dict | None = None,
            tables: dict | None = None, memo: QueueMemo | None = None) -> list[JobInfo]:
    """JobInfo for every waiting or running job, most urgent first.

    ``constants`` (optional) is a dict kept across the rounds of one run, mapping a job's
    id to its :class:`JobConstants` (filled here on first sight); with it, each job's
    JobInfo object is reused from round to round (every field that can change is set
    again: the list holds until the next call). A target deadline is reachable when the
    job meets it at its optimal demand; the LST assumes the per-GPU allocation of
    ``cfg.lst_allocation``: the optimal demand ("optimal"), or what the job will likely get
    ("expected"): its current allocation if running, else the base allocation of the
    cluster's reference node type, never slower than that base. Kept with ``constants``
    (optional): ``tables``, the change-cost tables by job size (:func:`_constants_of`);
    ``memo``, the last call's queue, the start of this call's sort (:class:`QueueMemo`).
    """
    now, R = state.now, state.round_minutes
    prev_round = state.round - 1
    urgent_by = now + cfg.urgent_rounds * R if (cfg.urgent_first or cfg.deadline_order == "lst") else -math.inf
    hopeless_be = cfg.hopeless_to_best_effort
    edf, strict = cfg.deadline_order == "edf", cfg.deadline_order == "lst-strict"
    cache = constants if constants is not None else {}
    tables = {} if tables is None else tables
    optimal = cfg.lst_allocation == "optimal"
    memo = QueueMemo() if memo is None else memo  # (none given: every job is new to it)
    infos: list[JobInfo] = []  # in ``state``'s order
    for js in state.jobs:
        spec = js.spec
        c = cache.get(spec.id)
        if c is None:
            c = cache[spec.id] = _constants_of(js, state, facts_of, cfg, tables)
        last = js.last_round
        running = last == prev_round
        pls = js.placements
        if running and pls:
            seen = c.last  # JobConstants.current, inline for a job on the placements it had
            cur = seen[1] if seen[0] is pls else c.current(pls)
        else:
            cur = None
        start_oh = 0.0 if (running or last is None) else c.restart
        pw = js.predicted_work
        corr = js.observed_work / pw if pw > 0 else 1.0  # JobState.speed_correction, inline
        remaining = js.remaining
        t_opt = remaining / (c.opt_speed * corr)
        target = None
        for at, _value in c.deadlines:
            if now + start_oh + t_opt <= at + 1e-9 or not hopeless_be:
                target = at
                break
        if target is not None:
            t_exp = t_opt
            if not optimal:  # the expected allocation (docstring above)
                b = c.base_ref
                t_exp = remaining / ((cur if cur is not None and cur.speed > b.speed else b).speed * corr)
            lst = target - t_exp - start_oh
            if lst <= urgent_by:
                key = (0, 0, lst, spec.arrival, spec.id)
            elif edf:
                key = (0, 1, target, spec.arrival, spec.id)
            elif strict:
                key = (0, 1, lst, spec.arrival, spec.id)
            else:
                key = (0, 1 if running else 2, lst, spec.arrival, spec.id)
            tier = 0
        else:
            lst = math.inf
            key = (1, 0 if running else 1, t_opt + start_oh, spec.arrival, spec.id)
            tier = 1
        info = c.info[0]  # (None without ``constants``: a fresh cache)
        if info is not None and info.js is js:  # what JobInfo.__init__ sets that may have changed since the last round
            info.running, info.target, info.tier, info.key, info.lst, info.cur = running, target, tier, key, lst, cur
            info.remaining, info.corr, info.started, info.last_placements = remaining, corr, last is not None, pls or ()
        else:
            info = c.info[0] = JobInfo(js, c.facts, running, c.restart, target, tier, key, lst, c.costs, cur, corr, c.plain_costs)
        infos.append(info)
    out = _seeded(memo, infos, cache)
    out.sort(key=_key)
    return out


def _seeded(memo: QueueMemo, infos: list[JobInfo], cache: dict) -> list[JobInfo]:
    """This call's jobs ``infos`` (in the state's order): those in the last call's queue in
    its order, the jobs gone left out, then the others in the state's order; kept in
    ``memo`` under a new stamp. Drops the constants of jobs gone from ``cache`` (see
    :func:`analyse`)."""
    prev, stamp = memo.stamp, object()
    fresh = []
    for x in infos:  # a job last marked by another memo's call is fresh here: listed once
        if x.mark is prev:
            x.mark = stamp
        else:
            x.mark = None
            fresh.append(x)
    out = [x for x in memo.infos if x.mark is stamp]
    for x in fresh:
        x.mark = stamp
    out += fresh
    memo.infos, memo.stamp = out, stamp
    if len(cache) > len(out) + EVICT_SLACK:
        live = {x.id: cache[x.id] for x in out}
        cache.clear()
        cache.update(live)
    return out


_key = attrgetter("key")  # a JobInfo's sort key


def target_value(info: JobInfo) -> float:
    for at, value in info.js.spec.deadlines():
        if at == info.target:
            return value
    return 0.0


def protect_running(infos: list[JobInfo], state: RoundState) -> int:
    """Demote urgent waiting jobs whose start would cost more than it saves.

    An urgent job (it must start now to meet its deadline) that does not fit next to
    the running jobs would preempt some of them. For each node it could use, the
    cheapest set of victims (most slack first) is priced by the deadline value of
    victims that would then miss (their LST falls before the urgent job's end). If
    even the cheapest costs at least the urgent job's own value, the running jobs
    stay and the urgent job joins the best-effort tier this round. Returns the
    number of demoted jobs; re-sorts ``infos`` in place.
    """
    max_g = state.cluster.max_node_gpus
    if not any(u.tier == 0 and u.key[1] == 0 and not u.running and u.gpus <= max_g for u in infos):
        return 0  # no urgent waiting job: nothing to weigh
    pool = NodePool(state.cluster)
    on_node: dict[int, list[JobInfo]] = {}
    for i in infos:
        if i.running:
            pool.take(i.last_placements)
            for p in i.last_placements:
                on_node.setdefault(p.node, []).append(i)
    demoted = 0
    for u in infos:
        if u.tier != 0 or u.key[1] != 0 or u.running or u.gpus > max_g:
            continue
        if max(pool.gpus) >= u.gpus:
            n = min((n for n in range(len(pool.nodes)) if pool.gpus[n] >= u.gpus), key=lambda n: pool.gpus[n])
            pool.gpus[n] -= u.gpus
            continue
        u_end = state.now + u.move_minutes + u.time_at(u.facts.opt)
        best = _cheapest_victims(u.gpus, u_end, pool, on_node)
        if best is None or best[0] >= target_value(u):
            u.tier, u.target, u.lst = 1, None, math.inf
            u.key = (1, 1, u.move_minutes + u.time_at(u.facts.opt), u.js.spec.arrival, u.id)
            demoted += 1
            continue
        cost, n, victims = best
        for v in victims:
            pool.give_back(v.last_placements)
            for p in v.last_placements:
                on_node[p.node].remove(v)
        pool.gpus[n] -= u.gpus
    if demoted:
        infos.sort(key=lambda i: i.key)
    return demoted


def _cheapest_victims(gpus: int, u_end: float, pool: NodePool,
                      on_node: dict[int, list[JobInfo]]) -> tuple[float, int, list[JobInfo]] | None:
    """(cost, node, victims): the node where preempting running jobs (most slack first)
    frees ``gpus`` GPUs at the least deadline value lost by victims whose LST falls
    before ``u_end`` (minutes); None if no node can free them."""
    best = None
    for n, node in enumerate(pool.nodes):
        if node.gpus < gpus:
            continue
        free, cost, victims = pool.gpus[n], 0.0, []
        for v in sorted(on_node.get(n, ()), key=lambda v: (-v.tier, -v.lst)):
            if free >= gpus:
                break
            free += sum(p.gpus for p in v.last_placements if p.node == n)
            victims.append(v)
            if v.tier == 0 and v.lst < u_end:
                cost += target_value(v)
        if free >= gpus and (best is None or cost < best[0]):
            best = (cost, n, victims)
    return best
