"""The paper experiment's plan, per-cell means and intervals over seeds, the paired change
vs Chronus, tables, figures and provenance (on fake records: the real runs are far too long
for the unit suite)."""

import json
import math
from dataclasses import replace

import pytest

from sensaopt.sweep.config import RunConfig
from sensaopt.sweep.paper import (
    FIRST_EDITION_POLICIES,
    POLICIES,
    PaperSettings,
    cell_rows,
    check_decomposition,
    cluster_for,
    figures,
    node_of,
    paper_args,
    paper_configs,
    policy_label,
    reductions,
    run_values,
    table_markdown,
    table_rows,
)
from sensaopt.sweep.stats import mean_interval
from sensaopt.traces.presets import preset_cluster

FIRST = PaperSettings(policies=FIRST_EDITION_POLICIES, shapes=())  # the first edition's plan


def test_plan_covers_workloads_nodes_policies_seeds():
    runs = paper_configs(FIRST)
    assert len(runs) == 4 * 2 * 5 * 3
    presets = {(label, g): cfg.preset for label, g, cfg in runs}
    assert presets[("Philly SLO", 8)] == "philly-8" and presets[("Helios", 16)] == "helios-16"
    assert {cfg.trace for _, _, cfg in runs} == {"chronus-slo", "chronus-mix1", "chronus-mix2", "helios-gen"}
    assert len({cfg.key() for _, _, cfg in runs}) == 120
    assert [cfg.seed for _, _, cfg in runs] == sorted(cfg.seed for _, _, cfg in runs)  # whole seeds first
    one = paper_configs(replace(FIRST, seeds=(0,)))
    assert [c.key() for _, _, c in one] == [c.key() for _, _, c in runs[:40]]


def test_second_edition_plan_adds_node_shapes_and_policies_without_changing_old_keys():
    s = PaperSettings()
    assert s.policies == POLICIES and len(POLICIES) == 10 and s.shapes == ("chronus", "alibaba")
    runs = paper_configs(s)
    assert len(runs) == (8 + 2 * 2) * 10 * 3
    extra = [(label, g, cfg) for label, g, cfg in runs if node_of(cfg) != "synergy"]
    assert {(label, g, cfg.preset) for label, g, cfg in extra} == {
        ("Philly SLO", g, f"philly-{g}-{n}") for g in (8, 16) for n in ("chronus", "alibaba")}
    assert {cfg.duration_at for _, _, cfg in extra} == {"node"}  # the default off the reference share
    assert {cfg.duration_at for _, _, cfg in runs if node_of(cfg) == "synergy"} == {"reference"}
    old = {c.key() for _, _, c in paper_configs(FIRST)}
    same = {c.key() for _, _, c in runs if node_of(c) == "synergy" and c.policy in FIRST_EDITION_POLICIES}
    assert same == old  # the first edition's runs keep their keys: stored runs are reused
    ref = paper_configs(PaperSettings(duration_at="reference", policies=("edf",)))
    assert {c.to_dict().get("duration_at") for _, _, c in ref} == {None}  # the old convention: old keys on every shape


def test_decomposition_rows_are_sensascale_variants_on_philly_slo_8():
    s = PaperSettings(policies=("sensascale", "edf"), shapes=(), seeds=(0, 1), decomposition=True)
    check_decomposition()
    runs = paper_configs(s)
    dec = [(label, g, c) for label, g, c in runs if c.policy_config]
    assert len(runs) == 8 * 2 * 2 + 2 * 2 and len(dec) == 4
    assert {(label, g, c.preset) for label, g, c in dec} == {("Philly SLO", 8, "philly-8")}
    assert {policy_label(c) for _, _, c in dec} == {"sensascale (speed<=1)", "sensascale (ordering)"}
    knobs = {policy_label(c): dict(c.policy_config) for _, _, c in dec}
    assert knobs["sensascale (speed<=1)"] == {"pairing": False, "fill_spare": False, "adjust": False}
    assert policy_label(RunConfig(policy="edf", policy_config=(("x", 1),))) == "edf [x=1]"


