"""HiGHS in a killable child process (:mod:`sensaopt.solvers.highs`, "Where it runs"): the same
answers as in-process, and a child that ignores its limit is killed (no process or
folder left). No wall-clock time is asserted: a kill by the clock shows in the message
(the suite runs on a busy machine)."""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from sensaopt.errors import SensaoptError
from sensaopt.exact.common import prepare
from sensaopt.exact.milp import build_highs
from sensaopt.exact.model.values import hint_values
from sensaopt.exact.outcome import exact_params
from sensaopt.exact.phases.allocation import LP_OPTIONS
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.result import Status
from sensaopt.solvers import SolverParams, TimeBudget, highs_child, highs_run
from sensaopt.solvers import highs as highs_mod
from sensaopt.solvers.highs import in_child, lp_bound, model_arrays, run_highs
from sensaopt.warm_start import policy_warm_start

from .util import wait_for


@pytest.fixture(scope="module")
def built():
    """A 4-job instance's exact model on HiGHS, hinted with the warm start's values."""
    inst = generate(GeneratorConfig(jobs=4, nodes=1, seed=3))
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))
    mb = build_highs(prep.data)
    mb.backend.hint(hint_values(prep.data, mb.vars, prep.heuristic.schedule))
    return mb


def _without_seconds(message: str) -> str:
    return message.rpartition(",")[0]  # the wall seconds end the message


@pytest.mark.parametrize("hinted", [False, True])
def test_the_child_gives_the_in_process_answer(built, hinted):
    """Same options, seed and threads: the same status, objective, bound, nodes and values."""
    be = built.backend
    params = exact_params("highs", 1, 0)
    inside = run_highs(be, TimeBudget.start(120.0), params, hinted=hinted, isolated=False)
    child = run_highs(be, TimeBudget.start(120.0), params, hinted=hinted, isolated=True)
    assert inside.status == Status.OPTIMAL, inside.message  # a 4-job model: proven in seconds
    assert (child.status, child.objective, child.bound) == (inside.status, inside.objective, inside.bound)
    assert _without_seconds(child.message) == _without_seconds(inside.message)
    assert [child.value(v) for v in be.variables] == [inside.value(v) for v in be.variables]


def test_a_misreported_optimum_is_not_a_proof(built, monkeypatch):
    """HiGHS's OPTIMAL counts only when its reported objective is the cost of the solution it
    returns (HiGHS 1.16 reported 7320 for a start costing 7520 on a 40-job window): a
    misreported run keeps the same (valid) answer, is never OPTIMAL, and its bound is no
    higher than the answer. (No proof within the limit is asserted: when the honest run
    proved, the misreported one says why it is not counted.)"""
    be = built.backend
    params = exact_params("highs", 1, 0)
    honest = run_highs(be, TimeBudget.start(120.0), params, hinted=True, isolated=False)

    def misreported(h):
        end = highs_run.end_of(h)
        return replace(end, reported=end.reported - 200.0)

    monkeypatch.setattr(highs_mod, "end_of", misreported)
    got = run_highs(be, TimeBudget.start(120.0), params, hinted=True, isolated=False)
    assert got.status != Status.OPTIMAL
    assert got.objective == honest.objective and got.bound is not None and got.bound <= got.objective
    assert [got.value(v) for v in be.variables] == [honest.value(v) for v in be.variables]
    if honest.status == Status.OPTIMAL:
        assert got.status == Status.TIME_LIMIT and "OPTIMAL not counted" in got.message


@pytest.mark.parametrize(("status", "reported", "cost", "kept"), [
    (Status.OPTIMAL, 100.0, 100.0, True), (Status.OPTIMAL, 100.0, 100.00000001, True),
    (Status.OPTIMAL, 7320.0, 7520.0, False), (Status.OPTIMAL, float("nan"), 7520.0, True),
    (Status.TIME_LIMIT, 7320.0, 7520.0, True)])
