"""The file boundary: JSON instance and schedule files, validated with pydantic.

Every problem in a user's file becomes one :class:`InputError` naming the file, the
field and the job. Files are written atomically (temp file + rename), so an
interrupted run never leaves a half-written result.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sensaopt import memory
from sensaopt.errors import InputError
from sensaopt.instance import Cluster, Instance, Job, NodeType, ObjectiveWeights, Overheads, SoftDeadline, too_many_jobs
from sensaopt.json_output import check_json_numbers, first_non_finite, json_text  # noqa: F401  (their home before)
from sensaopt.limits import INSTANCE, MAX_FILE_BYTES, MAX_JOBS, Range, type_problem
from sensaopt.outputs import write_text
from sensaopt.profiles import SensitivityProfile, catalog
from sensaopt.schedule import FORMAT_VERSION as SCHEDULE_FORMAT_VERSION
from sensaopt.schedule import Placement, Schedule, Segment

FORMAT_VERSION = 1

# The models check a file's structure and JSON types only (strict: a number given as a
# string ("5") or a boolean is a wrong type, not coerced); every value rule — ranges,
# finiteness, names, cross-field rules — is the objects' own (Instance, Job,
# SensitivityProfile, Schedule: one function for files and code, the same message). The
# ranges still appear in the JSON Schema (``sensaopt schema``).
PosFloat = Annotated[float, Field(strict=True, json_schema_extra={"exclusiveMinimum": 0})]
NonNegFloat = Annotated[float, Field(strict=True, json_schema_extra={"minimum": 0})]
FiniteFloat = Annotated[float, Field(strict=True)]
PosInt = Annotated[int, Field(strict=True, json_schema_extra={"exclusiveMinimum": 0})]


def _in(r: Range) -> Any:
    """A strict pydantic field whose JSON Schema shows the range ``r`` (sensaopt.limits);
    the range itself is checked by the objects (:func:`sensaopt.instance.check_instance`)."""
    low = {"exclusiveMinimum": r.lo} if r.lo_open else {"minimum": r.lo}
    return Field(strict=True, json_schema_extra={**low, "maximum": r.hi})


# the ranges of sensaopt.limits.INSTANCE, one alias per field kind
RoundMinutes = Annotated[float, _in(INSTANCE["round_minutes"])]
NodeGpus = Annotated[int, _in(INSTANCE["cluster.node_types[].gpus"])]
NodeCpus = Annotated[int, _in(INSTANCE["cluster.node_types[].cpus"])]
NodeMem = Annotated[float, _in(INSTANCE["cluster.node_types[].mem_gb"])]
NodeCount = Annotated[int, _in(INSTANCE["cluster.node_types[].count"])]
CpuLevel = Annotated[float, _in(INSTANCE["profile.cpu_levels"])]
MemLevel = Annotated[float, _in(INSTANCE["profile.mem_levels"])]
Speed = Annotated[float, _in(INSTANCE["profile.speeds"])]
Value = Annotated[float, _in(INSTANCE["jobs[].value"])]
SoftValue = Annotated[float, _in(INSTANCE["jobs[].soft_deadlines[].value"])]
SpeedFactor = Annotated[float, _in(INSTANCE["jobs[].speed_factor"])]
ViolationWeight = Annotated[float, _in(INSTANCE["objective.violation_weight"])]
BaseMinutes = Annotated[float, _in(INSTANCE["overheads.base_minutes"])]
PerLog2GpuMinutes = Annotated[float, _in(INSTANCE["overheads.per_log2_gpu_minutes"])]
MigrationBaseMinutes = Annotated[float, _in(INSTANCE["overheads.migration_base_minutes"])]
MigrationPerLog2GpuMinutes = Annotated[float, _in(INSTANCE["overheads.migration_per_log2_gpu_minutes"])]
ResizeMinutes = Annotated[float, _in(INSTANCE["overheads.resize_minutes"])]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeTypeModel(_Strict):
    name: str
    gpus: NodeGpus
    cpus: NodeCpus = Field(description="CPU cores per node")
    mem_gb: NodeMem = Field(description="memory per node, GB")
    count: NodeCount = 1


class ClusterModel(_Strict):
    node_types: list[NodeTypeModel]


class ProfileModel(_Strict):
    cpu_levels: list[CpuLevel] = Field(description="CPU cores per GPU, increasing")
    mem_levels: list[MemLevel] = Field(description="memory GB per GPU, increasing")
    speeds: list[list[Speed]] = Field(description="speeds[i][k], relative to the reference share")
    task: str = "custom"


class SoftDeadlineModel(_Strict):
    at: FiniteFloat = Field(description="absolute, minutes")
    value: SoftValue


class JobModel(_Strict):
    id: str
    arrival: NonNegFloat = Field(description="minutes")
    gpus: PosInt
    work: PosFloat = Field(description="minutes of run time at speed 1.0 (GPU-proportional share)")
    deadline: FiniteFloat | None = Field(default=None, description="absolute, minutes; null = best effort")
    value: Value = Field(default=1.0, description="value of meeting the deadline")
    soft_deadlines: list[SoftDeadlineModel] = Field(default_factory=list)
    model: str | None = Field(default=None, description="a catalog model or a name in `profiles`")
    profile: ProfileModel | None = Field(default=None, description="inline sensitivity profile")
    speed_factor: SpeedFactor = Field(default=1.0, description="true speed / profile speed (hidden from policies)")

    @model_validator(mode="after")
    def _one_profile(self) -> JobModel:
        if (self.model is None) == (self.profile is None):
            raise ValueError("give exactly one of `model` and `profile`")
        return self


class ObjectiveModel(_Strict):
    violation_weight: ViolationWeight = ObjectiveWeights.violation_weight


class OverheadsModel(_Strict):
    """The change-cost model (:class:`sensaopt.instance.Overheads`), minutes per job;
    a field left out takes its default (files written before a field existed load)."""

    base_minutes: BaseMinutes = Overheads.base_minutes
    per_log2_gpu_minutes: PerLog2GpuMinutes = Overheads.per_log2_gpu_minutes
    migration_base_minutes: MigrationBaseMinutes = Overheads.migration_base_minutes
    migration_per_log2_gpu_minutes: MigrationPerLog2GpuMinutes = Overheads.migration_per_log2_gpu_minutes
    resize_minutes: ResizeMinutes = Overheads.resize_minutes


class InstanceModel(_Strict):
    """A sensaopt scheduling instance. Time in minutes, CPU in cores, memory in GB."""

    model_config = ConfigDict(extra="forbid", title="sensaopt instance")
    format_version: int = Field(FORMAT_VERSION, ge=1, le=FORMAT_VERSION, strict=True)
    name: str
    round_minutes: RoundMinutes
    cluster: ClusterModel
    objective: ObjectiveModel = Field(default_factory=ObjectiveModel)
    overheads: OverheadsModel = Field(default_factory=OverheadsModel)
    profiles: dict[str, ProfileModel] = Field(default_factory=dict)
    jobs: list[JobModel] = Field(max_length=MAX_JOBS)
    provenance: dict[str, Any] = Field(default_factory=dict, description="how the instance was made")


def instance_schema() -> dict:
    """JSON Schema of the instance format, generated from the code."""
    return InstanceModel.model_json_schema()


# ---- errors -----------------------------------------------------------------------------
def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _job_of(raw: Any, loc: tuple) -> str | None:
    if len(loc) >= 2 and loc[0] == "jobs" and isinstance(loc[1], int) and isinstance(raw, dict):
        try:
            jid = raw["jobs"][loc[1]].get("id")
            return str(jid) if jid is not None else f"#{loc[1]}"
        except (AttributeError, IndexError, KeyError, TypeError):
            return None
    return None


# pydantic's error types -> the type a field wants (the message is limits.type_problem's, as for objects built in code)
_TYPE_ERRORS = {"int_type": int, "int_from_float": int, "int_parsing": int, "float_type": float, "float_parsing": float,
                "string_type": str, "bool_type": bool, "list_type": list, "dict_type": dict, "model_type": dict,
                "model_attributes_type": dict}


def validation_message(first: Any) -> str:
    """The message of pydantic's error ``first`` (one of ``ValidationError.errors()``) in
    sensaopt's words: ``unknown field``, ``missing required field``, a wrong type as
    :func:`sensaopt.limits.type_problem` says it (as for objects built in code)."""
    kind = first["type"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "missing required field"
    if kind in _TYPE_ERRORS:
        return type_problem(_TYPE_ERRORS[kind], first.get("input"))
    return str(first["msg"])


def _from_validation_error(e: ValidationError, raw: Any, where: str) -> InputError:
    first = e.errors()[0]
    loc = tuple(x for x in first["loc"] if not (isinstance(x, str) and x.startswith("function-")))
    msg = validation_message(first)
    if first["type"] == "too_long" and loc == ("jobs",):
        msg = too_many_jobs()
    return InputError(where, _loc(loc), msg, job=_job_of(raw, loc))


def sniff_text(head: bytes) -> str | None:
    """None when the first bytes of a file can be UTF-8 text, else what the file is
    (gzip, zip, UTF-16/32, binary), for one-line errors on files named as text."""
    if head.startswith(b"\x1f\x8b"):
        return "a gzip-compressed file, not text (decompress it first: gunzip)"
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive, not text (extract it first)"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 or UTF-32 text (save it as UTF-8)"
    if b"\x00" in head:
        return "binary data (NUL bytes), not text"
    return None


def decode_utf8(data: bytes, where: str, line_offset: int = 0) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped); :class:`InputError`
    naming the line and column of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        before = data[: e.start]
        line = line_offset + before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        msg = f"not UTF-8 text: byte 0x{data[e.start]:02x} (save the file as UTF-8)"
        raise InputError(where, f"line {line} column {col}", msg) from None


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json`` object hook: the object as a dict; :class:`_DuplicateKey` for a key given twice."""
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return d


