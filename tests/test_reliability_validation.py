"""One validation path (issue 35, item 4): every rule the file formats enforce is enforced
on objects built in Python — ``Job``, ``Instance``, ``SensitivityProfile``, ``Schedule``,
``Result.from_dict`` — by the same function, with the same message. Each rule below is
generated twice, as a file (read by the file readers, and once per kind through the
CLI) and as code (the object built in Python), and both must fail with one message: the
same ``message``, the file naming the field by its full path (``jobs[0].gpus``), the code
by the same path or, for a field of an object built alone (``Job(gpus=...)``), by its
name. The ranges come from ``sensaopt.limits`` (each range's edges, NaN, infinity and a
wrong type), so a new range gets its cases without a new test."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sensaopt.cli import main
from sensaopt.errors import InputError
from sensaopt.instance import Cluster, ObjectiveWeights, Overheads, SoftDeadline
from sensaopt.io import load_instance, load_schedule
from sensaopt.limits import INSTANCE, SCHEDULE, Range
from sensaopt.profiles import SensitivityProfile, get_profile
from sensaopt.result import Result, load_result
from sensaopt.schedule import Placement, Schedule, Segment

from .test_cli_core import TINY

RAW = json.loads(TINY.read_text())
INST = load_instance(TINY)


def _values(r: Range) -> list[Any]:
    """Values that break ``r``: just outside each edge, far above, NaN, infinity, a string
    (and a fraction for an integer range)."""
    below = r.lo if r.lo_open else r.lo - 1
    out: list[Any] = [below, r.hi * 10 + 1, math.nan, math.inf, "7"]
    if r.integer:
        out = [int(below), int(r.hi * 10 + 1), 2.5, "7"]
    return out


# ---- instances ------------------------------------------------------------------------------------
Case = tuple[Callable[[dict], None], Callable[[], object]]  # (change the file's dict, build the object)


def _job0(**kw: Any) -> Case:
    def file(d: dict) -> None:
        d["jobs"][0].update(kw)

    def code() -> object:
        return INST.with_jobs((replace(INST.jobs[0], **kw),) + INST.jobs[1:])
    return file, code


def _node0(**kw: Any) -> Case:
    def file(d: dict) -> None:
        d["cluster"]["node_types"][0].update(kw)

    def code() -> object:
        return replace(INST, cluster=Cluster((replace(INST.cluster.node_types[0], **kw),)))
    return file, code


def _top(key: str, value: Any, **code_kw: Any) -> Case:
    def file(d: dict) -> None:
        d[key] = value
    return file, lambda: replace(INST, **(code_kw or {key: value}))


def _objective(v: Any) -> Case:
    def file(d: dict) -> None:
        d["objective"]["violation_weight"] = v
    return file, lambda: replace(INST, objective=ObjectiveWeights(v))


def _overhead(name: str, v: Any) -> Case:
    def file(d: dict) -> None:
        d["overheads"][name] = v
    return file, lambda: replace(INST, overheads=Overheads(**{name: v}))


def _soft(v: Any) -> Case:
    at = INST.jobs[0].deadline + 10  # type: ignore[operator]

    def file(d: dict) -> None:
        d["jobs"][0]["soft_deadlines"] = [{"at": at, "value": v}]

    def code() -> object:
        return INST.with_jobs((replace(INST.jobs[0], soft_deadlines=(SoftDeadline(at, v),)),) + INST.jobs[1:])
    return file, code


def _profile(axis: str, index: tuple[int, ...], v: Any) -> Case:
    """Job 0 given an inline profile (m5's) with one number replaced."""
    base = get_profile("m5")
    grid = {"cpu_levels": list(base.cpu_levels), "mem_levels": list(base.mem_levels), "speeds": [list(r) for r in base.speeds]}
    target = grid[axis]
    for i in index[:-1]:
        target = target[i]
    target[index[-1]] = v

    def file(d: dict) -> None:
        del d["jobs"][0]["model"]
        d["jobs"][0]["profile"] = {**copy.deepcopy(grid), "task": base.task}

    def code() -> object:
        return SensitivityProfile("j0-profile", tuple(grid["cpu_levels"]), tuple(grid["mem_levels"]),
                                  tuple(tuple(r) for r in grid["speeds"]), base.task)
    return file, code


def _range_cases() -> dict[str, Case]:
    out: dict[str, Case] = {}
    for key, r in INSTANCE.items():
        for v in _values(r):
            name = f"{key}={v!r}"
            if key == "round_minutes":
                out[name] = _top("round_minutes", v)
            elif key.startswith("cluster.node_types[]."):
                out[name] = _node0(**{key.rsplit(".", 1)[1]: v})
            elif key == "jobs[].soft_deadlines[].value":
                out[name] = _soft(v)
            elif key.startswith("jobs[]."):
                out[name] = _job0(**{key.rsplit(".", 1)[1]: v})
            elif key == "objective.violation_weight":
                out[name] = _objective(v)
            elif key.startswith("overheads."):
                out[name] = _overhead(key.split(".")[1], v)
            elif key == "profile.speeds":
                out[name] = _profile("speeds", (1, 2), v)
            elif key.startswith("profile."):
                out[name] = _profile(key.split(".")[1], (0,), v)
    return out


def _no_jobs() -> Case:
    def file(d: dict) -> None:
        d["jobs"] = []
    return file, lambda: INST.with_jobs(())


def _dup_node_type() -> Case:
    def file(d: dict) -> None:
        d["cluster"]["node_types"].append(dict(d["cluster"]["node_types"][0]))
    nt = INST.cluster.node_types[0]
    return file, lambda: replace(INST, cluster=Cluster((nt, nt)))


def _no_nodes() -> Case:
    def file(d: dict) -> None:
        d["cluster"]["node_types"] = []
    return file, lambda: replace(INST, cluster=Cluster(()))


def _dup_id() -> Case:
    def file(d: dict) -> None:
        d["jobs"][1]["id"] = "j0"
    return file, lambda: INST.with_jobs((INST.jobs[0], replace(INST.jobs[1], id="j0")) + INST.jobs[2:])


RULES: dict[str, Case] = {
    **_range_cases(),
    "empty name": _top("name", ""),
    "control character in the name": _top("name", "a\nb"),
    "name 1001 characters": _top("name", "n" * 1001),
    "name not a string": _top("name", 5),
    "empty job id": _job0(id=""),
    "job id with a tab": _job0(id="j\t0"),
    "duplicate job id": _dup_id(),
    "no jobs": _no_jobs(),
    "no node types": _no_nodes(),
    "node types of one name": _dup_node_type(),
    "node type name empty": _node0(name=""),
    "gpus a string": _job0(gpus="four"),
    "gpus 2.5": _job0(gpus=2.5),
    "gpus 0": _job0(gpus=0),
    "gpus beyond the cluster": _job0(gpus=64),
    "arrival negative": _job0(arrival=-1.0),
    "arrival infinite": _job0(arrival=math.inf),
    "arrival a string": _job0(arrival="5"),
    "work zero": _job0(work=0.0),
    "work NaN": _job0(work=math.nan),
    "work beyond the horizon": _job0(work=1e300),
    "deadline before arrival": _job0(arrival=50.0, deadline=10.0),
    "deadline infinite": _job0(deadline=math.inf),
    "deadline a string": _job0(deadline="later"),
    "best effort with soft deadlines": (lambda d: d["jobs"][0].update(deadline=None, soft_deadlines=[{"at": 500.0, "value": 0.5}]),
                                        lambda: INST.with_jobs((replace(INST.jobs[0], deadline=None,
                                                                        soft_deadlines=(SoftDeadline(500.0, 0.5),)),) + INST.jobs[1:])),
    "soft deadline before the deadline": (lambda d: d["jobs"][0].update(soft_deadlines=[{"at": 1.0, "value": 0.5}]),
                                          lambda: INST.with_jobs((replace(INST.jobs[0], soft_deadlines=(SoftDeadline(1.0, 0.5),)),)
                                                                 + INST.jobs[1:])),
    "job below its profile floor everywhere": _node0(cpus=1),
    "profile levels not increasing": _profile("cpu_levels", (1,), 0.5),
    "profile level a string": _profile("mem_levels", (0,), "x"),
    "profile speed infinite": _profile("speeds", (0, 0), math.inf),
}


def _file_error(tmp_path: Path, change: Callable[[dict], None]) -> InputError:
    d = copy.deepcopy(RAW)
    change(d)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(d))
    with pytest.raises(InputError) as e:
        load_instance(f)
    assert e.value.file == str(f)
    return e.value


