"""`sensaopt experiment gaps`: trace windows, one exact solve each, resumable; its tables,
figures and provenance (sensaopt.sweep.gaps, gaps_report, gaps_plot). No test asserts a
proof within a time limit: the statuses are whatever the solver reached."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys

import pytest

from sensaopt.cli import main
from sensaopt.sweep import gaps, gaps_report
from sensaopt.sweep.gaps import ExactSettings, GapSettings, WindowCut, WindowTask
from sensaopt.sweep.provenance import usable_cores

from .test_traces_cli import small_chronus

TINY = ["--jobs", "3", "--windows", "2", "--time-limit", "2", "--policies", "sensascale,edf", "--serial", "-q"]


def run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _csv(path):
    with path.open() as f:
        return list(csv.DictReader(f))


# ---- the command on a small trace file -----------------------------------------------------------
def test_tiny_run_writes_tables_figure_provenance_and_resumes(tmp_path, capsys):
    trace = small_chronus(tmp_path, n=12)
    out = tmp_path / "out"
    code, stdout, err = run(["experiment", "gaps", "--trace", trace, "--out-dir", out, *TINY], capsys)
    assert code == 0, err
    assert "2 runs: 0 reused, 2 computed, 0 failed" in stdout and "| 3 | sensascale | 2 |" in stdout
    for name in ("gaps.md", "gaps.csv", "windows.csv", "gaps.png", "provenance.json"):
        assert (out / name).stat().st_size > 0, name
    assert not (out / "scaling.csv").exists()  # one window size: no scaling table
    summary = _csv(out / "gaps.csv")
    assert [(r["jobs"], r["policy"], r["windows"]) for r in summary] == [("3", "sensascale", "2"), ("3", "edf", "2")]
    rows = _csv(out / "windows.csv")
    assert len(rows) == 4 and {r["policy"] for r in rows} == {"sensascale", "edf"}
    assert all(r["status"] in ("OPTIMAL", "FEASIBLE", "TIME_LIMIT", "REFUSED") for r in rows)
    files = sorted((out / "instances" / "3-jobs" / "seed-0").glob("*.json"))
    assert len(files) == 2 and json.loads(files[0].read_text())["provenance"]["generator"] == "sensaopt instances from-trace"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["windows_computed"] == 2 and prov["settings"]["exact"]["time_limit"] == 2.0
    assert prov["git"].keys() >= {"commit", "dirty"} and prov["machine"]["loadavg"] is not None
    assert prov["command"].startswith("sensaopt experiment gaps --out-dir ")
    # resume: a window removed from the store is computed again, the other one reused as it is
    records = sorted((out / "runs").glob("*.json"))
    kept = records[0].read_bytes()
    records[1].unlink()
    code, stdout, err = run(["experiment", "gaps", "--trace", trace, "--out-dir", out, *TINY], capsys)
    assert code == 0, err
    assert "2 runs: 1 reused, 1 computed, 0 failed" in stdout
    assert records[0].read_bytes() == kept
    # the recorded command plans the same windows: replayed with --report-only, nothing runs
    code, stdout, err = run([*prov["args"], "--report-only", "-q"], capsys)
    assert code == 0, err
    assert "2 runs: 2 reused, 0 computed" in stdout


def test_a_refused_window_compares_each_policy_with_the_instances_own_bounds(tmp_path, capsys):
    """A model the exact solver refuses (max_vars=1 refuses every window) gets no exact
    figures, but each policy's misses and avg JCT against the instance's bounds, which no
    policy's schedule beats; gaps.md gives them in their own table, the statistics none."""
    trace = small_chronus(tmp_path, n=12)
    out = tmp_path / "out"
    code, stdout, err = run(["experiment", "gaps", "--trace", trace, "--out-dir", out, *TINY, "--exact-option", "max_vars=1"], capsys)
    assert code == 0, err
    records = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    assert len(records) == 2 and all(r["status"] == "REFUSED" and r["policies"] == {} for r in records)
    for r in records:
        b = r["bounds_only"]
        assert set(b["policies"]) == {"sensascale", "edf"} and b["avg_jct"] > 0
        for c in b["policies"].values():
            assert c["misses"] >= b["misses"] and c["avg_jct"] >= b["avg_jct"] - 1e-9
            assert c["jct_gap_to_bound_pct"] == pytest.approx(100 * (c["avg_jct"] - b["avg_jct"]) / b["avg_jct"])
    md = (out / "gaps.md").read_text()
    assert md.index(gaps_report.REFUSED_NOTE) > md.index("Per window")  # a table of its own, after the exact figures
    summary = _csv(out / "gaps.csv")
    assert all(r["refused"] == "2" and r["bound_gap_windows"] == "0" for r in summary)  # not in the statistics
    rows = _csv(out / "windows.csv")
    assert all(r["avg_jct"] and r["jct_gap_to_bound_pct"] == "" for r in rows)  # the policy's own figures, no exact gap


