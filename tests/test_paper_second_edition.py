"""The paper experiment's second edition: servable-job rates, the Philly / Helios / 4-cell
readings, SensaScale vs the best baseline per cell, the configurations named from the
records, and a stopped (SIGINT) and restarted run giving the same report."""

import csv
import io
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from sensaopt.policies import POLICIES as REGISTRY
from sensaopt.policies import policy_class
from sensaopt.sweep import paper
from sensaopt.sweep.paper import PaperSettings, averages, best_baselines, build_report, cell_rows, paper_configs, table_rows

POLS = ("sensascale", "chronus", "edf", "fifo")


def fake(runs, servable=True):
    """Per policy (violation rate, JCT); 100 deadline jobs per run, 10 of them unservable."""
    figures = {"sensascale": (0.20, 100.0), "chronus": (0.40, 200.0), "edf": (0.30, 150.0), "fifo": (0.30, 140.0)}
    recs = {}
    for _label, _g, cfg in runs:
        v, j = figures[cfg.policy]
        j += cfg.seed
        rec = {"key": cfg.key(), "metrics": {
            "jobs": 100, "slo_jobs": 100, "slo_violations": round(100 * v), "slo_violation_rate": v, "weighted_violation_rate": v,
            "avg_jct": j, "avg_queueing_time": 1.0, "avg_pending_time": 2.0, "preemptions": 0, "migrations": 0, "resizes": 0,
            "gpu_utilization": 0.5}, "jct": [j], "simulate_s": 1.0, "wall_s": 1.0,
            "params": {"config": {"k": 1} if cfg.policy == "edf" else {}}}
        if servable:
            rec["servable"] = {"slo_jobs": 100, "unservable": 10, "servable": 90, "violations": round(100 * v) - 10}
        recs[cfg.key()] = rec
    return recs


S = PaperSettings(policies=POLS, seeds=(0, 1))


def test_servable_rates_readings_and_best_baseline():
    runs = paper_configs(S)
    recs = fake(runs)
    rows = table_rows(runs, recs)
    assert {r["node"] for r in rows} == {"synergy", "chronus", "alibaba"}
    r0 = next(r for r in rows if r["policy"] == "sensascale")
    assert r0["servable_violation_rate"] == pytest.approx(10 / 90) and r0["unservable"] == 10
    cells = cell_rows(rows)
    best = best_baselines(cells)
    assert len(best) == 12 and set(best.values()) == {"fifo"}  # edf and fifo tie on misses: fifo's JCT is lower
    per, readings = averages(rows, base=best)
    assert len(per) == 12 and all(p["base"] == "fifo" for p in per)
    names = [n for n, _ in readings]
    assert names == ["all (8 cells, synergy nodes)", "Philly (6 cells, synergy nodes)", "Helios (2 cells, synergy nodes)",
                     "Philly on 8-GPU, Helios on 16-GPU nodes (4 cells, synergy nodes)"]
    assert [a["cells"] for _, a in readings] == [8, 6, 2, 4]
    r8 = dict(readings)["all (8 cells, synergy nodes)"]
    assert r8["slo_violation_rate"][0] == pytest.approx(100 * (0.2 - 0.3) / 0.3)
    assert r8["servable_violation_rate"][0] == pytest.approx(100 * (10 - 20) / 20)
    _, md = build_report(S, runs, recs)[1:]
    assert "Philly SLO 8-GPU chronus: `fifo`" in md and "**SensaScale vs the best baseline of each cell**" in md
    assert "| Philly SLO | 8-GPU alibaba | sensascale | 2 | 100 | 20.00 [20.00, 20.00] | 11.11 [11.11, 11.11] | 10.0" in md
    assert "**average over Helios (2 cells, synergy nodes)**" in md
    assert "**average over Philly on 8-GPU, Helios on 16-GPU nodes (4 cells, synergy nodes)**" in md
    assert "- `edf`: vs its defaults: k=1" in md