def _code_error(build: Callable[[], object]) -> InputError:
    with pytest.raises(InputError) as e:
        build()
    return e.value


def _same(file_err: InputError, code_err: InputError) -> None:
    assert file_err.message == code_err.message, (str(file_err), str(code_err))
    assert file_err.field == code_err.field or file_err.field.endswith("." + code_err.field), (str(file_err), str(code_err))
    assert code_err.job in (None, file_err.job)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_an_instance_rule_gives_one_message_in_files_and_code(rule: str, tmp_path: Path) -> None:
    change, build = RULES[rule]
    _same(_file_error(tmp_path, change), _code_error(build))


def test_every_instance_range_has_its_cases() -> None:
    assert {k.split("=")[0] for k in RULES if "=" in k} == set(INSTANCE)


# ---- schedules ------------------------------------------------------------------------------------
def _good_schedule(tmp_path: Path) -> dict:
    f = tmp_path / "r.json"
    assert main(["solve", str(TINY), "--policy", "edf", "-o", str(f)]) == 0
    return json.loads(f.read_text())["schedule"]




def _schedule_rules() -> dict[str, tuple[str, Any]]:
    """(field path in segment 0, bad value) per rule: every range of SCHEDULE, and more."""
    out: dict[str, tuple[str, Any]] = {}
    for key, r in SCHEDULE.items():
        for v in _values(r):
            out[f"{key}={v!r}"] = (key.replace("[]", "[0]", 2), v)
    out["segment beyond round 10^6"] = ("segments[0].start", 999_999)
    out["no placements"] = ("segments[0].placements", [])
    out["round length 0"] = ("round_minutes", 0.0)
    out["round length a string"] = ("round_minutes", "10")
    return out