def test_scaled_clusters_keep_equal_totals_and_load():
    s = PaperSettings(scale=0.1)
    for fam in ("philly", "helios"):
        (p8, f8), (p16, f16) = cluster_for(fam, 8, s), cluster_for(fam, 16, s)
        assert preset_cluster(p8).total_gpus == preset_cluster(p16).total_gpus
        assert f8 == f16 == pytest.approx(preset_cluster(p8).total_gpus / {"philly": 960, "helios": 768}[fam])
    assert cluster_for("philly", 8, s)[0] == "12x8"
    assert cluster_for("philly", 16, PaperSettings(node="chronus"))[0] == "philly-16-chronus"


def test_run_values_per_job_and_missing():
    v = run_values({"jobs": 4, "slo_violation_rate": 0.25, "preemptions": 2, "migrations": 1, "avg_jct": None})
    assert v["restarts_per_job"] == 0.5 and v["migrations_per_job"] == 0.25 and v["slo_violation_rate"] == 0.25
    assert v["avg_jct"] is None and v["resizes_per_job"] is None and v["avg_pending_time"] is None  # absent: None, not 0


def fake(runs):
    """Chronus: violations 0.4, JCT 200; SensaScale: a quarter of the violations, JCT 100 + 10·seed; EDF: queueing 0."""
    recs = {}
    for _label, _g, cfg in runs:
        s = cfg.seed
        v, j, q = {"sensascale": (0.1, 100.0 + 10 * s, 10.0), "chronus": (0.4, 200.0, 40.0), "edf": (0.5, 300.0, 0.0)}[cfg.policy]
        recs[cfg.key()] = {"key": cfg.key(), "metrics": {
            "jobs": 4, "slo_violation_rate": v, "weighted_violation_rate": v, "avg_jct": j, "avg_queueing_time": q,
            "avg_pending_time": 2 * q, "preemptions": 1 + s, "migrations": 0, "resizes": 0, "gpu_utilization": 0.5},
            "jct": [j / 2, j, 1.5 * j], "simulate_s": 1.0, "wall_s": 2.0}
    return recs


def test_cells_reductions_table_and_figures(tmp_path):
    runs = paper_configs(PaperSettings(policies=("sensascale", "chronus", "edf"), shapes=()))
    recs = fake(runs)
    rows = table_rows(runs, recs)
    assert len(rows) == 72 and {r["key"] for r in rows} == set(recs)
    cells = cell_rows(rows)
    assert len(cells) == 24 and all(c["seeds"] == 3 for c in cells)
    ss = next(c for c in cells if c["policy"] == "sensascale")
    assert (ss["avg_jct"], ss["avg_jct_lo"], ss["avg_jct_hi"]) == pytest.approx(mean_interval([100, 110, 120]))
    assert ss["restarts_per_job"] == pytest.approx(0.5)  # (1 + 2 + 3) / 3 / 4 jobs
    per, avg = reductions(rows)
    assert len(per) == 8
    # paired per seed: JCT changes -50, -45, -40 %; violations -75 % every seed (zero-width interval)
    assert (per[0]["avg_jct"], per[0]["avg_jct_lo"], per[0]["avg_jct_hi"]) == pytest.approx(mean_interval([-50, -45, -40]))
    assert avg["slo_violation_rate"] == pytest.approx((-75.0, -75.0, -75.0))
    assert avg["avg_jct"] == pytest.approx(mean_interval([-50, -45, -40]))
    _, avg_edf = reductions(rows, base="edf")
    assert all(math.isnan(x) for x in avg_edf["avg_queueing_time"])  # base 0 in every seed: no change, n/a
    md = table_markdown(cells, per, avg)
    assert avg["seeds"] == 3
    assert avg["slo_violation_points"] == pytest.approx((-30.0, -30.0, -30.0))  # 100·(0.1 − 0.4) every seed
    assert ("| **average over cells** |  | 3 | -75.00 [-75.00, -75.00] | -30.00 [-30.00, -30.00] | n/a | -75.00 [-75.00, -75.00] "
            "| -45.00 [") in md
    assert "| paper |  |  | -74.22 |  |" in md
    md2 = table_markdown(cells, per, avg, others=[("edf", *reductions(rows, base="edf"))])
    assert md2.startswith(md.rstrip("\n")) and "**SensaScale vs EDF**" in md2 and md2.count("| paper |") == 1
    assert md2.count("| **average over cells** |") == 2 and "| n/a |" in md2.split("**SensaScale vs EDF**")[1]
    files = figures(cells, runs, recs, tmp_path)
    assert all(f.stat().st_size > 10_000 for f in files)
    # a missing run is simply absent from the table; its cell has two seeds left
    del recs[runs[0][2].key()]
    rows2 = table_rows(runs, recs)
    assert len(rows2) == 71 and sorted(c["seeds"] for c in cell_rows(rows2))[0] == 2
    # ... and the average keeps to the seeds every cell has (seed 0 now lacks a cell)
    _, avg2 = reductions(rows2)
    assert avg2["seeds"] == 2 and avg2["avg_jct"] == pytest.approx(mean_interval([-45, -40]))


