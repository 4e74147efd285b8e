"""The deterministic work budget (``budget="work:N"``, ``--budget work:N``; issue 35 item 1):
the budget's arithmetic, the safety net's record, and the same tables from the same
command on a quiet machine and beside two busy processes."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sensaopt.errors import SensaoptError
from sensaopt.solvers.budget import TimeBudget, WorkMeter, budget_spec, parse_budget

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import window_gaps  # noqa: E402  (benchmarks/window_gaps.py: the window-gap command)


# ---- the budget itself -------------------------------------------------------------------------
@pytest.mark.parametrize("spec, units", [("work:5", 5.0), ("work:0.25", 0.25), ("time", None), (None, None)])
def test_parse_budget_reads_work_units_or_the_wall_clock(spec, units):
    assert parse_budget(spec) == units
    assert parse_budget(budget_spec(units)) == units


@pytest.mark.parametrize("spec", ["work:0", "work:-1", "work:x", "work:", "nodes:3", "work:nan", "work:1e99", "5"])
def test_parse_budget_refuses_anything_else_in_one_line(spec):
    with pytest.raises(SensaoptError, match=r"^--budget: .* is not a budget; use work:N"):
        parse_budget(spec)


def test_work_is_split_by_share_of_what_is_left_and_charged_up_the_chain():
    b = TimeBudget.start(60.0, work=10.0)
    first = b.split(0.3)
    assert first.work is not None and first.work.limit == pytest.approx(3.0)
    assert first.left() > 30  # the safety net is not split: the whole call's seconds
    first.charge(2.0)
    assert b.work is not None and b.work.spent == pytest.approx(2.0)
    second = b.split(0.5)
    assert second.work is not None and second.work.limit == pytest.approx(4.0)  # half of the 8 units left
    capped = b.at_most(5.0, work=1.5)
    assert capped.work is not None and capped.work.limit == pytest.approx(1.5)
    assert not b.short_of(1.0)
    b.charge(7.5)
    assert b.short_of(1.0) and not b.work.safety_net


def test_a_spent_safety_net_is_short_and_recorded_as_fired():
    meter = WorkMeter(100.0)
    b = TimeBudget(0.0, 0.0, None, meter)  # started long ago: the seconds are spent
    assert b.short_of(1.0)
    assert meter.safety_net


def test_without_work_the_budget_is_the_wall_clock_one():
    b = TimeBudget.start(10.0)
    assert not b.deterministic and b.work_left() is None
    assert b.split(0.5).work is None and b.at_most(1.0).work is None
    b.charge(3.0)  # nothing to record


# ---- exact solves ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def window(tmp_path_factory) -> Path:
    """One 8-job window of the synthetic trace, cut by ``sensaopt instances from-trace``."""
    from sensaopt.cli import main

    out = tmp_path_factory.mktemp("window")
    assert main(["instances", "from-trace", "--trace", "synthetic", "-n", "8", "--count", "1", "--out-dir", str(out)]) == 0
    return next(out.glob("*.json"))


def test_exact_result_records_its_budget_and_a_fired_safety_net(window):
    from sensaopt.solve import solve_cpsat
    from sensaopt.io import load_instance

    res = solve_cpsat(load_instance(window), time_limit=1.0, workers=1, budget="work:1000")
    assert res.params["budget"] == "work:1000"
    assert res.params["safety_net_fired"] is True
    assert "not deterministic" in res.message
    plain = solve_cpsat(load_instance(window), time_limit=1.0, workers=1)
    assert plain.params["budget"] == "time" and "safety_net_fired" not in plain.params


def test_bad_budget_is_refused_before_any_work(window):
    from sensaopt.cli import main
    from sensaopt.errors import ArgumentError
    from sensaopt.solve import solve_cpsat
    from sensaopt.io import load_instance

    with pytest.raises(ArgumentError, match=r"^solve_cpsat\(\): budget: 'work:0' is not a budget"):
        solve_cpsat(load_instance(window), budget="work:0")
    with pytest.raises(ArgumentError, match="branch_price: branch and price runs on wall-clock seconds only"):
        solve_cpsat(load_instance(window), budget="work:1", branch_price=True)
    assert main(["gap", str(window), "--budget", "work:0", "-q"]) == 2
    assert main(["solve", str(window), "--budget", "work:1"]) == 2  # the heuristic takes no budget


# ---- same command, same tables, on any load -----------------------------------------------------
def _spin() -> None:  # pragma: no cover - runs in a child process
    while True:
        pass


@contextmanager
def busy(n: int = 2) -> Iterator[None]:
    """``n`` processes spinning on the CPU beside the block, killed after it."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.join()


SYNTHETIC = (("Philly SLO", "synthetic", "philly"), ("Helios", "synthetic", "helios"))


