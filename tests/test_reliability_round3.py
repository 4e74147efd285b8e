"""Hostile input, third round (issue 26): outputs never replace an input by file identity
(packaged names included) nor packaged data; multi-part commands keep each finished part
and say so; options and knobs checked before work; instances no policy can run refused
at load; one error boundary for operating-system errors. docs/reliability.md, section
"Third round", lists the cases and messages.

The packaged instances resolve to the main checkout (editable install): these tests never
write there; the packaged-data cases use a copy of the folder put in its place
(``datasets._instances_folder`` monkeypatched)."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import sensaopt
from sensaopt import datasets
from sensaopt.cli import main
from sensaopt.errors import SensaoptError

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "instances" / "tiny-8gpu.json"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(code: int, err: str, *needles: str, exit_code: int = 2, prefix: str = "error: ") -> str:
    assert code == exit_code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix) and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def packaged(tmp_path, monkeypatch) -> Path:
    """A copy of the packaged instances folder standing in for it."""
    folder = tmp_path / "pkg-instances"
    shutil.copytree(REPO / "instances", folder)
    monkeypatch.setattr(datasets, "_instances_folder", lambda: folder)
    return folder


def tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ---- 1. outputs never replace an input, by identity; packaged data is never written ----------------
@pytest.mark.parametrize("cmd", [
    ["solve", "tiny-8gpu", "--policy", "edf"],
    ["export", "tiny-8gpu"],
    ["gap", "tiny-8gpu", "--exact", "cpsat", "--time-limit", "5", "-q"],
    ["round-gap", "tiny-8gpu"],
])
def test_output_onto_the_packaged_file_a_name_resolves_to_is_refused(cmd, packaged, capsys):
    before = tree(packaged)
    target = packaged / "tiny-8gpu.json"
    if cmd[0] in ("gap", "round-gap"):
        target = packaged / "tiny-8gpu.csv"  # a table suffix: refused as packaged data
    code, out, err = run([*cmd, "-o", target], capsys)
    line = one_line(code, err)
    if target.suffix == ".json":
        assert "is the input file tiny-8gpu (the packaged" in line, line
    else:
        assert "packaged data" in line, line
    assert tree(packaged) == before and out == ""


def test_a_new_file_in_the_packaged_folder_is_refused(packaged, capsys):
    before = tree(packaged)
    code, _, err = run(["generate", "-o", packaged / "new.json", "--jobs", "3"], capsys)
    assert one_line(code, err).endswith(f"-o: is inside sensaopt's packaged data ({packaged.resolve()}); refusing to write there "
                                        "(choose another output)")
    assert tree(packaged) == before


def test_the_package_folder_itself_is_refused(capsys):
    target = Path(sensaopt.__file__).parent / "zz-out.json"
    code, _, err = run(["solve", TINY, "--policy", "edf", "-o", target], capsys)
    one_line(code, err, "packaged data")
    assert not target.exists()


def test_maintainers_may_regenerate_the_packaged_instances(packaged, capsys, monkeypatch):
    monkeypatch.setenv("SENSAOPT_WRITE_PACKAGED", "1")
    code, _, err = run(["generate", "-o", packaged / "new.json", "--jobs", "3"], capsys)
    assert code == 0, err and (packaged / "new.json").is_file()


def test_a_symlink_to_the_packaged_folder_is_seen_through(packaged, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(packaged)
    before = tree(packaged)
    code, _, err = run(["solve", "tiny-8gpu", "--policy", "edf", "-o", link / "tiny-8gpu.json"], capsys)
    one_line(code, err, "is the input file tiny-8gpu")
    code, _, err = run(["solve", TINY, "--policy", "edf", "-o", link / "other.json"], capsys)
    one_line(code, err, "packaged data")
    assert tree(packaged) == before


# ---- 1b. multi-part commands keep each finished part, and say so -------------------------------------
def _fake_gap_rows(monkeypatch, fail_at: int, exc: BaseException) -> None:
    import sensaopt.cli.exact as ex

    calls = {"n": 0}

    def fake(name, *a, **k):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise exc
        return {c: None for c in ex.GAP_COLUMNS} | {"instance": name, "policy": "edf"}

    monkeypatch.setattr(ex, "gap_row", fake)


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_gap_interrupted_after_two_rows_keeps_them(suffix, tmp_path, capsys, monkeypatch):
    _fake_gap_rows(monkeypatch, 3, KeyboardInterrupt())
    out = tmp_path / f"gap{suffix}"
    code, _, err = run(["gap", TINY, TINY, TINY, "-q", "-o", out], capsys)
    assert one_line(code, err, exit_code=130, prefix="interrupted") == f"interrupted (kept: 2 of 3 rows in {out})"
    if suffix == ".csv":
        assert out.read_text().count("\n") == 3  # header + 2 rows
    else:
        assert len(json.loads(out.read_text())) == 2


def test_gap_error_after_one_row_says_what_it_kept(tmp_path, capsys, monkeypatch):
    from sensaopt.errors import InputError

    _fake_gap_rows(monkeypatch, 2, InputError("x.json", "(model)", "too large"))
    out = tmp_path / "gap.csv"
    code, _, err = run(["gap", TINY, TINY, TINY, "-q", "-o", out], capsys)
    assert one_line(code, err) == f"error: x.json: (model): too large (kept: 1 of 3 rows in {out})"
    assert out.read_text().count("\n") == 2


def test_gap_error_on_the_first_row_writes_nothing_and_adds_nothing(tmp_path, capsys, monkeypatch):
    from sensaopt.errors import InputError

    _fake_gap_rows(monkeypatch, 1, InputError("x.json", "(model)", "too large"))
    out = tmp_path / "gap.csv"
    code, _, err = run(["gap", TINY, TINY, "-q", "-o", out], capsys)
    assert one_line(code, err) == "error: x.json: (model): too large" and not out.exists()


def test_gap_sigint_in_a_real_process_keeps_the_finished_rows(tmp_path):
    """A real Ctrl-C (SIGINT) during the third exact solve, after two rows are done."""
    out = tmp_path / "gap.csv"
    code = (f"import sys, signal, os; sys.argv[0] = 'sensaopt'\n"
            f"import sensaopt.cli.exact as ex\n"
            f"real = ex.gap_row; n = [0]\n"
            f"def row(*a, **k):\n"
            f"    n[0] += 1\n"
            f"    if n[0] == 3: os.kill(os.getpid(), signal.SIGINT)\n"
            f"    return real(*a, **k)\n"
            f"ex.gap_row = row\n"
            f"from sensaopt.cli import main\n"
            f"sys.exit(main(['gap', {str(TINY)!r}, {str(TINY)!r}, {str(TINY)!r}, '--exact', 'cpsat', '--time-limit', '1', "
            f"'--policy', 'edf', '-q', '-o', {str(out)!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"interrupted (kept: 2 of 3 rows in {out})", proc.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and lines[1].startswith(str(TINY))


def test_simulate_keeps_finished_policies_and_says_so(tmp_path, capsys, monkeypatch):
    import sensaopt.simulator as sim

    real = sim.simulate

    def fake(inst, pol, **kw):
        if pol == "fifo":
            raise KeyboardInterrupt
        return real(inst, pol, **kw)

    monkeypatch.setattr(sim, "simulate", fake)
    out = tmp_path / "sim"
    code, _, err = run(["simulate", "--trace", "synthetic", "--jobs", "6", "--preset", "2x8", "-q", "--policy", "edf",
                        "--policy", "fifo", "-o", out], capsys)
    assert code == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == f"interrupted (kept: {out / 'edf.jobs.csv'}, {out / 'edf.summary.json'})"
    assert sorted(p.name for p in out.iterdir()) == ["edf.jobs.csv", "edf.summary.json"]


def test_simulate_summary_that_cannot_be_written_leaves_no_half_pair(tmp_path, capsys, monkeypatch):
    """The policy's CSV is not left without its summary (before: `nothing written` while
    the CSV was there)."""
    import sensaopt.traces.run as tr

    real = tr.summary

    def bad_summary(inst, res, workload):
        d = real(inst, res, workload)
        d["metrics"]["avg_jct"] = math.nan
        return d

    monkeypatch.setattr(tr, "summary", bad_summary)
    out = tmp_path / "sim"
    code, _, err = run(["simulate", "--trace", "synthetic", "--jobs", "6", "--preset", "2x8", "-q", "--policy", "edf", "-o", out],
                       capsys)
    assert code == 2 and "NaN" in err.strip().splitlines()[-1] and "Traceback" not in err, err
    assert not out.exists() or not list(out.iterdir())


def test_round_gap_interrupted_keeps_the_decided_rounds(tmp_path, capsys, monkeypatch):
    import sensaopt.exact.rolling as rolling

    real = rolling.RoundGapRecorder.decide
    calls = {"n": 0}

    def decide(self, state):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, state)

    monkeypatch.setattr(rolling.RoundGapRecorder, "decide", decide)
    out = tmp_path / "rg.csv"
    code, _, err = run(["round-gap", TINY, "--policy", "edf", "--time-limit", "5", "-o", out], capsys)
    line = one_line(code, err, exit_code=130, prefix="interrupted")
    assert line == f"interrupted (kept: 2 rounds in {out})"
    assert out.read_text().count("\n") == 3


# ---- 4. one boundary for operating-system errors --------------------------------------------------------
def test_name_too_long_as_input_and_output(tmp_path, capsys):
    long = tmp_path / ("a" * 300 + ".json")
    code, _, err = run(["solve", long], capsys)
    one_line(code, err, "File name too long")
    code, _, err = run(["solve", TINY, "--policy", "edf", "-o", long], capsys)
    one_line(code, err, "File name too long (ENAMETOOLONG)", "…")


def test_symlink_loop_as_input_is_not_called_missing(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    code, _, err = run(["solve", a], capsys)
    assert one_line(code, err) == f"error: {a}: (file): cannot read: Too many levels of symbolic links"
    code, _, err = run(["validate", TINY, a], capsys)
    one_line(code, err, "Too many levels of symbolic links")


@pytest.mark.parametrize("exc, text", [
    (PermissionError(13, "Permission denied", "/data/x.json"), "error: /data/x.json: Permission denied (EACCES)"),
    (OSError(28, "No space left on device", "/data/out.csv"), "error: /data/out.csv: No space left on device (ENOSPC)"),
    (OSError(40, "Too many levels of symbolic links", "/data/l"), "error: /data/l: Too many levels of symbolic links (ELOOP)"),
    (OSError(36, "File name too long", "x" * 400), f"error: {'x' * 80}…{'x' * 80}: File name too long (ENAMETOOLONG)"),
    (OSError(5, "Input/output error"), "error: (stream): Input/output error (EIO)"),
])
def test_any_os_error_inside_a_command_is_one_line(exc, text, capsys, monkeypatch):
    import sensaopt.io

    def boom(*a, **k):
        raise exc

    monkeypatch.setattr(sensaopt.io, "load_instance", boom)
    code, out, err = run(["solve", TINY], capsys)
    assert one_line(code, err) == text and out == ""


def test_programming_errors_keep_their_traceback(capsys, monkeypatch):
    import sensaopt.io

    def boom(*a, **k):
        raise TypeError("a bug")

    monkeypatch.setattr(sensaopt.io, "load_instance", boom)
    with pytest.raises(TypeError, match="a bug"):
        main(["solve", str(TINY)])


def test_os_errors_raise_with_the_traceback_switch(capsys, monkeypatch):
    import sensaopt.io

    def boom(*a, **k):
        raise PermissionError(13, "Permission denied", "x")

    monkeypatch.setattr(sensaopt.io, "load_instance", boom)
    monkeypatch.setenv("SENSAOPT_TRACEBACK", "1")
    with pytest.raises(PermissionError):
        main(["solve", str(TINY)])


def test_full_stdout_is_one_line_exit_2():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "sensaopt", "schema"], stdout=full, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "error: (stdout): No space left on device (ENOSPC)", proc.stderr


def test_closed_stdout_pipe_is_one_line_exit_2():
    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([sys.executable, "-m", "sensaopt", "schema"], stdout=w, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "error: (stdout): Broken pipe (EPIPE)", proc.stderr