def check_regular_file(path: str | Path) -> os.stat_result:
    """The ``os.stat`` of an input file; :class:`InputError` for a FIFO, socket or device
    (read, a FIFO blocks for ever and ``/dev/zero`` fills the memory). A directory passes
    (reading it gives its own line); a missing file raises ``FileNotFoundError``."""
    st = os.stat(path)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise InputError(os.fspath(path), "(file)", "not a regular file (a FIFO, socket or device)")
    return st


def read_json(path: str | Path, max_bytes: int | None = MAX_FILE_BYTES) -> Any:
    """Parse a UTF-8 JSON file (a byte-order mark is allowed). One-line :class:`InputError`
    for a missing or unreadable file, one larger than ``max_bytes`` (None: any size;
    checked before reading), a file that is not UTF-8 text (gzip, UTF-16, a bad byte:
    line and column), malformed JSON, a key given twice in one object, nesting deeper
    than the parser's recursion limit (~1000 levels), an integer of more than 4300 digits,
    or a FIFO, socket or device (read before any byte: a FIFO blocks, ``/dev/zero`` never ends)."""
    p = Path(path)
    try:
        size = check_regular_file(p).st_size
        if max_bytes is not None and size > max_bytes:
            raise InputError(str(p), "(file)", f"{size / 2**20:.0f} MiB; JSON files up to {max_bytes // 2**20} MiB are read")
        with memory.reading(str(p), size):
            data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(str(p), "(file)", "no such file") from None
    except OSError as e:
        raise InputError(str(p), "(file)", f"cannot read: {e.strerror or e}") from None
    what = sniff_text(data[:64])
    if what is not None:
        raise InputError(str(p), "(file)", what)
    text = decode_utf8(data, str(p))
    del data
    try:
        with memory.reading(str(p), size):
            return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise InputError(str(p), f"line {e.lineno} column {e.colno}", f"malformed JSON: {e.msg}") from None
    except _DuplicateKey as e:
        raise InputError(str(p), "(JSON)", f"key {e.key!r} given twice in one object") from None
    except RecursionError:
        raise InputError(str(p), "(JSON)", "arrays/objects nested too deeply (about 1000 levels at most)") from None
    except ValueError as e:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise InputError(str(p), "(JSON)", f"a number too long to read ({str(e).split(':')[0]})") from None


