"""The ablation and robustness experiments: their grids (knobs read from the config
dataclass), resumability, the table and figure content on a tiny synthetic workload, and
the CLI's one-line refusals."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import pytest

from sensaopt.config import WorkloadConfig
from sensaopt.policies.sensascale.config import SensaScaleConfig
from sensaopt.sweep import ResultStore, run_serial
from sensaopt.sweep import experiment_plot as plot
from sensaopt.sweep import experiments as ex

TINY = WorkloadConfig(trace="synthetic", jobs=6, preset="2x8", round_minutes=10.0)


def test_ablation_flips_every_boolean_knob_and_backfill_from_the_dataclass():
    variants = dict(ex.ablation_variants())
    assert variants.pop("default") == {}
    expected = {f.name: (not f.default) for f in fields(SensaScaleConfig) if isinstance(f.default, bool)}
    for f in fields(SensaScaleConfig):
        if f.name in ex.OFF_VALUES:
            expected[f.name] = next(v for v in ex.OFF_VALUES[f.name] if v != f.default)
    assert expected["backfill"] == "none"
    assert {k: v for d in variants.values() for k, v in d.items()} == expected
    assert all(len(d) == 1 for d in variants.values())  # one knob at a time
    assert "pairing=false" in variants and "backfill=none" in variants


def test_a_new_knob_appears_in_the_ablation_without_code_changes():
    @dataclass(frozen=True)
    class Knobs:
        on: bool = True
        off_by_default: bool = False
        level: int = 3  # no off value: left out
        mode: str = field(default="smart", metadata={"off": "plain"})
        backfill: str = "none"  # its one alternative (OFF_VALUES) is the default: left out
        deadline_order: str = "lst"  # -> "edf", the first alternative that is not the default

    assert ex.ablation_variants(Knobs) == [("default", {}), ("on=false", {"on": False}), ("off_by_default=true", {"off_by_default": True}),
                                           ("mode=plain", {"mode": "plain"}), ("deadline_order=edf", {"deadline_order": "edf"})]
    runs = ex.ablation_runs(TINY, 2, Knobs)
    assert len(runs) == 5 * 2 and {c.seed for _, c in runs} == {0, 1}
    assert {c.policy for _, c in runs} == {"sensascale"}
    assert [dict(c.policy_config) for cell, c in runs if cell.value == "mode=plain"] == [{"mode": "plain"}] * 2


def test_robustness_varies_one_axis_at_a_time():
    runs = ex.robustness_runs(TINY, 3, policies=("sensascale", "edf"))
    n_values = sum(len(v) for _, v in ex.ROBUSTNESS_AXES)
    assert len(runs) == n_values * 2 * 3
    for cell, cfg in runs:
        for axis, _ in ex.ROBUSTNESS_AXES:  # every other axis at the base's value
            assert getattr(cfg, axis) == (cell.value if axis == cell.axis else getattr(TINY, axis))
    cells = {(c.axis, c.value) for c, _ in runs}
    assert {v for a, v in cells if a == "move_cost_scale"} == {0.0, 1.0, 4.0, 10.0}
    assert {v for a, v in cells if a == "sensitive_fraction"} == {0.0, 0.25, 0.5, 0.75, 1.0}
    assert {v for a, v in cells if a == "mix"} == {"fraction", "synergy"}
    assert {v for a, v in cells if a == "profile_error"} == {0.0, 0.1, 0.3}
    # the base point of every axis is one configuration: stored and computed once
    base = {c.key() for cell, c in runs if getattr(c, cell.axis) == getattr(TINY, cell.axis)}
    assert len(base) == 2 * 3
    assert ex.robustness_runs(TINY, 1, policies=("edf", "edf")) == ex.robustness_runs(TINY, 1, policies=("edf",))
    with pytest.raises(ValueError, match="not a WorkloadConfig field"):
        ex.robustness_runs(TINY, 1, axes=(("nope", (1,)),))


def _fake_record(cfg, violations):
    return {"key": cfg.key(), "metrics": {"jobs": 10, "slo_violations": violations, "slo_violation_rate": violations / 10,
                                          "avg_jct": 100.0 + violations, "avg_queueing_time": 5.0, "preemptions": 2, "migrations": 5,
                                          "resizes": 1, "restart_minutes_lost": 1.0, "migration_minutes_lost": 2.0,
                                          "resize_minutes_lost": 0.5}}


def test_summary_is_mean_and_student_t_interval_over_seeds():
    runs = ex.ablation_runs(TINY, 3, SensaScaleConfig)[:3]  # the default cell, seeds 0..2
    recs = {c.key(): _fake_record(c, v) for (_, c), v in zip(runs, (1, 2, 6))}
    (row,) = ex.summarize(runs, recs)
    assert row["seeds"] == 3 and row["violations"] == pytest.approx(3.0)
    half = 4.302652729911275 * math.sqrt(7.0) / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n), sd^2 = (4+1+9)/2
    assert (row["violations_lo"], row["violations_hi"]) == (pytest.approx(3 - half), pytest.approx(3 + half))
    assert row["violation_rate"] == pytest.approx(30.0) and row["migrations_per_job"] == pytest.approx(0.5)
    assert row["minutes_lost"] == pytest.approx(3.5) and row["minutes_lost_lo"] == row["minutes_lost_hi"] == pytest.approx(3.5)
    md = ex.table_markdown([row])
    assert "| knob | default | sensascale | 3 | 3.0 [" in md and "minus" not in md
    # one seed missing: two left; a record without the new fields: n/a, not 0
    del recs[runs[2][1].key()]
    for k in ("resizes", "resize_minutes_lost"):
        del recs[runs[0][1].key()]["metrics"][k]
    (row,) = ex.summarize(runs, recs)
    assert row["seeds"] == 2 and row["resizes_per_job"] == pytest.approx(0.1) and math.isnan(row["resizes_per_job_lo"])
    assert row["minutes_lost"] == pytest.approx(3.5)  # the complete record only
    assert "n/a" not in ex.cell_text(row, "resizes_per_job")


def test_paired_differences_are_per_seed_against_the_reference_cell():
    runs = [r for r in ex.ablation_runs(TINY, 3, SensaScaleConfig) if r[0].value in ("default", "pairing=false")]
    # the variant is the default + 1 violation on every seed: zero-width interval, whatever the seeds' spread
    recs = {c.key(): _fake_record(c, 10 * c.seed + (cell.value != "default")) for cell, c in runs}
    del recs[runs[0][1].key()]  # default, seed 0: that seed has no pair
    (row,) = ex.summarize_paired(runs, recs, ex.ablation_reference)
    assert (row["value"], row["vs"], row["seeds"]) == ("pairing=false", "default", 2)
    assert (row["violations"], row["violations_lo"], row["violations_hi"]) == (1.0, 1.0, 1.0)
    assert row["avg_jct"] == 1.0 and row["minutes_lost"] == 0.0
    md = ex.table_markdown([row])
    assert "| minus |" in md and "| knob | pairing=false | sensascale | default | 2 | 1.0 [1.0, 1.0] |" in md
    # robustness: each policy minus EDF in the same cell, EDF itself left out
    axes = (("profile_error", (0.0, 0.3)),)
    rruns = ex.robustness_runs(TINY, 2, policies=("sensascale", "edf"), axes=axes)
    rrecs = {c.key(): _fake_record(c, 5 if c.policy == "edf" else 2) for _, c in rruns}
    rows = ex.summarize_paired(rruns, rrecs, ex.robustness_reference)
    assert [(r["value"], r["policy"], r["vs"], r["violations"]) for r in rows] == [("0.0", "sensascale", "edf", -3.0),
                                                                                 ("0.3", "sensascale", "edf", -3.0)]
    md, csv_text, cells = ex.report("robustness", rruns, rrecs)
    assert len(cells) == 4 and "Difference from EDF" in md and len(csv_text.splitlines()) == 1 + 4 + 2


def test_real_runs_resume_and_fill_the_table_and_figures(tmp_path):
    runs = ex.ablation_runs(TINY, 2)
    runs = [r for r in runs if r[0].value in ("default", "pairing=false")]
    store = ResultStore(tmp_path)
    cfgs = [c for _, c in runs]
    first = run_serial(cfgs, store)
    assert first.ok and len(first.computed) == 4 and first.reused == 0
    again = run_serial(cfgs, store)
    assert again.computed == [] and again.reused == 4  # the second run does no work
    recs = {c.key(): store.get(c.key()) for c in cfgs}
    rows = ex.summarize(runs, recs)
    assert [(r["value"], r["seeds"]) for r in rows] == [("default", 2), ("pairing=false", 2)]
    assert all(r["avg_jct"] > 0 for r in rows)
    csv_text = ex.table_csv(rows)
    assert csv_text.splitlines()[0].startswith("axis,value,policy,vs,seeds,violations,violations_lo,violations_hi")
    fig = plot.ablation_figure(rows)
    ax = fig.axes[0]
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("bar:")]
    assert [b.get_gid() for b in bars] == ["bar:default", "bar:pairing=false"]
    assert [b.get_width() for b in bars] == pytest.approx([r["violations"] for r in rows])
    assert len([a for a in fig.axes if a.has_data()]) == len(ex.COLUMNS)
    assert fig.legends and not any(a.get_legend() for a in fig.axes)  # the legend outside the axes
    p = plot.save_figure(fig, tmp_path / "ablation.png")
    assert p.stat().st_size > 10_000


def test_robustness_figure_one_row_per_axis_one_line_per_policy():
    axes = (("profile_error", (0.0, 0.3)), ("mix", ("fraction", "synergy")))
    runs = ex.robustness_runs(TINY, 2, policies=("sensascale", "edf"), axes=axes)
    recs = {c.key(): _fake_record(c, 1 + (c.policy == "edf") + c.seed) for _, c in runs}
    rows = ex.summarize(runs, recs)
    fig = plot.robustness_figure(rows, columns=("violations", "avg_jct"))
    assert len(fig.axes) == 4
    from sensaopt.palette import policy_color

    for ax, axis in zip(fig.axes[::2], ("profile_error", "mix")):
        lines = {ln.get_gid(): ln for ln in ax.lines if (ln.get_gid() or "").startswith("line:")}
        assert set(lines) == {f"line:{axis}:sensascale", f"line:{axis}:edf"}
        assert lines[f"line:{axis}:edf"].get_color() == policy_color("edf")
        assert list(lines[f"line:{axis}:edf"].get_ydata()) == pytest.approx([2.5, 2.5])
        # drawn in policy order, each narrower than the one before: equal series stay visible
        assert lines[f"line:{axis}:sensascale"].get_linewidth() > lines[f"line:{axis}:edf"].get_linewidth()
        assert lines[f"line:{axis}:sensascale"].get_zorder() < lines[f"line:{axis}:edf"].get_zorder()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["sensascale", "edf"]


@pytest.mark.parametrize("args, needle", [
    (["--seeds", "0"], "--seeds"),
    (["--days", "-1"], "--days"),
    (["--days", "soon"], "--days"),
    (["--preset", "nope"], "preset"),
    (["--policy", "nope"], "nope"),
])
def test_cli_refuses_bad_values_in_one_line(tmp_path, capsys, args, needle):
    from sensaopt.cli import main

    assert main(["experiment", "robustness", "--out-dir", str(tmp_path / "o"), "--report-only", "-q", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()  # refused before anything is written


def test_cli_report_only_writes_the_tables_and_runs_nothing(tmp_path, capsys):
    from sensaopt.cli import main

    args = ["--trace", "synthetic", "--jobs", "6", "--preset", "2x8", "--days", "none", "--start", "0", "--seeds", "2", "-q",
            "--report-only"]
    assert main(["experiment", "ablation", "--out-dir", str(tmp_path), *args]) == 0
    out = capsys.readouterr().out
    n = 2 * len(ex.ablation_variants())
    assert f"{n} runs: 0 reused, 0 computed, 0 failed, {n} missing" in out
    for name in ex.output_names("ablation"):
        assert (tmp_path / name).is_file()
    assert not (tmp_path / "runs").exists()


def _cap_segments(ax, gid):
    return [seg for c in ax.collections if c.get_gid() == gid for seg in c.get_segments()]


@pytest.mark.parametrize("seeds", [1, 3])
def test_experiment_figures_draw_caps_only_where_there_is_an_interval(seeds):
    runs = ex.ablation_runs(TINY, seeds)
    runs = [r for r in runs if r[0].value in ("default", "pairing=false")]
    recs = {c.key(): _fake_record(c, 1 + c.seed * 2) for _, c in runs}
    rows = ex.summarize(runs, recs)
    fig = plot.ablation_figure(rows)
    ax = fig.axes[0]  # violations
    for r in rows:
        segs = _cap_segments(ax, f"ci:{r['value']}")
        if seeds == 1:
            assert segs == []  # no interval: no caps (was a zero-length cap)
        else:
            (seg,) = segs  # horizontal: from lo to hi at the bar's row
            assert (seg[0][0], seg[1][0]) == (pytest.approx(r["violations_lo"]), pytest.approx(r["violations_hi"]))
    title = fig.legends[0].get_title().get_text()
    assert f"{seeds} seed" in title and "95 % Student-t interval" in title and "none with one seed" in title
    axes = (("profile_error", (0.0, 0.3)),)
    rruns = ex.robustness_runs(TINY, seeds, policies=("sensascale", "edf"), axes=axes)
    rrows = ex.summarize(rruns, {c.key(): _fake_record(c, 1 + c.seed) for _, c in rruns})
    rfig = plot.robustness_figure(rrows, columns=("violations",))
    rax = rfig.axes[0]
    for pol in ("sensascale", "edf"):
        segs = _cap_segments(rax, f"ci:profile_error:{pol}")
        assert len(segs) == (0 if seeds == 1 else 2)
    assert f"{seeds} seed" in rfig.legends[0].get_title().get_text()