def _paper_tables(out: Path, monkeypatch, args: list[str]) -> dict[str, object]:
    """table.md, table.csv and runs.csv (without the wall-time column) of a small
    ``experiment paper`` on the synthetic trace, run in this process."""
    from sensaopt.cli import main
    from sensaopt.sweep import paper

    monkeypatch.setattr(paper.settings, "WORKLOADS", SYNTHETIC)  # where the split package reads it
    assert main(["experiment", "paper", "--serial", "-q", "--shape", "none", "--out-dir", str(out), *args]) == 0
    runs = list(csv.DictReader(io.StringIO((out / "runs.csv").read_text())))
    for r in runs:
        r.pop("simulate_s")  # wall time
    leases = [json.loads(p.read_text()).get("lease") for p in sorted((out / "runs").glob("*.json"))]
    return {"table.md": (out / "table.md").read_text(), "table.csv": (out / "table.csv").read_text(), "runs": runs, "lease": leases}


def _window_table(path: Path, exact: str, budget: str, workers: int = 1) -> dict:
    """One window of ``sensaopt experiment gaps`` (:func:`sensaopt.sweep.gaps.solve_window`)
    under ``budget`` with the wrapper's safety net: its fields without the wall times."""
    from sensaopt.sweep.gaps import ExactSettings, WindowCut, WindowTask, solve_window

    inst = json.loads(Path(path).read_text())
    exact = ExactSettings(exact, window_gaps.SAFETY_NET_S, workers, 0, False, (("budget", budget),))
    row = solve_window(WindowTask(WindowCut(), 0, exact, ("sensascale", "edf"), instance=inst))
    params = row["exact_params"]
    assert params.get("safety_net_fired") is False, row["message"]
    assert params.get("work_spent") is not None
    keep = ("status", "objective", "bound", "misses", "avg_jct", "jct_bound")
    wall = ("runtime_s", "exact_runtime_s")  # the comparisons' wall times
    policies = {p: {k: v for k, v in c.items() if k not in wall} for p, c in row["policies"].items()}
    return {**{k: row[k] for k in keep}, "policies": policies, "work": params.get("work_spent")}


def _twice(fn, *args):
    """``fn(*args)`` on this machine, then again beside two busy processes."""
    quiet = fn(*args)
    with busy(2):
        loaded = fn(*args)
    return quiet, loaded


@pytest.mark.slow  # over 8 s in the default suite (durations, 2026-12-03)
def test_paper_and_window_gap_tables_are_the_same_beside_two_busy_processes(tmp_path, monkeypatch, window):
    args = ["--seeds", "1", "--policy", "chronus", "--policy", "edf", "--workloads", "Philly SLO"]
    quiet, loaded = _paper_tables(tmp_path / "a", monkeypatch, args), None
    with busy(2):
        loaded = _paper_tables(tmp_path / "b", monkeypatch, args)
    assert quiet == loaded
    assert "budget=work:5, time_limit_s=60.0" in quiet["table.md"]  # the default budget, named in the report
    assert any(quiet["lease"]) and all(not lease or lease["safety_net"] == 0 for lease in quiet["lease"])
    a, b = _twice(_window_table, window, "cpsat", "work:0.5")
    assert a == b and a["work"] is not None


@pytest.mark.slow
@pytest.mark.parametrize("exact, workers", [("cpsat", 1), ("cpsat", 2), ("highs", 1), ("cbc", 2)])
def test_window_gap_tables_are_the_same_under_load_on_every_backend(exact, workers):
    a, b = _twice(_window_table, ROOT / "instances" / "tiny-8gpu.json", exact, "work:3", workers)
    assert a == b


@pytest.mark.slow
def test_larger_paper_tables_are_the_same_under_load(tmp_path, monkeypatch):
    args = ["--seeds", "2", "--policy", "chronus", "--policy", "sensascale", "--policy", "edf", "--decomposition"]
    quiet = _paper_tables(tmp_path / "a", monkeypatch, args)
    with busy(2):
        loaded = _paper_tables(tmp_path / "b", monkeypatch, args)
    assert quiet == loaded


@pytest.mark.slow
def test_side_by_side_cooperation_is_the_same_under_load(window):
    """Two workers with --cooperate run CP-SAT and HiGHS side by side: each gets its units
    before either starts, so what one spends never changes the other's limit."""
    from sensaopt.exact.cpsat import solve_cpsat
    from sensaopt.io import load_instance

    inst = load_instance(window)

    def run() -> tuple:
        r = solve_cpsat(inst, workers=2, cooperate=True, budget="work:0.5", time_limit=600)
        return r.status, r.objective, r.bound, r.params["work_spent"], r.params["safety_net_fired"]

    a, b = _twice(run)
    assert a == b and a[4] is False
