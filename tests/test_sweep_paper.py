"""The paper experiment's plan, relative reductions, table and figures (on fake records:
the real runs are far too long for the unit suite)."""

import pytest

from sensaopt.sweep.paper import PaperSettings, cluster_for, figures, paper_configs, reductions, table_markdown, table_rows
from sensaopt.traces.presets import preset_cluster


def test_plan_covers_workloads_nodes_policies():
    runs = paper_configs(PaperSettings())
    assert len(runs) == 4 * 2 * 5
    presets = {(label, g): cfg.preset for label, g, cfg in runs}
    assert presets[("Philly SLO", 8)] == "philly-8" and presets[("Helios", 16)] == "helios-16"
    assert {cfg.trace for _, _, cfg in runs} == {"chronus-slo", "chronus-mix1", "chronus-mix2", "helios-gen"}
    assert len({cfg.key() for _, _, cfg in runs}) == 40


def test_scaled_clusters_keep_equal_totals_and_load():
    s = PaperSettings(scale=0.1)
    for fam in ("philly", "helios"):
        (p8, f8), (p16, f16) = cluster_for(fam, 8, s), cluster_for(fam, 16, s)
        assert preset_cluster(p8).total_gpus == preset_cluster(p16).total_gpus
        assert f8 == f16 == pytest.approx(preset_cluster(p8).total_gpus / {"philly": 960, "helios": 768}[fam])
    assert cluster_for("philly", 8, s)[0] == "12x8"
    assert cluster_for("philly", 16, PaperSettings(node="chronus"))[0] == "philly-16-chronus"


def fake(runs):
    recs = {}
    vals = {"sensascale": (0.1, 100.0, 10.0), "chronus": (0.4, 200.0, 40.0), "edf": (0.5, 300.0, 0.0)}
    for _label, _g, cfg in runs:
        v, j, q = vals[cfg.policy]
        recs[cfg.key()] = {"key": cfg.key(), "metrics": {"jobs": 3, "slo_violation_rate": v, "avg_jct": j, "avg_queueing_time": q,
                                                           "gpu_utilization": 0.5}, "jct": [j / 2, j, 1.5 * j], "simulate_s": 1.0}
    return recs


def test_reductions_table_and_figures(tmp_path):
    runs = paper_configs(PaperSettings(policies=("sensascale", "chronus", "edf")))
    recs = fake(runs)
    rows = table_rows(runs, recs)
    assert len(rows) == 24
    per, avg = reductions(rows)
    assert len(per) == 8
    assert avg == {"slo_violation_rate": pytest.approx(-75.0), "avg_jct": pytest.approx(-50.0), "avg_queueing_time": pytest.approx(-75.0)}
    _, avg_edf = reductions(rows, base="edf")
    assert avg_edf["avg_queueing_time"] is None  # base 0: left out, shown n/a
    md = table_markdown(rows, per, avg)
    assert "| **average** | | -75.00 | -50.00 | -75.00 |" in md and "-74.22" in md
    files = figures(rows, runs, recs, tmp_path)
    assert all(f.stat().st_size > 10_000 for f in files)
    # a missing run is simply absent from the table
    del recs[runs[0][2].key()]
    assert len(table_rows(runs, recs)) == 23


def test_report_only_runs_nothing(tmp_path, capsys):
    from sensaopt.cli import main

    assert main(["experiment", "paper", "-o", str(tmp_path), "--report-only", "--scale", "0.1", "-q"]) == 0
    out = capsys.readouterr().out
    assert "40 runs: 0 reused, 0 computed, 0 failed, 40 missing" in out
    assert (tmp_path / "table.md").is_file() and not (tmp_path / "runs").exists() and not (tmp_path / "failed").exists()
    assert main(["experiment", "paper", "-o", str(tmp_path), "--report-only", "--policy", "nope"]) == 2
