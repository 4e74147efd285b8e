"""CLI of the exact models: gap (CSV/JSON), export (MPS/LP), solve --solver cpsat."""

from __future__ import annotations

import csv
import json

import pulp
import pytest

from sensaopt.cli import main
from sensaopt.cli.exact import BOUND_COLUMNS, BUDGET_COLUMNS
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import save_instance
from sensaopt.tables import GAP_COLUMNS

from .conftest import PROOF_S

PROOF = str(PROOF_S)  # the --time-limit of a command expected to prove (tests/conftest.py)


@pytest.fixture
def inst_file(tmp_path):
    inst = generate(GeneratorConfig(jobs=3, nodes=1, seed=5))
    p = tmp_path / "i.json"
    save_instance(inst, p, {"generator": "test"})
    return p


def test_gap_csv_and_json(inst_file, tmp_path, capsys):
    out = tmp_path / "g.csv"
    assert main(["gap", str(inst_file), "--time-limit", PROOF, "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1
    r = rows[0]
    assert r["exact_status"] == "OPTIMAL"
    assert float(r["exact_objective"]) <= float(r["objective"]) + 1e-6
    assert float(r["objective_diff"]) == pytest.approx(float(r["objective"]) - float(r["exact_objective"]))
    assert float(r["objective_gap_pct"]) == pytest.approx(100 * float(r["objective_diff"]) / float(r["exact_objective"]))
    assert list(r) == list(GAP_COLUMNS) + BOUND_COLUMNS + BUDGET_COLUMNS  # CSV keeps every column: gap_frame's, the bounds, the budget
    assert r["budget"] == "time" and r["safety_net"] == ""  # no work budget: no safety net
    assert "gap" not in r and "abs_gap" not in r  # named for what they hold
    # the instance's own bounds (sensaopt.bounds): below the exact optimum, the policy's distance to them
    assert int(r["forced"]) <= int(r["exact_misses"]) and float(r["instance_jct_bound"]) <= float(r["exact_avg_jct"]) + 1e-9
    assert int(r["above_forced"]) == int(r["misses"]) - int(r["forced"])
    outj = tmp_path / "g.json"
    assert main(["gap", str(inst_file), "--exact", "milp", "--time-limit", PROOF, "-o", str(outj)]) == 0
    rj = json.loads(outj.read_text())[0]
    assert rj["exact"] == "milp:highs" and rj["exact_objective"] == pytest.approx(float(r["exact_objective"]))


@pytest.mark.parametrize("command", ["gap", "round-gap"])
@pytest.mark.parametrize("name", ["g.xlsx", "g"])
def test_gap_rows_only_as_csv_json_or_parquet_refused_before_any_solve(command, name, inst_file, tmp_path, capsys):
    out = tmp_path / name
    assert main([command, str(inst_file), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rows are written as .csv, .json or .parquet" in err
    assert not out.exists()


def test_gap_unknown_exact_is_user_error(inst_file, capsys):
    assert main(["gap", str(inst_file), "--exact", "gurobi"]) == 2
    assert "unknown exact solver" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["mps", "lp"])
def test_export_reads_back_and_solves_to_same_optimum(inst_file, tmp_path, fmt, capsys):
    from sensaopt.io import load_instance
    from sensaopt.solve import solve_cpsat

    f = tmp_path / f"m.{fmt}"
    assert main(["export", str(inst_file), "--format", fmt, "-o", str(f)]) == 0
    msg = capsys.readouterr().out
    scale = float(msg.split("file objective / ")[1].split(" + ")[0])
    offset = float(msg.split(" + ")[-1])
    if fmt == "mps":
        _vars, prob = pulp.LpProblem.fromMPS(str(f))
        prob.solve(pulp.HiGHS(msg=False, gapRel=0.0, gapAbs=0.5))
        value = round(pulp.value(prob.objective))  # the scaled objective is integral
        exact = solve_cpsat(load_instance(inst_file), time_limit=PROOF_S)
        assert value / scale + offset == pytest.approx(exact.objective, abs=1e-6)
    else:
        assert "Minimize" in f.read_text()


def test_solve_cli_cpsat(inst_file, capsys):
    assert main(["solve", str(inst_file), "--solver", "cpsat", "--time-limit", PROOF, "--workers", "1"]) == 0
    assert "cpsat: OPTIMAL" in capsys.readouterr().out


@pytest.mark.parametrize("solver", ["cpsat", "milp"])
def test_solve_weighted_flag(inst_file, capsys, solver):
    """--weighted turns the lexicographic two-phase solve off; both prove the same optimum."""
    outs = []
    for extra in ([], ["--weighted"]):
        assert main(["solve", str(inst_file), "--solver", solver, "--time-limit", PROOF, "--json", *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    lex, one = outs
    assert lex["status"] == one["status"] == "OPTIMAL"
    assert lex["objective"] == pytest.approx(one["objective"], abs=1e-6)
    assert lex["params"]["lexicographic"] is not False and one["params"]["lexicographic"] is False


@pytest.mark.parametrize("flag,key,value", [("--branch-price", "branch_price", True), ("--cooperate", "partner", "highs")])
def test_solve_deadline_hard_flags(inst_file, capsys, flag, key, value):
    """--branch-price / --cooperate reach the exact solve and are recorded in its params."""
    assert main(["solve", str(inst_file), "--solver", "cpsat", "--time-limit", PROOF, "--json", flag]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OPTIMAL" and out["params"][key] == value


@pytest.mark.parametrize("exact,partner", [("cpsat", "highs"), ("milp", "cp-sat")])
def test_gap_cooperate_reaches_the_exact_solve(inst_file, capsys, exact, partner):
    """sensaopt gap --cooperate: the exact solve gets the other backend as partner."""
    from sensaopt.cli.exact import exact_solve
    from sensaopt.io import load_instance

    res = exact_solve(load_instance(inst_file), exact, 20, 1, cooperate=True)
    assert res.params["partner"] == partner and res.status.value == "OPTIMAL"
    assert main(["gap", str(inst_file), "--exact", exact, "--cooperate", "--time-limit", PROOF, "-q"]) == 0
    assert "OPTIMAL" in capsys.readouterr().out
