"""sensaopt.plot and sensaopt.frames: rendered headless, content checked."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from sensaopt import frames, palette, plot  # noqa: E402
from sensaopt.cli import main  # noqa: E402
from sensaopt.io import load_instance  # noqa: E402
from sensaopt.metrics import compute_metrics  # noqa: E402
from sensaopt.profiles import catalog  # noqa: E402
from sensaopt.result import Result, Status  # noqa: E402
from sensaopt.schedule import Placement, Schedule, Segment  # noqa: E402
from sensaopt.simulator import simulate  # noqa: E402
from sensaopt.validator import check_schedule  # noqa: E402

from .conftest import REPO  # noqa: E402
from .util import instance, job  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def gids(ax, prefix):
    arts = list(ax.patches) + list(ax.lines) + list(ax.collections)
    return [a.get_gid() for a in arts if (a.get_gid() or "").startswith(prefix)]


def assert_legend_outside(ax):
    """The axes' legend exists and its drawn box does not overlap the axes' data area."""
    leg = ax.get_legend()
    assert leg is not None
    ax.figure.canvas.draw()
    lb, ab = leg.get_window_extent(), ax.get_window_extent()
    assert not lb.overlaps(ab), (lb, ab)


def hand_instance():
    """Two nodes of 4 GPUs. a: 2 GPUs, sensitive (alexnet), preempted and resumed on
    node 1; b: 4 GPUs insensitive (bert) on node 0; c: best effort 1 GPU."""
    jobs = [
        job("a", gpus=2, work=25.0, model="alexnet", deadline=60.0),
        job("b", gpus=4, work=10.0, model="bert", deadline=15.0),
        job("c", gpus=1, work=10.0, model="bert"),
    ]
    return instance(jobs, nodes=2, gpus=4, cpus=12, mem=250.0)


def hand_schedule():
    P = Placement
    segs = (
        Segment("a", 0, 1, (P(0, 2, 6, 125.0),)),          # round 0 on node 0
        Segment("b", 1, 1, (P(0, 4, 12, 250.0),)),         # round 1, whole node 0 (a paused)
        Segment("a", 2, 2, (P(1, 2, 6, 125.0),)),          # resumes on node 1, rounds 2-3
        Segment("c", 0, 1, (P(1, 1, 3, 62.5),)),           # round 0 on node 1
    )
    return Schedule(segs, 10.0)


def test_hand_schedule_is_valid_and_frames_match_validator():
    inst, sched = hand_instance(), hand_schedule()
    ev = check_schedule(inst, sched)
    assert ev.ok, ev.errors
    df = frames.outcomes_frame(inst, sched)
    assert list(df.index) == ["a", "b", "c"]
    for j in inst.jobs:
        o = ev.outcomes[j.id]
        assert df.loc[j.id, "finish"] == o.finish
        assert df.loc[j.id, "jct"] == pytest.approx(o.finish - j.arrival)
        assert df.loc[j.id, "queueing"] == pytest.approx(o.first_start - j.arrival)
    assert bool(df.loc["a", "sensitive"]) and not bool(df.loc["b", "sensitive"])
    assert df.loc["a", "preemptions"] == 1
    assert df.loc["b", "met_deadline"] == False and df.loc["b", "lost_value"] == 1.0  # noqa: E712  finishes at 20 > 15
    assert df["met_deadline"].dtype == "boolean" and pd.isna(df.loc["c", "met_deadline"]) and np.isnan(df.loc["c", "deadline"])


def test_gantt_draws_one_bar_per_placement_run_and_marks_deadlines():
    inst, sched = hand_instance(), hand_schedule()
    ax = plot.gantt(inst, sched)
    bars = gids(ax, "job:")
    assert sorted(bars) == ["job:a", "job:a", "job:b", "job:c"]
    rects = {(p.get_gid(), p.get_x()): p for p in ax.patches if (p.get_gid() or "").startswith("job:")}
    # a resumed in round 2 = minute 20, 20 minutes long, 2 lanes tall (minus padding)
    ra = rects[("job:a", 20.0)]
    assert ra.get_width() == pytest.approx(20.0) and ra.get_height() == pytest.approx(2 - 0.12)
    assert ra.get_hatch() == plot.SENSITIVE_HATCH and rects[("job:b", 10.0)].get_hatch() is None
    # colour by model class: a is alexnet (image), b and c bert (language)
    assert rects[("job:a", 0.0)].get_facecolor() == to_rgba(palette.CLASS_COLORS["image"])
    assert rects[("job:b", 10.0)].get_facecolor() == to_rgba(palette.CLASS_COLORS["language"])
    # deadline markers: a (met, triangle) and b (missed, X); c is best effort
    marks = {ln.get_gid(): ln for ln in ax.lines if (ln.get_gid() or "").startswith("deadline:")}
    assert set(marks) == {"deadline:a", "deadline:b"}
    assert marks["deadline:a"].get_marker() == "v" and marks["deadline:b"].get_marker() == "X"
    assert to_rgba(marks["deadline:b"].get_color()) == to_rgba(palette.MISSED)
    assert to_rgba(marks["deadline:a"].get_color()) == to_rgba(palette.CLASS_COLORS["image"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["n-0", "n-1"]
    assert [t.get_text() for t in ax.get_yticklabels(minor=True)] == ["0", "1", "2", "3"] * 2  # GPU lanes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["image model", "language model", "sensitive model",
                                                                   "deadline met", "deadline missed"]
    assert_legend_outside(ax)
    assert ax.get_xlabel() == "time (minutes)"
    ax.figure.canvas.draw()


def test_a_60_job_gantt_is_coloured_by_model_class_and_labelled():
    inst = load_instance(REPO / "instances" / "medium-8gpu.json")
    assert len(inst.jobs) == 60
    ax = plot.gantt(inst, simulate(inst, "sensascale"))
    task = {j.id: j.profile.task for j in inst.jobs}
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("job:")]
    colours: dict[str, set] = {}
    for b in bars:
        colours.setdefault(task[b.get_gid()[4:]], set()).add(b.get_facecolor())
    assert set(colours) == {"image", "language", "speech"}
    assert all(c == {to_rgba(palette.CLASS_COLORS[t])} for t, c in colours.items())  # one colour per class
    labels = [t for t in ax.texts if (t.get_gid() or "").startswith("label:")]
    assert {t.get_text() for t in labels} >= {j.id for j in inst.jobs if j.gpus >= 4}  # big bars always hold their id
    assert len({t.get_text() for t in labels}) >= 50
    assert all(t.get_gid() == f"label:{t.get_text()}" for t in labels)
    assert len(ax.get_yticklabels(minor=True)) == inst.cluster.total_gpus  # a tick per GPU lane
    assert_legend_outside(ax)


def test_gantt_labels_only_where_they_fit():
    inst, sched = hand_instance(), hand_schedule()
    fig, ax = plt.subplots(figsize=(10, 3))
    plot.gantt(inst, sched, ax=ax)
    assert {t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("label:")} == {"a", "b", "c"}

    def drawn(figsize):
        _, ax = plt.subplots(figsize=figsize)
        plot.gantt(inst, sched, ax=ax, legend=False)
        return sorted((t.get_text(), t.get_position()[0], t.get_fontsize()) for t in ax.texts if (t.get_gid() or "").startswith("label:"))

    # ~9 px per 10-minute round: only a's 20-minute stretch (centred at minute 30) holds a letter
    assert drawn((0.5, 3)) == [("a", 30.0, 7.0)]
    # 7 px per GPU lane: the 1-GPU bar of c is too thin; at 10 px it gets the small font
    assert drawn((10, 0.9)) == [("a", 5.0, 7.0), ("a", 30.0, 7.0), ("b", 15.0, 7.0)]
    assert ("c", 5.0, 5.5) in drawn((10, 1.2))
    ax = plot.gantt(inst, sched, labels=False)
    assert not [t for t in ax.texts if (t.get_gid() or "").startswith("label:")]


def test_gpu_lanes_keep_a_continuing_job_on_its_lanes():
    inst = instance([job("x", gpus=2, work=29.0), job("y", gpus=1, work=10.0), job("z", gpus=1, work=10.0, arrival=10.0)], gpus=4)
    P = Placement
    # x resizes its CPU in round 1 (new segment, same node; the resize costs 0.5 of its
    # 30 minutes, hence work 29): it should keep its lanes
    sched = Schedule((
        Segment("y", 0, 1, (P(0, 1, 3, 62.5),)),
        Segment("x", 0, 1, (P(0, 2, 6, 125.0),)),
        Segment("z", 1, 1, (P(0, 1, 3, 62.5),)),
        Segment("x", 1, 2, (P(0, 2, 4, 125.0),)),
    ), 10.0)
    assert check_schedule(inst, sched).ok
    lanes = {(j, st): ln for j, n, st, en, ln in plot.gpu_lanes(inst, sched)}
    assert lanes[("x", 1)] == lanes[("x", 0)]
    assert set(lanes[("z", 1)]).isdisjoint(lanes[("x", 1)])


def test_lane_choice_is_best_fit_contiguous():
    from sensaopt.plot.schedules import _pick_lanes

    assert _pick_lanes([0, 1, 2, 5, 6], 2) == [5, 6]  # the 2-run fits exactly
    assert _pick_lanes([0, 1, 2, 5, 6], 3) == [0, 1, 2]
    assert sorted(_pick_lanes([0, 3, 4, 6], 3)) == [0, 3, 4]  # no run fits: largest runs first
    assert _pick_lanes([1, 2], 0) == []


def test_gantt_draws_an_overfilled_node_with_extra_lanes():
    inst = instance([job("x", gpus=4, work=10.0), job("y", gpus=2, work=10.0)], gpus=4)
    P = Placement
    sched = Schedule((Segment("x", 0, 1, (P(0, 4, 12, 250.0),)), Segment("y", 0, 1, (P(0, 2, 6, 125.0),))), 10.0)
    assert not check_schedule(inst, sched).ok  # capacity_gpu
    lanes = {j: ln for j, n, st, en, ln in plot.gpu_lanes(inst, sched)}
    assert lanes["x"] == (0, 1, 2, 3) and lanes["y"] == (4, 5)
    ax = plot.gantt(inst, sched)
    assert len(gids(ax, "job:")) == 2


def test_gantt_of_a_result_on_a_committed_instance_covers_every_placement():
    inst = load_instance(REPO / "instances" / "small-8gpu.json")
    res = simulate(inst, "edf")
    ax = plot.gantt(inst, res, legend=False)
    n_placements = sum(len(s.placements) for s in res.schedule.segments)
    assert len(gids(ax, "job:")) >= n_placements  # one per contiguous lane run
    # every job scheduled appears; bar area = GPU-minutes held
    area = sum(p.get_width() * (p.get_height() + 0.12) for p in ax.patches if (p.get_gid() or "").startswith("job:"))
    assert area == pytest.approx(check_schedule(inst, res.schedule).gpu_minutes)
    assert len(gids(ax, "deadline:")) == sum(1 for j in inst.jobs if j.deadline is not None)
    assert ax.get_title() == "small-8gpu: heuristic:edf"


def test_utilization_lines_follow_the_validator_usage():
    inst, sched = hand_instance(), hand_schedule()
    ax = plot.utilization(inst, sched)
    lines = {ln.get_gid(): ln for ln in ax.lines if (ln.get_gid() or "").startswith("util:")}
    assert set(lines) == {"util:gpu", "util:cpu", "util:mem"}
    y = lines["util:gpu"].get_ydata()
    # rounds 0..3: GPUs held 3, 4, 2, 2 of 8
    assert list(np.round(y[:4], 6)) == [37.5, 50.0, 25.0, 25.0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["GPU", "CPU", "memory"]
    assert all(to_rgba(lines[f"util:{r}"].get_color()) == to_rgba(palette.RESOURCE_COLORS[r]) for r in ("gpu", "cpu", "mem"))
    assert_legend_outside(ax)
    ax2 = plot.utilization(inst, sched, resources=("gpu",), bin_minutes=20)
    y2 = [ln for ln in ax2.lines if ln.get_gid() == "util:gpu"][0].get_ydata()
    assert list(np.round(y2[:2], 6)) == [43.75, 25.0]
    with pytest.raises(ValueError):
        plot.utilization(inst, sched, resources=("disk",))


def test_coinciding_utilization_lines_stay_distinguishable():
    # one job with 1 GPU, 3 cores, 62.5 GB of a 4-GPU / 12-core / 250-GB node: GPU, CPU and memory shares all 25 %
    inst = instance([job("x", gpus=1, work=10.0)], gpus=4, cpus=12, mem=250.0)
    sched = Schedule((Segment("x", 0, 1, (Placement(0, 1, 3, 62.5),)),), 10.0)
    for order in (("gpu", "cpu", "mem"), ("mem", "cpu", "gpu")):
        ax = plot.utilization(inst, sched, resources=order)
        lines = {ln.get_gid()[5:]: ln for ln in ax.lines if (ln.get_gid() or "").startswith("util:")}
        ys = [tuple(lines[r].get_ydata()) for r in order]
        assert ys[0] == ys[1] == ys[2] and ys[0][0] == 25.0  # the three series coincide
        assert len({lines[r].get_linestyle() for r in order}) == 3
        # stacked widest at the bottom: every line drawn over another is narrower than it, so both show
        by_z = sorted(lines.values(), key=lambda ln: ln.get_zorder())
        widths = [ln.get_linewidth() for ln in by_z]
        assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3
        assert len({ln.get_zorder() for ln in by_z}) == 3
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [plot.RESOURCE_LABELS[r] for r in order]
        plt.close(ax.figure)


def test_utilization_window():
    inst, sched = hand_instance(), hand_schedule()
    ax = plot.utilization(inst, sched, window=(10.0, 30.0))
    assert ax.get_xlim() == (10.0, 30.0)
    with pytest.raises(ValueError, match="from < to"):
        plot.utilization(inst, sched, window=(30.0, 10.0))


def test_cdfs_one_line_per_policy_ending_at_one():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    results = {p: simulate(inst, p) for p in ("edf", "fifo")}
    ax = plot.jct_cdf(results, instance=inst)
    lines = [ln for ln in ax.lines if (ln.get_gid() or "").startswith("cdf:")]
    assert [ln.get_gid() for ln in lines] == ["cdf:edf", "cdf:fifo"]
    for ln, p in zip(lines, results):
        x, y = ln.get_xdata(), ln.get_ydata()
        assert y[-1] == pytest.approx(1.0) and len(y) == len(inst.jobs) + 1
        jct = frames.outcomes_frame(inst, results[p])["jct"]
        assert x[-1] == pytest.approx(jct.max())
    assert ax.get_xlabel() == "JCT (minutes)"
    assert [to_rgba(ln.get_color()) for ln in lines] == [to_rgba(palette.policy_color(p)) for p in ("edf", "fifo")]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["edf", "fifo"]
    assert_legend_outside(ax)
    fr = {p: frames.outcomes_frame(inst, r) for p, r in results.items()}
    ax2 = plot.queueing_cdf(fr)
    assert len([ln for ln in ax2.lines if (ln.get_gid() or "").startswith("cdf:")]) == 2
    with pytest.raises(ValueError):
        plot.jct_cdf(results)  # Results need the instance


def test_coinciding_cdfs_stay_distinguishable():
    same = [10.0, 20.0, 40.0]
    ax = plot.cdf({"edf": same, "fifo": same, "sensascale": same, "empty": [np.nan]})
    lines = [ln for ln in ax.lines if (ln.get_gid() or "").startswith("cdf:")]
    assert [ln.get_gid() for ln in lines] == ["cdf:edf", "cdf:fifo", "cdf:sensascale"]  # the all-NaN series skipped
    assert all(list(ln.get_ydata()) == list(lines[0].get_ydata()) for ln in lines)
    widths, zs = [ln.get_linewidth() for ln in lines], [ln.get_zorder() for ln in lines]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3 and zs == sorted(zs) and len(set(zs)) == 3
    assert plot.stacked_widths(1) == [1.0] and plot.stacked_widths(0) == []
    from sensaopt.sweep.paper import jct_cdf_figure
    from sensaopt.sweep.paper.settings import _groups

    runs, recs, rows = _paper_inputs()
    for r in recs.values():
        r["jct"] = same  # every policy's CDF the same
    fig = jct_cdf_figure(runs, recs, _groups(rows))
    drawn = [ln for ln in fig.axes[0].lines if (ln.get_gid() or "").startswith("cdf:")]
    w = [ln.get_linewidth() for ln in sorted(drawn, key=lambda ln: ln.get_zorder())]
    assert len(drawn) == 4 and w == sorted(w, reverse=True) and len(set(w)) == 4


def test_sensitivity_curves_one_line_and_one_demand_point_per_model():
    cat = catalog()
    for axis in ("cpu", "mem"):
        ax = plot.sensitivity_curves(axis)
        assert len(gids(ax, "model:")) == len(cat) == 12
        assert len(gids(ax, "demand:")) == len(cat)
        styles = {ln.get_gid()[6:]: ln.get_linestyle() for ln in ax.lines if (ln.get_gid() or "").startswith("model:")}
        colours = {ln.get_gid()[6:]: to_rgba(ln.get_color()) for ln in ax.lines if (ln.get_gid() or "").startswith("model:")}
        for name, p in cat.items():
            assert styles[name] == ("-" if p.is_sensitive() else "--")
        assert len(set(colours.values())) == len(cat)  # a shade per model ...
        expected = palette.model_colors({m: cat[m].task for m in sorted(cat, key=lambda m: (palette.MODEL_CLASSES.index(cat[m].task), m))})
        assert colours == {m: to_rgba(c) for m, c in expected.items()}  # ... of its class colour
        assert_legend_outside(ax)
        plt.close(ax.figure)
    ax = plot.sensitivity_curves("cpu", models=["alexnet"], at=62.5)
    ln = [x for x in ax.lines if x.get_gid() == "model:alexnet"][0]
    xs, ys = ln.get_xdata(), ln.get_ydata()
    k = int(np.argmin(abs(xs - 3.0)))
    assert ys[k] == pytest.approx(cat["alexnet"].speed(3.0, 62.5)) == pytest.approx(1.0)
    assert ax.get_xlabel() == "CPU cores per GPU"
    with pytest.raises(ValueError):
        plot.sensitivity_curves("disk")


def _fake_result(inst, sched, solver, status=Status.FEASIBLE, bound=None):
    ev = check_schedule(inst, sched)
    m = compute_metrics(inst, ev)
    return Result(solver, status, m.objective, bound, 0.0, sched, m)


def test_metrics_and_gap_frames_and_gap_bars():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    heur = {p: simulate(inst, p) for p in ("edf", "fifo", "sensascale")}
    best = min(heur.values(), key=lambda r: r.objective)
    exact = _fake_result(inst, best.schedule, "exact-stand-in", Status.FEASIBLE, bound=best.objective / 2)
    mf = frames.metrics_frame(heur)
    assert list(mf.index) == ["edf", "fifo", "sensascale"]
    assert mf.loc["edf", "objective"] == heur["edf"].objective
    assert mf.loc["fifo", "slo_violations"] == heur["fifo"].metrics.slo_violations
    assert list(frames.metrics_frame(list(heur.values())).index) == [r.solver for r in heur.values()]
    g = frames.gap_frame(inst, heur, exact)
    assert list(g["policy"]) == ["edf", "fifo", "sensascale"]
    for _, row in g.iterrows():
        r = heur[row["policy"]]
        assert row["objective_gap_pct"] == pytest.approx(100 * (r.objective - best.objective) / best.objective)
        assert row["objective_gap_to_bound_pct"] == pytest.approx(100 * (r.objective - best.objective / 2) / (best.objective / 2))
    assert g["objective_gap_pct"].min() == pytest.approx(0.0)
    g2 = pd.concat([g, g.assign(instance="other")], ignore_index=True)
    assert plot.gap_bars(g2).get_ylabel() == "objective_gap_pct (%)"  # the default: gap_frame's objective gap
    ax = plot.gap_bars(g2, value="objective_gap_pct", percent=False)
    assert len(gids(ax, "gap:")) == 6
    assert [t.get_text() for t in ax.get_xticklabels()] == [inst.name, "other"]
    for b in ax.patches:
        if (b.get_gid() or "").startswith("gap:"):
            assert b.get_facecolor() == to_rgba(palette.policy_color(b.get_gid()[4:]))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["edf", "fifo", "sensascale"]
    assert_legend_outside(ax)


def test_outcomes_frame_uses_the_hidden_speed_factors_of_a_noisy_simulation():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    res = simulate(inst, "edf", profile_error=0.3, seed=4)
    df = frames.outcomes_frame(inst, res)
    assert df["jct"].mean() == pytest.approx(res.metrics.avg_jct)


def test_usage_frame_fractions():
    inst, sched = hand_instance(), hand_schedule()
    u = frames.usage_frame(inst, check_schedule(inst, sched))
    assert list(u.index) == [0.0, 10.0, 20.0, 30.0]
    assert list(u["gpu"]) == [3 / 8, 4 / 8, 2 / 8, 2 / 8]
    assert u["cpu"].iloc[1] == pytest.approx(12 / 24)


# ---- CLI ----------------------------------------------------------------------------------------
def run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_plot_finds_a_packaged_instance_by_the_name_a_result_records(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no instances/ folder here: only the packaged copy can be found
    assert run(["solve", "tiny-16gpu", "--policy", "edf", "-o", "r.json"], capsys)[0] == 0
    assert json.loads((tmp_path / "r.json").read_text())["instance"] == "tiny-16gpu"
    code, out, err = run(["plot", "r.json", "-o", "g.png"], capsys)
    assert code == 0, err
    assert "6 jobs" in out and (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_gap_bars_with_a_policy_whose_values_are_all_nan():
    gaps = pd.DataFrame({"instance": ["a", "a", "b", "b"], "policy": ["edf", "fifo"] * 2,
                         "jct_gap_pct": [1.5, np.nan, 2.0, np.nan]})
    ax = plot.gap_bars(gaps, value="jct_gap_pct", percent=False)
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("gap:")]
    assert sorted(round(p.get_height(), 6) for p in bars) == [1.5, 2.0] and {p.get_gid() for p in bars} == {"gap:edf"}
    # not comparable: an empty hatched placeholder in fifo's colour with "n/c" on it, not a 0 bar
    nc = [p for p in ax.patches if p.get_gid() == "gap-nc:fifo"]
    assert len(nc) == 2
    for p in nc:
        assert p.get_hatch() == plot.NOT_COMPARABLE_HATCH and p.get_facecolor()[3] == 0.0
        assert p.get_edgecolor() == to_rgba(palette.policy_color("fifo")) and p.get_height() > 0.2
    assert [t.get_text() for t in ax.texts if t.get_gid() == "gap-nc-label:fifo"] == ["n/c", "n/c"]
    # every policy in its palette colour in the legend (fifo was matplotlib's default blue), and the placeholder
    leg = ax.get_legend()
    texts = [t.get_text() for t in leg.get_texts()]
    assert texts[:2] == ["edf", "fifo"] and "not comparable" in texts[2]
    handles = leg.legend_handles
    assert handles[0].get_facecolor() == to_rgba(palette.policy_color("edf"))
    assert handles[1].get_facecolor() == to_rgba(palette.policy_color("fifo"))
    assert handles[2].get_hatch() == plot.NOT_COMPARABLE_HATCH
    plt.close(ax.figure)
    full = plot.gap_bars(gaps.fillna(0.5), value="jct_gap_pct", percent=False)  # nothing missing: no placeholder entry
    assert len(full.get_legend().get_texts()) == 2 and not [p for p in full.patches if (p.get_gid() or "").startswith("gap-nc")]


def test_gap_bars_scale_and_label_each_column_in_its_own_unit():
    gaps = pd.DataFrame({"instance": ["a", "b"], "policy": ["edf", "edf"], "gap": [0.05, 0.1], "jct_gap_pct": [1.5, 2.0],
                         "extra_misses": [1, 2]})
    cases = {"gap": ([5.0, 10.0], "gap (%)"), "jct_gap_pct": ([1.5, 2.0], "jct_gap_pct (%)"),
             "extra_misses": ([1.0, 2.0], "extra_misses")}
    for value, (heights, label) in cases.items():  # percent=True (default) scales only the fraction column
        ax = plot.gap_bars(gaps, value=value)
        bars = [p for p in ax.patches if (p.get_gid() or "").startswith("gap:")]
        assert sorted(round(p.get_height(), 6) for p in bars) == heights and ax.get_ylabel() == label
        plt.close(ax.figure)
    ax = plot.gap_bars(gaps, value="jct_gap_pct", percent=False)
    assert ax.get_ylabel() == "jct_gap_pct (%)"  # was "(fraction)"
    plt.close(ax.figure)
    ax = plot.gap_bars(gaps, value="gap", percent=False)
    assert ax.get_ylabel() == "gap (fraction)"
    plt.close(ax.figure)


def test_cli_plot_from_a_solve_result_and_a_bare_schedule(tmp_path, capsys):
    tiny = REPO / "instances" / "tiny-16gpu.json"
    res = tmp_path / "r.json"
    assert run(["solve", tiny, "--policy", "edf", "-o", res], capsys)[0] == 0
    png = tmp_path / "out" / "gantt.png"
    code, out, err = run(["plot", res, "-o", png], capsys)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "gantt" in out and "6 jobs" in out
    bare = tmp_path / "s.json"
    bare.write_text(json.dumps(json.loads(res.read_text())["schedule"]))
    code, out, err = run(["plot", bare, "-o", tmp_path / "g.png"], capsys)
    assert code == 2 and "--instance" in err and err.count("\n") == 1
    code, _, err = run(["plot", bare, "--instance", tiny, "--kind", "both", "-o", tmp_path / "b.svg"], capsys)
    assert code == 0, err
    assert "<svg" in (tmp_path / "b.svg").read_text()[:1000]
    code, _, err = run(["plot", bare, "--instance", tiny, "--kind", "pie", "-o", tmp_path / "p.png"], capsys)
    assert code == 2 and "pie" in err and not (tmp_path / "p.png").exists()


def test_cli_version_and_show_versions(capsys):
    import sensaopt

    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"sensaopt {sensaopt.__version__}"
    code, out, _ = run(["show-versions"], capsys)
    assert code == 0
    names = {ln.split()[0] for ln in out.splitlines() if ln.strip()}
    assert {"python", "sensaopt", "ortools", "pulp", "highspy", "numpy", "pandas"} <= names


# ---- palette -------------------------------------------------------------------------------------
def test_palette_one_fixed_colour_per_known_policy_and_a_stable_one_for_others():
    known = ("sensascale", "chronus", "synergy-tune", "edf", "fifo", "rolling-cpsat", "rolling-milp", "cpsat")
    colours = [palette.policy_color(p) for p in known]
    assert len(set(colours)) == len(known)
    assert palette.policy_color("heuristic:sensascale") == palette.policy_color("SensaScale") == palette.OKABE_ITO["blue"]
    assert set(colours) <= set(palette.OKABE_ITO.values())
    # others: a CRC-32 pick from Tol's muted set (the same in every process; hash() would not be)
    assert palette.policy_color("srtf") == palette.TOL_MUTED[3761837263 % 9] == palette.policy_color("heuristic:srtf")
    assert palette.policy_colors(["edf", "srtf"]) == {"edf": palette.OKABE_ITO["reddish purple"], "srtf": palette.policy_color("srtf")}
    assert palette.class_color("image") != palette.class_color("language") != palette.class_color("speech")
    assert palette.class_color("custom") == palette.class_color("whatever") == palette.CLASS_COLORS["custom"]
    assert palette.MISSED not in palette.CLASS_COLORS.values()


def test_palette_shades():
    assert palette.shade("#80C0FF", 0.0) == "#80C0FF"
    assert palette.shade("#80C0FF", -1.0) == "#000000" and palette.shade("#80C0FF", 1.0) == "#FFFFFF"
    assert palette.shade("#808080", -0.5) == "#404040"
    with pytest.raises(ValueError):
        palette.shade("#808080", 2.0)
    m = palette.model_colors({"a": "image", "b": "image", "c": "speech"})
    assert m["b"] == palette.CLASS_COLORS["image"] and m["a"] == palette.shade(palette.CLASS_COLORS["image"], -0.75)
    assert m["c"] == palette.shade(palette.CLASS_COLORS["speech"], -0.75)


# ---- the paper's figures ---------------------------------------------------------------------------
def _paper_inputs():
    from sensaopt.sweep.paper import PaperSettings, paper_configs, table_rows

    runs = paper_configs(PaperSettings(policies=("sensascale", "chronus", "edf", "srtf"), shapes=()))  # the 8 Synergy cells
    recs = {}
    for k, (_, _, cfg) in enumerate(runs):
        recs[cfg.key()] = {"metrics": {"jobs": 3, "slo_violation_rate": 0.1 + 0.01 * k, "avg_jct": 100.0 + k, "avg_queueing_time": 10.0 + k,
                                       "gpu_utilization": 0.5}, "jct": [50.0, 100.0 + k, 400.0]}
    return runs, recs, table_rows(runs, recs)


def test_paper_bar_figure_policy_colours_and_legend_above_the_bars():
    from sensaopt.sweep.paper import METRICS, bars_figure

    runs, recs, rows = _paper_inputs()
    fig = bars_figure(rows)
    axes = fig.axes
    assert len(axes) == 3 and [ax.get_ylabel() for ax in axes] == [t for _, t, _ in METRICS]
    for ax in axes:
        bars = [p for p in ax.patches if (p.get_gid() or "").startswith("bar:")]
        assert len(bars) == 8 * 4
        assert all(b.get_facecolor() == to_rgba(palette.policy_color(b.get_gid()[4:])) for b in bars)
    top = max(b.get_height() for b in axes[0].patches)
    assert top == pytest.approx(100 * max(r["slo_violation_rate"] for r in rows))
    (leg,) = fig.legends
    assert [t.get_text() for t in leg.get_texts()] == ["sensascale", "chronus", "edf", "srtf"]
    fig.canvas.draw()
    lb = leg.get_window_extent()
    assert all(not lb.overlaps(ax.get_window_extent()) for ax in axes)


def _caps(ax, prefix):
    """The error-cap segments drawn with gid ``prefix...``: {gid: [(x, y0, y1), ...]} (vertical caps)."""
    out = {}
    for c in ax.collections:
        gid = c.get_gid() or ""
        if gid.startswith(prefix):
            out.setdefault(gid, []).extend((seg[0][0], seg[0][1], seg[1][1]) for seg in c.get_segments())
    return out


def test_paper_bars_caps_only_with_an_interval_and_the_caption_says_seeds_and_scale():
    from sensaopt.sweep.paper import METRICS, PaperSettings, bars_figure, cell_rows, paper_configs, table_rows

    runs, recs, rows = _paper_inputs()
    cells = cell_rows(rows)  # three seeds: an interval per cell
    fig = bars_figure(cells, "full scale")
    k, _, mult = METRICS[1]
    ax = fig.axes[1]
    caps = _caps(ax, "ci:")
    assert set(caps) == {f"ci:{p}" for p in ("sensascale", "chronus", "edf", "srtf")}
    bars = {(b.get_gid(), round(b.get_x() + b.get_width() / 2, 9)): b.get_height() for b in ax.patches}
    by_pol = {c["policy"]: [] for c in cells}
    for c in cells:
        by_pol[c["policy"]].append(c)
    for pol, segs in caps.items():
        assert len(segs) == 8
        for (x, y0, y1), c in zip(sorted(segs), by_pol[pol[3:]]):
            assert (y0, y1) == pytest.approx((c[f"{k}_lo"] * mult, c[f"{k}_hi"] * mult))
            assert bars[(f"bar:{pol[3:]}", round(x, 9))] == pytest.approx(c[k] * mult)  # the cap sits on its own bar
    title = fig.legends[0].get_title().get_text()
    assert "mean over seeds" in title and "95 % Student-t interval" in title and "full scale" in title
    assert all(t.get_text().endswith("3 seeds") for t in ax.get_xticklabels())
    plt.close(fig)
    one = paper_configs(PaperSettings(scale=0.01, policies=("sensascale", "edf"), shapes=(), seeds=(0,)))
    recs1 = {cfg.key(): {"metrics": {"jobs": 3, "slo_violation_rate": 0.1, "avg_jct": 100.0, "avg_queueing_time": 10.0}, "jct": [5.0]}
             for _, _, cfg in one}
    cells1 = cell_rows(table_rows(one, recs1))
    fig1 = bars_figure(cells1)
    for ax in fig1.axes:
        assert [b for b in ax.patches if (b.get_gid() or "").startswith("bar:")] and not _caps(ax, "ci:")  # one seed: no caps
        assert not [c for c in ax.collections if c.get_segments()]
        assert all(t.get_text().endswith("1 seed") for t in ax.get_xticklabels())
    plt.close(fig1)


def test_paper_figures_state_the_scale_of_scaled_runs(tmp_path, monkeypatch):
    from sensaopt.sweep import paper

    one = paper.paper_configs(paper.PaperSettings(scale=0.01, policies=("edf",), shapes=(), seeds=(0,)))
    recs = {cfg.key(): {"metrics": {"jobs": 3, "slo_violation_rate": 0.1, "avg_jct": 100.0, "avg_queueing_time": 10.0},
                        "jct": [5.0, 6.0]} for _, _, cfg in one}
    cells = paper.cell_rows(paper.table_rows(one, recs))
    fig = paper.jct_cdf_figure(one, recs, paper.settings._groups(cells))
    title = fig.legends[0].get_title().get_text()
    assert title.startswith("scaled: ") and "% of the jobs" in title
    assert fig.axes[0].get_title().endswith("2x8, 1 seed pooled")
    seen = []
    real = paper.bars_figure
    monkeypatch.setattr(paper.charts, "bars_figure", lambda c, scale=None: seen.append(scale) or real(c, scale))
    paper.figures(cells, one, recs, tmp_path)
    assert seen == [title]  # fig_bars.png states the same scale


def test_experiment_helpers_seeds_and_scale_texts():
    from sensaopt.plot import scale_text, seeds_text

    assert seeds_text([3, 3]) == "3 seeds" and seeds_text([1]) == "1 seed" and seeds_text([1, 3]) == "1–3 seeds"
    assert scale_text([1.0, 1.0]) == "full scale" and scale_text([0.05]).startswith("scaled: 5 %")
    assert scale_text([0.016, 0.05]).startswith("scaled: 1.6–5 %")


def test_paper_cdf_figure_policy_colours_and_legend(tmp_path):
    from sensaopt.sweep.paper import figures, jct_cdf_figure
    from sensaopt.sweep.paper.settings import _groups

    runs, recs, rows = _paper_inputs()
    fig = jct_cdf_figure(runs, recs, _groups(rows))
    drawn = [ax for ax in fig.axes if ax.lines]
    assert len(drawn) == 8 and drawn[0].get_title() == "Philly SLO, 8-GPU nodes\nphilly-8, 3 seeds pooled"
    for ax in drawn:
        assert [ln.get_gid() for ln in ax.lines] == ["cdf:sensascale", "cdf:chronus", "cdf:edf", "cdf:srtf"]
        assert all(to_rgba(ln.get_color()) == to_rgba(palette.policy_color(ln.get_gid()[4:])) for ln in ax.lines)
    (leg,) = fig.legends
    assert leg.get_title().get_text() == "full scale"
    fig.canvas.draw()
    assert all(not leg.get_window_extent().overlaps(ax.get_window_extent()) for ax in fig.axes)
    files = figures(rows, runs, recs, tmp_path)
    assert [f.name for f in files] == ["fig_bars.png", "fig_jct_cdf.png"]
    assert all(f.read_bytes()[:4] == b"\x89PNG" for f in files)
