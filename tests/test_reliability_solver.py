"""Solver limits and determinism of exact results (the exact code belongs to the exact
models' owner: failures found here are strict xfails with a one-line reason).

Stated margin: a run with ``time_limit = L`` seconds must return within
``L + TIME_MARGIN_S`` seconds of wall time (model build, warm start, extraction and
validation included).
"""

from __future__ import annotations

import json
import os
import time

import pytest
from ortools.sat.python import cp_model

from sensaopt.cli import main
from sensaopt.cli.core import summary_line
from sensaopt.errors import SensaoptError
from sensaopt.exact.cpsat import solve_cpsat
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance, save_instance
from sensaopt.result import Status
from sensaopt.validator import check_schedule

from .conftest import REPO

TIME_MARGIN_S = 1.5
LIMIT_S = 2.0


def inst(name):
    return load_instance(REPO / "instances" / f"{name}.json")


def _timed(instance, **kw):
    t0 = time.perf_counter()
    r = solve_cpsat(instance, **kw)
    return r, time.perf_counter() - t0


@pytest.mark.parametrize(
    "name",
    [
        "small-8gpu",
        pytest.param("medium-8gpu", marks=pytest.mark.slow),  # the model build alone takes seconds
    ],
)
def test_time_limit_is_respected_within_margin(name):
    r, wall = _timed(inst(name), time_limit=LIMIT_S, workers=1, seed=0)
    assert r.params["time_limit"] == LIMIT_S
    assert wall <= LIMIT_S + TIME_MARGIN_S, f"{name}: {wall:.2f} s for a {LIMIT_S} s limit ({r.message})"


def test_stopped_run_returns_time_limit_with_incumbent_and_bound():
    i = inst("small-8gpu")
    r, _ = _timed(i, time_limit=0.5, workers=1, seed=0)
    assert r.status == Status.TIME_LIMIT, r.message
    assert r.objective is not None and r.bound is not None and r.bound <= r.objective + 1e-6
    ev = check_schedule(i, r.schedule)
    assert ev.ok and r.metrics.objective == pytest.approx(r.objective)


def _no_incumbent():
    return solve_cpsat(inst("small-8gpu"), time_limit=0.2, workers=1, seed=0, warm_start=False)


@pytest.fixture(scope="module")
def no_incumbent():
    return _no_incumbent()


def test_stopped_run_without_incumbent_has_no_schedule(no_incumbent):
    r = no_incumbent
    assert r.status == Status.TIME_LIMIT  # never INFEASIBLE: nothing was proven
    assert r.objective is None and r.schedule is None and r.metrics is None
    assert "no solution found" in summary_line(r)


def test_stopped_run_without_incumbent_says_so(no_incumbent):
    assert "no solution found" in no_incumbent.message.lower()


def test_too_large_model_is_refused_before_building(monkeypatch):
    import sensaopt.exact.cpsat as cps

    def never(*a, **k):
        raise AssertionError("the model was built")

    monkeypatch.setattr(cps, "build_cpsat", never)
    with pytest.raises(SensaoptError, match="rolling-horizon policy.*rolling-cpsat"):
        solve_cpsat(inst("small-8gpu"), time_limit=1, workers=1, max_vars=1000)
    with pytest.raises(AssertionError, match="the model was built"):  # the patch is where the model gets built
        solve_cpsat(inst("tiny-8gpu"), time_limit=1, workers=1)


