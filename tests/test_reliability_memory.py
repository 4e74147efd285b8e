"""Memory as a limit, not a crash (issue 35, item 2): a command too large for the memory
it may take ends with one line naming its size, the memory it needs by estimate and
what to change; exit 1, no traceback, nothing half-written. Tested under
``resource.setrlimit`` in a child process, and in-process with a ``MemoryError`` raised
inside a command."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from sensaopt import memory
from sensaopt.cli import main

LIMIT = 700_000 * 1024  # the issue's `ulimit -v 700000`
LINE = ("error: out of memory: simulate (1000000 jobs, 120 nodes) needs about 3.2 GB by estimate; {avail}; "
        "use fewer jobs (--jobs, --limit, --days or --sample), or free or allow more memory")


def _limited(args: list[str], cwd: Path, env: dict[str, str] | None = None, limit_bytes: int = LIMIT) -> tuple[int, str, str]:
    """Run ``python -m sensaopt ARGS`` with the address space limited to :data:`LIMIT`:
    (exit code, stdout, stderr)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, resource.getrlimit(resource.RLIMIT_AS)[1]))

    p = subprocess.run([sys.executable, "-m", "sensaopt", *args], cwd=cwd, env={**os.environ, **(env or {})}, preexec_fn=limit,
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def _avail(err: str) -> str:
    """The line's "X is available (WHAT)" part: the address-space limit here, or the
    machine's memory on one with less free than the limit allows."""
    part = err.split("; ")[1]
    assert re.fullmatch(r"[0-9.]+ (GB|MB) is available \((the address-space limit, ulimit -v|the machine's available memory)\)", part), part
    return part


def test_a_million_job_simulation_is_refused_before_it_is_built(tmp_path: Path) -> None:
    code, out, err = _limited(["simulate", "--trace", "synthetic", "--jobs", "1000000", "--policy", "edf", "--out-dir", "D"], tmp_path)
    assert code == 1, err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.strip() == LINE.format(avail=_avail(err))
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / "D").exists()


@pytest.mark.slow  # about 70 s: the build runs until the memory is gone
def test_a_memory_error_while_building_gives_the_same_line(tmp_path: Path) -> None:
    """The up-front refusal turned off: the build itself runs out (a real MemoryError in
    ``build_instance``) and the boundary prints the same line, exit 1, nothing written."""
    code, out, err = _limited(["simulate", "--trace", "synthetic", "--jobs", "1000000", "--policy", "edf", "--out-dir", "D"], tmp_path,
                                 env={memory.NO_CHECK_ENV: "1"})
    assert code == 1, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.strip() == LINE.format(avail=_avail(err))
    assert not (tmp_path / "D").exists() or not any((tmp_path / "D").iterdir())


def test_an_instance_file_too_large_to_build_is_refused(tmp_path: Path) -> None:
    """A 300,000-job instance file (under the 10^6-job and 200 MiB file limits) read under
    a 450 MB address-space limit: refused, or out of memory while parsing it (then the
    line names the file), one line naming the command, exit 1. (Before the check ahead
    of pydantic's validation, pydantic-core aborted in Rust — ``memory allocation of 512
    bytes failed`` — and the process hung.)"""
    job = {"arrival": 0.0, "gpus": 1, "work": 10.0, "model": "res18"}
    raw = {"name": "big", "round_minutes": 10.0,
           "cluster": {"node_types": [{"name": "n", "gpus": 8, "cpus": 24, "mem_gb": 500.0, "count": 4}]},
           "jobs": [{"id": f"j{k}", **job} for k in range(300_000)]}
    (tmp_path / "big.json").write_text(json.dumps(raw))
    code, out, err = _limited(["validate", "big.json", "big.json"], tmp_path, limit_bytes=450 * 2**20)
    assert code == 1, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("error: out of memory: validate ("), err
    assert "use a smaller instance" in err


