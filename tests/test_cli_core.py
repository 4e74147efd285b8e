"""The CLI: solve/validate/generate/schema, and one-line errors with exit code 2."""

import json
import os
import subprocess
import sys

import pytest

from sensaopt.cli import main
from sensaopt.io import instance_schema, instance_to_dict, load_instance

from .conftest import PROOF_S, REPO
PROOF = str(PROOF_S)  # the --time-limit of a command expected to prove (tests/conftest.py)


TINY = REPO / "instances" / "tiny-8gpu.json"
TINY16 = REPO / "instances" / "tiny-16gpu.json"  # proven over every allocation in seconds (the allocation check, issue 24)


def run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_solve_json_has_the_documented_keys(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    code, out, err = run(["solve", TINY, "--solver", "heuristic", "--policy", "edf", "--json", "-o", out_file], capsys)
    assert code == 0
    d = json.loads(out)
    assert {"solver", "status", "objective", "bound", "runtime_s", "metrics", "schedule"} <= set(d)
    assert {"slo_violations", "slo_violation_rate", "avg_jct", "avg_queueing_time", "makespan"} <= set(d["metrics"])
    assert d["status"] == "FEASIBLE" and d["bound"] is None and d["solver"] == "heuristic:edf"
    assert json.loads(out_file.read_text())["objective"] == d["objective"]
    code, out, _ = run(["validate", TINY, out_file], capsys)
    assert code == 0 and out.startswith("valid:")


def test_generate_is_seeded(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for f in (a, b):
        assert run(["generate", "-o", f, "--jobs", "7", "--seed", "3"], capsys)[0] == 0
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert da["jobs"] == db["jobs"] and len(da["jobs"]) == 7
    cmd = da["provenance"]["command"].split()
    assert cmd[:2] == ["sensaopt", "generate"]
    c = tmp_path / "c.json"
    cmd[cmd.index("--output") + 1] = str(c)
    assert run(cmd[1:], capsys)[0] == 0  # the recorded command reproduces the instance
    assert json.loads(c.read_text())["jobs"] == da["jobs"]


def test_schema_matches_code(capsys):
    code, out, _ = run(["schema"], capsys)
    assert code == 0 and json.loads(out) == instance_schema()


def test_instance_round_trip(tmp_path):
    inst = load_instance(TINY)
    p = tmp_path / "x.json"
    p.write_text(json.dumps(instance_to_dict(inst)))
    assert load_instance(p).jobs == inst.jobs


def mutate(fn):
    d = json.loads(TINY.read_text())
    fn(d)
    return d


def set_job(k, **kw):
    return lambda d: d["jobs"][k].update(kw)


BAD = {
    "malformed": ("{ not json", "line 1 column 3", None),
    "unknown field": (mutate(lambda d: d.update(colour="red")), "colour: unknown field", None),
    "missing field": (mutate(lambda d: d["jobs"][1].pop("work")), "jobs[1].work", "j1"),
    "wrong type": (mutate(set_job(0, gpus="four")), "jobs[0].gpus", "j0"),
    "negative": (mutate(set_job(2, work=-5)), "jobs[2].work", "j2"),
    "nan": ('{"x": NaN}', None, None),
    "infinite arrival": (mutate(set_job(1, arrival=float("inf"))), "jobs[1].arrival", "j1"),
    "zero gpus": (mutate(set_job(3, gpus=0)), "jobs[3].gpus", "j3"),
    "deadline before arrival": (mutate(set_job(2, deadline=1.0)), "jobs[2].deadline", "j2"),
    "too many gpus": (mutate(set_job(0, gpus=64)), "jobs[0].gpus", "j0"),
    "unknown model": (mutate(set_job(1, model="gpt9")), "jobs[1].model", "j1"),
    "duplicate id": (mutate(set_job(1, id="j0")), "jobs[1].id", "j0"),
    "empty jobs": (mutate(lambda d: d.update(jobs=[])), "jobs", None),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_instance_gives_one_line_and_exit_2(case, tmp_path):
    content, field, job = BAD[case]
    f = tmp_path / "bad.json"
    if case == "nan":
        content = json.dumps(mutate(set_job(0, work=float("nan"))))
        field, job = "jobs[0].work", "j0"
    f.write_text(content if isinstance(content, str) else json.dumps(content))
    out_file = tmp_path / "out.json"
    p = subprocess.run([sys.executable, "-m", "sensaopt", "solve", str(f), "--json", "-o", str(out_file)], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert str(f) in lines[0]
    if field:
        assert field in lines[0]
    if job:
        assert f"job {job}" in lines[0]
    assert p.stdout == "" and not out_file.exists()


def test_schedule_naming_unknown_job(tmp_path, capsys):
    sched = {"format_version": 1, "round_minutes": 10, "segments": [{"job": "ghost", "start": 0, "rounds": 1, "placements": [{"node": "node-0", "gpus": 1, "cpus": 3, "mem_gb": 62.5}]}]}
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sched))
    code, out, err = run(["validate", TINY, f], capsys)
    assert code == 2 and "segments[0].job (job ghost)" in err and len(err.strip().splitlines()) == 1


def test_invalid_schedule_lists_rules(tmp_path, capsys):
    sched = {"format_version": 1, "round_minutes": 10, "segments": [{"job": "j0", "start": 0, "rounds": 1, "placements": [{"node": "node-0", "gpus": 4, "cpus": 12, "mem_gb": 250}]}]}
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sched))
    code, out, _ = run(["validate", TINY, f], capsys)
    assert code == 1 and "[incomplete]" in out