def test_of_answer_keeps_optimal_only_for_the_reported_cost(status, reported, cost, kept):
    """``HighsSearch.of_answer``: OPTIMAL stays only when the reported objective is the
    answer's cost (1e-6 relative; unread NaN holds); a misreport becomes TIME_LIMIT with the
    bound lowered to the answer's cost; any other status is left alone."""
    run = highs_mod.HighsSearch(status, True, 7600.0, "highs", reported=reported)
    got = run.of_answer(cost)
    if kept:
        assert got == run
    else:
        assert got.status == Status.TIME_LIMIT and got.dual_bound == cost and got.has_solution
        assert "OPTIMAL not counted" in got.message


@pytest.mark.parametrize("extra", [{}, LP_OPTIONS], ids=["simplex", "ipm"])
def test_the_child_gives_the_in_process_lp_bound(built, extra):
    params = SolverParams(workers=1, extra=extra)
    inside = lp_bound(built.backend, TimeBudget.start(120.0), params, isolated=False)
    child = lp_bound(built.backend, TimeBudget.start(120.0), params, isolated=True)
    assert inside is not None and child == inside


def test_the_work_limit_reaches_the_child(built):
    """Under a work limit the child gets the same node limit and charges the same work."""
    be, params = built.backend, exact_params("highs", 1, 0)
    runs = [run_highs(be, TimeBudget.start(120.0, work=0.01), params, isolated=iso) for iso in (False, True)]
    assert runs[0].work == runs[1].work and runs[0].status == runs[1].status
    assert (runs[0].objective, runs[0].bound) == (runs[1].objective, runs[1].bound)


def test_a_refused_option_is_one_error_on_both_paths(built):
    params = SolverParams(workers=1, extra={"no_such_option": 1})
    for isolated in (False, True):
        with pytest.raises(SensaoptError, match="no_such_option"):
            run_highs(built.backend, TimeBudget.start(30.0), params, isolated=isolated)


def test_large_models_go_to_the_child(built, monkeypatch):
    a = model_arrays(built.backend, built.backend.columns(), False)
    monkeypatch.setattr(highs_mod, "CHILD_MIN_NONZEROS", a.nonzeros)
    assert in_child(a, None) and not in_child(a, False)
    monkeypatch.setattr(highs_mod, "CHILD_MIN_NONZEROS", a.nonzeros + 1)
    assert not in_child(a, None) and in_child(a, True)


@pytest.fixture
def stalled(tmp_path, monkeypatch):
    """Children that sleep instead of solving (the module's test hook), in a temporary
    folder of this test's own: (the file the child's pid goes to, the folder)."""
    pid_file = tmp_path / "child.pid"
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    monkeypatch.setenv(highs_child.STALL_ENV, str(pid_file))
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))
    return pid_file, own_tmp


def _gone(pid_file: Path, own_tmp: Path) -> None:
    """The stalled child ran, and neither it nor its folder is left."""
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists(), f"the child {pid} is still there"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not list(own_tmp.glob("sensaopt-highs-*"))


@pytest.mark.parametrize("work", [None, 5.0])
def test_a_child_that_ignores_its_limit_is_killed(built, stalled, work):
    # the stalled child sleeps an hour: the call returns only because the clock killed it
    # (no wall-clock assertion: the message says the kill came from the budget's clock)
    out = run_highs(built.backend, TimeBudget.start(1.0, work=work), exact_params("highs", 1, 0), isolated=True)
    assert out.status == Status.TIME_LIMIT and out.objective is None and out.bound is None and out.value is None
    assert "stopped from outside" in out.message, out.message
    assert re.search(r"killed \d+\.\d+ s past the time limit", out.message), out.message
    assert out.safety_net == (work is not None)
    _gone(*stalled)


def test_an_lp_child_that_ignores_its_limit_is_killed(built, stalled):
    assert lp_bound(built.backend, TimeBudget.start(1.0), SolverParams(workers=1), isolated=True) is None
    _gone(*stalled)
    lp = model_arrays(built.backend, built.backend.columns(), False, relaxed=True)
    got = highs_child.run_child(lp, SolverParams(workers=1), TimeBudget.start(1.0), "lp", None)
    assert got.killed and got.meta is None and "past the time limit" in got.note, got
    _gone(*stalled)


