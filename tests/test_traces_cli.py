"""`sensaopt simulate` and `sensaopt instances from-trace` on small trace files."""

import csv
import json

import pytest

from sensaopt.cli import main
from sensaopt.io import load_instance
from sensaopt.solve import solve
from sensaopt.traces.paths import CHRONUS_TRACES, traces_dir
from sensaopt.validator import check_schedule

from .test_traces_loaders import CHRONUS_HEADER, HELIOS_HEADER


def run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def small_chronus(tmp_path, n=40):
    rows = []
    kinds = ["strict", "soft", "best"]
    for k in range(n):
        kind = kinds[k % 3]
        gpus = [1, 1, 2, 4, 8][k % 5]
        dur = 20 + (k * 37) % 200
        if kind == "soft":
            rows.append(f"{k},vc,{gpus},{k * 9},1,m,{dur},1,{2 * dur}-{2 * dur + 30}-{2 * dur + 60}-{2 * dur + 90},10-8-5-2,0,soft")
        elif kind == "strict":
            rows.append(f"{k},vc,{gpus},{k * 9},1,m,{dur},1,{int(1.5 * dur)},10,0,strict")
        else:
            rows.append(f"{k},vc,{gpus},{k * 9},1,m,{dur},1,1,10,1,best")
    rows.append(f"{n},vc,0,5,1,m,30,1,60,10,0,strict")
    p = tmp_path / "small_chronus.csv"
    p.write_text(CHRONUS_HEADER + "\n".join(rows) + "\n")
    return p


def test_simulate_writes_jobs_and_summary(tmp_path, capsys):
    trace = small_chronus(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = run(["simulate", "--trace", trace, "--preset", "2x8", "--policy", "edf", "--policy", "fifo",
                             "--round-minutes", "5", "--seed", "3", "--sensitive-fraction", "0.7", "--out-dir", out], capsys)
    assert code == 0, err
    assert "skipped: no_gpu 1" in err and "heuristic:edf" in stdout
    for pol in ("edf", "fifo"):
        s = json.loads((out / f"{pol}.summary.json").read_text())
        assert s["metrics"]["jobs"] == 40 and s["metrics"]["finished"] == 40
        assert s["workload"]["sensitive_fraction"] == 0.7 and s["instance"]["gpus"] == 16
        rows = list(csv.DictReader((out / f"{pol}.jobs.csv").open()))
        assert len(rows) == 40
        # per-job rows agree with the summary
        jct = [float(r["jct"]) for r in rows]
        assert sum(jct) / len(jct) == pytest.approx(s["metrics"]["avg_jct"])
        viol = sum(1 for r in rows if r["met_deadline"] == "False")
        assert viol == s["metrics"]["slo_violations"]
        assert sum(1 for r in rows if r["deadline"] == "") == 40 - s["metrics"]["slo_jobs"]


def test_simulate_errors_are_one_line(tmp_path, capsys):
    code, _, err = run(["simulate", "--trace", tmp_path / "nope.csv", "--out-dir", tmp_path / "o"], capsys)
    assert code == 2 and "no such file" in err
    bad = tmp_path / "bad.csv"
    bad.write_text(CHRONUS_HEADER + "1,vc,1,0,1,m,oops,1,60,10,0,strict\n")
    code, _, err = run(["simulate", "--trace", bad, "--preset", "1x8", "--out-dir", tmp_path / "o"], capsys)
    assert code == 2 and "line 2: duration (job 1)" in err
    code, _, err = run(["simulate", "--trace", bad, "--preset", "1x8", "--skip-malformed", "--out-dir", tmp_path / "o"], capsys)
    assert code == 2 and "no GPU job" in err
    code, _, err = run(["simulate", "--trace", small_chronus(tmp_path), "--preset", "huge", "--out-dir", tmp_path / "o"], capsys)
    assert code == 2 and "unknown cluster preset" in err


def test_simulate_helios_log(tmp_path, capsys):
    rows = [f"h{k},u,v,{[1, 2, 8][k % 3]},4,1,COMPLETED,{600 * k},{600 * k},{600 * k + 1800},{1800 + 60 * k},0" for k in range(12)]
    p = tmp_path / "cluster_log.csv"
    p.write_text(HELIOS_HEADER + "\n".join(rows) + "\n")
    code, _, err = run(["simulate", "--trace", p, "--preset", "2x8-chronus", "--policy", "edf", "-q", "--out-dir", tmp_path / "o"], capsys)
    assert code == 0, err
    s = json.loads((tmp_path / "o" / "edf.summary.json").read_text())
    assert s["metrics"]["slo_jobs"] == 12  # the rule gave every job a deadline


def test_instances_from_trace_feed_the_solvers(tmp_path, capsys):
    trace = small_chronus(tmp_path, n=30)
    out = tmp_path / "wins"
    code, stdout, err = run(["instances", "from-trace", "--trace", trace, "-n", "6", "--count", "4", "--round-minutes", "10", "--out-dir", out],
                            capsys)
    assert code == 0, err
    files = sorted(out.glob("*.json"))
    assert len(files) == 4
    seen = set()
    for f in files:
        inst = load_instance(f)
        assert len(inst.jobs) == 6 and inst.jobs[0].arrival < 60
        assert not (seen & {j.id for j in inst.jobs})  # consecutive, non-overlapping windows
        seen |= {j.id for j in inst.jobs}
        assert inst.cluster.total_gpus >= max(j.gpus for j in inst.jobs)
        raw = json.loads(f.read_text())
        assert raw["provenance"]["generator"] == "sensaopt instances from-trace" and "--jobs 6" in raw["provenance"]["command"]
        res = solve(inst, solver="heuristic", policy="edf")
        assert check_schedule(inst, res.schedule).ok


def test_windows_scale_cluster_to_load():
    from sensaopt.traces.trace import TraceData, TraceJob
    from sensaopt.traces.windows import WindowConfig, cut_windows

    jobs = [TraceJob(str(k), 10.0 * k, 4, 300.0) for k in range(40)]
    d = TraceData("t", "t", jobs, has_deadlines=False)
    lo = cut_windows(d, WindowConfig(n_jobs=10, count=1, load=2.0, max_nodes=50))[0][0]
    hi = cut_windows(d, WindowConfig(n_jobs=10, count=1, load=0.5, max_nodes=50))[0][0]
    # W = 10*4*300 = 12000 GPU-min, H = 90 + 300 = 390 min
    assert lo.cluster.num_nodes == round(12000 / (2.0 * 390 * 8))
    assert hi.cluster.num_nodes == round(12000 / (0.5 * 390 * 8))
    assert all(j.deadline is not None and j.deadline % 60 == 0 for j in lo.jobs)


def test_simulate_real_chronus_window(tmp_path, capsys):
    if not (traces_dir() / CHRONUS_TRACES["chronus-mix2"]).is_file():
        pytest.skip("Chronus traces not found (set SENSAOPT_TRACES)")
    code, stdout, err = run(["simulate", "--trace", "chronus-mix2", "--limit", "400", "--preset", "philly-16", "--policy", "edf",
                             "--policy", "sensascale", "-q", "--out-dir", tmp_path / "o"], capsys)
    assert code == 0, err
    s = json.loads((tmp_path / "o" / "sensascale.summary.json").read_text())
    assert s["metrics"]["finished"] == 400 and s["metrics"]["slo_jobs"] < 400  # MIX2 has best-effort jobs
