"""Output files are never written where they would destroy something (issue 16).

Every command that writes a file refuses, with one line and exit code 2, before it reads
or computes anything: an output that is one of its inputs (any name of the same file), a
symbolic link, a FIFO, a device, a directory, or a path whose parent cannot be a directory
it can write. Whatever was at the path is left as it was. The one checker is
:mod:`sensaopt.outputs`; docs/reliability.md, "Outputs", lists the messages.

Tests run as root here: a read-only directory does not stop root, so the "cannot write"
cases use paths that fail for root too (a file as a parent directory, /proc).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sensaopt.cli import main
from sensaopt.errors import InputError
from sensaopt.outputs import check_output, check_output_dir, write_text

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "instances" / "tiny-8gpu.json"
TRACE_OPTS = ["--trace", "synthetic", "--jobs", "10", "--preset", "2x8", "-q"]


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line_error(code: int, err: str, *needles: str) -> str:
    """Exit 2, exactly one stderr line `error: ...` holding every needle, no traceback."""
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def snapshot(p: Path) -> tuple:
    """What is at ``p`` (not following a symlink): kind, content or target, inode."""
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(p), st.st_ino)
    if stat.S_ISREG(st.st_mode):
        return ("file", p.read_bytes(), st.st_ino)
    if stat.S_ISDIR(st.st_mode):
        return ("dir", sorted(os.listdir(p)), st.st_ino)
    return (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)


def no_temp_files(d: Path) -> None:
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp") or ".tmp" in p.name], list(d.iterdir())


@contextlib.contextmanager
def drained(p: Path) -> Iterator[bytearray]:
    """For a FIFO at ``p``: a reader that collects whatever is written into it (so a
    writer never blocks, and the test sees what got through); a no-op for anything else."""
    got = bytearray()
    if not stat.S_ISFIFO(os.lstat(p).st_mode):
        yield got
        return
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    stop = threading.Event()

    def pump() -> None:
        while not stop.is_set():
            if select.select([fd], [], [], 0.05)[0]:
                with contextlib.suppress(BlockingIOError):
                    chunk = os.read(fd, 1 << 16)
                    got.extend(chunk)
                    if not chunk:  # no writer: nothing to read
                        time.sleep(0.01)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        yield got
    finally:
        stop.set()
        t.join()
        os.close(fd)


@pytest.fixture
def inst(tmp_path) -> Path:
    p = tmp_path / "x.json"
    shutil.copy(TINY, p)
    return p


# ---- the instance is never overwritten -------------------------------------------------
@pytest.mark.parametrize("spelling", ["same", "dotted", "hardlink"])
def test_solve_refuses_to_overwrite_its_instance(spelling, inst, tmp_path, capsys):
    before = inst.read_bytes()
    if spelling == "same":
        out = inst
    elif spelling == "dotted":  # another spelling of the same path
        (tmp_path / "sub").mkdir()
        out = tmp_path / "sub" / ".." / "x.json"
    else:  # a second name of the same file (same device and inode)
        out = tmp_path / "second-name.json"
        os.link(inst, out)
    code, stdout, err = run(["solve", inst, "-o", out], capsys)
    one_line_error(code, err, str(out), "-o", "is the input file", "refusing to overwrite an input")
    assert inst.read_bytes() == before and stdout == ""


def test_solve_through_a_symlinked_input_still_protects_the_file(inst, tmp_path, capsys):
    link = tmp_path / "alias.json"
    link.symlink_to(inst)
    before = inst.read_bytes()
    code, _, err = run(["solve", link, "-o", inst], capsys)
    one_line_error(code, err, "is the input file")
    assert inst.read_bytes() == before


def test_real_subprocess_refuses_overwriting_the_instance(inst):
    before = inst.read_bytes()
    p = subprocess.run([sys.executable, "-m", "sensaopt", "solve", str(inst), "-o", str(inst)], capture_output=True, text=True,
                       timeout=120)
    one_line_error(p.returncode, p.stderr, "is the input file")
    assert inst.read_bytes() == before


# ---- never a symlink, FIFO, device or directory ---------------------------------------
def make_target(kind: str, tmp_path: Path) -> Path:
    p = tmp_path / f"target-{kind}"
    if kind == "symlink":
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me\n")
        p.symlink_to(victim)
    elif kind == "dangling-symlink":
        p.symlink_to(tmp_path / "nowhere.json")
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "directory":
        p.mkdir()
        (p / "inside.txt").write_text("keep\n")
    elif kind == "device":
        try:  # the same device as /dev/null, made here so nothing outside tmp_path is at risk
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except (PermissionError, OSError) as e:
            pytest.skip(f"cannot make a device node here: {e}")
    return p


KIND_WORDS = {"symlink": "is a symbolic link", "dangling-symlink": "is a symbolic link", "fifo": "is a FIFO",
              "device": "is a character device", "directory": "is a directory"}


@pytest.mark.parametrize("kind", list(KIND_WORDS))
def test_solve_output_onto_a_special_file_is_refused(kind, inst, tmp_path, capsys):
    target = make_target(kind, tmp_path)
    before = snapshot(target)
    with drained(target) as through:
        code, _, err = run(["solve", inst, "-o", target], capsys)
    one_line_error(code, err, str(target), KIND_WORDS[kind], "refusing to replace it")
    assert snapshot(target) == before and not through
    if kind == "symlink":
        assert (tmp_path / "victim.txt").read_text() == "keep me\n"
    if kind == "dangling-symlink":
        assert not (tmp_path / "nowhere.json").exists()
    no_temp_files(tmp_path)


def test_dev_null_is_refused_not_replaced():
    """Choice: /dev/null is not an output (leave -o out to write nothing). Checked
    without writing anything, so this test cannot harm the machine's /dev/null."""
    with pytest.raises(InputError, match="is a character device; refusing to replace it"):
        check_output("/dev/null", field="-o")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_existing_directory_as_output_file(inst, tmp_path, capsys):
    d = tmp_path / "results"
    d.mkdir()
    code, _, err = run(["solve", inst, "-o", d], capsys)
    one_line_error(code, err, "is a directory")
    assert list(d.iterdir()) == []


