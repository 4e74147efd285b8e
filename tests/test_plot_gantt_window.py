"""Gantt charts of big schedules and trace windows: the time window, a row per node, the default
x range, and the ``sensaopt plot --from/--to/--lanes`` options (artists inspected, not images)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from sensaopt import plot  # noqa: E402
from sensaopt.cli import main  # noqa: E402
from sensaopt.io import save_instance  # noqa: E402
from sensaopt.schedule import Placement, Schedule, Segment  # noqa: E402

from .test_plot import hand_instance, hand_schedule  # noqa: E402
from .util import instance, job  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def bars(ax):
    return [p for p in ax.patches if (p.get_gid() or "").startswith("job:")]


def wide_instance(nodes=10, far_deadline=5000.0):
    """``nodes`` 8-GPU nodes (80 GPUs: past GPU_LANES_MAX), a 2-GPU job per node at round n
    (10-minute rounds), and a late job on node 0 from round 100; job d0's deadline is far out."""
    jobs = [job(f"d{n}", gpus=2, work=10.0, arrival=10.0 * n, deadline=far_deadline if n == 0 else 10.0 * n + 50)
            for n in range(nodes)]
    jobs.append(job("late", gpus=8, work=10.0, arrival=1000.0))
    inst = instance(jobs, nodes=nodes, gpus=8, cpus=48, mem=500.0)
    P = Placement
    segs = [Segment(f"d{n}", n, 1, (P(n, 2, 6, 125.0),)) for n in range(nodes)] + [Segment("late", 100, 1, (P(0, 8, 24, 500.0),))]
    return inst, Schedule(tuple(segs), 10.0)


def test_gantt_window_draws_only_the_placements_in_it_on_that_x_range():
    inst, sched = hand_instance(), hand_schedule()
    ax = plot.gantt(inst, sched, window=(15.0, 40.0))
    assert ax.get_xlim() == (15.0, 40.0)
    # rounds of 10 minutes: b (round 1) and a (rounds 2-3) overlap 15-40; a's and c's round 0 (0-10) does not
    assert sorted((b.get_gid(), b.get_x()) for b in bars(ax)) == [("job:a", 20.0), ("job:b", 10.0)]
    with pytest.raises(ValueError, match="from < to"):
        plot.gantt(inst, sched, window=(40.0, 15.0))


def test_default_x_range_is_the_activity_not_a_far_deadline():
    inst, sched = wide_instance(far_deadline=50_000.0)
    ax = plot.gantt(inst, sched, lanes="node")
    lo, hi = ax.get_xlim()
    assert lo < 0.0 + 1e-9 and 1010.0 <= hi < 1100.0  # first start 0, last end 1010 (+2 % padding)
    assert plot.activity_range(inst, plot.gpu_lanes(inst, sched), [1200.0, 50_000.0]) == (0.0, 1200.0)  # within a quarter


def test_rows_per_node_past_64_gpus_with_bars_as_tall_as_their_gpu_share():
    inst, sched = wide_instance()
    assert plot.gantt_lanes(inst) == "node" and plot.gantt_lanes(inst, nodes=range(8)) == "gpu"  # 80 GPUs vs 64
    assert plot.gantt_lanes(hand_instance()) == "gpu"
    with pytest.raises(ValueError, match="lanes"):
        plot.gantt_lanes(inst, lanes="rack")
    assert plot.gantt_figure_height(inst, lanes="node") < plot.gantt_figure_height(inst, lanes="gpu") / 2
    ax = plot.gantt(inst, sched)  # auto: a row per node
    by = {b.get_gid(): b for b in bars(ax)}
    unit = plot.NODE_ROW / 8
    assert by["job:d3"].get_height() == pytest.approx(2 * unit - 2 * 0.03 * plot.NODE_ROW)  # 2 of 8 GPUs
    assert by["job:late"].get_height() == pytest.approx(8 * unit - 2 * 0.03 * plot.NODE_ROW)  # the whole node
    assert by["job:d3"].get_y() == pytest.approx(3 * (plot.NODE_ROW + plot.NODE_GAP) + 0.03 * plot.NODE_ROW)
    assert ax.get_yticklabels(minor=True) == [] and "share of its GPUs" in ax.get_ylabel()
    assert ax.get_ylim()[0] == pytest.approx(10 * plot.NODE_ROW + 9 * plot.NODE_GAP + 0.2)
    per_gpu = plot.gantt(inst, sched, lanes="gpu")
    assert len(per_gpu.get_yticklabels(minor=True)) >= 80 // 4  # GPU numbers (every 4th lane at worst)
    assert {b.get_gid(): b for b in bars(per_gpu)}["job:d3"].get_height() == pytest.approx(2 - 0.12)


def run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def wide_files(tmp_path):
    import json

    inst, sched = wide_instance()
    save_instance(inst, tmp_path / "i.json")
    (tmp_path / "s.json").write_text(json.dumps(sched.to_dict(inst)))
    return tmp_path / "i.json", tmp_path / "s.json"


def test_cli_plot_window_lanes_and_active_nodes(wide_files, tmp_path, capsys, monkeypatch):
    inst_path, sched_path = wide_files
    seen = []
    real = plot.gantt

    def spy(*a, **k):
        ax = real(*a, **k)
        seen.append((k["nodes"], k["lanes"], ax.get_xlim(), {b.get_gid() for b in bars(ax)}))
        return ax

    monkeypatch.setattr(plot, "gantt", spy)
    code, out, err = run(["plot", sched_path, "-i", inst_path, "-o", tmp_path / "g.png", "--from", "900", "--to", "1100"], capsys)
    assert code == 0, err
    nodes, lanes, xlim, drawn = seen[-1]
    assert nodes == [0] and xlim == (900.0, 1100.0) and drawn == {"job:late"}  # only node 0 is busy then
    assert "1 of the 1 nodes with placements in the window, 10 in all" in out and "minutes 900–1100" in out
    code, out, err = run(["plot", sched_path, "-i", inst_path, "-o", tmp_path / "g.png", "--max-nodes", "4", "--from", "20",
                          "--kind", "both"], capsys)
    assert code == 0, err
    nodes, lanes, xlim, drawn = seen[-1]
    assert nodes == [0, 2, 3, 4] and xlim == (20.0, 1010.0)  # --to defaults to the last end; node 1 ended at minute 20
    assert "first 4 of the 9 nodes" in out and "one row per GPU" in out  # 4 nodes: 32 GPUs, per GPU
    code, out, err = run(["plot", sched_path, "-i", inst_path, "-o", tmp_path / "g.png", "--lanes", "node"], capsys)
    assert code == 0 and seen[-1][1] == "node" and "one row per node" in out


@pytest.mark.parametrize("args, needle", [
    (["--from", "50", "--to", "10"], "'--to': must be after --from (50 minutes), got 10"),
    (["--from", "-5"], "'--from'"),
    (["--lanes", "rack"], "unknown lanes 'rack'"),
])
def test_cli_plot_bad_window_or_lanes_is_a_one_line_usage_error(wide_files, tmp_path, capsys, args, needle):
    inst_path, sched_path = wide_files
    code, _, err = run(["plot", sched_path, "-i", inst_path, "-o", tmp_path / "g.png", *args], capsys)
    assert code == 2 and needle in err and "Traceback" not in err
    assert not (tmp_path / "g.png").exists()