def test_refused_windows_without_bounds_only_figures_are_listed_with_dashes():
    old = {**_rec(20, 0, 2, "REFUSED", pols={}), "config": {"policies": ["a"]}, "message": "too large; use the rolling policy"}
    new = {**old, "index": 3, "window": "w3", "bounds_only": {"misses": 1, "lost_value": 1.0, "avg_jct": 50.0,
                                                               "policies": {"a": {"misses": 2, "lost_value": 2.0, "avg_jct": 60.0,
                                                                                  "jct_gap_to_bound_pct": 20.0}}}}
    md = gaps_report.refused_markdown([new, old, _rec(20, 0, 0, pols={"a": _cmp()})], ["a"])
    lines = md.splitlines()
    assert lines[-2] == "| w2 | 20 | 2 | too large | – | – | – |"
    assert lines[-1] == "| w3 | 20 | 2 | too large | 1 | 50.00 | 2 / 60.00 (≤ 20.0 %) |"
    assert gaps_report.refused_markdown([_rec(20, 0, 0)], ["a"]) is None
    assert gaps_report.window_line(new).endswith("REFUSED in 10.0 s; against the instance's bounds (forced misses: 1): "
                                                 "a 2 misses, JCT ≤ 20.0 %")
    assert gaps_report.window_line(old).endswith("REFUSED in 10.0 s")


def test_several_sizes_and_seeds_add_the_scaling_table_and_intervals(tmp_path, capsys):
    trace = small_chronus(tmp_path, n=12)
    out = tmp_path / "out"
    args = ["experiment", "gaps", "--trace", trace, "--out-dir", out, "--jobs", "2,3", "--windows", "1", "--seeds", "2",
            "--time-limit", "2", "--policies", "edf", "--serial", "-q"]
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    assert "4 runs: 0 reused, 4 computed" in stdout and "The exact solve, by window size" in stdout
    scaling = _csv(out / "scaling.csv")
    assert [r["jobs"] for r in scaling] == ["2", "3"] and all(r["windows"] == "2" and r["seeds"] == "2" for r in scaling)
    assert (out / "scaling.png").stat().st_size > 0
    assert sorted(p.name for p in (out / "instances" / "2-jobs").iterdir()) == ["seed-0", "seed-1"]