# ---- instances ----------------------------------------------------------------------------
def instance_from_dict(raw: Any, source: str = "<instance>") -> Instance:
    memory.check_items(raw, "jobs")
    try:
        m = InstanceModel.model_validate(raw)
    except ValidationError as e:
        raise _from_validation_error(e, raw, source) from None
    cat = catalog()
    custom: dict[str, SensitivityProfile] = {}
    for name, pm in m.profiles.items():
        custom[name] = _profile(name, pm, source, f"profiles.{name}", None)
    jobs = []
    raw = None  # the parsed JSON is no longer needed: free it before the jobs are built
    for k, jm in enumerate(m.jobs):
        if jm.profile is not None:
            prof = _profile(f"{jm.id}-profile", jm.profile, source, f"jobs[{k}].profile", jm.id)
        elif jm.model in custom:
            prof = custom[jm.model]
        elif jm.model in cat:
            prof = cat[jm.model]
        else:
            known = ", ".join(sorted(set(cat) | set(custom)))
            raise InputError(source, f"jobs[{k}].model", f"unknown model type {jm.model!r} (known: {known})", jm.id)
        jobs.append(
            Job(
                id=jm.id,
                arrival=jm.arrival,
                gpus=jm.gpus,
                work=jm.work,
                profile=prof,
                deadline=jm.deadline,
                value=jm.value,
                soft_deadlines=tuple(SoftDeadline(s.at, s.value) for s in jm.soft_deadlines),
                speed_factor=jm.speed_factor,
            )
        )
    inst = Instance(
        name=m.name,
        cluster=Cluster(tuple(NodeType(n.name, n.gpus, n.cpus, n.mem_gb, n.count) for n in m.cluster.node_types)),
        round_minutes=m.round_minutes,
        jobs=tuple(jobs),
        objective=ObjectiveWeights(m.objective.violation_weight),
        overheads=Overheads(**m.overheads.model_dump()),
        source=source,
    )
    memory.note_instance(inst)  # a later MemoryError names its size
    return inst