def test_too_large_model_via_cli_is_one_line(tmp_path, capsys):
    f = tmp_path / "big.json"
    save_instance(generate(GeneratorConfig(jobs=200, nodes=8, seed=1)), f)
    out = tmp_path / "r.json"
    code = main(["solve", str(f), "--solver", "cpsat", "--time-limit", "5", "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and not out.exists()
    assert "would have about" in err[0] and "variables (limit 300000" in err[0] and "rolling-horizon policy" in err[0]


@pytest.mark.parametrize("horizon", [1, 3])
def test_infeasible_only_when_proven(horizon):
    """INFEASIBLE only for a horizon in which some job provably cannot finish; with the
    default horizon (the warm start fits it) never, even when stopped at once."""
    i = inst("tiny-8gpu")
    r = solve_cpsat(i, time_limit=5, workers=1, horizon=horizon)
    assert r.status == Status.INFEASIBLE and f"within the horizon of {horizon} rounds" in r.message
    for ws in (True, False):
        r = solve_cpsat(i, time_limit=0.01, workers=1, warm_start=ws)
        assert r.status != Status.INFEASIBLE, r.message


# ---- determinism ---------------------------------------------------------------------------------
def small(seed=1):
    """A 4-job, 1-node generated instance CP-SAT proves optimal in about a second."""
    return generate(GeneratorConfig(jobs=4, nodes=1, seed=seed))


def test_cpsat_sets_and_records_workers_and_seed(monkeypatch):
    seen = []
    real = cp_model.CpSolver

    class Spy(real):
        def solve(self, model, *a, **k):
            seen.append((self.parameters.num_workers, self.parameters.random_seed))
            return super().solve(model, *a, **k)

    monkeypatch.setattr(cp_model, "CpSolver", Spy)
    r = solve_cpsat(small(), time_limit=10, workers=1, seed=7)
    assert seen and all(s == (1, 7) for s in seen)  # every phase of the lexicographic solve
    assert len(seen) == (2 if r.params["lexicographic"].get("phase1") != "skipped (no open deadline decision)" else 1)
    assert (r.params["workers"], r.params["seed"], r.params["time_limit"]) == (1, 7, 10)
    assert r.versions.get("ortools")


def test_cli_result_records_workers_and_seed(tmp_path, capsys):
    out, f = tmp_path / "r.json", tmp_path / "i.json"
    save_instance(small(), f)
    assert main(["solve", str(f), "--solver", "cpsat", "--workers", "1", "--seed", "3",
                 "--time-limit", "10", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    assert (d["params"]["workers"], d["params"]["seed"], d["params"]["time_limit"]) == (1, 3, 10.0)
    assert d["versions"]["ortools"]


@pytest.mark.parametrize("seed", [1, 3])
def test_same_seed_one_worker_same_objective_and_schedule(seed):
    i = small(seed)
    a = solve_cpsat(i, time_limit=20, workers=1, seed=5)
    b = solve_cpsat(i, time_limit=20, workers=1, seed=5)
    assert a.status == b.status
    assert a.objective == b.objective and a.bound == b.bound
    assert a.schedule.to_dict(i) == b.schedule.to_dict(i)


# ---- wall-clock limits of the MILP solvers ----------------------------------------------------
def test_cbc_is_killed_after_its_deadline(monkeypatch, tmp_path):
    """CBC that ignores -sec (as it did for minutes in preprocessing on medium models)
    is killed CBC_GRACE_S after the deadline; the result is TIME_LIMIT with the warm
    start, within the time limit plus the grace."""
    import time

    import sensaopt.exact.milp as milp

    fake = tmp_path / "cbc"
    nap = f"sleep 60.{os.getpid()}"  # a command line no other process has
    fake.write_text(f"#!/bin/sh\n{nap}\n")
    fake.chmod(0o755)

    monkeypatch.setattr(milp, "CBC_PATH", str(fake))
    monkeypatch.setattr(milp, "CBC_GRACE_S", 0.5)
    import glob
    import tempfile

    left_over = lambda: set(glob.glob(f"{tempfile.gettempdir()}/sensaopt-cbc-*"))  # noqa: E731
    before = left_over()
    i = inst("tiny-16gpu")
    t0 = time.perf_counter()
    r = milp.solve_milp(i, backend="cbc", time_limit=3, workers=1)
    wall = time.perf_counter() - t0
    assert wall < 3 + 2 * 0.5 + 2, wall  # the limit, a grace per phase, the heuristic run
    assert r.status == Status.TIME_LIMIT and "killed" in r.message, r.message
    assert r.objective == pytest.approx(r.params["heuristic_objective"])
    assert left_over() <= before  # the MPS/solution files of the killed runs are gone
    assert not _running(str(fake)) and not _running(nap)  # the whole process group was killed, the shell's child too


def _running(text: str) -> bool:
    """Is a process whose command line contains ``text`` still alive?"""
    import subprocess

    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return any(text in line for line in out.splitlines()[1:])


def test_cbc_crash_on_mipstart_is_retried_without_it(monkeypatch, tmp_path):
    """CBC 2.10.3 crashes on some MIPSTART files: the run is repeated without the warm
    start, and says so."""
    import pulp

    import sensaopt.exact.milp as milp

    fake = tmp_path / "cbc"
    fake.write_text(f'#!/bin/sh\ncase "$*" in *-mips*) exit 3;; esac\nexec {pulp.PULP_CBC_CMD(msg=False).path} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setattr(milp, "CBC_PATH", str(fake))
    r = milp.solve_milp(inst("tiny-16gpu"), backend="cbc", time_limit=30, workers=1)
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(78.0), r.message
    assert "retried without it" in r.message and r.params["hinted"]
