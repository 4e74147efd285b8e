"""Shared helpers of the benchmark scripts: timing, percentiles, the JSON record.

Every benchmark prints its figures and writes one JSON record (machine, package
versions, git commit, figures) under ``benchmarks/results/`` (override with the
``SENSAOPT_BENCH_OUT`` environment variable). Times are seconds unless a key says
``_ms``; memory in MiB.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from sensaopt.result import package_versions

REPO = Path(__file__).resolve().parents[1]


def out_dir() -> Path:
    d = Path(os.environ.get("SENSAOPT_BENCH_OUT", REPO / "benchmarks" / "results"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def git_commit() -> dict:
    """HEAD commit and whether the checkout has uncommitted changes to sensaopt/."""
    def run(*args):
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": run("rev-parse", "HEAD") or None, "dirty_sensaopt": bool(run("status", "--porcelain", "--", "sensaopt"))}


def machine() -> dict:
    info = {"loadavg": load_average(), "platform": platform.platform(), "python": sys.version.split()[0], "cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()}
    try:
        with open("/proc/meminfo") as f:
            info["mem_total_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    return info


def pct(values, q: float) -> float:
    """The q-th percentile (0-100) of ``values``; nan when empty."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def ms_stats(seconds: list[float]) -> dict:
    """p50/p99/max/mean in milliseconds of a list of durations in seconds."""
    return {
        "n": len(seconds),
        "p50_ms": round(pct(seconds, 50) * 1e3, 3),
        "p99_ms": round(pct(seconds, 99) * 1e3, 3),
        "max_ms": round(max(seconds) * 1e3, 3) if seconds else None,
        "mean_ms": round(float(np.mean(seconds)) * 1e3, 3) if seconds else None,
    }


def write_record(name: str, figures: dict, params: dict | None = None) -> Path:
    """Write ``benchmarks/results/<name>-<timestamp>.json`` and ``<name>-latest.json``."""
    rec = {
        "benchmark": name,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "versions": package_versions(),
        "git": git_commit(),
        "params": params or {},
        "figures": figures,
    }
    d = out_dir()
    text = json.dumps(rec, indent=2, default=str)
    p = d / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    p.write_text(text)
    (d / f"{name}-latest.json").write_text(text)
    print(f"[{name}] record: {p}")
    return p


class TimedPolicy:
    """Wraps a policy and records the wall time of every ``decide`` call (seconds)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.times: list[float] = []
        self.cpu_times: list[float] = []  # CPU seconds of this process per decision
        self.config = getattr(inner, "config", None)

    @property
    def stats(self) -> dict:
        """The wrapped policy's counters (so the wrapper is a full ``Policy`` and they reach ``Result.params``)."""
        return getattr(self.inner, "stats", {})

    def reset(self, instance) -> None:
        self.times = []
        self.cpu_times = []
        self.inner.reset(instance)

    def decide(self, state):
        t, c = time.perf_counter(), time.process_time()
        out = self.inner.decide(state)
        self.times.append(time.perf_counter() - t)
        self.cpu_times.append(time.process_time() - c)
        return out


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def load_average() -> list[float] | None:
    """1/5/15-minute load averages (others share the machine: wall times vary)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def stored_rows(store: Path) -> list[dict]:
    """The JSON rows of a resumable run (``rows.jsonl``; none yet: empty)."""
    return [json.loads(line) for line in store.read_text().splitlines()] if store.exists() else []


def run_rows(fn, tasks: list, meta: list[dict], store: Path, jobs: int, say) -> list[dict] | None:
    """Run ``fn`` over ``tasks`` in ``jobs`` processes; each result updated with its ``meta``
    entry is appended to ``store`` at once (a stop keeps every finished row) and returned.
    ``say(i, n, row)`` prints the progress line. None when interrupted (Ctrl-C)."""
    from concurrent.futures import ProcessPoolExecutor

    done: list[dict] = []
    try:
        with ProcessPoolExecutor(jobs) as ex:
            for i, (extra, row) in enumerate(zip(meta, ex.map(fn, tasks)), 1):
                row.update(extra)
                with store.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                done.append(row)
                say(i, len(tasks), row)
    except KeyboardInterrupt:
        print(f"interrupted; finished rows are kept in {store} (rerun to resume)", file=sys.stderr)
        return None
    return done


def write_provenance(folder: Path, script: str, argv: list[str] | None, fields: dict, start: float, computed: int,
                     reused: int) -> None:
    """``folder/provenance.json`` of a committed benchmark table: the command, ``fields``, the
    git state and machine (``sensaopt.sweep.provenance``; load at start in ``fields["machine"]``
    if given, and now), package versions, wall seconds since ``start`` (``time.time()``) and the
    runs computed and reused."""
    from sensaopt.sweep.provenance import git_state
    from sensaopt.sweep.provenance import machine as machine_now

    args = argv if argv is not None else sys.argv[1:]
    rest = {k: v for k, v in fields.items() if k not in ("git", "machine")}
    mach = fields.get("machine") or machine_now()
    prov = {"command": f"python benchmarks/{script} " + " ".join(args), **rest, "git": fields.get("git") or git_state(),
            "versions": package_versions(), "machine": {**mach, "loadavg_end": machine_now()["loadavg"]},
            "wall_s": round(time.time() - start, 1), "runs_computed": computed, "runs_reused": reused}
    (folder / "provenance.json").write_text(json.dumps(prov, indent=1))