# ---- parent directories ---------------------------------------------------------------------
def test_missing_parent_directories_are_created(inst, tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "r.json"
    code, _, err = run(["solve", inst, "--policy", "edf", "-o", out], capsys)
    assert code == 0, err
    assert json.loads(out.read_text())["solver"] == "heuristic:edf"
    no_temp_files(out.parent)


def test_a_file_as_parent_directory_is_one_line(inst, tmp_path, capsys):
    """Fails for root too (NotADirectoryError traceback before)."""
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x\n")
    code, _, err = run(["solve", inst, "-o", blocker / "sub" / "r.json"], capsys)
    one_line_error(code, err, f"{blocker} is not a directory")
    assert blocker.read_text() == "x\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory; the /proc case covers root")
def test_read_only_directory_is_one_line(inst, tmp_path, capsys):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        code, _, err = run(["solve", inst, "-o", d / "r.json"], capsys)
    finally:
        d.chmod(0o755)
    one_line_error(code, err, "permission denied")


@pytest.mark.skipif(not os.path.exists("/proc/self"), reason="needs a mounted /proc")
@pytest.mark.parametrize("name", ["sensaopt-test-output.json", "sensaopt-test-dir/r.json"])
def test_a_write_that_fails_even_for_root_is_one_line(name, inst, capsys):
    """/proc accepts no new files, not even root's: the write itself fails and is reported
    (PermissionError / FileNotFoundError tracebacks before)."""
    code, _, err = run(["solve", inst, "-o", Path("/proc") / name], capsys)
    one_line_error(code, err, "cannot write")


# ---- every command that writes a file --------------------------------------------------------
def _schedule(tmp_path: Path, inst: Path) -> Path:
    r = tmp_path / "result.json"
    assert main(["solve", str(inst), "--policy", "edf", "-o", str(r)]) == 0
    return r


