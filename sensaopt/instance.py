"""The scheduling instance: plain, immutable, already-validated data.

Units, used everywhere in sensaopt:

* time (arrival, deadlines, work, round length, overheads): **minutes**;
* CPU: **cores** (integers in allocations); memory: **GB**;
* ``Job.work``: minutes of run time at speed 1.0, i.e. at the GPU-proportional
  reference allocation of the job's sensitivity profile;
* speeds are dimensionless, relative to that reference (1.0).

Instance files are checked at the file boundary (:mod:`sensaopt.io`: types and the
ranges of :data:`sensaopt.limits.INSTANCE`, with the field's JSON path); every
``Instance``, read or built in Python, is then checked by :meth:`Instance.__post_init__`
(:func:`check_instance`: the same ranges and the cross-field rules), so an ``Instance``
is always consistent. The ranges are thus checked twice for a file; the second pass
costs about 1 µs per job (~8 % of loading a file).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from functools import cached_property
from typing import NoReturn

from sensaopt.errors import ArgumentError, InputError
from sensaopt.limits import INSTANCE, MAX_JOBS, MAX_ROUNDS, Range, describe, name_problem, type_problem
from sensaopt.profiles import SensitivityProfile


@dataclass(frozen=True)
class NodeType:
    """A kind of server; ``count`` identical nodes of it are in the cluster."""

    name: str
    gpus: int
    cpus: int
    mem_gb: float
    count: int = 1

    def __post_init__(self) -> None:
        _check_types(self, "NodeType", None)

    @property
    def cpu_per_gpu(self) -> float:
        """GPU-proportional CPU share, cores per GPU."""
        return self.cpus / self.gpus

    @property
    def mem_per_gpu(self) -> float:
        """GPU-proportional memory share, GB per GPU."""
        return self.mem_gb / self.gpus


@dataclass(frozen=True)
class Node:
    """One server. ``index`` is its position in :attr:`Cluster.nodes`."""

    index: int
    name: str
    type: NodeType

    @property
    def gpus(self) -> int:
        return self.type.gpus

    @property
    def cpus(self) -> int:
        return self.type.cpus

    @property
    def mem_gb(self) -> float:
        return self.type.mem_gb


@dataclass(frozen=True)
class Cluster:
    """The GPU cluster: node types, each with a count of identical nodes.

    Attributes:
        node_types: the node types, in file order (:attr:`nodes` numbers their nodes in that order).
    """

    node_types: tuple[NodeType, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "node_types", _tuple_of(self.node_types, NodeType, "Cluster", "node_types"))

    @cached_property
    def nodes(self) -> tuple[Node, ...]:
        """Nodes in a fixed order: node types in file order, then 0..count-1."""
        out: list[Node] = []
        for nt in self.node_types:
            for k in range(nt.count):
                out.append(Node(len(out), f"{nt.name}-{k}", nt))
        return tuple(out)

    @property
    def num_nodes(self) -> int:
        return sum(nt.count for nt in self.node_types)

    @property
    def total_gpus(self) -> int:
        return sum(nt.gpus * nt.count for nt in self.node_types)

    @property
    def total_cpus(self) -> int:
        return sum(nt.cpus * nt.count for nt in self.node_types)

    @property
    def total_mem_gb(self) -> float:
        return sum(nt.mem_gb * nt.count for nt in self.node_types)

    @property
    def max_node_gpus(self) -> int:
        return max(nt.gpus for nt in self.node_types)

    @property
    def reference_type(self) -> NodeType:
        """The node type holding the most GPUs in total (ties: first in file)."""
        return max(self.node_types, key=lambda nt: nt.gpus * nt.count)


@dataclass(frozen=True)
class SoftDeadline:
    """A later deadline that still earns part of the job's value."""

    at: float  # minutes, absolute
    value: float

    def __post_init__(self) -> None:
        _check_types(self, "SoftDeadline", None)


