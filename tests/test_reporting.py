"""Lexicographic reporting (sensaopt.compare: misses / lost value apart from avg JCT) in
gap_frame, `sensaopt gap`, `sensaopt round-gap` and summary lines; Result views for
notebooks; the public API; `simulate --save-schedule`."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import pytest

import sensaopt
from sensaopt import frames
from sensaopt.cli import main
from sensaopt.cli.core import summary_line
from sensaopt.compare import COMPARISON_COLUMNS, PartBounds, RoundGapSummary, compare, compare_round
from sensaopt.io import load_instance, parse_schedule_dict, read_json
from sensaopt.result import LexicographicReport, LossProof, Result, Status
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule

from .conftest import PROOF_S, REPO
PROOF = str(PROOF_S)  # the --time-limit of a command expected to prove (tests/conftest.py)


TINY8 = REPO / "instances" / "tiny-8gpu.json"
TINY16 = REPO / "instances" / "tiny-16gpu.json"
W = 1e5  # the committed instances' violation weight


@pytest.fixture(scope="module")
def heur() -> Result:
    return simulate(load_instance(TINY8), "sensascale")


def fake(base: Result, solver: str, misses: int, lost: float, jct: float, bound: float | None = None,
         status: Status = Status.OPTIMAL, lex: object = False) -> Result:
    """A result with the given parts (metrics as the metrics module would give them);
    ``lex``: its ``params["lexicographic"]`` JSON form as an exact solver writes it (read
    into the typed report), and the typed loss proof the solver sets with it (phase 1's
    bound; skipped: fixed; weighted: none)."""
    assert base.metrics is not None
    m = dataclasses.replace(base.metrics, slo_violations=misses, weighted_violations=lost, avg_jct=jct, objective=W * lost + jct)
    proof = None
    if isinstance(lex, dict):
        p1 = lex["phase1"]
        proof = LossProof(fixed=True) if isinstance(p1, str) else LossProof(bound=p1["loss_bound"])
    report = LexicographicReport.from_dict(lex) if isinstance(lex, dict) else None
    return Result(solver, status, m.objective, bound, 1.5, base.schedule, m, params={} if report else {"lexicographic": lex},
                  truth=base.truth, loss_proof=proof, horizon=24, lexicographic=report)


def phase1(loss_bound: float | None) -> dict:
    return {"phase1_share": 0.5, "phase1": {"status": "OPTIMAL", "seconds": 0.1, "loss_incumbent": loss_bound, "loss_bound": loss_bound}}


# ---- compare ------------------------------------------------------------------------------------
def test_one_extra_miss_has_no_jct_gap(heur):
    h = fake(heur, "heuristic:x", misses=2, lost=2.0, jct=111.4)
    e = fake(heur, "cpsat", misses=1, lost=1.0, jct=115.4, bound=W + 115.4, lex=phase1(W * 1.0))
    c = compare(h, e, label="x")
    assert c.extra_misses == 1 and c.extra_lost_value == pytest.approx(1.0)
    assert c.jct_gap_pct is None and c.jct_gap_to_bound_pct is None  # different levels: no JCT gap
    assert c.jct_diff == pytest.approx(-4.0)
    assert c.loss_bound == pytest.approx(1.0) and c.jct_bound == pytest.approx(115.4)
    assert c.gap == pytest.approx((h.objective - e.objective) / e.objective)  # the scalar objective stays
    assert c.instance == "tiny-8gpu" and c.policy == "x" and c.exact == "cpsat" and c.horizon == 24


def test_equal_misses_give_the_jct_gap_in_percent(heur):
    h = fake(heur, "heuristic:x", misses=1, lost=1.0, jct=120.0)
    e = fake(heur, "cpsat", misses=1, lost=1.0, jct=100.0, bound=W + 96.0, status=Status.TIME_LIMIT, lex=phase1(W * 1.0))
    c = compare(h, e)
    assert c.extra_misses == 0 and c.extra_lost_value == 0
    assert c.jct_gap_pct == pytest.approx(20.0)
    assert c.jct_bound == pytest.approx(96.0)
    assert c.jct_gap_to_bound_pct == pytest.approx(100 * (120 - 96) / 96)
    # equal misses but a different lost value (soft deadlines): not the same level
    assert compare(fake(heur, "h", misses=1, lost=0.5, jct=120.0), e).jct_gap_pct is None


def test_jct_bound_only_where_the_loss_bound_is_attained(heur):
    h = fake(heur, "h", misses=2, lost=2.0, jct=100.0)
    open_loss = fake(heur, "cpsat", misses=2, lost=2.0, jct=90.0, bound=W * 1.0 + 80, status=Status.TIME_LIMIT, lex=phase1(W * 1.0))
    c = compare(h, open_loss)
    # B - W*L_lb = 80 bounds only schedules losing exactly 1, which may not exist: no JCT bound
    assert c.loss_bound == pytest.approx(1.0) and c.jct_bound is None
    assert c.jct_gap_pct == pytest.approx(100 * 10 / 90)  # same level: the gap is still a gap
    weighted = fake(heur, "cpsat", misses=2, lost=2.0, jct=90.0, bound=2 * W + 80, lex=False)
    assert PartBounds.of(weighted) == PartBounds(objective=2 * W + 80, lost_value=None, avg_jct=None)
    skipped = fake(heur, "cpsat", misses=0, lost=0.0, jct=90.0, bound=85.0,
                   lex={"phase1_share": 0.5, "phase1": "skipped (no open deadline decision)"})
    assert PartBounds.of(skipped) == PartBounds(objective=85.0, lost_value=0.0, avg_jct=85.0)


def test_gap_frame_rows_are_comparisons(heur):
    inst = load_instance(TINY8)
    assert heur.metrics.slo_violations == 2  # the fake optimum below misses none
    e = fake(heur, "cpsat", misses=0, lost=0.0, jct=115.4, bound=115.4, lex=phase1(0.0))
    g = frames.gap_frame(inst, {"sensascale": heur}, e)
    assert tuple(g.columns) == frames.GAP_COLUMNS and len(g.columns) == len(COMPARISON_COLUMNS)
    assert not {"gap", "abs_gap", "gap_to_bound", "exact_gap"} & set(g.columns)  # named for what they hold
    row = g.iloc[0]
    assert row["extra_misses"] == 2 and row["misses"] == 2
    assert row["jct_gap_pct"] != row["jct_gap_pct"]  # NaN: different levels
    assert row["jct_bound"] == pytest.approx(115.4)
    # the weighted objective's gap (two more misses at W = 1e5 each): in percent, under its own name
    assert row["objective_diff"] == pytest.approx(heur.objective - e.objective)
    assert row["objective_gap_pct"] == pytest.approx(100 * (heur.objective - e.objective) / e.objective)
    assert row["jct_diff_min"] == pytest.approx(heur.metrics.avg_jct - 115.4)


def test_round_comparison_and_summary_line():
    def side(name: str, misses: int | None, lost: float | None, jct: float | None) -> dict:
        return {f"{name}_misses": misses, f"{name}_lost_value": lost, f"{name}_jct": jct}

    rows = [
        {**side("window", 0, 0.0, 50.0), **side("policy", 0, 0.0, 55.0)},
        {**side("window", 1, 1.0, 80.0), **side("policy", 2, 3.0, 70.0)},
        {**side("window", 0, 0.0, 40.0), **side("policy", 0, 0.0, 40.0)},
        {**side("window", None, None, None), **side("policy", 0, 0.0, 40.0)},
    ]
    rows = [{**r, **compare_round(r)} for r in rows]
    assert [r["jct_gap_pct"] for r in rows] == [pytest.approx(10.0), None, 0.0, None]
    assert rows[1]["extra_misses"] == 1 and rows[1]["extra_lost_value"] == 2.0
    s = RoundGapSummary.of(rows)
    assert (s.rounds, s.scored, s.more_loss, s.extra_misses, s.equal, s.longer) == (4, 3, 1, 1, 2, 1)
    assert s.jct_gap_mean_pct == pytest.approx(5.0) and s.jct_gap_max_pct == pytest.approx(10.0)
    assert s.lines() == ["4 rounds (3 scored): 1 lost more value than the window optimum (+1 misses, +2 value)",
                         "2 at equal lost value, 1 of them with a longer avg JCT (JCT gap mean 5.00 %, max 10.00 %)"]


def test_summary_line_reports_the_parts_and_their_bounds(heur):
    e = fake(heur, "cpsat", misses=1, lost=1.0, jct=115.4, bound=W + 110.0, status=Status.TIME_LIMIT, lex=phase1(W * 1.0))
    line = summary_line(e)
    assert "SLO violations 1/" in line and "lost value 1 (bound 1)" in line and "avg JCT 115.4 min (bound 110.0)" in line
    assert line.index("lost value") < line.index("avg JCT") < line.index("objective")
    assert e.to_dict(with_schedule=False)["part_bounds"] == {"lost_value": 1.0, "avg_jct": pytest.approx(110.0)}
    assert heur.to_dict(with_schedule=False)["part_bounds"] == {"lost_value": None, "avg_jct": None}
    assert "bound" not in summary_line(heur).replace("makespan", "")


# ---- the CLI ------------------------------------------------------------------------------------
@pytest.mark.slow  # over 8 s in the default suite (durations, 2026-12-03)
def test_gap_table_fits_100_columns_and_separates_the_parts(tmp_path, capsys):
    deep = tmp_path / "a-rather-long-folder-name" / "instances-from-a-trace"
    deep.mkdir(parents=True)
    files = []
    for src in (TINY8, TINY16):
        (deep / src.name).write_text(src.read_text())
        files.append(str(deep / src.name))
    out = tmp_path / "g.json"
    # fifo: one row at the optimum's misses (a JCT gap in percent), one with an extra miss
    assert main(["gap", *files, "--policy", "fifo", "--time-limit", PROOF, "-q", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(len(x) <= 100 for x in lines), [len(x) for x in lines]
    from sensaopt.cli.exact import GAP_COLUMNS, GAP_TABLE_COLUMNS

    assert lines[0].split() == GAP_TABLE_COLUMNS
    rows = json.loads(out.read_text())
    assert [list(r) for r in rows] == [GAP_COLUMNS] * 2  # -o keeps every column (the instance bounds' too)
    r8, r16 = rows
    # tiny-8gpu: optimal over the model's grid, not certified over every allocation (issue 24)
    assert r8["instance"] == files[0] and r8["exact_status"] in ("OPTIMAL", "FEASIBLE")
    assert r16["extra_misses"] == 1 and r16["jct_gap_pct"] is None and lines[2].split()[-2] == "-"
    assert r8["extra_misses"] == 0 and r8["jct_gap_pct"] == pytest.approx(6.93, abs=0.01)
    assert r8["jct_gap_pct"] == pytest.approx(float(lines[1].split()[-2]), abs=0.01)
    assert r8["jct_bound"] <= r8["exact_avg_jct"] + 1e-6  # the bound at the exact schedule's loss level
    if r8["exact_status"] == "OPTIMAL":
        assert r8["jct_bound"] == pytest.approx(r8["exact_avg_jct"])  # proven optimal: the bound is the optimum's JCT


def test_gap_wide_shows_every_column(capsys):
    assert main(["gap", str(TINY16), "--time-limit", PROOF, "-q", "--wide"]) == 0
    from sensaopt.cli.exact import GAP_COLUMNS

    header = capsys.readouterr().out.splitlines()[0].split()
    assert header == GAP_COLUMNS


def test_round_gap_prints_the_lexicographic_summary(tmp_path, capsys):
    out = tmp_path / "rg.json"
    assert main(["round-gap", str(TINY8), "--window", "3", "--time-limit", "2", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = json.loads(out.read_text())
    assert all(len(x) <= 100 for x in lines)
    s = RoundGapSummary.of(rows)
    assert lines[-2:] == s.lines() and s.rounds == len(rows) == len(lines) - 3
    for r in rows:
        if r["extra_lost_value"] is not None and r["extra_lost_value"] > 1e-6:
            assert r["jct_gap_pct"] is None
        if r["optimum_proven"] and r["extra_lost_value"] is not None:
            assert r["extra_lost_value"] >= -1e-6  # a proven window optimum never loses more than the policy
            assert r["objective_diff"] >= -1e-6


# ---- notebooks ----------------------------------------------------------------------------------
def test_repr_is_short_and_html_is_a_small_table(heur):
    big = simulate(load_instance(REPO / "instances" / "medium-8gpu.json"), "sensascale")
    assert len(repr(big)) < 300
    e = fake(heur, "cpsat", misses=1, lost=1.0, jct=115.4, bound=W + 110.0, status=Status.TIME_LIMIT, lex=phase1(W * 1.0))
    html = e._repr_html_()
    assert html.startswith("<table") and html.count("<tr>") == 2
    for text in ("solver", "status", "objective", "bound", "misses", "lost value", "avg JCT (min)", "avg queueing (min)", "runtime (s)",
                 "cpsat", "TIME_LIMIT", "1 (≥ 1)", "115.4 (≥ 110.0)", "100115.4000"):
        assert text in html, text
    assert "&lt;b&gt;" in Result("<b>", Status.ERROR, None, None, 0.0, None, None)._repr_html_()  # escaped


def test_result_frame_is_one_metrics_frame_row(heur):
    df = frames.result_frame(heur)
    assert tuple(df.columns) == frames.METRIC_COLUMNS and list(df.index) == [heur.solver]
    assert df.iloc[0]["slo_violations"] == heur.metrics.slo_violations and df.iloc[0]["avg_jct"] == heur.metrics.avg_jct
    assert frames.result_frame(heur, "mine").index[0] == "mine"


def test_result_to_frame_is_its_result_frame(heur):
    import pandas as pd

    pd.testing.assert_frame_equal(heur.to_frame(), frames.result_frame(heur))
    assert list(heur.to_frame("mine").index) == ["mine"]


def test_all_names_importable_and_listed():
    listed = dir(sensaopt)
    for name in sensaopt.__all__:
        getattr(sensaopt, name)
        assert name in listed, name
    assert (Path(sensaopt.__file__).parent / "py.typed").is_file()


# docstrings of public functions whose modules this reporting part does not own: to be completed
# by their owners (strict: an xpass here means the marker can go)
@pytest.mark.parametrize("name", [n for n in sensaopt.__all__ if n != "__version__"])
def test_public_names_are_documented_with_their_parameters(name):
    obj = getattr(sensaopt, name)
    doc = inspect.getdoc(obj) or ""
    assert doc, name
    if inspect.isfunction(obj):
        missing = [p for p in inspect.signature(obj).parameters if p not in doc]
        assert not missing, f"{name}: {missing}"


# ---- simulate --save-schedule ---------------------------------------------------------------------
def test_save_schedule_round_trip_and_plot(tmp_path, capsys):
    sched_file = tmp_path / "s.json"
    args = ["simulate", "--trace", "synthetic", "--jobs", "12", "--preset", "2x8", "--policy", "edf", "-q", "--out-dir", str(tmp_path / "o")]
    assert main([*args, "--save-schedule", str(sched_file)]) == 0
    raw = read_json(sched_file)
    inst = load_instance(tmp_path / raw["instance"])  # recorded relative to the schedule file
    sched = parse_schedule_dict(raw, inst, str(sched_file))
    ev = check_schedule(inst, sched)
    summary = json.loads((tmp_path / "o" / "edf.summary.json").read_text())
    assert ev.ok and raw["metrics"] == summary["metrics"]
    assert simulate(inst, "edf").schedule == sched  # the saved instance reproduces the schedule
    capsys.readouterr()
    assert main(["plot", str(sched_file), "-o", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").stat().st_size > 0
    # several policies: one file per policy beside one instance file
    assert main([*args, "--policy", "fifo", "--save-schedule", str(tmp_path / "m.json")]) == 0
    assert {p.name for p in tmp_path.glob("m.*")} == {"m.edf.json", "m.fifo.json", "m.instance.json"}
