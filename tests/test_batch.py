"""Long commands run unattended: progress lines when stderr is not a terminal, the
``--log-level`` log with Dask's messages routed through it, resume notes summarized in one
line, and ``--solver-log`` (the solver's own log on stderr, stdout kept for the result)."""

from __future__ import annotations

import io
import json
import logging
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sensaopt.cli.batch import ResumeNotes, RunLines, configure_logging, dask_warnings, duration

SWEEP = ["sweep", "--trace", "synthetic", "--jobs", "6", "--seed", "0", "--seed", "1", "--policy", "edf", "--policy", "fifo", "--serial"]


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_run_lines_count_and_estimate() -> None:
    out, clock = io.StringIO(), Clock()
    lines = RunLines(4, "paper", every_s=0, stream=out, clock=clock)
    clock.t = 30.0
    lines.update(1, 4)
    lines.update(1, 4)  # no new run finished: no line
    clock.t = 130.0
    lines.update(2, 4)
    clock.t = 3800.0
    lines.update(4, 4)
    lines.close()
    assert out.getvalue().splitlines() == [
        "paper: 1/4 runs done (25 %), 30s elapsed, ETA 1m30s",
        "paper: 2/4 runs done (50 %), 2m10s elapsed, ETA 2m10s",
        "paper: 4/4 runs done (100 %), 1h03m elapsed"]
    assert duration(59.6) == "1m00s" and duration(-1) == "0s"


def test_run_lines_beat_while_runs_go_on() -> None:
    out = io.StringIO()
    lines = RunLines(3, "sweep", every_s=0.01, stream=out)
    try:
        deadline = time.monotonic() + 60
        while "running" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        lines.close()
    assert re.match(r"sweep: 0/3 runs done \(0 %\), \d+s elapsed, running$", out.getvalue().splitlines()[0])


def test_a_sweep_without_a_terminal_prints_one_line_per_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sensaopt.cli import main

    assert main([*SWEEP, "--out-dir", str(tmp_path / "st")]) == 0  # capsys: stderr is not a terminal
    lines = capsys.readouterr().err.splitlines()
    assert [ln.split(" runs done")[0] for ln in lines] == [f"sweep: {k}/4" for k in range(1, 5)], lines
    assert main([*SWEEP, "--out-dir", str(tmp_path / "st"), "-q"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and "4 reused" in out.out


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_claims_on_resume_are_one_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], restore_logging: None) -> None:
    from sensaopt.cli import main
    from sensaopt.sweep import RunConfig

    keys = [RunConfig(trace="synthetic", jobs=6, seed=s, policy=p).key() for s in (0, 1) for p in ("edf", "fifo")]
    claims = tmp_path / "st" / "claims"
    claims.mkdir(parents=True)
    pid = _dead_pid()

    def leave_claims() -> None:  # as a sweep killed mid-run leaves them
        for k in keys:
            (claims / f"{k}.claim").write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "time": time.time(), "token": k}))

    leave_claims()
    assert main([*SWEEP, "--out-dir", str(tmp_path / "st"), "-q"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "resume: 4 stale claims taken over (their sweeps had ended) (--log-level info lists them)"]
    leave_claims()
    (tmp_path / "st" / "runs").rename(tmp_path / "st" / "old-runs")  # computed again: the claims are met again
    assert main(["--log-level", "info", *SWEEP, "--out-dir", str(tmp_path / "st"), "-q"]) == 0
    infos = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("INFO sensaopt.sweep: ")]
    assert len(infos) == 4 and all(f"process {pid} has ended" in ln for ln in infos)


def test_resume_notes_summarize_claims_and_keep_other_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    notes = ResumeNotes()
    assert notes.summary() is None
    notes("claims/a.claim: claim of process 9 on h is stale (process 9 has ended); this sweep computes run a")
    notes("runs/b.json: not JSON; moved to failed/b.json, the run will be recomputed")
    assert capsys.readouterr().err == "warning: runs/b.json: not JSON; moved to failed/b.json, the run will be recomputed\n"
    assert notes.summary() == "resume: 1 stale claim taken over (their sweeps had ended) (--log-level info lists them)"


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_dask_messages_go_through_the_log_and_are_counted(restore_logging: None) -> None:
    err = io.StringIO()
    configure_logging("warning", stream=err)
    before = dask_warnings()
    logging.getLogger("distributed.nanny").warning("Worker process still alive after 4 seconds, killing")
    logging.getLogger("distributed.scheduler").error("a real problem")
    logging.getLogger("sensaopt.sweep").warning("ours")
    assert err.getvalue().splitlines() == ["ERROR distributed.scheduler: a real problem", "WARNING sensaopt.sweep: ours"]
    assert dask_warnings() == before + 1
    err2 = io.StringIO()
    configure_logging("info", stream=err2)
    logging.getLogger("distributed.nanny").warning("shown now")
    assert err2.getvalue() == "WARNING distributed.nanny: shown now\n" and err.getvalue().count("\n") == 2


def test_solver_log_goes_to_stderr_and_json_stays_clean(capfd: pytest.CaptureFixture[str], restore_logging: None) -> None:
    from sensaopt.cli import main

    assert main(["solve", "tiny-16gpu", "--solver", "cpsat", "--time-limit", "30", "--workers", "1", "--solver-log", "--json"]) == 0
    out = capfd.readouterr()  # file descriptors: the solver prints its log from C++
    assert json.loads(out.out)["status"] == "OPTIMAL"  # one JSON object, nothing else
    assert "Starting CP-SAT solver" in out.err
    assert main(["solve", "tiny-16gpu", "--solver-log"]) == 2
    err = capfd.readouterr().err
    assert "--solver-log" in err and "applies to the exact solvers" in err
    assert main(["--log-level", "loud", "solve", "tiny-16gpu"]) == 2
    assert capfd.readouterr().err.strip() == "error: (command line): --log-level: unknown level 'loud' (use debug, info, warning, error)"


def test_cbc_log_goes_to_stderr_only_with_solver_log(capfd: pytest.CaptureFixture[str], restore_logging: None) -> None:
    """CBC runs as a child process writing its log to a file: --solver-log copies it to stderr."""
    from sensaopt.cli import main

    args = ["solve", "tiny-16gpu", "--solver", "cbc", "--time-limit", "5", "--workers", "1", "--json"]
    assert main([*args, "--solver-log"]) == 0
    out = capfd.readouterr()
    assert json.loads(out.out)["solver"] == "milp:cbc"  # stdout: the one JSON object
    assert "Welcome to the CBC MILP Solver" in out.err and "Cbc0" in out.err
    assert main(args) == 0
    assert "CBC MILP Solver" not in capfd.readouterr().err