@dataclass(frozen=True)
class Job:
    """A gang-scheduled DNN training job.

    ``deadline`` is absolute (minutes); ``None`` means best effort. Meeting it earns
    ``value``; missing it but meeting a ``soft_deadlines`` entry earns that entry's
    (smaller) value. ``speed_factor`` is the job's *true* speed divided by its
    profile's prediction: the simulator and validator use it, policies never see it.
    """

    id: str
    arrival: float
    gpus: int
    work: float
    profile: SensitivityProfile
    deadline: float | None = None
    value: float = 1.0
    soft_deadlines: tuple[SoftDeadline, ...] = ()
    speed_factor: float = 1.0

    def __post_init__(self) -> None:
        _check_types(self, "Job", self.id if isinstance(self.id, str) else None)
        if not isinstance(self.profile, SensitivityProfile):
            raise ArgumentError("Job", "profile", f"must be a SensitivityProfile (sensaopt.profiles.get_profile(name)), "
                                                  f"got {type(self.profile).__name__}", job=self.id)
        if not isinstance(self.soft_deadlines, tuple):
            if not isinstance(self.soft_deadlines, (list, Iterable)) or isinstance(self.soft_deadlines, (str, bytes)):
                raise ArgumentError("Job", "soft_deadlines", "must be a tuple of SoftDeadline", job=self.id)
            object.__setattr__(self, "soft_deadlines", tuple(self.soft_deadlines))
        if any(not isinstance(sd, SoftDeadline) for sd in self.soft_deadlines):
            raise ArgumentError("Job", "soft_deadlines", "must be a tuple of SoftDeadline(at, value)", job=self.id)

    @property
    def has_deadline(self) -> bool:
        return self.deadline is not None

    @property
    def model(self) -> str:
        return self.profile.name

    def deadlines(self) -> tuple[tuple[float, float], ...]:
        """All (deadline, value) options, earliest (and most valuable) first."""
        if self.deadline is None:
            return ()
        return ((self.deadline, self.value),) + tuple((s.at, s.value) for s in self.soft_deadlines)

    def earned_value(self, finish: float | None) -> float:
        """Value earned when finishing at ``finish`` minutes (``None``: never)."""
        if finish is None:
            return 0.0
        for at, value in self.deadlines():
            if finish <= at + 1e-9:
                return value
        return 0.0

    def loss(self, finish: float | None) -> float:
        """Value lost by the deadline misses (0 for best-effort jobs)."""
        if self.deadline is None:
            return 0.0
        return self.value - self.earned_value(finish)


@dataclass(frozen=True)
class ObjectiveWeights:
    """The one objective: ``violation_weight * sum(loss) + avg JCT`` (minutes).

    ``loss`` is the deadline value a job lost (a strict job with value 1 that misses
    loses 1). The default weight, 10^5 minutes of average JCT per unit of lost value,
    makes the objective lexicographic (violations first, then JCT) on every instance
    whose average-JCT range is below ~69 days.
    """

    violation_weight: float = 1e5

    def __post_init__(self) -> None:
        _check_types(self, "ObjectiveWeights", None)


class Change(Enum):
    """How a job's allocation changes from one round it runs to the next (see
    :func:`sensaopt.changes.classify`). Each kind but ``NONE`` costs minutes of the
    round it starts in (:meth:`Overheads.minutes`)."""

    NONE = "none"  # first start, or same placements as the round before
    RESTART = "restart"  # paused (did not run the round before), now running again
    MIGRATION = "migration"  # ran the round before on another node set or GPU split
    RESIZE = "resize"  # ran the round before on the same nodes and GPUs, other CPU/memory