def test_a_memory_error_anywhere_names_the_size_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """In-process: the validator raising MemoryError in `validate` gives the line with the
    instance's jobs, nodes and rounds (noted when it was read)."""
    import sensaopt.validator

    def boom(*a: object, **k: object) -> None:
        raise MemoryError

    assert main(["solve", "tiny-8gpu", "-o", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sensaopt.validator, "check_schedule", boom)
    assert main(["validate", "tiny-8gpu", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("error: out of memory: validate (5 jobs, 1 node, 7 rounds) needs about 1 MB by estimate; "), err
    assert " is available (" in err and "use a smaller instance" in err


def test_the_kept_parts_are_named_and_nothing_is_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A two-policy `simulate` whose second policy runs out: exit 1, the first policy's
    files kept and named, no file (nor temporary file) of the second."""
    import sensaopt.simulator

    real = sensaopt.simulator.simulate

    def second_fails(inst: object, policy: str, **kw: object) -> object:
        if policy == "fifo":
            raise MemoryError
        return real(inst, policy, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sensaopt.simulator, "simulate", second_fails)
    out = tmp_path / "D"
    code = main(["simulate", "--trace", "synthetic", "--jobs", "20", "--policy", "edf", "--policy", "fifo", "--out-dir", str(out), "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[-1].startswith("error: out of memory: simulate (20 jobs, 120 nodes, "), err
    assert err[-1].endswith(f"(kept: {out}/edf.jobs.csv, {out}/edf.summary.json)"), err
    assert sorted(p.name for p in out.iterdir()) == ["edf.jobs.csv", "edf.summary.json"]


def test_the_refusal_comes_before_the_instance_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import sensaopt.generate
    import sensaopt.traces.trace

    def never(*a: object, **k: object) -> None:
        raise AssertionError("built after all")

    monkeypatch.setattr(memory, "available", lambda: (50e6, "the machine's available memory"))
    monkeypatch.setattr(sensaopt.traces.trace, "build_instance", never)
    monkeypatch.setattr(sensaopt.generate, "generate", never)
    assert main(["simulate", "--trace", "synthetic", "--jobs", "100000", "--policy", "edf", "--out-dir", str(tmp_path / "D")]) == 1
    err = capsys.readouterr().err
    assert err == ("error: out of memory: simulate (100000 jobs, 120 nodes) needs about 0.32 GB by estimate; 48 MB is available "
                   "(the machine's available memory); use fewer jobs (--jobs, --limit, --days or --sample), or free or allow more memory\n")
    assert not (tmp_path / "D").exists()


def test_check_refuses_what_exceeds_the_available_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "available", lambda: (1e9, "the machine's available memory"))
    memory.begin("simulate")
    memory.check(100_000, 120)  # 0.34 GB: fine
    with pytest.raises(memory.OutOfMemory) as e:
        memory.check(1_000_000, 120, rounds=10_000)
    assert str(e.value) == ("out of memory: simulate (1000000 jobs, 120 nodes, 10000 rounds) needs about 3.2 GB by estimate; "
                            "0.93 GB is available (the machine's available memory); use fewer jobs (--jobs, --limit, --days or "
                            "--sample), or free or allow more memory")
    assert isinstance(e.value, MemoryError)
    monkeypatch.setenv(memory.NO_CHECK_ENV, "1")
    memory.check(1_000_000, 120)  # turned off


def test_the_command_words_skip_the_root_options() -> None:
    assert memory.command_of(["--data-dir", "D", "simulate", "--jobs", "5"]) == "simulate"
    assert memory.command_of(["--log-level", "info", "experiment", "paper", "--out-dir", "x"]) == "experiment paper"
    assert memory.command_of(["--version"]) == "sensaopt"


def test_the_estimate_grows_with_jobs_nodes_and_rounds() -> None:
    assert memory.estimate(1000, run=False) == 1000 * memory.INSTANCE_BYTES_PER_JOB
    assert memory.estimate(1000, 10, 100) == 1000 * (memory.INSTANCE_BYTES_PER_JOB + memory.RUN_BYTES_PER_JOB) + 10 * 100 * 24
