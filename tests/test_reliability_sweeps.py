"""Sweeps survive faults, for real: ``sensaopt sweep`` runs as a subprocess and is
stopped with SIGINT or SIGKILL after some runs finished, then restarted; a Dask worker
process is killed while tasks run. Afterwards: every run stored exactly once (finished
runs are not run again), every stored JSON parses, the results equal a serial run.

Subprocesses start in their own session; each test kills its own process group at the
end (a SIGKILLed Dask client leaves its worker processes behind otherwise).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from sensaopt.cli import main
from sensaopt.sweep import ResultStore, RunConfig, SweepReport, grid, run_serial, run_sweep

N_SEEDS = 30
BASE = RunConfig(trace="synthetic", preset="2x8", policy="edf", jobs=100)
TIMING = ("simulate_s", "wall_s")


def sweep_argv(store: Path, n_seeds: int = N_SEEDS, *extra) -> list[str]:
    seeds = [a for s in range(n_seeds) for a in ("--seed", str(s))]
    return ["sweep", "--trace", "synthetic", "--jobs", "100", "--preset", "2x8", "--policy", "edf", *seeds, "--out-dir", str(store), "-q",
            *extra]


def expected_keys(n_seeds: int = N_SEEDS) -> set[str]:
    return {c.key() for c in grid(BASE, seed=list(range(n_seeds)), load=[1.0], sensitive_fraction=[0.5], cpu_per_gpu=[None],
                                  mem_per_gpu=[None])}


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
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
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


@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGKILL, marks=pytest.mark.slow)],  # SIGKILL: 15 s
                         ids=["SIGINT", "SIGKILL"])
def test_serial_sweep_interrupted_then_resumed(sig, tmp_path, capsys):
    store = tmp_path / "store"
    code, err = interrupt_after(store, 3, sig, ("--serial",))
    if sig == signal.SIGINT:
        last = err.strip().splitlines()[-1]
        n = len(stored(store))  # the interrupt line counts the runs the store keeps (issue 26)
        assert code == 130 and last == f"interrupted (kept: {n} of {N_SEEDS} runs in {store / 'runs'})", err
        assert "Traceback" not in err
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


@pytest.mark.slow  # over 8 s in the default suite (durations, 2026-12-03)
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


# ---- records are verified against their key (issue 16) ----------------------------------
@pytest.fixture(scope="module")
def three_run_store(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("three") / "store"
    assert main(sweep_argv(store, 3, "--serial")) == 0
    return store


def damage(kind: str, runs: list[Path]) -> Path:
    """Spoil the first run file the way ``kind`` says; returns it."""
    victim = runs[0]
    if kind == "bad-bytes":
        victim.write_bytes(b"\xff\xfe{\x00not json")
    elif kind == "empty-list":
        victim.write_text("[]")
    elif kind == "directory":
        victim.unlink()
        victim.mkdir()
    elif kind == "other-runs-record":  # a copied file: run B's record under run A's name
        victim.write_bytes(runs[1].read_bytes())
    elif kind == "config-of-another-run":  # the right key, but the config is another run's
        rec = json.loads(victim.read_text())
        rec["config"] = json.loads(runs[1].read_text())["config"]
        victim.write_text(json.dumps(rec))
    return victim


@pytest.mark.parametrize("kind", ["bad-bytes", "empty-list", "directory", "other-runs-record", "config-of-another-run"])
def test_bad_run_file_is_moved_to_failed_and_recomputed(kind, three_run_store, tmp_path, capsys):
    """Before: tracebacks (bad bytes, `[]`, a directory); a copied record was "reused",
    summary.csv got a duplicate key and lost a run."""
    store = tmp_path / "store"
    shutil.copytree(three_run_store, store)
    victim = damage(kind, sorted((store / "runs").glob("*.json")))
    capsys.readouterr()
    assert main(sweep_argv(store, 3, "--serial")) == 0
    cap = capsys.readouterr()
    assert "3 runs: 2 reused, 1 computed, 0 failed" in cap.out
    warnings = cap.err.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {victim}: ") and "Traceback" not in cap.err
    assert "moved to" in warnings[0] and "recomputed" in warnings[0]
    assert set(stored(store)) == expected_keys(3)  # every file parses and holds its own key
    keys = [r.split(",")[0] for r in (store / "summary.csv").read_text().strip().splitlines()[1:]]
    assert sorted(keys) == sorted(expected_keys(3))  # no duplicate, none lost
    moved = list((store / "failed").glob(f"{victim.stem}.*.invalid"))
    assert len(moved) == 1 and not list((store / "failed").glob("*.json"))


def test_store_get_verifies_without_a_sweep(three_run_store, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(three_run_store, store)
    runs = sorted((store / "runs").glob("*.json"))
    victim = damage("other-runs-record", runs)
    lines: list[str] = []
    st = ResultStore(store, warn=lines.append)
    assert st.get(victim.stem) is None and not victim.exists() and len(lines) == 1
    assert "holds the record of run" in lines[0]
    assert len(st.records()) == 2 and {r["key"] for r in st.records()} == {p.stem for p in runs[1:]}


# ---- two sweeps on one store compute each run once ----------------------------------------
FAKE_CFGS = grid(BASE, seed=list(range(8)))


class CountingRun:
    """A stand-in for run_config: counts calls per key, takes ``delay`` seconds, returns
    a record that passes verification."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay, self.calls, self.lock = delay, Counter(), threading.Lock()

    def __call__(self, cfg: RunConfig) -> dict:
        with self.lock:
            self.calls[cfg.key()] += 1
        time.sleep(self.delay)
        return {"key": cfg.key(), "config": cfg.to_dict(), "metrics": {}}