@dataclass(frozen=True)
class Overheads:
    """The change-cost model: minutes of a round lost by a job whose allocation changes
    (per job, not per GPU; ``g`` = the job's GPUs). One model, used alike by the
    simulator, the validator, the metrics and the exact models.

    * restart (paused → running): ``base + per_log2_gpu · log2 g``;
    * migration (running on another node set / GPU split than the round before):
      ``migration_base + migration_per_log2_gpu · log2 g`` (checkpoint + restore);
    * resize (same nodes and GPUs, other CPU or memory): ``resize`` (data-loader restart).

    Defaults (``models/costs.md`` gives the sources): restart = the Chronus artifact's
    checkpoint + resume, (0.1 + 0.4)·(1 + log2 g) minutes; migration = that plus the
    Pollux simulator's 30-second re-allocation delay, 1.0 + 0.5·log2 g; resize = the
    Pollux delay alone, 0.5.
    """

    base_minutes: float = 0.5
    per_log2_gpu_minutes: float = 0.5
    migration_base_minutes: float = 1.0
    migration_per_log2_gpu_minutes: float = 0.5
    resize_minutes: float = 0.5

    def __post_init__(self) -> None:
        _check_types(self, "Overheads", None)

    def restart_minutes(self, gpus: int) -> float:
        """Minutes lost when a paused job resumes."""
        return self.base_minutes + self.per_log2_gpu_minutes * math.log2(gpus)

    def migration_minutes(self, gpus: int) -> float:
        """Minutes lost when a running job moves to another node set / GPU split."""
        return self.migration_base_minutes + self.migration_per_log2_gpu_minutes * math.log2(gpus)

    def resize_minutes_for(self, gpus: int) -> float:
        """Minutes lost when a running job's CPU or memory changes in place."""
        return self.resize_minutes

    def minutes(self, change: Change, gpus: int) -> float:
        """Minutes lost in the round a change of kind ``change`` happens."""
        if change is Change.NONE:
            return 0.0
        if change is Change.RESTART:
            return self.restart_minutes(gpus)
        if change is Change.MIGRATION:
            return self.migration_minutes(gpus)
        return self.resize_minutes_for(gpus)

    def costs(self, gpus: int) -> tuple[float, float, float]:
        """Minutes lost by a ``gpus``-GPU job to a (restart, migration, resize): the
        per-job tuple the simulator's and the validator's hot loops index."""
        return (self.restart_minutes(gpus), self.migration_minutes(gpus), self.resize_minutes_for(gpus))

    def table(self, gpus: int) -> dict[Change, float]:
        """Minutes lost by a ``gpus``-GPU job for each kind of change (``NONE``: 0), as a
        mapping. (Hot loops index a plain tuple instead: an Enum key hashes in Python.)"""
        return {c: self.minutes(c, gpus) for c in Change}

    def scaled(self, factor: float) -> Overheads:
        """Every cost multiplied by ``factor`` (the ``--move-cost-scale`` option)."""
        return Overheads(*(factor * getattr(self, f.name) for f in fields(self)))


@dataclass(frozen=True)
class Instance:
    """A scheduling problem: jobs on a cluster in rounds (checked on construction).

    Attributes:
        name: the instance's name.
        cluster: the cluster.
        round_minutes: the round length, minutes (allocations change only between rounds).
        jobs: the jobs (ids unique).
        objective: the objective's weights (``violation_weight`` × lost value + average JCT).
        overheads: minutes lost per restart, migration and resize.
        source: file path or generator command (used in error messages).
    """

    name: str
    cluster: Cluster
    round_minutes: float
    jobs: tuple[Job, ...]
    objective: ObjectiveWeights = field(default_factory=ObjectiveWeights)
    overheads: Overheads = field(default_factory=Overheads)
    source: str = ""  # file path or generator command; used in error messages

    def __post_init__(self) -> None:
        _check_types(self, "Instance", None)
        for name, tp in (("cluster", Cluster), ("objective", ObjectiveWeights), ("overheads", Overheads)):
            if not isinstance(getattr(self, name), tp):
                raise ArgumentError("Instance", name, f"must be a {tp.__name__}, got {type(getattr(self, name)).__name__}")
        object.__setattr__(self, "jobs", _tuple_of(self.jobs, Job, "Instance", "jobs"))
        check_instance(self)

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {j.id: k for k, j in enumerate(self.jobs)}

    def job(self, job_id: str) -> Job:
        return self.jobs[self.job_index[job_id]]

    def release_round(self, job: Job) -> int:
        """First round a job may run in: the first round starting at or after arrival."""
        return math.ceil(job.arrival / self.round_minutes - 1e-9)

    def with_jobs(self, jobs: Iterable[Job]) -> Instance:
        return replace(self, jobs=tuple(jobs))

    def with_move_cost_scale(self, factor: float) -> Instance:
        """This instance with every change cost multiplied by ``factor`` (the
        ``--move-cost-scale`` option; 1: this instance itself)."""
        return self if factor == 1 else replace(self, overheads=self.overheads.scaled(factor))


_SCALAR_TYPES: dict[type, dict[str, object]] = {}