SCHEDULE_RULES = _schedule_rules()


def _set(d: dict, path: str, v: Any) -> None:
    parts = path.replace("]", "").replace("[", ".").split(".")
    target: Any = d
    for p in parts[:-1]:
        target = target[int(p)] if p.isdigit() else target[p]
    target[parts[-1]] = v


def _schedule_object(d: dict) -> Schedule:
    """The Schedule a schedule dict stands for, built in code (nodes by index)."""
    names = [n.name for n in INST.cluster.nodes]
    segs = [Segment(s["job"], s["start"], s["rounds"], tuple(Placement(names.index(p["node"]), p["gpus"], p["cpus"], p["mem_gb"])
                                                            for p in s["placements"]))
            for s in d["segments"]]
    return Schedule(tuple(segs), d["round_minutes"])


@pytest.mark.parametrize("rule", sorted(SCHEDULE_RULES))
def test_a_schedule_rule_gives_one_message_in_files_and_code(rule: str, tmp_path: Path) -> None:
    path, v = SCHEDULE_RULES[rule]
    d = _good_schedule(tmp_path)
    _set(d, path, v)
    if rule == "segment beyond round 10^6":
        _set(d, "segments[0].rounds", 5)
    f = tmp_path / "s.json"
    f.write_text(json.dumps(d))
    with pytest.raises(InputError) as fe:
        load_schedule(f, INST)
    code_err = _code_error(lambda: _schedule_object(d))
    _same(fe.value, code_err)
    assert fe.value.field == code_err.field and code_err.file == "schedule"


# ---- results --------------------------------------------------------------------------------------
def _good_result(tmp_path: Path) -> dict:
    f = tmp_path / "r.json"
    assert main(["solve", str(TINY), "--policy", "edf", "-o", str(f)]) == 0
    return json.loads(f.read_text())


