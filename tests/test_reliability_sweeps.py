"""Sweeps survive faults, for real: ``sensaopt sweep`` runs as a subprocess and is
stopped with SIGINT or SIGKILL after some runs finished, then restarted; a Dask worker
process is killed while tasks run. Afterwards: every run stored exactly once (finished
runs are not run again), every stored JSON parses, the results equal a serial run.

Subprocesses start in their own session; each test kills its own process group at the
end (a SIGKILLed Dask client leaves its worker processes behind otherwise).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sensaopt.cli import main
from sensaopt.sweep import ResultStore, RunConfig, grid, run_serial, run_sweep

N_SEEDS = 30
BASE = RunConfig(trace="synthetic", preset="2x8", policy="edf", jobs=100)
TIMING = ("simulate_s", "wall_s")


def sweep_argv(store: Path, n_seeds: int = N_SEEDS, *extra) -> list[str]:
    seeds = [a for s in range(n_seeds) for a in ("--seed", str(s))]
    return ["sweep", "--trace", "synthetic", "--jobs", "100", "--preset", "2x8", "--policy", "edf", *seeds, "--store", str(store), "-q", *extra]


def expected_keys(n_seeds: int = N_SEEDS) -> set[str]:
    return {c.key() for c in grid(BASE, seed=list(range(n_seeds)), load=[1.0], sensitive_fraction=[0.5], cpu_per_gpu=[None], mem_per_gpu=[None])}


def stored(store: Path) -> dict[str, dict]:
    """key -> record of every runs/*.json; each must parse and name its own key."""
    out = {}
    for p in sorted((store / "runs").glob("*.json")):
        rec = json.loads(p.read_text())  # a corrupt file fails here
        assert rec["key"] == p.stem
        assert RunConfig.from_dict(rec["config"]).key() == p.stem
        out[p.stem] = rec
    return out


def interrupt_after(store: Path, at_least: int, sig: int, extra=(), timeout: float = 120.0) -> tuple[int, str]:
    """Start the sweep, wait until ``at_least`` runs are stored, send ``sig``; returns
    (exit code, stderr). Kills the whole process group afterwards."""
    cmd = [sys.executable, "-m", "sensaopt", *sweep_argv(store, N_SEEDS, *extra)]
    # SIG_DFL: a child of a background job inherits SIGINT ignored; a user's Ctrl-C is not
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        t0 = time.monotonic()
        while len(list((store / "runs").glob("*.json"))) < at_least:
            assert p.poll() is None, f"sweep ended before the signal: {p.communicate()}"
            assert time.monotonic() - t0 < timeout, "sweep too slow to start"
            time.sleep(0.02)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        return p.returncode, err
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def resume_and_check(store: Path, before: dict[str, dict], capsys) -> None:
    assert 0 < len(before) < N_SEEDS, "the interruption came too late to test anything"
    mtimes = {k: (store / "runs" / f"{k}.json").stat().st_mtime_ns for k in before}
    code = main(sweep_argv(store, N_SEEDS, "--serial"))
    out = capsys.readouterr().out
    assert code == 0
    assert f"{N_SEEDS} runs: {len(before)} reused, {N_SEEDS - len(before)} computed, 0 failed" in out
    after = stored(store)
    assert set(after) == expected_keys()  # none lost
    for k, rec in before.items():  # finished runs are not run (or written) again
        assert (store / "runs" / f"{k}.json").stat().st_mtime_ns == mtimes[k] and after[k] == rec
    rows = (store / "summary.csv").read_text().strip().splitlines()[1:]
    assert len(rows) == N_SEEDS and len({r.split(",")[0] for r in rows}) == N_SEEDS  # no duplicate
    assert not list((store / "failed").glob("*.json")) if (store / "failed").exists() else True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_serial_sweep_interrupted_then_resumed(sig, tmp_path, capsys):
    store = tmp_path / "store"
    code, err = interrupt_after(store, 3, sig, ("--serial",))
    if sig == signal.SIGINT:
        assert code == 130 and err.strip().splitlines()[-1] == "interrupted" and "Traceback" not in err
    else:
        assert code == -signal.SIGKILL
    resume_and_check(store, stored(store), capsys)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_dask_sweep_interrupted_then_resumed(sig, tmp_path, capsys):
    store = tmp_path / "store"
    code, err = interrupt_after(store, 3, sig, ("--workers", "2"))
    if sig == signal.SIGINT:
        assert code == 130 and "Traceback" not in err
    resume_and_check(store, stored(store), capsys)


def _comparable(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in TIMING}


def test_killed_dask_worker_tasks_are_retried(tmp_path):
    from distributed import Client, LocalCluster

    cfgs = grid(RunConfig(trace="synthetic", preset="4x8", policy="edf", jobs=1000), seed=list(range(6)))
    store = ResultStore(tmp_path / "dask")
    killed: dict = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp", dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        assert all(a.startswith("tcp://") for a in client.scheduler_info()["workers"])
        pids = client.run(os.getpid)  # worker address -> worker process id

        def progress(n, total):
            if killed:
                return
            busy = {a: ks for a, ks in client.processing().items() if ks}
            if not busy:
                return
            addr = sorted(busy)[0]
            killed.update(addr=addr, pid=pids[addr], keys=set(busy[addr]))
            os.kill(pids[addr], signal.SIGKILL)

        rep = run_sweep(cfgs, store, client=client, progress=progress)
    assert killed, "no task was running when the first result came back"
    assert rep.ok and sorted(rep.computed) == sorted(c.key() for c in cfgs)
    lost = {k.removeprefix("sensaopt-run-") for k in killed["keys"]}
    assert lost and lost <= set(rep.computed)  # the killed worker's tasks ran again elsewhere
    serial = ResultStore(tmp_path / "serial")
    assert run_serial(cfgs, serial).ok
    got = stored(tmp_path / "dask")
    assert set(got) == set(serial.keys())
    for k in got:
        assert _comparable(got[k]) == _comparable(serial.get(k))


def test_damaged_result_file_is_rerun_not_lost(tmp_path, capsys):
    """Atomic writes cannot leave a half-written file, but a file damaged afterwards
    (disk full, an editor) must count as missing: the resumed sweep redoes that run."""
    store = tmp_path / "store"
    assert main(sweep_argv(store, 3, "--serial")) == 0
    victim = sorted((store / "runs").glob("*.json"))[0]
    victim.write_text(victim.read_text()[:40])
    capsys.readouterr()
    assert main(sweep_argv(store, 3, "--serial")) == 0
    assert "3 runs: 2 reused, 1 computed, 0 failed" in capsys.readouterr().out
    assert set(stored(store)) == expected_keys(3)