def _tuple_of(items: object, tp: type, what: str, name: str) -> tuple:
    """``items`` as a tuple of ``tp`` (a list or other iterable is converted); else :class:`ArgumentError`."""
    if not isinstance(items, tuple):
        if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
            raise ArgumentError(what, name, f"must be a tuple of {tp.__name__}, got {type(items).__name__}")
        items = tuple(items)
    bad = next((k for k, x in enumerate(items) if not isinstance(x, tp)), None)
    if bad is not None:
        raise ArgumentError(what, f"{name}[{bad}]", f"must be a {tp.__name__}, got {type(items[bad]).__name__}")
    return items


def _check_types(obj: object, what: str, job: str | None) -> None:
    """The scalar fields of a dataclass ``obj`` against their annotations, at construction:
    an ``int`` field takes an integer (a numpy integer becomes an ``int``; 2.5, a bool or
    "2" are refused), a ``float`` field a real number (not a bool nor a string), a ``str``
    field a string; ``X | None`` fields may be None. Ranges are :func:`check_instance`'s.
    Raises :class:`ArgumentError` naming the class, field and job."""
    import numbers

    kinds = _SCALAR_TYPES.get(type(obj))
    if kinds is None:
        import typing

        hints = typing.get_type_hints(type(obj))
        kinds = _SCALAR_TYPES[type(obj)] = {f.name: hints[f.name] for f in fields(obj)}  # type: ignore[arg-type]
    for name, tp in kinds.items():
        x = getattr(obj, name)
        if tp is int:
            if type(x) is int:
                continue
            if isinstance(x, numbers.Integral) and not isinstance(x, bool):
                object.__setattr__(obj, name, int(x))
                continue
            raise ArgumentError(what, name, type_problem(int, x), job=job)
        if tp is float or tp == (float | None):
            if type(x) is float or type(x) is int or (x is None and tp is not float):
                continue
            if isinstance(x, numbers.Real) and not isinstance(x, bool):
                object.__setattr__(obj, name, float(x))
                continue
            raise ArgumentError(what, name, type_problem(float, x), job=job)
        if tp is str and not isinstance(x, str):
            raise ArgumentError(what, name, type_problem(str, x), job=job)


def check_instance(inst: Instance) -> None:
    """Consistency checks a JSON schema cannot express, and the ranges of
    :data:`sensaopt.limits.INSTANCE` for instances built in code (a range also refuses
    NaN and infinities, so no separate finiteness check precedes it). Raises :class:`InputError`."""
    where = inst.source or inst.name
    _check_name(where, "name", inst.name)
    _check_range(where, "round_minutes", inst.round_minutes, INSTANCE["round_minutes"])
    _check_cluster(where, inst.cluster)
    if not inst.jobs:
        _bad(where, "jobs", "the instance has no jobs (an empty job list)")
    if len(inst.jobs) > MAX_JOBS:
        _bad(where, "jobs", too_many_jobs())
    seen: set[str] = set()
    cap = inst.cluster.total_gpus
    fits: dict[tuple[int, int], str | None] = {}  # (profile id, gpus) -> why no node can run it
    for k, j in enumerate(inst.jobs):
        _check_name(where, f"jobs[{k}].id", j.id)
        if j.id in seen:
            _bad(where, f"jobs[{k}].id", "duplicate job id", j.id)
        seen.add(j.id)
        _check_job(where, f"jobs[{k}]", j, cap)
        _check_job_ranges(where, f"jobs[{k}]", j, inst.round_minutes)
        _check_runnable(where, f"jobs[{k}]", j, inst.cluster, fits, inst.round_minutes)
    _check_range(where, "objective.violation_weight", inst.objective.violation_weight, INSTANCE["objective.violation_weight"])
    for f in fields(Overheads):
        _check_range(where, f"overheads.{f.name}", getattr(inst.overheads, f.name), INSTANCE[f"overheads.{f.name}"])


def too_many_jobs() -> str:
    """The message for more than :data:`~sensaopt.limits.MAX_JOBS` jobs (files and code)."""
    return f"more than {MAX_JOBS} jobs (split the workload)"


def horizon_problem(minutes: float, round_minutes: float) -> str | None:
    """None when a time of ``minutes`` is within :data:`~sensaopt.limits.MAX_ROUNDS`
    rounds of ``round_minutes`` (the simulator and validator count rounds), else why not."""
    if minutes / round_minutes <= MAX_ROUNDS:
        return None
    return (f"{minutes:g} minutes is {minutes / round_minutes:.3g} rounds of {round_minutes:g} minutes; "
            f"at most {MAX_ROUNDS} rounds are supported")


