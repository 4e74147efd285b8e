"""docs/tour.md: its Python block runs as written from an empty folder, writing only into a fresh temporary folder."""

from __future__ import annotations

import importlib.util
import re

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from sensaopt import palette  # noqa: E402

from .conftest import REPO  # noqa: E402

TOUR = REPO / "docs" / "tour.md"


def test_tour_python_block_runs(tmp_path, monkeypatch, capsys):
    if importlib.util.find_spec("sensaopt.exact.cpsat") is None:
        pytest.skip("the tour solves with CP-SAT; sensaopt.exact.cpsat is not present")
    blocks = re.findall(r"```python\n(.*?)```", TOUR.read_text(), re.S)
    assert len(blocks) == 1
    import tempfile

    work, tmp = tmp_path / "work", tmp_path / "tmp"  # an empty folder outside the clone: instances load by name
    work.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR: the tour's temporary folder lands in tmp/
    ns: dict = {"__name__": "tour"}
    assert "/tmp" not in blocks[0] and "instances/" not in blocks[0]
    exec(compile(blocks[0], str(TOUR), "exec"), ns)
    assert list(work.iterdir()) == []  # nothing written where it ran
    (folder,) = tmp.iterdir()
    assert folder.name.startswith("sensaopt-tour-") and ns["out"] == folder
    out = capsys.readouterr().out
    # status, objective, bound: a busy machine may stop CP-SAT before its proof (no proof within a time limit is asserted)
    m = re.match(r"(OPTIMAL|FEASIBLE|TIME_LIMIT) (\S+) (\S+)\n", out)
    assert m and float(m.group(2)) >= float(m.group(3)) - 1e-6
    assert m.group(1) != "OPTIMAL" or float(m.group(2)) == pytest.approx(float(m.group(3)))
    assert "sensascale" in out and "met_deadline" in out and "extra_misses" in out
    assert (folder / "cpsat-gantt.png").read_bytes()[:4] == b"\x89PNG"
    # the tour's Gantt chart: bars in their model class's palette colour, ids on them, the legend beside the axes
    ax, inst = ns["ax"], ns["inst"]
    task = {j.id: j.profile.task for j in inst.jobs}
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("job:")]
    assert bars and all(b.get_facecolor() == to_rgba(palette.class_color(task[b.get_gid()[4:]])) for b in bars)
    assert {t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("label:")} == {b.get_gid()[4:] for b in bars}
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())
