"""`sensaopt export` -> an external solver -> `sensaopt import-solution`: HiGHS (highspy,
the solver the project already depends on) solves the exported MPS/LP file as an outside
user would and writes its `.sol`; the schedule read back is validated and scored like
sensaopt's own. The CBC, SCIP and Gurobi readers get the same solution rewritten in their
formats."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from sensaopt.errors import InputError
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance, load_schedule, save_instance
from sensaopt.metrics import compute_metrics
from sensaopt.roundtrip import import_solution, sidecar_path
from sensaopt.solution_files import detect, read_solution
from sensaopt.validator import check_schedule

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command run in this process (every path given absolute), its exit code and output."""
    from sensaopt.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def highs_solve(model: Path, solution: Path) -> float:
    """Solve ``model`` with HiGHS to a proven optimum and write its raw ``.sol``; the file objective."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("threads", 1)
    assert h.readModel(str(model)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    h.writeSolution(str(solution), 0)
    return float(h.getInfo().objective_function_value)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(instance, model.mps, its HiGHS solution) of a 4-job instance on one node."""
    d = tmp_path_factory.mktemp("roundtrip")
    inst = d / "inst.json"
    save_instance(generate(GeneratorConfig(jobs=4, nodes=1, seed=3)), inst)
    r = cli("export", str(inst), "-o", str(d / "model.mps"), cwd=d)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {d / 'model.mps'} (sidecar {d / 'model.mps.json'}): ")
    highs_solve(d / "model.mps", d / "model.sol")
    return inst, d / "model.mps", d / "model.sol"


def test_the_objective_scale_and_offset_are_in_the_file_and_the_sidecar(exported: tuple[Path, Path, Path]) -> None:
    _, model, _ = exported
    side = json.loads(sidecar_path(model).read_text())
    head = model.read_text().splitlines()[:4]
    assert head[0] == (f"* sensaopt: model objective (minutes) = file objective / {side['objective_scale']!r} + "
                       f"{side['objective_offset_minutes']!r}")
    assert head[1:3] == [f"* sensaopt: objective_scale {side['objective_scale']!r}",
                         f"* sensaopt: objective_offset_minutes {side['objective_offset_minutes']!r}"]
    assert side["variables"] == sum(1 for _ in side["placements"]) + sum(  # every x_ variable is described
        1 for n in _mps_columns(model) if not n.startswith("x_"))
    assert all(n.startswith("x_") for n in side["placements"])


def _mps_columns(model: Path) -> set[str]:
    names, on = set(), False
    for line in model.read_text().splitlines():
        if line.startswith(("COLUMNS", "RHS", "BOUNDS", "RANGES", "ENDATA")):
            on = line.startswith("COLUMNS")
        elif on and line.split() and line.split()[0] != "MARKER" and "'MARKER'" not in line:
            names.add(line.split()[0])
    return names