def test_unknown_policy_is_a_clean_error(capsys):
    code, out, err = run(["solve", TINY, "--policy", "magic"], capsys)
    assert code == 2 and "unknown policy 'magic'" in err


def test_version(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("sensaopt ")


@pytest.mark.parametrize("args", [["--policy", "chronus"], ["--solver", "milp", "--time-limit", PROOF]], ids=["chronus", "milp"])
def test_json_stdout_is_clean_of_solver_banners(args):
    # highspy prints a banner from C++ when a solver object is built
    p = subprocess.run([sys.executable, "-m", "sensaopt", "solve", str(TINY16), "--json", *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] in ("FEASIBLE", "OPTIMAL")


USAGE_ERRORS = {
    "misspelt option": (["solve", str(TINY), "--polcy", "edf"], "--polcy"),
    "missing argument": (["solve"], "instance"),
    "misspelt command": (["solv"], "solv"),
    "missing required option": (["generate", "--jobs", "10"], "--output"),
    "time limit zero": (["solve", str(TINY), "--solver", "cpsat", "--time-limit", "0"], "--time-limit"),
    "no workers": (["solve", str(TINY), "--solver", "cpsat", "--workers", "0"], "--workers"),
    "sweep without workers": (["sweep", "--out-dir", "/nonexistent", "--workers", "0"], "--workers"),
    "gap negative time limit": (["gap", str(TINY), "--time-limit", "-1"], "--time-limit"),
    "unknown knob": (["solve", str(TINY), "--set", "nope=1"], "nope"),
    "bad knob value": (["solve", str(TINY), "--set", "urgency_levels=1.5"], "urgency_levels"),
    "knob for another policy": (["solve", str(TINY), "--policy", "edf", "--set", "backfill=none"], "backfill"),
    "not key=value": (["solve", str(TINY), "--set", "backfill"], "key=value"),
    "time limit with the heuristic": (["solve", str(TINY), "--time-limit", "5"], "--time-limit"),
    "workers with the heuristic": (["solve", str(TINY), "--policy", "edf", "--workers", "2"], "--workers"),
    "weighted with the heuristic": (["solve", str(TINY), "--weighted"], "--weighted"),
    "branch and price with the heuristic": (["solve", str(TINY), "--branch-price"], "--branch-price"),
    "cooperate with the heuristic": (["solve", str(TINY), "--policy", "edf", "--cooperate"], "--cooperate"),
}


@pytest.mark.parametrize("command", ["solve", "gap", "simulate", "sweep", "plot", "data fetch"])
def test_help_shows_flags_as_flags(command):
    """A flag takes no value: its help line must not show one (typer's rich help printed
    '--json <bool>'); options that take a value show it."""
    p = subprocess.run([sys.executable, "-m", "sensaopt", *command.split(), "--help"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    assert "<bool>" not in p.stdout and "Usage: sensaopt" in p.stdout
    flags = [line.split()[0] for line in p.stdout.splitlines() if line.strip().startswith("--help")]
    assert flags == ["--help"]


@pytest.mark.parametrize("case", sorted(USAGE_ERRORS))
def test_usage_errors_give_one_line_and_exit_2(case):
    args, needle = USAGE_ERRORS[case]
    p = subprocess.run([sys.executable, "-m", "sensaopt", *args], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert needle.lower() in lines[0].lower() and p.stdout == ""


def test_set_changes_the_policy_config_and_reaches_params(capsys):
    code, out, _ = run(["solve", TINY, "--json", "--set", "backfill=none", "--set", "pairing=false", "--set", "urgency_levels=4"], capsys)
    assert code == 0
    cfg = json.loads(out)["params"]["config"]
    assert cfg["backfill"] == "none" and cfg["pairing"] is False and cfg["urgency_levels"] == 4
    stats = json.loads(out)["params"]["policy_stats"]
    assert stats["pairs"] == 0 and stats["rounds"] == json.loads(out)["params"]["rounds_decided"]


def test_solve_picks_cbc_by_name(capsys):
    code, out, _ = run(["solve", TINY16, "--solver", "cbc", "--time-limit", PROOF, "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["solver"].endswith("cbc") and d["status"] == "OPTIMAL"


def test_registry_lists_known_names_on_a_miss():
    from sensaopt.registry import Registry
    from sensaopt.solve import SOLVERS
    from sensaopt.traces.presets import PRESETS
    from sensaopt.traces.sources import SOURCES

    assert {"cbc", "highs", "cpsat", "milp", "heuristic"} <= set(SOLVERS.names())
    assert "philly-8" in PRESETS and "synthetic" in SOURCES
    reg: Registry[int] = Registry("thing", {"a": 1, "lazy": "math:pi"})
    assert reg.get("a") == 1 and abs(reg.get("lazy") - 3.14159) < 1e-5
    with pytest.raises(KeyError, match="unknown thing 'b'; known: a, lazy"):
        reg.get("b")