def test_old_records_borrow_the_unservable_count_of_their_workload():
    runs = paper_configs(replace(S, shapes=()))
    recs = fake(runs)
    for _, _, cfg in runs:  # only edf's records know the count; the others predate it
        if cfg.policy != "edf":
            recs[cfg.key()].pop("servable")
            recs[cfg.key()].pop("params")
    rows = table_rows(runs, recs)
    assert all(r["servable_violation_rate"] is not None for r in rows)
    ss = next(r for r in rows if r["policy"] == "sensascale")
    assert ss["servable_violation_rate"] == pytest.approx(10 / 90)
    none = table_rows(runs, fake(runs, servable=False))
    assert all(r["servable_violation_rate"] is None and r["unservable"] is None for r in none)
    md = build_report(replace(S, shapes=()), runs, fake(runs, servable=False))[2]
    assert "| n/a |" in md


def _script(out: Path) -> str:
    """A paper command on two synthetic workloads (the real traces are far too long here)."""
    return f"""
import sys
from sensaopt.policies import POLICIES, policy_class
from sensaopt.sweep import paper
paper.settings.WORKLOADS = {SYNTHETIC!r}
base = policy_class("edf")
POLICIES.register("edf-tune", type("EdfCopy", (base,), {{"name": "edf-tune"}}))
from sensaopt.cli import main
sys.exit(main({ARGS!r} + ["--out-dir", {str(out)!r}]))
"""


SYNTHETIC = (("Philly SLO", "synthetic", "philly"), ("Helios", "synthetic", "helios"))
ARGS = ["experiment", "paper", "--seeds", "1", "--serial", "-q", "--decomposition", "--policy", "sensascale", "--policy", "edf-tune"]


def _in_process(out: Path, monkeypatch) -> None:
    from sensaopt.cli import main

    monkeypatch.setattr(paper.settings, "WORKLOADS", SYNTHETIC)
    monkeypatch.setitem(REGISTRY._entries, "edf-tune", type("EdfCopy", (policy_class("edf"),), {"name": "edf-tune"}))
    assert main([*ARGS, "--out-dir", str(out)]) == 0


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    return env


def _runs_csv(path: Path) -> list[dict]:
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    for r in rows:
        r.pop("simulate_s")  # wall time: differs run to run
    return rows


def test_stopped_and_restarted_it_finishes_what_is_left_with_the_same_report(tmp_path, monkeypatch):
    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    _in_process(whole, monkeypatch)
    total = len(list((whole / "runs").glob("*.json")))
    assert total == 8 * 2 + 2  # 8 cells x 2 policies, 2 decomposition rows
    proc = subprocess.Popen([sys.executable, "-c", _script(stopped)], env=_env(), stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    while not list((stopped / "runs").glob("*.json")) and time.monotonic() - t0 < 120:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) != 0  # stopped by the signal
    done = len(list((stopped / "runs").glob("*.json")))
    assert 0 < done < total
    _in_process(stopped, monkeypatch)  # restarted: only what is left runs
    assert len(list((stopped / "runs").glob("*.json"))) == total
    assert (stopped / "table.md").read_text() == (whole / "table.md").read_text()
    assert (stopped / "table.csv").read_text() == (whole / "table.csv").read_text()
    assert _runs_csv(stopped / "runs.csv") == _runs_csv(whole / "runs.csv")
    md = (whole / "table.md").read_text()
    assert "sensascale (speed<=1)" in md and "sensascale (ordering)" in md and "`edf-tune`" in md
    assert "| Philly SLO | 8-GPU alibaba | edf-tune |" in md


def test_a_policy_registered_by_the_test_joins_the_default_list(monkeypatch, tmp_path, capsys):
    import json

    from sensaopt.cli import main

    monkeypatch.setitem(REGISTRY._entries, "lst", type("LstCopy", (policy_class("edf"),), {"name": "lst"}))
    out, res = tmp_path / "o", tmp_path / "r"
    assert main(["experiment", "paper", "--out-dir", str(out), "--report-only", "-q", "--shape", "none", "--results", str(res)]) == 0
    assert "0 computed" in capsys.readouterr().out
    prov = json.loads((res / "provenance.json").read_text())
    assert "lst" in prov["settings"]["policies"] and "lst" in {r["policy"] for r in prov["runs"]}
    assert prov["settings"]["shapes"] == []