def test_a_highs_solution_imports_as_the_valid_optimal_schedule(exported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    inst_path, model, sol = exported
    got = import_solution(model, sol)
    assert got.solution.format == "highs" and got.solution.status == "Optimal" and got.evaluation.ok
    m = compute_metrics(got.instance, got.evaluation)
    assert m.finished == 4
    # the file's objective, unscaled with the stored scale and offset, is the validator's objective of the schedule
    assert got.file_objective_minutes == pytest.approx(m.objective, abs=1e-6)
    out = tmp_path / "schedule.json"
    r = cli("import-solution", str(model), str(sol), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{out}: valid (highs solution, Optimal): 4 jobs finished, {m.slo_violations} SLO violations")
    inst = load_instance(inst_path)
    assert check_schedule(inst, load_schedule(out, inst)).ok
    r = cli("validate", str(inst_path), str(out), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("valid: 4 jobs finished"), r.stderr


def test_the_lp_format_round_trips_too(tmp_path: Path) -> None:
    inst = tmp_path / "inst.json"
    save_instance(generate(GeneratorConfig(jobs=3, nodes=1, seed=5)), inst)
    r = cli("export", str(inst), "--format", "lp", "-o", str(tmp_path / "m.lp"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.lp").read_text().startswith("\\ sensaopt: model objective (minutes) = file objective / ")
    highs_solve(tmp_path / "m.lp", tmp_path / "m.sol")
    got = import_solution(tmp_path / "m.lp", tmp_path / "m.sol")
    assert got.evaluation.ok and got.file_objective_minutes == pytest.approx(compute_metrics(got.instance, got.evaluation).objective)


def _rewrite(sol: Path, fmt: str, dest: Path) -> Path:
    """The HiGHS solution in another solver's format (SCIP and Gurobi: zeros left out, as they write them)."""
    s = read_solution(sol)
    nz = {k: v for k, v in s.values.items() if v != 0}
    if fmt == "cbc":
        rows = "".join(f"{i:7d} {k:<20} {v:>15g} 0\n" for i, (k, v) in enumerate(s.values.items()))
        text = f"Optimal - objective value {s.objective}\n" + rows
    elif fmt == "scip":
        text = (f"solution status: optimal solution found\nobjective value:                 {s.objective}\n"
                + "".join(f"{k:<40} {v:>20g} \t(obj:0)\n" for k, v in nz.items()))
    else:
        text = f"# Solution for model m\n# Objective value = {s.objective}\n" + "".join(f"{k} {v:g}\n" for k, v in nz.items())
    dest.write_text(text)
    return dest


@pytest.mark.parametrize("fmt", ["cbc", "scip", "gurobi"])
def test_cbc_scip_and_gurobi_solution_files_give_the_same_schedule(exported: tuple[Path, Path, Path], tmp_path: Path, fmt: str) -> None:
    _, model, sol = exported
    other = _rewrite(sol, fmt, tmp_path / f"m.{fmt}.sol")
    assert detect(other.read_text()) == fmt
    a, b = import_solution(model, sol), import_solution(model, other)
    assert b.solution.format == fmt and b.evaluation.ok and b.schedule == a.schedule
    assert b.file_objective_minutes == pytest.approx(a.file_objective_minutes)


def test_a_solution_that_places_a_job_twice_is_refused(exported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, model, sol = exported
    s = read_solution(sol)
    side = json.loads(sidecar_path(model).read_text())
    on = next(k for k, v in s.values.items() if k in side["placements"] and v > 0.5)
    job, r, _ = side["placements"][on]
    twin = next(k for k, (j, rr, _) in side["placements"].items() if j == job and rr == r and k != on)
    bad = tmp_path / "bad.sol"
    bad.write_text(f"# Objective value = 0\n{on} 1\n{twin} 1\n")
    with pytest.raises(InputError, match=f"places job {job} twice in round {r}"):
        import_solution(model, bad)


def test_an_unfinished_schedule_is_reported_and_nothing_written(exported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, model, sol = exported
    s = read_solution(sol)
    side = json.loads(sidecar_path(model).read_text())
    first_on = next(k for k, v in s.values.items() if k in side["placements"] and v > 0.5)
    partial = tmp_path / "partial.sol"
    partial.write_text(f"# Objective value = 0\n{first_on} 1\n")  # one job, one round: nothing finishes
    out = tmp_path / "s.json"
    r = cli("import-solution", str(model), str(partial), "-o", str(out), cwd=tmp_path)
    assert r.returncode == 1 and "the schedule is not valid" in r.stderr and "nothing written" in r.stderr
    assert not out.exists()


def test_bad_inputs_are_one_line_and_nothing_is_written(exported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    inst, model, sol = exported
    out = tmp_path / "s.json"
    edited = tmp_path / "model.mps"
    edited.write_text(model.read_text().replace("* sensaopt: objective_scale", "* edited: objective_scale"))
    sidecar_path(edited).write_text(sidecar_path(model).read_text())
    other = tmp_path / "other.sol"
    other.write_text("# Objective value = 1\ny_1 1\nz_2 0\n")
    cases = [
        ((str(edited), str(sol)), "is not the model"),
        ((str(tmp_path / "nowhere.mps"), str(sol)), "no sidecar of"),
        ((str(model), str(other)), "names none of the placement variables"),
        ((str(model), str(inst)), "(solution): not a HiGHS, CBC, SCIP or Gurobi solution"),
    ]
    for args, msg in cases:
        r = cli("import-solution", *args, "-o", str(out), cwd=tmp_path)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = cli("import-solution", str(model), str(sol), "-o", str(sol), cwd=tmp_path)  # the output may not be an input
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists() and read_solution(sol).format == "highs"
    r = cli("export", str(inst), "-o", str(inst), cwd=tmp_path)
    assert r.returncode == 2 and not sidecar_path(inst).exists()
