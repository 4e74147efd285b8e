"""A researcher's own policy and trace from the command line, without editing sensaopt:
a tiny external package installed with pip (offline: ``--no-index --no-deps
--no-build-isolation`` into a temporary target folder) whose policy is reached by its
entry point (group ``sensaopt.policies``) and by ``--policy package.module:Class``; a CSV
in another layout read through ``--columns``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sensaopt.errors import InputError
from sensaopt.registry import Registry, is_import_path
from sensaopt.traces.mapped import parse_columns
from sensaopt.traces.sources import make_trace

REPO = Path(__file__).resolve().parents[1]

POLICY_SOURCE = '''
from sensaopt.policies import BasePolicy
from sensaopt.policies.placement import NodePool


class SmallestFirst(BasePolicy):
    """Fewest GPUs first, each job at its GPU-proportional share of cores and memory."""

    name = "smallest-first"

    def decide(self, state):
        pool = NodePool(state.cluster)
        out = {}
        for js in sorted(state.jobs, key=lambda js: (js.gpus, js.spec.arrival, js.id)):
            pl = pool.place_proportional(js.gpus, js.placements if state.was_running(js) else None)
            if pl is not None:
                pool.take(pl)
                out[js.id] = pl
        return out


def demo_jobs(q):
    """A named trace source: six jobs, 10 minutes apart (the window and limit of the request applied)."""
    from sensaopt.traces.trace import TraceData, TraceJob, window

    jobs = [TraceJob(f"d{k}", 10.0 * k, 1 + k % 2, 30.0) for k in range(6)]
    return window(TraceData("demo-jobs", "sensaopt_demo_policy", jobs, has_deadlines=False), q.start, q.days, q.limit)
'''
PYPROJECT = '''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "sensaopt-demo-policy"
version = "0.1"

[project.entry-points."sensaopt.policies"]
smallest-first = "sensaopt_demo_policy:SmallestFirst"
fifo = "sensaopt_demo_policy:SmallestFirst"  # a built-in name: the built-in wins

[project.entry-points."sensaopt.trace_sources"]
demo-jobs = "sensaopt_demo_policy:demo_jobs"
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo package installed by pip into a folder of its own (on PYTHONPATH in the subprocesses)."""
    pytest.importorskip("setuptools", reason="building the demo package needs setuptools (no build isolation: offline)")
    root = tmp_path_factory.mktemp("plugin")
    src = root / "src"
    (src / "sensaopt_demo_policy").mkdir(parents=True)
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "sensaopt_demo_policy" / "__init__.py").write_text(POLICY_SOURCE)
    target = root / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                        "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (target / "sensaopt_demo_policy" / "__init__.py").is_file()
    return target


