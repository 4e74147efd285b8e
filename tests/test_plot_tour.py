"""docs/tour.md: its Python block runs as written (from a folder holding instances/)."""

from __future__ import annotations

import importlib.util
import re

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from .conftest import REPO  # noqa: E402

TOUR = REPO / "docs" / "tour.md"


def test_tour_python_block_runs(tmp_path, monkeypatch, capsys):
    if importlib.util.find_spec("sensaopt.exact.cpsat") is None:
        pytest.skip("the tour solves with CP-SAT; sensaopt.exact.cpsat is not present")
    blocks = re.findall(r"```python\n(.*?)```", TOUR.read_text(), re.S)
    assert len(blocks) == 1
    (tmp_path / "instances").symlink_to(REPO / "instances")
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], str(TOUR), "exec"), {"__name__": "tour"})
    out = capsys.readouterr().out
    m = re.match(r"OPTIMAL (\S+) (\S+)\n", out)  # tiny-16gpu is proven optimal well within 30 s
    assert m and float(m.group(1)) == pytest.approx(float(m.group(2)))
    assert "sensascale" in out and "met_deadline" in out and "extra_violations" in out
    assert (tmp_path / "cpsat-gantt.png").read_bytes()[:4] == b"\x89PNG"