def _profile(name: str, pm: ProfileModel, source: str, field: str, job: str | None) -> SensitivityProfile:
    """The profile of a file's ``field``; its rules are the object's (:func:`sensaopt.profiles.check_profile`),
    an error named by the file's field path."""
    try:
        return SensitivityProfile(name=name, cpu_levels=tuple(pm.cpu_levels), mem_levels=tuple(pm.mem_levels),
                                  speeds=tuple(tuple(r) for r in pm.speeds), task=pm.task)
    except InputError as e:
        raise InputError(source, f"{field}.{e.field}", e.message, job) from None


def load_instance(path: str | Path) -> Instance:
    """Read, validate and convert an instance file, or a packaged instance by name
    (``"tiny-8gpu"``, :func:`sensaopt.datasets.instance_names`; a path that exists wins).

    Args:
        path: an instance JSON file, or a packaged instance's name.

    Returns:
        The instance (minutes, cores, GB).

    Raises:
        InputError: a missing, unreadable or invalid file (one line naming the field);
            an ArgumentError (one) for a ``path`` that is not a str or path."""
    _check_path_argument("load_instance()", "path", path)
    if not _exists(path):
        from sensaopt.datasets import instance_names, packaged_instance

        packaged = packaged_instance(str(path))
        if packaged is None:
            raise InputError(str(path), "(file)", f"no such file, nor a packaged instance (known: {', '.join(instance_names())})")
        return instance_from_dict(json.loads(packaged.read_text()), str(path))
    return instance_from_dict(read_json(path), str(path))