def test_solver_seeds_solve_each_window_once_per_seed_and_resume_the_first(tmp_path, capsys):
    """--solver-seeds 2: every window solved with seeds 0 and 1 (records and rows say which),
    the means over the two replicates with an interval, and a rerun with --solver-seeds 1
    finds its windows stored (seed 0's tasks are the same)."""
    trace = small_chronus(tmp_path, n=12)
    out = tmp_path / "out"
    args = ["experiment", "gaps", "--trace", trace, "--out-dir", out, *TINY]
    code, stdout, err = run([*args, "--solver-seeds", "2"], capsys)
    assert code == 0, err
    assert "4 runs: 0 reused, 4 computed" in stdout and "solver seeds 0–1" in stdout
    assert "window solves (windows × solver seeds)" in stdout and "2 replicates' means" in stdout
    rows = _csv(out / "windows.csv")
    assert sorted({(r["index"], r["solver_seed"]) for r in rows}) == [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")]
    (scale,) = _csv(out / "gaps.csv")[:1]
    assert scale["solver_seeds"] == "2" and scale["windows"] == "4"
    prov = json.loads((out / "provenance.json").read_text())
    assert "--solver-seeds 2" in prov["command"] and prov["settings"]["solver_seeds"] == 2
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    assert "2 runs: 2 reused, 0 computed" in stdout


def test_a_replicate_is_a_seed_and_a_solver_seed():
    from sensaopt.sweep.gaps_report import replicate, scaling_rows, within

    def rec(index, k, status, gap):
        return {**_rec(40, 0, index, status, exact_gap=gap), "config": {"policies": [], "exact": {"seed": k}}}

    records = [rec(0, 0, "OPTIMAL", 0.0), rec(1, 0, "TIME_LIMIT", 0.8), rec(2, 0, "TIME_LIMIT", 3.0),
               rec(0, 1, "OPTIMAL", 0.0), rec(1, 1, "TIME_LIMIT", 1.2), rec(2, 1, "TIME_LIMIT", 2.0)]
    assert [replicate(r) for r in records[2:4]] == [(0, 0), (0, 1)] and replicate(_rec(40, 3, 0)) == (3, 0)
    assert [within(r) for r in records] == [True, True, False, True, False, False]
    (row,) = scaling_rows(records, [])
    assert (row["solver_seeds"], row["windows"], row["proven"], row["within_1pct"]) == (2, 6, 2, 3)
    assert row["within_1pct_mean_pct"] == pytest.approx(100 * 1.5 / 3)  # 2 of 3 and 1 of 3
    assert 0.0 <= row["within_1pct_lo_pct"] < row["within_1pct_mean_pct"] < row["within_1pct_hi_pct"] <= 100.0  # clipped: a share
    assert row["exact_gap_mean_pct"] == pytest.approx((3.8 / 3 + 3.2 / 3) / 2)
    from sensaopt.sweep.gaps_plot import gaps_figure, replicates_text

    fig = gaps_figure(records, gaps_report.summary_rows(records, ["a"]), ["a"])
    assert "2 replicates (seeds × solver seeds)" in fig._suptitle.get_text()  # the caps are over replicates, not the one seed
    assert (replicates_text([{"seeds": 1}]), replicates_text([{"seeds": 3, "solver_seeds": 1}])) == ("1 seed", "3 seeds")
    assert replicates_text([{"seeds": 1, "solver_seeds": 3}, {"seeds": 1}]) == "3 replicates (seeds × solver seeds)"


def test_the_dask_path_with_a_scheduler(tmp_path, capsys):
    from distributed import LocalCluster

    trace = small_chronus(tmp_path, n=12)
    args = [a for a in TINY if a != "--serial"] + ["--windows", "1"]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        code, stdout, err = run(["experiment", "gaps", "--trace", trace, "--out-dir", tmp_path / "o", *args,
                                 "--scheduler", cluster.scheduler_address], capsys)
    assert code == 0, err
    assert "1 runs: 0 reused, 1 computed, 0 failed" in stdout
    prov = json.loads((tmp_path / "o" / "provenance.json").read_text())
    assert prov["execution"]["scheduler"] == cluster.scheduler_address and prov["execution"]["processes"] is None


@pytest.mark.parametrize("extra, says", [
    (["--jobs", "0"], "--jobs"),
    (["--jobs", "10,x"], "'x' is not a whole number"),
    (["--jobs", "10,10"], "given twice"),
    (["--windows", "0"], "--windows"),
    (["--policies", "nope"], "nope"),
    (["--exact", "gurobi"], "unknown exact solver 'gurobi'"),
    (["--time-limit", "0"], "--time-limit"),
    (["--processes", "0"], "--processes"),
    (["--seed", "2147483647", "--seeds", "2"], "largest seed"),
    (["--solver-seed", "2147483647", "--solver-seeds", "2"], "largest seed"),
    (["--solver-seeds", "0"], "solver-seeds"),
    (["--exact-option", "lns_share=2"], "lns_share: must be within"),
    (["--exact-option", "time_limit=3"], "set it with --time-limit"),
    (["--exact-option", "nope=1"], "--exact-option: nope: the exact solve has no such setting"),
    (["--exact-option", "lns_share"], "--exact-option: lns_share: expected key=value"),
    (["--exact-option", "start_policy=nope"], "--exact-option: start_policy: must be one of best, sensascale"),
    (["--exact-option", "cpsat_workers=0"], "cpsat_workers: must be"),
])
def test_bad_options_are_one_line_exit_2(tmp_path, capsys, extra, says):
    trace = small_chronus(tmp_path, n=12)
    code, _, err = run(["experiment", "gaps", "--trace", trace, "--out-dir", tmp_path / "o", *TINY, *extra], capsys)
    assert code == 2 and says in err, err
    assert "Traceback" not in err and not (tmp_path / "o" / "runs").exists()


def test_the_warm_start_policy_is_an_exact_option_that_reaches_the_solve(tmp_path, capsys):
    from sensaopt.cli.gaps import _exact_options

    assert _exact_options(["start_policy=best", "lns_share=0.3"]) == (("lns_share", 0.3), ("start_policy", "best"))
    trace = small_chronus(tmp_path, n=12)
    code, _, err = run(["experiment", "gaps", "--trace", trace, "--out-dir", tmp_path / "o", *TINY, "--jobs", "4", "--windows", "1",
                        "--exact-option", "start_policy=best", "--serial", "-q"], capsys)
    assert code == 0, err
    (rec,) = [json.loads(f.read_text()) for f in (tmp_path / "o" / "runs").glob("*.json")]
    assert rec["config"]["exact"]["settings"] == [["start_policy", "best"]]
    assert rec["exact_params"]["warm_start_from"]["candidates"]  # every heuristic policy was tried for the start


def test_a_missing_trace_or_an_unusable_out_dir_is_refused_before_any_window(tmp_path, capsys):
    code, _, err = run(["experiment", "gaps", "--trace", tmp_path / "nope.csv", "--out-dir", tmp_path / "o", *TINY], capsys)
    assert code == 2 and "no such file" in err
    (tmp_path / "file").write_text("x")
    code, _, err = run(["experiment", "gaps", "--trace", small_chronus(tmp_path, n=12), "--out-dir", tmp_path / "file", *TINY], capsys)
    assert code == 2 and "--out-dir" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(["experiment", "gaps", "--trace", small_chronus(tmp_path, n=12), "--out-dir", tmp_path / "o", *TINY,
                        "--first", "1000"], capsys)
    assert code == 2 and "no window could be cut" in err


def test_a_mirrored_philly_slo_window(tmp_path, capsys, shared_traces):
    from sensaopt.traces.paths import CHRONUS_TRACES

    if not (shared_traces / CHRONUS_TRACES["chronus-slo"]).is_file():
        pytest.skip("the Philly SLO trace is not in the shared traces")
    code, stdout, err = run(["experiment", "gaps", "--trace", "chronus-slo", "--first", "3000", "--out-dir", tmp_path / "o",
                             "--jobs", "4", "--windows", "1", "--time-limit", "2", "--policies", "sensascale", "--serial", "-q"], capsys)
    assert code == 0, err
    (row,) = _csv(tmp_path / "o" / "windows.csv")
    assert row["window"] == "chronus-slo-w0" and row["first_job"] == "3000" and row["jobs"] == "4"


# ---- tasks, keys and the store -------------------------------------------------------------------
def test_a_task_key_names_what_determines_the_window_and_its_solve():
    t = WindowTask(WindowCut(jobs=20, first=3000), 3, ExactSettings(time_limit=60), ("sensascale",))
    assert WindowTask.from_dict(json.loads(json.dumps(t.to_dict()))).key() == t.key()
    assert WindowTask(WindowCut(jobs=20, first=3000), 3, ExactSettings(time_limit=60.0), ("sensascale",), {"x": 1}).key() == t.key()
    changed = [WindowTask(WindowCut(jobs=20, first=3000, seed=1), 3, ExactSettings(), ("sensascale",)),
               WindowTask(WindowCut(jobs=20, first=3000), 4, ExactSettings(), ("sensascale",)),
               WindowTask(WindowCut(jobs=20, first=3000), 3, ExactSettings(cooperate=True), ("sensascale",)),
               WindowTask(WindowCut(jobs=20, first=3000), 3, ExactSettings(), ("sensascale", "edf")),
               WindowTask(WindowCut(jobs=20, first=3000), 3, ExactSettings(settings=(("lns_share", 0.3),)), ("sensascale",))]
    assert len({t.key(), *(c.key() for c in changed)}) == 6
    e = ExactSettings(settings=(("relax_time_limit", 5.0), ("lns_share", 0.3)))
    task = WindowTask(WindowCut(), 0, e, ("edf",))
    assert WindowTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    assert e.options() == {"lns_share": 0.3, "relax_time_limit": 5.0, "time_limit": 60.0, "workers": 1, "seed": 0, "lexicographic": True}


def test_the_store_sets_aside_a_file_that_is_not_the_windows_record(tmp_path):
    from sensaopt.sweep import ResultStore

    t = WindowTask(WindowCut(), 0, ExactSettings(), ("edf",))
    store = ResultStore(tmp_path, warn=lambda m: None, verify=gaps.record_problem)
    other = WindowTask(WindowCut(), 1, ExactSettings(), ("edf",))
    store.put({"key": t.key(), "config": other.to_dict(), "policies": {}})  # another window's config under this key
    assert store.get(t.key()) is None and list((tmp_path / "failed").glob("*.invalid"))
    store.put({"key": t.key(), "config": t.to_dict(), "policies": {}})
    assert store.has(t.key())


def test_command_args_spell_every_setting():
    s = GapSettings(sizes=(10, 20), windows=5, cut=WindowCut(trace="chronus-slo", first=7, stride=3), seeds=(2, 3),
                    exact=ExactSettings("highs", 9.0, 2, 4, True, (("lns_share", 0.3), ("warm_start", False))), policies=("edf",))
    args = gaps.command_args(s, "OUT", "RES")
    text = " ".join(args)
    for part in ("--jobs 10,20", "--windows 5", "--first 7", "--stride 3", "--seed 2 --seeds 2", "--exact highs", "--time-limit 9.0",
                 "--workers 2", "--solver-seed 4", "--cooperate", "--exact-option lns_share=0.3 --exact-option warm_start=false",
                 "--policies edf", "--results RES"):
        assert part in text, part
    with pytest.raises(ValueError, match="consecutive"):
        gaps.command_args(GapSettings(seeds=(0, 2)), "OUT")


# ---- the tables and figures from records ---------------------------------------------------------
def _rec(jobs, seed, index, status="OPTIMAL", seconds=10.0, exact_gap=0.0, pols=None):
    pols = pols if pols is not None else {}
    return {"jobs": jobs, "seed": seed, "index": index, "window": f"w{index}", "first_job": index * jobs, "nodes": 2, "gpus": 16,
            "exact": "cpsat", "status": status, "seconds": seconds, "misses": 0, "avg_jct": 100.0, "jct_bound": 90.0,
            "jct_gap_to_bound_pct": exact_gap, "config": {"policies": list(pols)}, "policies": pols}


def _cmp(extra=0, gap=None, bound=None):
    return {"misses": extra, "extra_misses": extra, "avg_jct": 100.0, "jct_gap_pct": gap, "jct_gap_to_bound_pct": bound}


def test_summary_counts_proofs_misses_and_gaps_per_policy():
    records = [_rec(20, 0, 0, pols={"a": _cmp(0, 0.0, 5.0), "b": _cmp(2)}),
               _rec(20, 0, 1, "TIME_LIMIT", pols={"a": _cmp(0, 4.0, 10.0), "b": _cmp(0, 6.0, 12.0)}),
               {**_rec(20, 0, 2, "REFUSED", pols={}), "config": {"policies": ["a", "b"]}}]
    a, b = gaps_report.summary_rows(records, ["a", "b"])
    assert (a["windows"], a["proven"], a["refused"], a["windows_with_extra_misses"], a["extra_misses"]) == (3, 1, 1, 0, 0)
    assert a["jct_gap_mean_pct"] == 2.0 and a["jct_gap_max_pct"] == 4.0 and a["windows_at_incumbent"] == 1
    assert a["bound_gap_mean_pct"] == 7.5 and a["bound_gap_windows"] == 2 and math.isnan(a["bound_gap_lo_pct"])  # one seed
    assert (b["windows_with_extra_misses"], b["extra_misses"], b["jct_gap_windows"], b["jct_gap_mean_pct"]) == (1, 2, 1, 6.0)
    rows = gaps_report.window_rows(records)
    assert len(rows) == 6 and rows[-1]["status"] == "REFUSED" and rows[-1]["jct_gap_pct"] is None
    md = gaps_report.windows_markdown(records, ["a", "b"])
    assert "+2 / –" in md and "+0 / 4.0 % (≤ 10.0 %)" in md and "**OPTIMAL**" in md


def test_where_the_gap_lives_splits_the_solver_gap_from_the_relaxation_loss():
    relaxed = {**_rec(20, 0, 0, "TIME_LIMIT", pols={"a": _cmp(0, 5.4, 15.7)}), "objective": 73.55, "bound": 67.05,
               "exact_params": {"allocations": {"grid_bound": 67.55, "relaxation_bound": 67.05}}}
    dominated = {**_rec(20, 0, 1), "objective": 78.3, "bound": 78.3, "exact_params": {"allocations": {"check": "dominated"}}}
    assert gaps_report.gap_parts(relaxed) == (73.55, 67.55, 67.05)
    assert gaps_report.gap_parts(dominated) == (78.3, 78.3, 78.3)  # no relaxation: the grid bound is the certified one
    rows = gaps_report.window_rows([relaxed])
    assert (rows[0]["exact_objective"], rows[0]["grid_bound"], rows[0]["certified_bound"]) == (73.55, 67.55, 67.05)
    assert "73.55 / 67.55 / 67.05" in gaps_report.windows_markdown([relaxed, dominated], [])


def test_with_several_seeds_a_mean_is_the_mean_of_the_seed_means_with_its_interval():
    records = [_rec(10, 0, 0, pols={"a": _cmp(0, 2.0)}), _rec(10, 0, 1, pols={"a": _cmp(0, 4.0)}),  # seed 0: mean 3
               _rec(10, 1, 0, pols={"a": _cmp(0, 7.0)})]  # seed 1: mean 7
    (a,) = gaps_report.summary_rows(records, ["a"])
    assert a["seeds"] == 2 and a["jct_gap_mean_pct"] == 5.0 and a["jct_gap_lo_pct"] < 5.0 < a["jct_gap_hi_pct"]
    assert a["jct_gap_hi_pct"] - 5.0 == pytest.approx(12.706 * (2 * math.sqrt(2)) / math.sqrt(2), rel=1e-3)  # t(0.975, 1) x sd / sqrt(n)
    assert "5.00 % [" in gaps_report.summary_markdown([a])


def test_scaling_rows_give_the_fraction_proven_gap_and_time_per_size():
    records = [_rec(10, 0, 0, seconds=2.0), _rec(10, 0, 1, seconds=4.0),
               _rec(40, 0, 0, "TIME_LIMIT", 60.0, 8.0, {"a": _cmp(0, 1.0, 9.0)}), _rec(40, 0, 1, "FEASIBLE", 60.0, 4.0)]
    small, large = gaps_report.scaling_rows(records, ["a"])
    assert (small["jobs"], small["proven"], small["proven_mean_pct"], small["seconds_mean_s"]) == (10, 2, 100.0, 3.0)
    assert (large["proven"], large["proven_mean_pct"], large["exact_gap_mean_pct"], large["exact_gap_max_pct"]) == (0, 0.0, 6.0, 8.0)
    assert large["a_bound_gap_mean_pct"] == 9.0 and math.isnan(small["a_bound_gap_mean_pct"])


def test_figures_draw_each_policy_and_caps_only_with_several_seeds():
    from sensaopt.sweep.gaps_plot import gaps_figure, scaling_figure

    one = [_rec(10, 0, k, pols={"a": _cmp(0, float(k), 2.0 * k), "b": _cmp(0, 3.0, 4.0)}) for k in range(3)]
    two = one + [{**r, "seed": 1} for r in one]

    def gids(fig):
        return {a.get_gid() for ax in fig.axes for a in ax.get_children() if a.get_gid()}

    g = gids(gaps_figure(one, gaps_report.summary_rows(one, ["a", "b"]), ["a", "b"]))
    assert {"box:10:jct:a", "points:10:bound:b"} <= g and not any(x.startswith("ci:") for x in g)
    g = gids(gaps_figure(two, gaps_report.summary_rows(two, ["a", "b"]), ["a", "b"]))
    assert "ci:10:jct:a" in g
    rows = gaps_report.scaling_rows(two + [{**r, "jobs": 20} for r in two], ["a"])
    g = gids(scaling_figure(rows, ["a"], 60.0))
    assert {"line:proven:exact", "line:gap:a", "line:seconds:limit", "ci:seconds:exact"} <= g


@pytest.mark.parametrize("module", ["sensaopt.sweep.gaps", "sensaopt.sweep.gaps_report", "sensaopt.sweep.gaps_plot"])
def test_public_functions_document_their_arguments(module):
    import importlib
    import inspect

    from .test_docstrings import test_public_function_has_args_and_returns_sections as check

    m = importlib.import_module(module)
    names = [n for n, f in vars(m).items() if inspect.isfunction(f) and not n.startswith("_") and f.__module__ == module]
    assert names
    for name in names:
        check(module, name)


def test_the_former_window_gaps_script_maps_its_options_onto_the_command():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "window_gaps.py"
    spec = importlib.util.spec_from_file_location("window_gaps", path)
    assert spec is not None and spec.loader is not None
    wg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wg)
    args = wg.command(["--jobs", "40", "--count", "5", "--time-limit", "60", "--cooperate", "--out", "OUT"])
    text = " ".join(args)
    assert text.startswith("experiment gaps --jobs 40 --windows 5 --out-dir OUT/w40 --trace chronus-slo --first 3000")
    assert "--time-limit 60" in text and "--time-limit 30" not in text
    assert text.endswith("--serial --exact-option budget=work:10 --time-limit 60 --cooperate")  # the deterministic default
    wall = " ".join(wg.command(["--budget", "time"]))
    assert "--time-limit 30" in wall and "budget=" not in wall
    table = wg.command(["--table", "--processes", "2"])
    assert "--report-only" in table and "--serial" not in table