def _start_solve(tmp_path: Path, pid_file: Path, out: Path):
    """``sensaopt solve --solver highs`` in a subprocess, every HiGHS model sent to a child
    that stalls (the test hook), with its own TMPDIR: (the process, that folder)."""
    import signal
    import subprocess
    import sys

    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir(exist_ok=True)
    code = ("import sys\nimport sensaopt.solvers.highs as m\nm.CHILD_MIN_NONZEROS = 0\n"
            "from sensaopt.cli import main\nsys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "TMPDIR": str(own_tmp), highs_child.STALL_ENV: str(pid_file)}
    args = ["solve", str(Path(__file__).parent.parent / "instances" / "tiny-16gpu.json"), "--solver", "highs", "--time-limit", "60",
            "-o", str(out)]
    # SIG_DFL: a child of a background job inherits SIGINT ignored; a user's Ctrl-C is not
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, own_tmp


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_signal_to_sensaopt_kills_the_highs_child(tmp_path, sig):
    """Ctrl-C or SIGTERM while HiGHS runs in its child: `interrupted`, exit 130, no child,
    no folder, no output; SIGKILL: the child and its folder go too (watchdog, PDEATHSIG)."""
    import signal

    pid_file, out = tmp_path / "child.pid", tmp_path / "r.json"
    proc, own_tmp = _start_solve(tmp_path, pid_file, out)
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text(), 120), "the HiGHS child never started"
        pid = int(pid_file.read_text())
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=120)  # a guard against a hang, not a timing
        if sig != "SIGKILL":
            assert proc.returncode == 130 and err.strip().splitlines()[-1] == "interrupted", err
        assert wait_for(lambda: not Path(f"/proc/{pid}").exists(), 10), f"the child {pid} outlived sensaopt"
        assert wait_for(lambda: not list(own_tmp.glob("sensaopt-highs-*")), 10)
        assert not out.exists()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_no_child_once_the_time_is_spent(built, stalled):
    """A call whose deadline has passed starts no child (its imports alone take ~0.6 s)."""
    spent = TimeBudget(1.0, time.perf_counter() - 2.0)
    out = run_highs(built.backend, spent, exact_params("highs", 1, 0), isolated=True)
    assert out.status == Status.TIME_LIMIT and "not run" in out.message and out.objective is None
    assert lp_bound(built.backend, spent, SolverParams(workers=1), isolated=True) is None
    pid_file, own_tmp = stalled
    assert not pid_file.exists() and not list(own_tmp.glob("sensaopt-highs-*"))


@pytest.mark.parametrize("work", [None, 5.0])
def test_a_cancelled_child_is_killed_before_its_limit(built, stalled, work):
    # a portfolio's other side proved the optimum: the cancel event set, the stalled child
    # (an hour's sleep, a 600-s budget) is killed; the outcome says why and, not being the
    # clock's doing, charges no safety net
    import threading

    from sensaopt.solvers.interrupt import cancel_scope

    event = threading.Event()
    pid_file = stalled[0]
    # set once the child is up (it writes its pid first)
    threading.Thread(target=lambda: (wait_for(lambda: pid_file.exists() and pid_file.read_text(), 120.0), event.set()), daemon=True).start()
    with cancel_scope(event):
        out = run_highs(built.backend, TimeBudget.start(600.0, work=work), exact_params("highs", 1, 0), isolated=True)
    assert out.status == Status.TIME_LIMIT and out.objective is None and out.value is None
    assert "the other side of the portfolio proved the optimum" in out.message, out.message
    assert not out.safety_net
    _gone(*stalled)


def test_a_kill_inside_a_set_cancel_scope_is_not_the_clocks():
    # the one place CBC's and HiGHS's killed children become an outcome: the portfolio's
    # cancel charges no safety net under a work limit, the clock's does
    import threading

    from sensaopt.solvers.child import stopped_by_clock
    from sensaopt.solvers.interrupt import cancel_scope

    event = threading.Event()
    event.set()
    with cancel_scope(event):
        out = stopped_by_clock(TimeBudget.start(60.0, work=5.0), "cbc killed after 1.00 s", 0.0)
    assert out.status == Status.TIME_LIMIT and not out.safety_net and "other side of the portfolio" in out.message
    clock = stopped_by_clock(TimeBudget.start(60.0, work=5.0), "cbc killed after 1.00 s", 0.0)
    assert clock.safety_net and "cbc killed" in clock.message