def cli(*args: str, site: Path | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command with the demo package's folder ``site`` on its path (a fresh interpreter,
    as a user runs it), or, without one, in this process (every path given absolute)."""
    if site is None:
        import contextlib
        import io

        from sensaopt.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
    path = os.pathsep.join([str(site), str(REPO), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "sensaopt", *args], env={**os.environ, "PYTHONPATH": path}, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_an_installed_policy_runs_through_simulate_by_entry_point_and_by_import_path(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim"
    r = cli("simulate", "--trace", "synthetic", "--jobs", "12", "--preset", "2x8", "--policy", "smallest-first",
            "--policy", "sensaopt_demo_policy:SmallestFirst", "--policy", "fifo", "--out-dir", str(out), site=site, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split(":")[1] for ln in lines] == ["smallest-first", "smallest-first", "fifo"]  # the classes' names
    outcome = [ln.split(":", 2)[2].rsplit(", ", 1)[0] for ln in lines]  # without the run time
    assert outcome[0] == outcome[1]  # the same class both ways: the same run
    assert outcome[2] != outcome[0]  # the entry point named fifo did not replace the built-in
    files = sorted(p.name for p in out.iterdir())
    assert files == ["fifo.jobs.csv", "fifo.summary.json", "sensaopt_demo_policy-SmallestFirst.jobs.csv",
                     "sensaopt_demo_policy-SmallestFirst.summary.json", "smallest-first.jobs.csv", "smallest-first.summary.json"]
    summary = json.loads((out / "smallest-first.summary.json").read_text())
    assert summary["metrics"]["jobs"] == 12


def test_a_policy_that_cannot_be_found_is_one_line(tmp_path: Path) -> None:
    for spec, msg in (("no_such_pkg.mod:Cls", "error: policy 'no_such_pkg.mod:Cls': no module named 'no_such_pkg' "
                                                "(is the package installed?)"),
                      ("sensaopt.policies.simple:Nope", "error: policy 'sensaopt.policies.simple:Nope': module "
                                                        "'sensaopt.policies.simple' has no 'Nope'"),
                      ("sensaopt.policies.simple:proportional_share", "error: policy "
                                                                      "'sensaopt.policies.simple:proportional_share': function object "
                                                                      "is not a class")):
        r = cli("sweep", "--trace", "synthetic", "--policy", spec, "--out-dir", str(tmp_path / "st"), "--serial", site=None, cwd=tmp_path)
        assert r.returncode == 2 and r.stderr.strip() == msg, r.stderr
        assert not (tmp_path / "st").exists()


def test_registry_reads_entry_points_once_and_builtins_win(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    calls: list[str] = []

    def fake(group: str) -> list[metadata.EntryPoint]:
        calls.append(group)
        return [metadata.EntryPoint("mine", "json:dumps", group), metadata.EntryPoint("old", "json:loads", group)]

    monkeypatch.setattr(metadata, "entry_points", fake)
    reg: Registry[object] = Registry("thing", {"old": "os.path:join"}, entry_points="demo.group")
    assert calls == []  # nothing read before first use
    assert reg.names() == ["mine", "old"] and reg.get("mine") is json.dumps and reg.get("old") is os.path.join
    assert calls == ["demo.group"]
    with pytest.raises(KeyError) as e:
        reg.get("json:dumps")  # import paths only where the registry allows them
    assert e.value.args == ("unknown thing 'json:dumps'; known: mine, old",)
    assert is_import_path("a.b:C") and is_import_path("a:C.d") and not is_import_path("a.b") and not is_import_path("a b:C")


# ---- a trace in another layout ------------------------------------------------------------------------
CSV = "jid,submitted,ngpu,hours,due\na,2020-06-09 18:00:00,1,1.5,\nb,2020-06-09 18:10:00,2,0.5,2020-06-09 20:10:00\n" \
      "c,2020-06-09 18:15:00,0,1,\nd,2020-06-09 18:20:00,4,2,2020-06-10 18:20:00\ne,2020-06-09 18:30:00,1,0,\n"


@pytest.fixture
def trace(tmp_path: Path) -> Iterator[Path]:
    p = tmp_path / "jobs.csv"
    p.write_text(CSV)
    yield p


def test_columns_map_a_csv_in_another_layout(trace: Path) -> None:
    d = make_trace(str(trace), columns="id=jid, arrival=submitted:datetime, gpus=ngpu, work=hours:h, deadline=due:datetime")
    assert [(j.id, j.arrival, j.gpus, j.work, j.deadline) for j in d.jobs] == [
        ("a", 0.0, 1, 90.0, None), ("b", 10.0, 2, 30.0, 130.0), ("d", 20.0, 4, 120.0, 1460.0)]
    assert d.has_deadlines and d.skipped == {"no_gpu": 1, "zero_duration": 1}


def test_columns_with_relative_deadlines_and_seconds(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text("t,g,run,slack\n600,1,3600,7200\n0,8,60,\n")
    d = make_trace(str(p), columns="arrival=t:s,gpus=g,work=run:s,deadline_after=slack:s")
    got = [(j.id, j.arrival, j.gpus, j.work, j.deadline) for j in d.jobs]
    assert got == [("line3", 0.0, 8, 1.0, None), ("line2", 10.0, 1, 60.0, 130.0)]


@pytest.mark.parametrize("spec, msg", [
    ("arrival=t,gpus=g", "--columns: arrival=t,gpus=g: no column for work (required: arrival, gpus, work)"),
    ("arrival=t:days,gpus=g,work=w", "--columns: arrival=t:days: unit 'days' of arrival is not one of min, s, h, datetime"),
    ("arrival=t,gpus=g,work=w,size=x",
     "--columns: size=x: unknown field 'size' (fields: arrival, gpus, work, deadline, deadline_after, id)"),
    ("arrival=t,gpus=g,work=w,gpus=h", "--columns: gpus=h: gpus is mapped twice"),
    ("arrival t,gpus=g,work=w", "--columns: arrival t: expected FIELD=COLUMN[:UNIT]"),
    ("arrival=t:datetime,gpus=g,work=w,deadline=d:s", "deadline must be a datetime when arrival is (the same clock)"),
])
def test_a_bad_mapping_is_one_line(spec: str, msg: str) -> None:
    with pytest.raises(InputError) as e:
        parse_columns(spec)
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_a_bad_row_names_file_line_field_and_job(tmp_path: Path) -> None:
    p = tmp_path / "bad.csv"
    p.write_text("t,g,run\n0,1,10\n5,two,10\n")
    with pytest.raises(InputError, match=r"bad\.csv: line 3: g .*not an integer: 'two'"):
        make_trace(str(p), columns="arrival=t,gpus=g,work=run")
    assert len(make_trace(str(p), columns="arrival=t,gpus=g,work=run", on_error="skip").jobs) == 1


def test_cli_simulate_with_columns(trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    mapping = "id=jid,arrival=submitted:datetime,gpus=ngpu,work=hours:h,deadline=due:datetime"
    r = cli("simulate", "--trace", str(trace), "--columns", mapping,
            "--preset", "2x8", "--policy", "edf", "--out-dir", str(out), site=None, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "3 jobs on 2 nodes / 16 GPUs (skipped: no_gpu 1, zero_duration 1)" in r.stderr
    r = cli("simulate", "--trace", str(trace), "--preset", "2x8", "--policy", "edf", "--out-dir", str(tmp_path / "o2"), site=None, cwd=tmp_path)
    assert r.returncode == 2 and "map its columns with --columns arrival=COL,gpus=COL,work=COL" in r.stderr
    assert not (tmp_path / "o2").exists()


def test_cli_instances_from_trace_with_columns(tmp_path: Path) -> None:
    p = tmp_path / "jobs.csv"
    p.write_text("t,g,run\n" + "".join(f"{60 * k},{1 + k % 2},{30 + k}\n" for k in range(16)))
    r = cli("instances", "from-trace", "--trace", str(p), "--columns", "arrival=t:s,gpus=g,work=run", "--jobs", "8", "--count", "2",
            "--out-dir", str(tmp_path / "w"), site=None, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    inst = json.loads((tmp_path / "w" / "jobs-w1.json").read_text())
    assert [j["work"] for j in inst["jobs"]] == [float(30 + k) for k in range(8, 16)]


def test_an_installed_trace_source_is_a_trace_name(site: Path, tmp_path: Path) -> None:
    r = cli("simulate", "--trace", "demo-jobs", "--limit", "4", "--preset", "1x8", "--policy", "smallest-first", "--out-dir", str(tmp_path / "o"),
            site=site, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "demo-jobs@1x8: 4 jobs on 1 nodes / 8 GPUs" in r.stderr


def test_an_import_path_that_fails_is_not_remembered() -> None:
    from sensaopt.policies import POLICIES, policy_class, policy_names

    with pytest.raises(KeyError):
        policy_class("no_such_pkg.mod:Cls")
    assert "no_such_pkg.mod:Cls" not in policy_names()
    assert policy_class("sensaopt.policies.simple:EDFPolicy").name == "edf"
    assert "sensaopt.policies.simple:EDFPolicy" in POLICIES