COMMANDS = {  # name -> argv for output `out` (a file path)
    "solve": lambda tmp, inst, out: ["solve", inst, "-o", out],
    "generate": lambda tmp, inst, out: ["generate", "--jobs", "4", "-o", out],
    "schema": lambda tmp, inst, out: ["schema", "-o", out],
    "gap": lambda tmp, inst, out: ["gap", inst, "--time-limit", "1", "-o", out],
    "round-gap": lambda tmp, inst, out: ["round-gap", inst, "-o", out],
    "export": lambda tmp, inst, out: ["export", inst, "-o", out],
    "plot": lambda tmp, inst, out: ["plot", _schedule(tmp, inst), "-o", out],
    "bound": lambda tmp, inst, out: ["bound", inst, "-o", out],
}
FOLDER_COMMANDS = {  # name -> (argv for output folder `d`, a file it writes in `d`)
    "simulate": (lambda d: ["simulate", *TRACE_OPTS, "--policy", "edf", "--out-dir", d], "edf.summary.json"),
    "sweep": (lambda d: ["sweep", *TRACE_OPTS, "--serial", "--out-dir", d], "summary.csv"),
    "experiment paper": (lambda d: ["experiment", "paper", "--serial", "--scale", "0.01", "--policy", "edf", "-q", "--out-dir", d],
                         "table.md"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_every_file_command_refuses_special_outputs(command, kind, inst, tmp_path, capsys):
    target = make_target(kind, tmp_path)
    argv = COMMANDS[command](tmp_path, inst, target)
    capsys.readouterr()
    before = snapshot(target)
    with drained(target) as through:
        code, _, err = run(argv, capsys)
    one_line_error(code, err, KIND_WORDS[kind])
    assert snapshot(target) == before and not through


@pytest.mark.parametrize("command", ["solve", "gap", "round-gap", "export", "bound"])
def test_every_instance_command_refuses_its_instance_as_output(command, inst, tmp_path, capsys):
    before = inst.read_bytes()
    code, _, err = run(COMMANDS[command](tmp_path, inst, inst), capsys)
    one_line_error(code, err, "is the input file")
    assert inst.read_bytes() == before


def test_plot_refuses_its_schedule_as_output(inst, tmp_path, capsys):
    sched = _schedule(tmp_path, inst)
    before = sched.read_bytes()
    capsys.readouterr()
    code, _, err = run(["plot", sched, "-o", sched], capsys)
    one_line_error(code, err, "is the input file")
    assert sched.read_bytes() == before


@pytest.mark.parametrize("command", list(FOLDER_COMMANDS))
def test_folder_commands_refuse_a_file_as_folder(command, tmp_path, capsys):
    f = tmp_path / "a-file"
    f.write_text("keep\n")
    code, _, err = run(FOLDER_COMMANDS[command][0](f), capsys)
    one_line_error(code, err, "is not a directory")
    assert f.read_text() == "keep\n"


@pytest.mark.parametrize("command", list(FOLDER_COMMANDS))
def test_folder_commands_check_their_files_before_running(command, tmp_path, capsys):
    """A symlink where the command would write: refused before any run (nothing written)."""
    d = tmp_path / "out"
    d.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (d / FOLDER_COMMANDS[command][1]).symlink_to(victim)
    code, _, err = run(FOLDER_COMMANDS[command][0](d), capsys)
    one_line_error(code, err, "is a symbolic link")
    assert victim.read_text() == "keep me\n" and sorted(p.name for p in d.iterdir()) == [FOLDER_COMMANDS[command][1]]


def test_simulate_never_overwrites_its_trace(tmp_path, capsys):
    from .test_traces_cli import small_chronus

    d = tmp_path / "out"
    d.mkdir()
    trace = small_chronus(d)
    os.rename(trace, d / "edf.jobs.csv")
    trace = d / "edf.jobs.csv"
    before = trace.read_bytes()
    code, _, err = run(["simulate", "--trace", trace, "--preset", "2x8", "--policy", "edf", "--out-dir", d], capsys)
    one_line_error(code, err, "is the input file")
    assert trace.read_bytes() == before and sorted(p.name for p in d.iterdir()) == ["edf.jobs.csv"]


def test_simulate_checks_every_policy_before_any_run(tmp_path, capsys):
    """`--policy edf --policy nope`: exit 2 and edf's results are not written."""
    d = tmp_path / "out"
    code, stdout, err = run(["simulate", *TRACE_OPTS, "--policy", "edf", "--policy", "nope", "--out-dir", d], capsys)
    one_line_error(code, err, "nope")
    assert not d.exists() and stdout == ""


def test_simulate_checks_the_second_policys_files_before_the_first_runs(tmp_path, capsys):
    d = tmp_path / "out"
    d.mkdir()
    os.mkfifo(d / "fifo.summary.json")
    with drained(d / "fifo.summary.json"):
        code, stdout, err = run(["simulate", *TRACE_OPTS, "--policy", "edf", "--policy", "fifo", "--out-dir", d], capsys)
    one_line_error(code, err, "is a FIFO")
    assert sorted(p.name for p in d.iterdir()) == ["fifo.summary.json"] and stdout == ""


def test_instances_from_trace_refuses_a_file_as_folder(tmp_path, capsys):
    f = tmp_path / "a-file"
    f.write_text("keep\n")
    code, _, err = run(["instances", "from-trace", "--trace", "synthetic", "--count", "2", "--out-dir", f], capsys)
    one_line_error(code, err, "is not a directory")


# ---- the writer itself -------------------------------------------------------------------------
def test_writer_refuses_and_leaves_no_temp_file(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with drained(tmp_path / "pipe") as through, pytest.raises(InputError, match="is a FIFO"):
        write_text(tmp_path / "pipe", "x")
    assert not through
    no_temp_files(tmp_path)
    write_text(tmp_path / "ok.txt", "hello")
    assert (tmp_path / "ok.txt").read_text() == "hello\n"
    mode = stat.S_IMODE(os.stat(tmp_path / "ok.txt").st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # like a file opened for writing, not mkstemp's 0600
    no_temp_files(tmp_path)


def test_output_folder_check(tmp_path):
    assert check_output_dir(tmp_path / "new" / "dir") == tmp_path / "new" / "dir"  # to be created
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        check_output_dir(tmp_path / "f")
    with pytest.raises(InputError, match="is not a directory"):
        check_output_dir(tmp_path / "f" / "sub")
    link = tmp_path / "linked"
    link.symlink_to(tmp_path, target_is_directory=True)
    assert check_output_dir(link) == link  # a symlink to a folder is a fine output folder