RESULT_RULES: dict[str, Callable[[dict], None]] = {
    "no solver": lambda d: d.pop("solver"),
    "no status": lambda d: d.pop("status"),
    "unknown status": lambda d: d.update(status="DONE"),
    "objective a string": lambda d: d.update(objective="12"),
    "objective NaN": lambda d: d.update(objective=math.nan),
    "bound infinite": lambda d: d.update(bound=-math.inf),
    "runtime negative": lambda d: d.update(runtime_s=-1.0),
    "metrics a list": lambda d: d.update(metrics=[1]),
    "metrics field missing": lambda d: d["metrics"].pop("avg_jct"),
    "metrics field unknown": lambda d: d["metrics"].update(colour=1),
    "metrics field a string": lambda d: d["metrics"].update(makespan="long"),
    "FEASIBLE without an objective": lambda d: d.update(objective=None),
    "params a list": lambda d: d.update(params=[]),
    "solver a number": lambda d: d.update(solver=7),
    "schedule a list": lambda d: d.update(schedule=[]),
    "schedule start negative": lambda d: d["schedule"]["segments"][0].update(start=-1),
}


@pytest.mark.parametrize("rule", sorted(RESULT_RULES))
def test_a_result_rule_gives_one_message_in_files_and_code(rule: str, tmp_path: Path) -> None:
    d = _good_result(tmp_path)
    RESULT_RULES[rule](d)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(d))
    with pytest.raises(InputError) as fe:
        load_result(f, INST)
    code_err = _code_error(lambda: Result.from_dict(copy.deepcopy(d), INST))
    _same(fe.value, code_err)
    assert fe.value.field == code_err.field and fe.value.file == str(f)
    with pytest.raises(InputError) as ve:  # validate and plot read a result file's schedule by the same rules
        load_schedule(f, INST)
    assert str(ve.value) == str(fe.value)


@pytest.mark.parametrize("status", ["TIME_LIMIT", "INFEASIBLE", "ERROR"])
def test_a_result_without_a_schedule_is_read_and_every_command_says_so(status: str, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A result whose status says it has no solution (TIME_LIMIT without an incumbent,
    INFEASIBLE, ERROR): read as a Result; `validate` and `plot` of it give one line, exit 2."""
    d = _good_result(tmp_path)
    d.update(status=status, objective=None, metrics=None, schedule=None)
    f = tmp_path / "r.json"
    f.write_text(json.dumps(d))
    res = load_result(f, INST)
    assert res.status.value == status and res.schedule is None and res.objective is None
    capsys.readouterr()
    line = f"error: {f}: schedule: the result holds no schedule to read: its status {status} comes without a solution"
    assert main(["validate", str(TINY), str(f)]) == 2
    assert capsys.readouterr().err.splitlines() == [line]
    assert main(["plot", str(f), "--instance", str(TINY), "-o", str(tmp_path / "g.png")]) == 2
    assert capsys.readouterr().err.splitlines() == [line]
    assert not (tmp_path / "g.png").exists()


def test_a_result_written_without_its_schedule_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _good_result(tmp_path)
    d["schedule"] = None  # Result.to_dict without the instance
    f = tmp_path / "r.json"
    f.write_text(json.dumps(d))
    assert main(["validate", str(TINY), str(f)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {f}: schedule: the result holds no schedule to read: it was written without its schedule (status FEASIBLE)")


def test_the_cli_line_is_the_readers_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One rule of each kind through the CLI: the line is the reader's message."""
    change, build = RULES["gpus a string"]
    err = _file_error(tmp_path, change)
    assert main(["solve", err.file, "--policy", "edf"]) == 2
    assert capsys.readouterr().err == f"error: {err}\n"
    assert str(_code_error(build)) == "Job: gpus (job j0): must be an integer, got 'four'"
    assert str(err) == f"{err.file}: jobs[0].gpus (job j0): must be an integer, got 'four'"