def _bad(where: str, field_: str, msg: str, job: str | None = None) -> NoReturn:
    raise InputError(where, field_, msg, job=job)


def _check_name(where: str, field_: str, text: str) -> None:
    msg = name_problem(text)
    if msg is not None:
        _bad(where, field_, f"{describe(text)}: {msg}")


def _check_range(where: str, field_: str, x: float, r: Range, job: str | None = None) -> None:
    msg = r.problem(x)
    if msg is not None:
        _bad(where, field_, msg, job)


def _check_cluster(where: str, cluster: Cluster) -> None:
    if not cluster.node_types:
        _bad(where, "cluster.node_types", "the cluster has no nodes")
    for k, nt in enumerate(cluster.node_types):
        for name in ("gpus", "cpus", "mem_gb", "count"):
            _check_range(where, f"cluster.node_types[{k}].{name}", getattr(nt, name), INSTANCE[f"cluster.node_types[].{name}"])
    _check_node_names(where, cluster)


def _check_node_names(where: str, cluster: Cluster) -> None:
    """Node names are unique (two node types of one name would both give ``NAME-0``, and a
    schedule naming it could not say which)."""
    first: dict[str, int] = {}
    for k, nt in enumerate(cluster.node_types):
        _check_name(where, f"cluster.node_types[{k}].name", nt.name)
        if nt.name in first:
            _bad(where, f"cluster.node_types[{k}].name", f"node type name {nt.name!r} is also node type {first[nt.name]}'s "
                                                         f"(node names NAME-i must be unique)")
        first[nt.name] = k
    names: set[str] = set()
    for node in cluster.nodes:
        if node.name in names:
            _bad(where, "cluster.node_types", f"two nodes would be named {node.name!r} (rename a node type)")
        names.add(node.name)


def _host_gpus(nt: NodeType, cf: float, mf: float) -> int:
    """GPUs of one job a node of type ``nt`` can hold at the profile floor (cf cores, mf GB per GPU)."""
    def fit(have: float, per_gpu: float) -> int:  # GPUs ``have`` holds at ``per_gpu`` each (a tiny per_gpu: every GPU)
        q = have / per_gpu if per_gpu > 0 else math.inf
        return nt.gpus if q >= nt.gpus else math.floor(q + 1e-9)

    return max(0, min(nt.gpus, fit(nt.cpus, cf), fit(nt.mem_gb, mf)))


def _check_runnable(where: str, f: str, j: Job, cluster: Cluster, memo: dict[tuple[int, int], str | None], round_minutes: float) -> None:
    """Some placement satisfies the job's profile floor: a job that fits the largest node
    needs one node with its GPUs and, for them, the floor's cores and GB; a larger one
    needs enough nodes, each holding its share at the floor. Otherwise no policy can ever
    run it (before: SensaScale crashed, EDF reported "still unfinished", the simulator
    spun for up to 10^7 rounds)."""
    key = (id(j.profile), j.gpus)
    if key not in memo:
        cf, mf = j.profile.floor
        g = j.gpus
        why = None
        if g <= cluster.max_node_gpus:
            if not any(nt.gpus >= g and _host_gpus(nt, cf, mf) >= g for nt in cluster.node_types):
                best = max(cluster.node_types, key=lambda nt: (nt.gpus >= g, nt.cpus / g, nt.mem_gb / g))
                why = (f"its profile's floor of {cf:g} cores and {mf:g} GB per GPU ({g * cf:g} cores, {g * mf:g} GB for its {g} GPUs) "
                       f"fits no node (node type {best.name!r}: {best.gpus} GPUs, {best.cpus} cores, {best.mem_gb:g} GB); "
                       f"no policy can run it")
        elif sum(nt.count * _host_gpus(nt, cf, mf) for nt in cluster.node_types) < g:
            room = sum(nt.count * _host_gpus(nt, cf, mf) for nt in cluster.node_types)
            why = (f"at its profile's floor of {cf:g} cores and {mf:g} GB per GPU the nodes hold {room} of its {g} GPUs; "
                   f"no policy can run it")
        memo[key] = why
    why = memo[key]
    if why is not None:
        _bad(where, f"{f}.profile", why, j.id)
    fastest = j.profile.peak * j.speed_factor
    if j.work / fastest > MAX_ROUNDS * round_minutes:  # its run alone, at its best speed, passes the simulated horizon
        _bad(where, f"{f}.work", f"{j.work:g} minutes of work at its best speed {fastest:g} take {j.work / fastest / round_minutes:.3g} "
                                 f"rounds of {round_minutes:g} minutes; at most {MAX_ROUNDS} rounds are supported", j.id)