# ---- committed gaps folders (results/*/ made by `experiment gaps --results`) -----------------------
def _gaps_dirs():
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "results"
    return sorted(p.parent for p in results.glob("*/provenance.json") if json.loads(p.read_text()).get("args", [])[:2] == ["experiment", "gaps"])


@pytest.mark.parametrize("folder", _gaps_dirs() or [None], ids=lambda p: p.name if p else "none")
def test_a_committed_gaps_folder_replays_to_the_same_windows(folder, tmp_path, capsys):
    """Its rows parse, and its recorded command, replayed with --report-only into a new
    folder (nothing runs), plans exactly the windows it recorded (their keys)."""
    if folder is None:
        pytest.skip("results/ has no experiment gaps folder yet (`sensaopt experiment gaps ... --results results/NAME`)")
    prov = json.loads((folder / "provenance.json").read_text())
    rows = _csv(folder / "windows.csv")
    assert {r["window"] for r in rows} <= {w["window"] for w in prov["windows"]}
    assert all(r["policy"] in prov["settings"]["policies"] for r in rows)
    args, skip = [], False
    for a in prov["args"]:
        if skip:
            skip = False
            continue
        if a in ("--out-dir", "--results"):
            skip = True
            continue
        args.append(a)
    if not any(k == "start_policy" for k, _ in prov["settings"]["exact"]["settings"]):
        args += ["--exact-option", "start_policy=sensascale"]  # recorded before the best policy's start became the default
    code, _, err = run([*args, "--out-dir", tmp_path / "replay", "--report-only", "-q"], capsys)
    if code == 2 and "not found" in err:
        pytest.skip(f"the trace's data is not here: {err.strip()}")
    assert code == 0, err
    replay = json.loads((tmp_path / "replay" / "provenance.json").read_text())
    assert [w["key"] for w in replay["windows"]] == [w["key"] for w in prov["windows"]]