def test_two_concurrent_sweeps_compute_each_run_once(tmp_path):
    """Before: both sweeps computed all runs."""
    fake = CountingRun(0.1)
    reports: dict[str, SweepReport] = {}

    def sweep(name: str) -> None:
        reports[name] = run_serial(FAKE_CFGS, ResultStore(tmp_path / "store"), run=fake, poll_s=0.02)

    threads = [threading.Thread(target=sweep, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
        time.sleep(0.03)
    for t in threads:
        t.join(timeout=60)
    keys = {c.key() for c in FAKE_CFGS}
    assert fake.calls == Counter(dict.fromkeys(keys, 1))  # every run computed exactly once
    a, b = reports["a"], reports["b"]
    assert a.ok and b.ok and set(a.computed) | set(b.computed) == keys and not set(a.computed) & set(b.computed)
    assert a.computed and b.computed  # they shared the work
    assert all(r.reused + len(r.computed) == r.total == len(keys) for r in (a, b))
    assert not list((tmp_path / "store" / "claims").iterdir())  # every claim released


@pytest.mark.slow  # over 8 s in the default suite (durations, 2026-12-03)
def test_two_sweep_processes_share_the_runs(tmp_path):
    """Two real `sensaopt sweep --serial` processes on one store at once."""
    store = tmp_path / "store"
    n = 10
    cmd = [sys.executable, "-m", "sensaopt", *sweep_argv(store, n, "--serial")]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    computed = []
    for out, err in outs:
        m = re.search(rf"{n} runs: (\d+) reused, (\d+) computed, 0 failed", out)
        assert m and "Traceback" not in err, (out, err)
        computed.append(int(m.group(2)))
    assert sum(computed) == n  # no run computed twice
    assert set(stored(store)) == expected_keys(n)


def write_claim(store: Path, key: str, **fields) -> Path:
    c = {"pid": os.getpid(), "host": socket.gethostname(), "time": time.time(), "token": "someone-else", **fields}
    p = store / "claims" / f"{key}.claim"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(c))
    return p


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("stale", ["dead-process", "too-old", "unreadable"])
def test_stale_claim_is_taken_over_with_one_warning(stale, tmp_path):
    cfg = FAKE_CFGS[0]
    if stale == "dead-process":
        claim = write_claim(tmp_path, cfg.key(), pid=dead_pid())
    elif stale == "too-old":  # a live pid (this one) but older than the bound
        claim = write_claim(tmp_path, cfg.key(), time=time.time() - 120)
    else:  # unreadable and not being written (older than the grace period)
        claim = write_claim(tmp_path, cfg.key())
        claim.write_text("{half")
        os.utime(claim, (time.time() - 60, time.time() - 60))
    fake, lines = CountingRun(0.0), []
    rep = run_serial([cfg], ResultStore(tmp_path, warn=lines.append, stale_after_s=60), run=fake, poll_s=0.02)
    assert rep.computed == [cfg.key()] and fake.calls[cfg.key()] == 1
    assert len(lines) == 1 and str(claim) in lines[0] and "stale" in lines[0]
    assert not claim.exists()


def test_fresh_unreadable_claim_is_left_alone(tmp_path):
    """An unreadable claim file younger than the grace period may be one being written
    (the O_EXCL fallback writes after creating): not taken over."""
    key = FAKE_CFGS[0].key()
    write_claim(tmp_path, key).write_text("")
    lines: list[str] = []
    assert ResultStore(tmp_path, warn=lines.append).claim(key) is False and not lines


def test_own_claim_is_never_taken_over(tmp_path):
    """A store does not break a claim it holds, even one past the staleness bound; a
    second store does (one warning), and the first store's release leaves it alone."""
    key = FAKE_CFGS[0].key()
    lines: list[str] = []
    mine = ResultStore(tmp_path, warn=lines.append, stale_after_s=-1.0)
    assert mine.claim(key) is True
    assert mine.claim(key) is False and not lines and mine.claim_path(key).exists()
    other = ResultStore(tmp_path, warn=lines.append, stale_after_s=-1.0)
    assert other.claim(key) is True and len(lines) == 1
    taken = other.claim_of(key)
    mine.release(key)
    assert other.claim_of(key) == taken


@pytest.mark.parametrize("outcome", ["stored", "released"])
def test_live_claim_is_waited_for(outcome, tmp_path):
    """A run claimed by a live sweep (another host: its pid cannot be checked) is not
    computed while the claim holds; stored meanwhile -> reused; released without a
    record -> this sweep computes it."""
    cfg = FAKE_CFGS[0]
    claim = write_claim(tmp_path, cfg.key(), host="elsewhere", pid=1)
    fake = CountingRun(0.0)
    reports: list[SweepReport] = []
    t = threading.Thread(target=lambda: reports.append(run_serial([cfg], ResultStore(tmp_path), run=fake, poll_s=0.02)))
    t.start()
    time.sleep(0.3)
    assert t.is_alive() and not fake.calls  # waiting, not computing
    if outcome == "stored":
        ResultStore(tmp_path).put(CountingRun(0.0)(cfg))
    claim.unlink()
    t.join(timeout=30)
    (rep,) = reports
    if outcome == "stored":
        assert rep.reused == 1 and not rep.computed and not fake.calls
    else:
        assert rep.computed == [cfg.key()] and fake.calls[cfg.key()] == 1


# ---- --workers below 1 ----------------------------------------------------------------------
@pytest.mark.parametrize("n", ["0", "-3"])
def test_sweep_workers_below_one_is_one_line(n, tmp_path):
    """`sweep --workers 0` hung before (a LocalCluster without workers)."""
    cmd = [sys.executable, "-m", "sensaopt", *sweep_argv(tmp_path / "store", 2, "--workers", n)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("error: ") and "--workers" in line and n in line
    assert not (tmp_path / "store" / "runs").exists()


@pytest.mark.parametrize("n", [0, -3])
def test_run_sweep_refuses_workers_below_one(n, tmp_path):
    from sensaopt.errors import InputError

    with pytest.raises(InputError, match="n_workers"):
        run_sweep(FAKE_CFGS, ResultStore(tmp_path), n_workers=n)
    assert not (tmp_path / "runs").exists()


# ---- every option checked before any run --------------------------------------------------
@pytest.mark.parametrize("bad", [("--trace", "no-such-trace.csv"), ("--preset", "3y5")], ids=["trace", "preset"])
def test_sweep_checks_trace_and_preset_before_any_run(bad, tmp_path, capsys):
    """Before: every run failed on its own (N `failed KEY: ...` lines, exit 1, a store
    full of failure records)."""
    argv = sweep_argv(tmp_path / "store", 3, "--serial")
    argv[argv.index(bad[0]) + 1] = bad[1]
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and bad[1] in err and err.startswith("error: ")
    assert not (tmp_path / "store").exists()


def test_experiment_paper_checks_its_node_before_any_run(tmp_path, capsys):
    code = main(["experiment", "paper", "--serial", "--scale", "0.01", "--policy", "edf", "--node", "bogus", "-q",
                 "--out-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    if "data not found" in err:
        pytest.skip("the paper's trace data is not here")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "bogus" in err
    assert not (tmp_path / "out").exists()
