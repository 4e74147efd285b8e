"""Model data: the one extraction of everything the exact models need from an instance.

Units and scaling (the same for both backends, so that CP-SAT gets integers):

* time is counted in **slots** of one round (``R = instance.round_minutes`` minutes);
  slot ``t`` is round ``t`` (offline) or round ``start_round + t`` (rolling window);
* work is counted in **work units** of ``1 / work_scale`` minutes at speed 1.0
  (default ``work_scale = 10_000``). A slot's progress at per-GPU option ``o`` is
  ``full[o] = ceil(speed_o · R · work_scale)`` units, or, in a slot that starts with
  a change of kind ``c`` (restart, migration, resize: :func:`sensaopt.changes.classify`),
  ``kept[c][o] = ceil(speed_o · max(R - m_c, 0) · work_scale)`` units, ``m_c =
  overheads.minutes(c, gpus)`` (the validator's first round of a segment); the
  model charges ``lost(c, o) = full[o] - kept[c][o]`` units. A job needs ``W =
  ceil((work - WORK_EPS) · work_scale)`` units. Rounding every slot's progress *up*
  (full and kept alike: each slot is credited at least the validator's progress,
  whatever change starts it) makes the model an outer approximation: every validator-feasible schedule is
  model-feasible (its summed rounded progress is ≥ its true progress), so the proven
  bound is a valid bound. The extraction replays the validator's float arithmetic
  and cuts a job's slots after its true completion;
* memory is counted in ``1 / mem_scale`` GB (the smallest power of ten that makes
  every per-GPU memory level and node capacity integral, up to 10^4; otherwise
  demands are rounded up and capacities down);
* the objective is multiplied by ``n_jobs · obj_scale`` (``obj_scale`` the smallest
  power of ten making ``R`` and every ``violation_weight · n_jobs · Δvalue``
  integral, up to 10^6, else coefficients are rounded).

Placements are enumerated as *patterns*: a tuple of ``(node, gpus)`` pairs that
satisfies the gang rule (one node if the job fits a node, else whole nodes plus at
most one partial node). Every per-GPU
option of the job's grid (:func:`sensaopt.allocations.model_grids`) may be combined
with every pattern whose nodes can hold it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from sensaopt.allocations import DEFAULT_REFINE, JobGrid, model_grids
from sensaopt.changes import classify
from sensaopt.errors import SensaoptError
from sensaopt.instance import Change, Instance, Job
from sensaopt.profiles import Option
from sensaopt.progress import WORK_EPS, first_round
from sensaopt.schedule import Placement

CHANGES = (Change.RESTART, Change.MIGRATION, Change.RESIZE)  # the kinds that cost minutes
DEFAULT_WORK_SCALE = 10_000
DEFAULT_MAX_VARS = 300_000


@dataclass(frozen=True)
class Pattern:
    """Where a job runs during one slot: ``(node index, gpus)`` pairs, by node."""

    parts: tuple[tuple[int, int], ...]

    @property
    def nodes(self) -> frozenset[int]:
        return frozenset(n for n, _ in self.parts)


@dataclass
class JobData:
    """One job as the model sees it (slots relative to the model's first slot)."""

    k: int  # index in ModelData.jobs
    id: str
    job: Job
    gpus: int
    release: int  # first slot it may run in
    work_units: int  # W
    options: tuple[Option, ...]
    patterns: tuple[Pattern, ...]
    pairs: tuple[tuple[int, int], ...]  # allowed (pattern index, option index)
    full: tuple[int, ...]  # progress units per option, normal slot
    kept: dict[Change, tuple[int, ...]]  # progress units per option, slot starting with a change of that kind
    deadlines: tuple[tuple[int, float], ...]  # (last slot whose end meets it, value), earliest first
    earliest_done: int  # earliest slot at whose end the job can be complete, alone
    init_ran: bool = False  # rolling: the job ran before the window
    init_placements: tuple[Placement, ...] | None = None  # rolling: placements of the round just before the window

    def step(self, d: int) -> float:
        """The deadline value (value units) lost by missing tier ``d``: its value less the next
        tier's (0 after the last); a job's loss is the sum of the steps of the tiers it misses."""
        return self.deadlines[d][1] - (self.deadlines[d + 1][1] if d + 1 < len(self.deadlines) else 0.0)

    def lost(self, kind: Change, o: int) -> int:
        """Progress units a slot at option ``o`` loses to a change of ``kind`` (0 for NONE)."""
        return 0 if kind is Change.NONE else self.full[o] - self.kept[kind][o]

    def units(self, kind: Change, o: int) -> int:
        """Progress units of a slot at option ``o`` starting with a change of ``kind``."""
        return self.full[o] - self.lost(kind, o)

    @property
    def node_sets(self) -> tuple[frozenset[int], ...]:
        return tuple(sorted({p.nodes for p in self.patterns}, key=sorted))

    @property
    def best_full(self) -> int:
        return max(self.full)


@dataclass
class ModelData:
    instance: Instance
    R: float  # minutes per slot
    H: int  # slots
    jobs: list[JobData]
    work_scale: int
    mem_scale: int
    obj_scale: int
    start_round: int = 0  # absolute round of slot 0
    window: bool = False  # rolling window: jobs need not finish, leftover work is priced
    hopeless: dict[str, list[float]] = field(default_factory=dict)  # job id -> deadlines that cannot be met even alone
    ends: dict[int, int] = field(default_factory=dict)  # job index -> first slot without variables (default H)
    shortfall: bool = False  # the phase-1 shortfall model (:func:`shortfall_data`): no job has to finish
    tiers: tuple[tuple[int, int], ...] = ()  # shortfall model: the (job index, deadline index) pairs priced
    cpu_scale: int = 1  # cores counted in 1/cpu_scale cores
    relaxed: bool = False  # the allocation relaxation (outer grid): its bound only, its schedules run too fast
    refine: int = DEFAULT_REFINE  # refined grid steps per profile cell and axis

    @property
    def n(self) -> int:
        return len(self.jobs)

    def end(self, jd: JobData) -> int:
        """First slot without variables for the job: H, or its deadline slot + 1 in a trimmed model."""
        return min(self.ends.get(jd.k, self.H), self.H)

    def slots(self, jd: JobData, trim: bool = True) -> range:
        """Slots with variables for the job: [release, end) (from 0 when not trimmed)."""
        return range(jd.release if trim else 0, self.end(jd))

    def unfinishable(self) -> JobData | None:
        """A job that cannot be complete by the end of the last slot (``H - 1``) even
        alone at its best speed (``earliest_done``), or None; a rolling window or a
        shortfall model needs no job to finish, so there it is always None."""
        if self.window or self.shortfall:
            return None
        return next((jd for jd in self.jobs if jd.earliest_done > self.H - 1), None)

    def estimate_vars(self) -> int:
        """Binary placement variables plus per-slot auxiliaries (an estimate before building)."""
        return sum((len(jd.pairs) + 5 + len(jd.node_sets)) * max(self.end(jd) - jd.release, 0) for jd in self.jobs)

    def slot_change(self, jd: JobData, ran: bool, prev: tuple[Placement, ...] | None, pair: tuple[int, int]) -> tuple[Change, int]:
        """The change a slot running ``pair`` starts with (:meth:`change`) and the
        progress units it makes after that change's loss (:meth:`JobData.units`): the
        one model-unit progress step of hints and greedy completions."""
        kind = self.change(jd, ran, prev, pair)
        return kind, jd.units(kind, pair[1])

    def change(self, jd: JobData, ran: bool, prev: tuple[Placement, ...] | None, pair: tuple[int, int]) -> Change:
        """Kind of change of a slot running ``pair`` for a job that ``ran`` before and ran
        ``prev`` in the slot just before (None: it did not run then): the validator's
        :func:`~sensaopt.changes.classify`, slot by slot."""
        if not ran:
            return Change.NONE
        if prev is None:
            return Change.RESTART
        return classify(prev, 1, placements_of(self, jd, pair), 1)

    def mem_units(self, gb: float, up: bool) -> int:
        """GB in model units, demands rounded ``up`` and capacities down — the other way
        round in the relaxation, which must never charge more or offer less than the truth."""
        x = gb * self.mem_scale
        return math.ceil(x - 1e-6) if up != self.relaxed else math.floor(x + 1e-6)

    def cpu_units(self, cores: float, up: bool) -> int:
        """Cores in model units (1/cpu_scale), rounded like :meth:`mem_units`."""
        x = cores * self.cpu_scale
        return math.ceil(x - 1e-6) if up != self.relaxed else math.floor(x + 1e-6)

    def charges(self, pattern: Pattern, option: Option) -> list[tuple[int, int, int, int]]:
        """What a job running ``option`` on ``pattern`` holds, per node: (node, GPUs, CPU
        units, memory units) — ``g`` GPUs, ``g``·cores and ``g``·(per-GPU memory units),
        rounded as demands; in the relaxation a gang job's whole nodes are charged GPUs
        only (:func:`uncharged`). The one definition of the capacity rows' terms (the
        builder's and column generation's)."""
        nodes = self.instance.cluster.nodes
        mu = self.mem_units(option.mem, up=True)
        return [(nd, g, 0, 0) if self.relaxed and uncharged(nodes, pattern, nd, g)
                else (nd, g, self.cpu_units(g * option.cpu, up=True), g * mu) for nd, g in pattern.parts]


def patterns_for(instance: Instance, gpus: int) -> list[Pattern]:
    """Every gang-rule placement of ``gpus`` GPUs (the validator's single_node/whole_nodes rules)."""
    nodes = instance.cluster.nodes
    max_g = instance.cluster.max_node_gpus
    if gpus <= max_g:
        return [Pattern(((n.index, gpus),)) for n in nodes if n.gpus >= gpus]
    out: set[Pattern] = set()
    idx = [n.index for n in nodes]
    for r in range(1, len(nodes) + 1):
        for whole in itertools.combinations(idx, r):
            g = sum(nodes[i].gpus for i in whole)
            if g == gpus:
                out.add(Pattern(tuple((i, nodes[i].gpus) for i in whole)))
            elif g < gpus:
                rest = gpus - g
                for q in idx:
                    if q not in whole and rest < nodes[q].gpus:
                        out.add(Pattern(tuple(sorted([(i, nodes[i].gpus) for i in whole] + [(q, rest)]))))
        if len(out) > 5000:
            raise SensaoptError(f"too many placements for a {gpus}-GPU job; use the rolling-horizon policy (rolling-cpsat)")
    return sorted(out, key=lambda p: p.parts)


def _pow10_scale(values: list[float], limit: int) -> int | None:
    s = 1
    while s <= limit:
        if all(abs(v * s - round(v * s)) <= 1e-7 * max(1.0, abs(v * s)) for v in values):
            return s
        s *= 10
    return None


def work_units(work: float, work_scale: int) -> int:
    """Work (minutes at speed 1.0) in model units, rounded up: the one conversion from
    the progress arithmetic of :mod:`sensaopt.progress` to the model's."""
    return math.ceil(work * work_scale - 1e-7)


def slot_units(speed: float, round_minutes: float, cost: float, work_scale: int) -> int:
    """Model units of one slot at ``speed`` that starts with a change costing ``cost``
    minutes (0: none): :func:`sensaopt.progress.first_round`'s work, in :func:`work_units`."""
    return work_units(first_round(math.inf, speed, round_minutes, cost)[1], work_scale)


def _holds(nodes: tuple, pattern: Pattern, grid: JobGrid, k: int, relaxed: bool) -> bool:
    """Whether every node of ``pattern`` holds option ``k`` of the job's grid on its GPUs
    there (:func:`sensaopt.allocations.fits`: in whole cores per job and node, the
    validator's ``whole_cores``, except in the relaxation, which also does not charge a
    gang job's whole nodes, :func:`uncharged`: there every charged node must hold it,
    and a pattern of whole nodes only needs one node that does, the one whose allocation
    the relaxation credits; ``models/formulation.md``, the Lemma)."""
    holds = grid.holds
    if not relaxed:
        return all(k in holds[nodes[n].type, g] for n, g in pattern.parts)
    charged = [(n, g) for n, g in pattern.parts if not uncharged(nodes, pattern, n, g)]
    if charged:
        return all(k in holds[nodes[n].type, g] for n, g in charged)
    return any(k in holds[nodes[n].type, g] for n, g in pattern.parts)


def uncharged(nodes: tuple, pattern: Pattern, node: int, gpus: int) -> bool:
    """Relaxation only: a node a gang job (several nodes) holds whole is not charged CPU
    and memory. No other job can run there, and the job's speed is its slowest node's,
    so the relaxation may credit it the speed its partial node (or any node) allows."""
    return len(pattern.parts) > 1 and gpus >= nodes[node].gpus


def _deadline_slots(job: Job, R: float, start_round: int, earliest: int) -> tuple[list[tuple[int, float]], list[float]]:
    """``job``'s deadlines as (last slot that meets it, value), slots counted from
    ``start_round`` in rounds of ``R`` minutes, and the deadlines (minutes) whose last
    slot comes before its ``earliest`` finishing slot: missed by every schedule."""
    dl, missed = [], []
    for at, v in job.deadlines():
        last = math.floor((at + 1e-9) / R) - 1 - start_round
        dl.append((last, v))
        if last < earliest:
            missed.append(at)
    return dl, missed


def _slots(instance: Instance, job: Job, opts: tuple[Option, ...], work_scale: int
           ) -> tuple[tuple[int, ...], dict[Change, tuple[int, ...]]]:
    """Model units of a slot of ``job`` at each option: without a change, and starting
    with each change (:func:`slot_units`; never more than without)."""
    R, sf = instance.round_minutes, job.speed_factor
    full = tuple(slot_units(o.speed * sf, R, 0.0, work_scale) for o in opts)
    minutes = {c: instance.overheads.minutes(c, job.gpus) for c in CHANGES}
    return full, {c: tuple(min(slot_units(o.speed * sf, R, m, work_scale), f) for o, f in zip(opts, full))
                  for c, m in minutes.items()}


def build_data(
    instance: Instance,
    horizon: int,
    *,
    work_scale: int = DEFAULT_WORK_SCALE,
    extra_options: dict[str, set[tuple[float, float]]] | None = None,
    states: dict[str, tuple[float, bool, tuple[Placement, ...] | None]] | None = None,
    start_round: int = 0,
    window: bool = False,
    max_vars: int | None = None,
    relaxed: bool = False,
    refine: int = DEFAULT_REFINE,
    inner_refine: int = 0,
    grids: Mapping[str, JobGrid] | None = None,
) -> ModelData:
    """Extract the model data for ``horizon`` slots (refused with a one-line error
    naming the rolling-horizon policy when ``max_vars`` is given and the model would
    have more variables).

    ``states`` (rolling window only): job id -> (remaining work minutes, ran before,
    placements of the previous round or None if it did not run then); jobs absent
    from ``states`` are left out.

    ``relaxed``: the allocation relaxation's data (outer grid of ``refine`` steps per
    cell), whose bound is a bound of the problem; otherwise the inner grid's
    (``inner_refine`` steps; 0: the policies' options alone), whose schedules are valid;
    every job's options from one call of :func:`sensaopt.allocations.model_grids`, or
    ``grids`` (job id -> its grid of that kind: the exact pipeline's, computed once up
    front, :class:`sensaopt.allocations.ExactAllocations`; ``extra_options`` is then unused).
    """
    R = instance.round_minutes
    nodes = instance.cluster.nodes
    jobs: list[JobData] = []
    mems: list[float] = [n.mem_gb for n in nodes]
    cpus: list[float] = [float(n.cpus) for n in nodes]
    hopeless: dict[str, list[float]] = {}
    model_jobs = [job for job in instance.jobs if states is None or job.id in states]
    if grids is None:
        grids = model_grids(instance, model_jobs, relaxed=relaxed, refine=refine, inner_refine=inner_refine,
                            extra=extra_options or {})
    for job in model_jobs:
        grid = grids[job.id]
        opts = grid.options
        pats = patterns_for(instance, job.gpus)
        pairs = [(pi, oi) for pi, p in enumerate(pats) for oi in range(len(opts)) if _holds(nodes, p, grid, oi, relaxed)]
        full, kept = _slots(instance, job, opts, work_scale)
        if states is not None:
            remaining, ran, prev_pls = states[job.id]
            work, release = remaining, 0
        else:
            ran, prev_pls = False, None
            work, release = job.work, instance.release_round(job) - start_round
        W = max(work_units(work - WORK_EPS, work_scale), 1)
        usable = [full[oi] for _, oi in pairs]
        if not usable:
            raise SensaoptError(f"job {job.id} fits no node with any allocation option")
        best = max(usable)
        earliest = release + math.ceil(W / best) - 1
        dl, missed = _deadline_slots(job, R, start_round, earliest)
        if missed:
            hopeless[job.id] = missed
        mems.extend(o.mem for o in opts)
        cpus.extend(o.cpu for o in opts)
        jobs.append(
            JobData(k=len(jobs), id=job.id, job=job, gpus=job.gpus, release=max(release, 0), work_units=W, options=tuple(opts),
                    patterns=tuple(pats), pairs=tuple(pairs), full=full, kept=kept,
                    deadlines=tuple(dl), earliest_done=earliest, init_ran=ran, init_placements=prev_pls)
        )
    mem_scale = _pow10_scale(mems, 10_000) or 10_000
    cpu_scale = _pow10_scale(cpus, 10_000) or 10_000
    n = max(len(jobs), 1)
    coefs = [R] + [instance.objective.violation_weight * n * v for jd in jobs for _, v in jd.deadlines]
    obj_scale = _pow10_scale(coefs, 1_000_000) or 1_000_000
    data = ModelData(instance=instance, R=R, H=horizon, jobs=jobs, work_scale=work_scale, mem_scale=mem_scale,
                     obj_scale=obj_scale, start_round=start_round, window=window, hopeless=hopeless,
                     cpu_scale=cpu_scale, relaxed=relaxed, refine=refine)
    if max_vars is not None:
        check_size(data, max_vars)
    return data


def check_size(data: ModelData, max_vars: int) -> None:
    est = data.estimate_vars()
    if est > max_vars:
        raise too_big(data.instance, est, max_vars, data.H)


def too_big(instance: Instance, est: int, max_vars: int, horizon: int, at_least: bool = False) -> SensaoptError:
    """The one refusal of a model larger than ``max_vars`` variables."""
    return SensaoptError(
        f"exact model of {instance.name} would have {'at least' if at_least else 'about'} {est} variables (limit {max_vars}, "
        f"{len(instance.jobs)} jobs x {'at least ' if at_least else ''}{horizon} slots); use the rolling-horizon policy instead "
        f"(sensaopt solve --solver heuristic --policy rolling-cpsat) or raise max_vars"
    )


def solo_rounds(instance: Instance, job: Job, peak: float | None = None) -> int:
    """Rounds a job needs at least, alone at its profile's peak speed (a lower bound of
    the model's ``ceil(W / best_full)``); ``peak``: the profile's peak, if known."""
    per_round = (job.profile.peak if peak is None else peak) * job.speed_factor * instance.round_minutes
    return max(1, math.ceil((job.work - WORK_EPS) / per_round - 1e-6))


PRECHECK_CHUNK = 1024  # jobs between two looks at the running size estimate


def precheck_size(instance: Instance, horizon: int | None, horizon_slack: int, max_vars: int) -> None:
    """Refuse, from the instance alone (no heuristic run, no data build), a model that
    :func:`check_size` would refuse: at least 7 variables (one placement, five
    auxiliaries, one node set) per job and slot from its release to the horizon, which
    is ``horizon`` or at least the heuristic's makespan + ``horizon_slack``; the makespan
    is at least every job's solo finish and the total GPU work spread over every GPU at
    the best peak speed. Every prefix of the jobs gives a lower bound of both, so the
    scan stops as soon as the estimate passes ``max_vars`` (a huge instance is refused
    after its first jobs)."""
    R = instance.round_minutes
    gpus = instance.cluster.total_gpus
    peaks: dict[int, float] = {}
    last = 0  # rounds: latest solo finish so far
    gpu_work = 0.0  # GPU-minutes at speed 1 so far
    fastest = 0.0
    releases = 0  # sum of release rounds so far
    fixed = 0  # with a given horizon: slots from release to it so far
    for k, job in enumerate(instance.jobs, 1):
        peak = peaks.get(id(job.profile))
        if peak is None:
            peak = peaks[id(job.profile)] = job.profile.peak
        release = instance.release_round(job)
        releases += release
        fixed += max((horizon or 0) - release, 0)
        last = max(last, release + solo_rounds(instance, job, peak))
        gpu_work += job.gpus * job.work
        fastest = max(fastest, peak * job.speed_factor)
        if k % PRECHECK_CHUNK and k != len(instance.jobs):
            continue
        if horizon is None:
            H = max(last, math.ceil(gpu_work / (gpus * fastest * R) - 1e-6)) + horizon_slack
            est = 7 * (k * H - releases)  # every job seen so far is released before H
        else:
            H, est = horizon, 7 * fixed
        if est > max_vars:
            raise too_big(instance, est, max_vars, H, at_least=True)


def placements_of(data: ModelData, jd: JobData, pair: tuple[int, int]) -> tuple[Placement, ...]:
    """The schedule placements for a (pattern, option) pair: totals = gpus × per-GPU option."""
    pat, opt = jd.patterns[pair[0]], jd.options[pair[1]]
    return tuple(Placement(nd, g, _cores(g * opt.cpu), g * opt.mem) for nd, g in pat.parts)


def _cores(x: float) -> int:
    """A placement's cores: whole in the inner grid (a relaxation option may be fractional)."""
    return round(x) if abs(x - round(x)) < 1e-6 else x  # type: ignore[return-value]


def pair_of(jd: JobData, placements: tuple[Placement, ...]) -> tuple[int, int] | None:
    """Inverse of :func:`placements_of` (None if the placement is not representable)."""
    parts = tuple(sorted((p.node, p.gpus) for p in placements))
    for pi, oi in jd.pairs:
        if jd.patterns[pi].parts != parts:
            continue
        o = jd.options[oi]
        if all(abs(p.cpus - p.gpus * o.cpu) < 1e-6 and abs(p.mem_gb - p.gpus * o.mem) < 1e-6 for p in placements):
            return pi, oi
    return None


def open_tiers(data: ModelData) -> tuple[tuple[int, int], ...]:
    """The deadlines that can be met: (job index, deadline index) with
    ``earliest_done <= last slot`` (earlier: hopeless, missed by every schedule),
    whatever the horizon."""
    return tuple((jd.k, d) for jd in data.jobs for d, (last, _) in enumerate(jd.deadlines)
                 if jd.earliest_done <= last and last >= jd.release)


def shortfall_data(data: ModelData) -> ModelData:
    """The phase-1 shortfall model's data (``models/formulation.md``, "Shortfall
    first"): only jobs with an open deadline, each with slots from its release to its
    latest open deadline slot, horizon = the last such slot + 1, no job has to finish.
    Running nothing is feasible. It is a relaxation for the deadline question: every
    schedule, cut to these slots, is feasible in it with the same progress by each
    deadline slot."""
    tiers = open_tiers(data)
    last: dict[int, int] = {}
    for k, d in tiers:
        last[k] = max(last.get(k, -1), data.jobs[k].deadlines[d][0])
    H = max(last.values()) + 1 if last else 1
    ends = {jd.k: (last[jd.k] + 1 if jd.k in last else jd.release) for jd in data.jobs}
    return replace(data, H=H, ends=ends, shortfall=True, tiers=tiers)


def hard_data(data: ModelData, grow: bool = True) -> ModelData:
    """The deadline-hard model's data: every job with an open deadline has slots only up
    to its earliest open deadline slot (and must finish there: every open deadline is
    met); the others keep the horizon. Exact for the lexicographic optimum once a
    zero-miss schedule is known (no zero-miss schedule runs a job past its deadline).
    With ``grow`` the horizon grows to the last such deadline slot + 1 if that is later
    (a horizon given by the user is kept: jobs are then cut at it)."""
    first: dict[int, int] = {}
    for k, d in open_tiers(data):
        first[k] = min(first.get(k, 1 << 62), data.jobs[k].deadlines[d][0])
    ends = {k: last + 1 for k, last in first.items()}
    return replace(data, H=max([data.H, *ends.values()]) if grow else data.H, ends=ends)