def _check_job(where: str, f: str, j: Job, cap: int) -> None:
    """One job's numbers (``f`` is its field path, ``cap`` the cluster's GPUs)."""
    if not (math.isfinite(j.arrival) and j.arrival >= 0):
        _bad(where, f"{f}.arrival", f"must be a finite number of minutes >= 0, got {describe(j.arrival)}", j.id)
    if j.gpus <= 0:
        _bad(where, f"{f}.gpus", f"must be >= 1, got {j.gpus}", j.id)
    if j.gpus > cap:
        _bad(where, f"{f}.gpus", f"needs {j.gpus} GPUs but the whole cluster has {cap}", j.id)
    if not (math.isfinite(j.work) and j.work > 0):
        _bad(where, f"{f}.work", f"must be a positive finite number of minutes, got {describe(j.work)}", j.id)
    if not (math.isfinite(j.speed_factor) and j.speed_factor > 0):
        _bad(where, f"{f}.speed_factor", f"must be positive and finite, got {describe(j.speed_factor)}", j.id)
    if j.deadline is not None:
        _check_deadlines(where, f, j, j.deadline)
    elif j.soft_deadlines:
        _bad(where, f"{f}.soft_deadlines", "a best-effort job (deadline null) cannot have soft deadlines", j.id)


def _check_deadlines(where: str, f: str, j: Job, deadline: float) -> None:
    """A job's deadline, value and soft deadlines (later, in order, with decreasing values)."""
    if not math.isfinite(deadline):
        _bad(where, f"{f}.deadline", f"must be finite (use null for best effort), got {describe(deadline)}", j.id)
    if deadline <= j.arrival:
        _bad(where, f"{f}.deadline", f"deadline {deadline} is not after arrival {j.arrival}", j.id)
    if not (math.isfinite(j.value) and j.value > 0):
        _bad(where, f"{f}.value", f"must be positive and finite, got {describe(j.value)}", j.id)
    prev_at, prev_v = deadline, j.value
    for s, sd in enumerate(j.soft_deadlines):
        if not (math.isfinite(sd.at) and sd.at > prev_at):
            _bad(where, f"{f}.soft_deadlines[{s}].at", "soft deadlines must come later, in order", j.id)
        if not (math.isfinite(sd.value) and 0 < sd.value < prev_v):
            _bad(where, f"{f}.soft_deadlines[{s}].value", "soft deadline values must be positive and decreasing", j.id)
        prev_at, prev_v = sd.at, sd.value


def _check_job_ranges(where: str, f: str, j: Job, round_minutes: float) -> None:
    """A job's numbers against :data:`sensaopt.limits.INSTANCE` and the round horizon
    (after :func:`_check_job`: every number is finite here)."""
    if j.speed_factor not in _SPEED_FACTOR:
        _check_range(where, f"{f}.speed_factor", j.speed_factor, _SPEED_FACTOR, j.id)
    cap = MAX_ROUNDS * round_minutes * (1 - 1e-12)  # a quick pre-check; horizon_problem decides
    if j.arrival > cap or j.work > cap or (j.deadline is not None and j.deadline > cap):
        times = [("arrival", j.arrival), ("work", j.work), ("deadline", j.deadline)]
        for name, v in times:
            msg = None if v is None else horizon_problem(v, round_minutes)
            if msg is not None:
                _bad(where, f"{f}.{name}", msg, j.id)
    if j.value not in _VALUE:  # best-effort jobs too: a file's value is checked whatever its deadline
        _check_range(where, f"{f}.value", j.value, _VALUE, j.id)
    for s, sd in enumerate(j.soft_deadlines):  # later than the deadline and worth less (_check_deadlines)
        msg = horizon_problem(sd.at, round_minutes)
        if msg is not None:
            _bad(where, f"{f}.soft_deadlines[{s}].at", msg, j.id)


_SPEED_FACTOR = INSTANCE["jobs[].speed_factor"]
_VALUE = INSTANCE["jobs[].value"]
