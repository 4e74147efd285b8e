"""The committed paper tables (results/*/) still match the command that made them.

Each results folder holds provenance.json (the ``experiment paper`` arguments and the config
key of every planned run), runs.csv (one row per run) and table.csv (one row per cell). The
test checks that the rows parse and agree with the provenance, and that the recorded command,
replayed today with ``--report-only`` (nothing runs), plans exactly the same config keys
(:meth:`sensaopt.sweep.RunConfig.key`): a change to a run's configuration, to the plan or to
the key fails it. It checks no figure (the numbers depend on the code that ran)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from sensaopt.sweep.paper import (
    LEGACY_RUN_COLUMNS,
    LEGACY_SETTINGS,
    METRIC_NAMES,
    PRE_BOUNDS_RUN_COLUMNS,
    RESULT_FILES,
    RUN_COLUMNS,
    legacy_args,
    replay_args,
)

RESULTS = Path(__file__).resolve().parents[1] / "results"


def result_dirs() -> list[Path]:
    """The ``experiment paper`` folders (``experiment gaps`` folders: tests/test_experiment_gaps.py; the
    benchmark folders, whose provenance has no CLI ``args``: tests/test_benchmark_results.py)."""
    return sorted(p.parent for p in RESULTS.glob("*/provenance.json") if json.loads(p.read_text()).get("args", [])[:2] == ["experiment", "paper"])


@pytest.fixture(params=result_dirs() or [None], ids=lambda p: p.name if p else "none")
def result_dir(request) -> Path:
    if request.param is None:
        pytest.skip("results/ has no paper table yet (make one with `sensaopt experiment paper ... --results results/NAME`)")
    return request.param


def _num(text: str) -> float | None:
    return None if text == "" else float(text)


def test_rows_parse_and_agree_with_provenance(result_dir: Path) -> None:
    for name in RESULT_FILES:
        assert (result_dir / name).is_file(), f"{result_dir.name}: {name} missing"
    prov = json.loads((result_dir / "provenance.json").read_text())
    plan = {r["key"]: r for r in prov["runs"]}
    assert len(plan) == len(prov["runs"]) == prov["runs_total"]
    with open(result_dir / "runs.csv", newline="") as f:
        reader = csv.DictReader(f)
        # legacy: before node shapes and servable jobs, or before the bound columns
        assert tuple(reader.fieldnames or ()) in (RUN_COLUMNS, PRE_BOUNDS_RUN_COLUMNS, LEGACY_RUN_COLUMNS)
        rows = list(reader)
    assert rows, f"{result_dir.name}: runs.csv has no run"
    for r in rows:
        assert re.fullmatch(r"[0-9a-f]{20}", r["key"]), r["key"]
        p = plan[r["key"]]  # every tabulated run is a planned run of the recorded command
        assert (r["workload"], int(r["node_gpus"]), r["policy"], int(r["seed"]), r["preset"]) == (
            p["workload"], p["node_gpus"], p["policy"], p["seed"], p["preset"])
        assert p["status"] in ("computed", "reused")
        assert int(r["jobs"]) > 0
        for k in METRIC_NAMES + ("simulate_s",):
            _num(r.get(k, ""))  # a number or empty (or absent from a legacy table)
    assert {r["key"] for r in rows} == {k for k, p in plan.items() if p["status"] in ("computed", "reused")}
    with open(result_dir / "table.csv", newline="") as f:
        cells = list(csv.DictReader(f))
    assert {(c["workload"], int(c["node_gpus"]), c["policy"]) for c in cells} == {
        (r["workload"], int(r["node_gpus"]), r["policy"]) for r in rows}
    for c in cells:
        assert int(c["seeds"]) >= 1
        for k in METRIC_NAMES:
            _num(c.get(k, "")), _num(c.get(f"{k}_lo", "")), _num(c.get(f"{k}_hi", ""))


def test_recorded_command_plans_the_same_config_keys(result_dir: Path, tmp_path: Path) -> None:
    from sensaopt.cli import main

    prov = json.loads((result_dir / "provenance.json").read_text())
    args = replay_args(prov["args"])  # recorded with -o before the output folder was --out-dir
    assert args[:2] == ["experiment", "paper"]
    for opt, sub in (("--out-dir", tmp_path / "out"), ("--results", tmp_path / "res")):
        args[args.index(opt) + 1] = str(sub)
    # settings added after the command was recorded take the value that reproduces what it did
    assert main([*args, *legacy_args(prov["settings"]), "--report-only", "-q"]) == 0
    today = json.loads((tmp_path / "res" / "provenance.json").read_text())
    assert [r["key"] for r in today["runs"]] == [r["key"] for r in prov["runs"]], (
        f"{result_dir.name}: the recorded command now plans other run configurations; re-run it (provenance.json 'command')")
    assert {k: today["settings"][k] for k in prov["settings"]} == prov["settings"]
    assert {k: v for k, v in today["settings"].items() if k not in prov["settings"]} == {
        k: v for k, v in LEGACY_SETTINGS.items() if k not in prov["settings"]}


@pytest.mark.parametrize("recorded, today", [
    (["experiment", "paper", "-o", "/work/paper-out-2", "--scale", "0.1"], ["experiment", "paper", "--out-dir", "/work/paper-out-2",
                                                                             "--scale", "0.1"]),
    (["experiment", "paper", "--output=out", "--seeds", "1"], ["experiment", "paper", "--out-dir=out", "--seeds", "1"]),
    (["experiment", "paper", "--out-dir", "o", "--results", "r"], ["experiment", "paper", "--out-dir", "o", "--results", "r"]),
])
def test_recorded_output_flag_is_replayed_as_out_dir(recorded: list[str], today: list[str]) -> None:
    assert replay_args(recorded) == today


def test_the_old_output_flag_is_refused_naming_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sensaopt.cli import main

    assert main(["experiment", "paper", "-o", str(tmp_path / "o"), "--report-only", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out-dir DIR" in err[0], err
    assert not (tmp_path / "o").exists()