def _check_path_argument(where: str, name: str, path: object) -> None:
    """:class:`ArgumentError` unless ``path`` is a str or an ``os.PathLike``."""
    from sensaopt.errors import ArgumentError

    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(where, name, f"must be a path (str or pathlib.Path), got {type(path).__name__}")


def _exists(path: str | Path) -> bool:
    """Whether something is at ``path`` to read; False only for "no such file" (a name
    too long, a symbolic-link loop or a permission problem is one :class:`InputError`
    naming it, not "no such file, nor a packaged instance")."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as e:
        raise InputError(os.fspath(path), "(file)", f"cannot read: {e.strerror or e}") from None
    except ValueError as e:  # an embedded NUL byte
        raise InputError(repr(os.fspath(path)), "(file)", f"not a file name: {e}") from None
    return True


def instance_to_dict(inst: Instance, provenance: dict | None = None) -> dict:
    cat = catalog()
    custom: dict[str, dict] = {}
    jobs = []
    for j in inst.jobs:
        d: dict[str, Any] = {"id": j.id, "arrival": j.arrival, "gpus": j.gpus, "work": j.work, "deadline": j.deadline}
        if j.deadline is not None and j.value != 1.0:
            d["value"] = j.value
        if j.soft_deadlines:
            d["soft_deadlines"] = [{"at": s.at, "value": s.value} for s in j.soft_deadlines]
        p = j.profile
        if cat.get(p.name) == p:
            d["model"] = p.name
        else:
            custom[p.name] = {
                "cpu_levels": list(p.cpu_levels), "mem_levels": list(p.mem_levels), "speeds": [list(r) for r in p.speeds], "task": p.task,
            }
            d["model"] = p.name
        if j.speed_factor != 1.0:
            d["speed_factor"] = j.speed_factor
        jobs.append(d)
    out: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "name": inst.name,
        "round_minutes": inst.round_minutes,
        "cluster": {"node_types": [
            {"name": n.name, "gpus": n.gpus, "cpus": n.cpus, "mem_gb": n.mem_gb, "count": n.count} for n in inst.cluster.node_types
        ]},
        "objective": {"violation_weight": inst.objective.violation_weight},
        "overheads": asdict(inst.overheads),
    }
    if custom:
        out["profiles"] = custom
    out["jobs"] = jobs
    if provenance:
        out["provenance"] = provenance
    return out


def save_instance(inst: Instance, path: str | Path, provenance: dict | None = None) -> None:
    """Write an instance as JSON (the format ``sensaopt schema`` describes), atomically.

    Args:
        inst: the instance to write.
        path: the file to write; refused if it is a symlink, FIFO, device or directory.
        provenance: recorded with the instance (e.g. the command that made it).

    Raises:
        ArgumentError: ``inst`` is not an Instance, ``path`` not a str or path, ``provenance`` not a dict.
        InputError: ``path`` refused as an output (sensaopt.outputs) or the write failed.
    """
    from sensaopt.errors import ArgumentError

    if not isinstance(inst, Instance):
        raise ArgumentError("save_instance()", "inst", f"must be an Instance, got {type(inst).__name__}")
    _check_path_argument("save_instance()", "path", path)
    if provenance is not None and not isinstance(provenance, dict):
        raise ArgumentError("save_instance()", "provenance", f"must be a dict or None, got {type(provenance).__name__}")
    atomic_write_text(path, json_text(instance_to_dict(inst, provenance), indent=1, where=str(path)))


# ---- schedules ------------------------------------------------------------------------------
# a schedule file's numbers are checked by the Schedule itself (sensaopt.schedule.check_schedule_data: types, ranges),
# as for a schedule built in code; the models give the structure
class PlacementModel(_Strict):
    node: str
    gpus: Any
    cpus: Any
    mem_gb: Any


class SegmentModel(_Strict):
    job: str
    start: Any
    rounds: Any
    placements: list[PlacementModel]


class ScheduleModel(_Strict):
    format_version: int = Field(SCHEDULE_FORMAT_VERSION, ge=1, le=SCHEDULE_FORMAT_VERSION, strict=True)
    instance: str | None = None
    round_minutes: Any
    segments: list[SegmentModel]


def parse_schedule_dict(raw: Any, instance: Instance, source: str = "<schedule>") -> Schedule:
    """Parse a schedule object; checks types and names (not feasibility: that is the
    validator's job). Raises :class:`InputError`."""
    if isinstance(raw, dict) and "segments" not in raw and ("schedule" in raw or "status" in raw):
        raw = _schedule_of_result(raw, source)  # a `solve -o` result file: its rules, then its schedule
    memory.check_items(raw, "segments")
    try:
        m = ScheduleModel.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = first["loc"]
        job = None
        if len(loc) >= 2 and loc[0] == "segments" and isinstance(loc[1], int):
            with contextlib.suppress(AttributeError, IndexError, KeyError, TypeError):
                job = raw["segments"][loc[1]].get("job")
        msg = validation_message(first)
        raise InputError(source, _loc(loc), msg, job) from None
    names = {n.name: n.index for n in instance.cluster.nodes}
    segs = []
    for k, s in enumerate(m.segments):
        if s.job not in instance.job_index:
            raise InputError(source, f"segments[{k}].job", "unknown job (not in the instance)", s.job)
        pls = []
        for q, p in enumerate(s.placements):
            if p.node not in names:
                raise InputError(source, f"segments[{k}].placements[{q}].node", f"unknown node {p.node!r}", s.job)
            pls.append(Placement(names[p.node], p.gpus, p.cpus, p.mem_gb))
        segs.append(Segment(s.job, s.start, s.rounds, tuple(pls)))
    try:  # the format's value rules are the Schedule's own (sensaopt.schedule.check_schedule_data)
        return Schedule(tuple(segs), m.round_minutes)
    except InputError as e:
        raise InputError(source, e.field, e.message, e.job) from None


def _schedule_of_result(raw: dict, source: str) -> Any:
    """The schedule object a result file holds, after the result's rules
    (:func:`sensaopt.result_checks.check_result_fields`, as :meth:`sensaopt.result.Result.from_dict`
    applies them); :class:`InputError` for a result whose status says it has none
    (TIME_LIMIT without an incumbent, INFEASIBLE, ERROR) or that was written without it."""
    from sensaopt.result_checks import check_result_fields

    check_result_fields(raw, source)
    if raw.get("schedule") is not None:
        return raw["schedule"]
    why = (f"its status {raw['status']} comes without a solution" if raw["objective"] is None
           else f"it was written without its schedule (status {raw['status']})")
    raise InputError(source, "schedule", f"the result holds no schedule to read: {why}")


def load_schedule(path: str | Path, instance: Instance) -> Schedule:
    """Read a schedule file (or a ``solve --json`` result holding one).

    Args:
        path: the schedule or result JSON file.
        instance: the instance it schedules (node and job names are checked against it).

    Returns:
        The schedule (not validated: :func:`sensaopt.validator.check_schedule` does that).

    Raises:
        InputError: a missing, unreadable or malformed file.
    """
    return parse_schedule_dict(read_json(path), instance, str(path))


def save_schedule(schedule: Schedule, instance: Instance, path: str | Path) -> None:
    """Write ``schedule`` as a schedule file (nodes by name), atomically.

    Args:
        schedule: the schedule to write.
        instance: the instance it schedules (for node names).
        path: the file to write; refused if it is a symlink, FIFO, device or directory."""
    atomic_write_text(path, json_text(schedule.to_dict(instance), indent=1, where=str(path)))


# ---- files ------------------------------------------------------------------------------------
def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, with the checks of :func:`sensaopt.outputs.write_text`
    (never onto a symlink, FIFO, device or directory; one :class:`InputError` if refused)."""
    write_text(path, text)