def test_a_base_with_no_miss_counts_in_the_points_difference():
    """A cell whose base misses nothing has no relative change in violations; the points
    difference still shows SensaScale's misses there and enters the average (else the cell
    where SensaScale loses would drop out of the violation average and flatter it)."""
    rows = []
    for seed in (0, 1, 2):
        for wl, ours, base in (("Philly SLO", 0.02, 0.04), ("Philly MIX1", 0.01, 0.0)):
            for pol, v in (("sensascale", ours), ("lst", base)):
                rows.append({"workload": wl, "node_gpus": 8, "node": "synergy", "policy": pol, "seed": seed,
                             "slo_violation_rate": v, "avg_jct": 100.0})
    per, avg = reductions(rows, base="lst")
    mix1 = next(r for r in per if r["workload"] == "Philly MIX1")
    assert math.isnan(mix1["slo_violation_rate"])  # relative: undefined against 0
    assert mix1["slo_violation_points"] == pytest.approx(1.0)  # 100·(0.01 − 0)
    assert avg["slo_violation_rate"][0] == pytest.approx(-50.0)  # only the SLO cell has a relative change
    assert avg["slo_violation_points"][0] == pytest.approx((-2.0 + 1.0) / 2)  # both cells: the loss on MIX1 counts


def test_paper_args_need_consecutive_seeds():
    assert paper_args(PaperSettings(seeds=(3, 4)), "o")[:10] == ["experiment", "paper", "--out-dir", "o", "--scale", "1.0", "--seeds", "2",
                                                                "--seed", "3"]
    with pytest.raises(ValueError):
        paper_args(PaperSettings(seeds=(0, 2)), "o")


def test_report_only_runs_nothing_and_records_provenance(tmp_path, capsys):
    from sensaopt.cli import main
    from sensaopt.policies import policy_names

    out, res = tmp_path / "out", tmp_path / "res"
    assert main(["experiment", "paper", "--out-dir", str(out), "--report-only", "--scale", "0.1", "-q", "--results", str(res)]) == 0
    n = len(paper_configs(PaperSettings(scale=0.1, policies=tuple(p for p in POLICIES if p in policy_names()))))
    assert f"{n} runs: 0 reused, 0 computed, 0 failed, {n} missing" in capsys.readouterr().out
    assert (out / "table.md").is_file() and not (out / "runs").exists() and not (out / "failed").exists()
    prov = json.loads((res / "provenance.json").read_text())
    s = PaperSettings(scale=0.1, policies=tuple(p for p in POLICIES if p in policy_names()))
    planned = [c.key() for _, _, c in paper_configs(s)]
    assert [r["key"] for r in prov["runs"]] == planned and prov["runs_missing"] == n
    assert prov["args"] == paper_args(s, out, res)
    assert {"cpu_model", "cores", "cores_usable", "ram_gib", "loadavg", "loadavg_end"} <= set(prov["machine"])
    assert "commit" in prov["git"] and "dirty" in prov["git"] and prov["versions"]["sensaopt"]
    assert main(["experiment", "paper", "--out-dir", str(out), "--report-only", "--policy", "nope"]) == 2
