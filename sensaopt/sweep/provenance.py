"""Where a committed result came from: the code (git commit, uncommitted changes), the
command, the package versions and the machine (CPU model, cores, RAM, load average)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]  # the checkout holding the sensaopt package (when run from one)


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def git_state() -> dict[str, Any]:
    """``commit`` (HEAD, None outside a git checkout), ``dirty`` (uncommitted changes to
    tracked files under ``sensaopt/``: the code that ran may differ from the commit) and
    ``dirty_files`` (those files)."""
    head = _git("rev-parse", "HEAD")
    commit = head.strip() if head else None
    if commit is None:
        return {"commit": None, "dirty": None, "dirty_files": []}
    status = _git("status", "--porcelain", "--untracked-files=no", "--", "sensaopt") or ""
    files = [line[3:] for line in status.splitlines() if line.strip()]  # porcelain v1: "XY path"; X may be a space
    return {"commit": commit, "dirty": bool(files), "dirty_files": files}


def load_average() -> list[float] | None:
    """1/5/15-minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def usable_cores() -> int:
    """The cores this process may run on (``taskset``; where the OS cannot say, the logical
    cores), at least 1."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(usable or 1, 1)


def machine() -> dict[str, Any]:
    """CPU model, logical cores, the cores this process may run on (``taskset``), RAM (GiB),
    platform, Python and the load average now."""
    return {"cpu_model": _cpu_model(), "cores": os.cpu_count(), "cores_usable": usable_cores(), "ram_gib": _ram_gib(),
            "platform": platform.platform(), "python": platform.python_version(), "loadavg": load_average()}