def test_exact_solves_start_from_the_best_policy_by_default():
    """Each window's exact solve starts from the best registered policy's schedule unless
    told; SensaScale's start (the solver's own default) is left out of the options, so
    windows computed before this default keep their keys."""
    from sensaopt.cli.gaps import _exact_options

    assert _exact_options([]) == (("start_policy", "best"),)
    assert _exact_options(["start_policy=sensascale"]) == ()
    assert _exact_options(["start_policy=edf", "lns_share=0.3"]) == (("lns_share", 0.3), ("start_policy", "edf"))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_the_default_processes_follow_the_cores_taskset_leaves():
    """Pinned to one core, ``experiment gaps`` starts one LocalCluster process, not one per
    logical core (two 60-s solves sharing a core would each get half of it)."""
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from sensaopt.sweep.provenance import usable_cores; print(usable_cores())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
    import sensaopt.cli.gaps as gaps_cli
    assert gaps_cli.usable_cores is usable_cores


def test_a_dict_option_is_recorded_as_the_json_the_command_line_takes():
    """``--exact-option 'solver_options={...}'`` is recorded as JSON, so the recorded command
    replays (a Python repr would be refused, exit 2)."""
    from sensaopt.config import format_value, parse_settings, parse_value
    from sensaopt.exact.settings import SolveSettings

    text = format_value({"linearization_level": 2, "cp_model_probing_level": 1})
    assert text == '{"cp_model_probing_level": 1, "linearization_level": 2}'
    parsed = parse_settings([f"solver_options={text}"], SolveSettings, "the exact solve", field="--exact-option")
    assert parsed == {"solver_options": {"linearization_level": 2, "cp_model_probing_level": 1}}
    for tp, value in ((bool, True), (int, 3), (float, 0.1), (str, "best"), (dict | None, None), (dict | None, {"a": 1})):
        assert parse_value(tp, format_value(value)) == value  # what the record writes, the command line reads back
