"""Memory as a limit, not a crash: the size of the running command, an estimate of the
memory it needs, the memory this process may still take, and the one line that says so.

Commands note their size as they learn it (:func:`note`, :func:`note_instance`: jobs,
nodes, rounds, an input file's bytes); where the size is known before the work starts
(an instance about to be built or simulated), :func:`check` refuses it with
:class:`OutOfMemory` when the estimate exceeds what is available. A ``MemoryError``
anywhere else ends the command at the CLI boundary (:mod:`sensaopt.cli`) with the same
line (:func:`line`), exit 1. The estimate's constants were measured with ``simulate
--trace synthetic --policy edf`` on the reference cluster (20,000 jobs: 18 MB to build
the instance, 139 MB to simulate and evaluate it over 31,848 rounds on 120 nodes;
100,000 jobs: 75 MB to build).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from typing import Any

from sensaopt.errors import SensaoptError

INSTANCE_BYTES_PER_JOB = 1_000  # a Job with its id, deadlines and the instance's indexes (measured 0.75 KB)
RUN_BYTES_PER_JOB = 2_400  # a simulated or validated job: its state, segments, outcome (measured 2.3 KB)
USAGE_BYTES_PER_NODE_ROUND = 24  # per node and round: GPU, CPU and memory use (three float64)
MODEL_BYTES_PER_ITEM = 1_200  # a job or schedule segment of a file in its validated (pydantic) form (measured 1.16 KB)

_size: dict[str, Any] = {}  # the running command's size: command, jobs, nodes, rounds, file, file_bytes


class OutOfMemory(SensaoptError, MemoryError):
    """A command whose size needs more memory than this process may take: refused before
    it is allocated (one line, exit 1 at the CLI, like a ``MemoryError``)."""


def begin(command: str) -> None:
    """Forget the previous command's size; ``command`` names the one starting (``simulate``)."""
    _size.clear()
    _size["command"] = command


def note(**size: Any) -> None:
    """Record the command's size as it becomes known: ``jobs``, ``nodes``, ``rounds``
    (the largest seen is kept: a command's size is its largest part), ``segments`` (of a
    schedule file), ``file`` and
    ``file_bytes`` (the input being read)."""
    for k, v in size.items():
        if v is None:
            continue
        if isinstance(v, (int, float)) and k in _size and k not in ("file_bytes",):
            v = max(v, _size[k])
        _size[k] = v


@contextlib.contextmanager
def reading(path: str, size: int) -> Iterator[None]:
    """Within the block, the command is reading ``path`` (``size`` bytes): a
    ``MemoryError`` there names the file."""
    _size["file"], _size["file_bytes"] = path, size
    try:
        yield
    finally:
        _size.pop("file", None)
        _size.pop("file_bytes", None)


def min_rounds(inst: Any) -> int:
    """Rounds any schedule of ``inst`` spans at least: to its last arrival, and its whole
    GPU work at speed ≤ the fastest profile over every GPU (a lower bound for :func:`estimate`)."""
    jobs, cluster, r = inst.jobs, inst.cluster, inst.round_minutes
    last = max(j.arrival for j in jobs)
    work = sum(j.gpus * j.work / (j.profile.peak * j.speed_factor) for j in jobs)
    return int(math.ceil(max(last, work / cluster.total_gpus) / r))


def note_instance(inst: Any) -> None:
    """Note an instance's jobs, nodes and :func:`min_rounds`."""
    note(jobs=len(inst.jobs), nodes=inst.cluster.num_nodes, rounds=min_rounds(inst))


def estimate(jobs: int, nodes: int = 0, rounds: int = 0, run: bool = True, parsed: int = 0) -> float:
    """Bytes a command of this size needs by estimate: the instance, and when ``run``
    (simulated, solved by a policy or validated) each job's run state and the per-node,
    per-round resource use; ``parsed``: items (jobs, segments) of a file still to be
    validated (their validated form). The validation of a file (pydantic's, in Rust) aborts
    the process when memory runs out, so files are checked before it."""
    need = jobs * INSTANCE_BYTES_PER_JOB + parsed * MODEL_BYTES_PER_ITEM
    if run:
        need += jobs * RUN_BYTES_PER_JOB + nodes * rounds * USAGE_BYTES_PER_NODE_ROUND
    return float(need)


def _proc_kb(path: str, key: str) -> float | None:
    """Bytes of the ``key:`` line (in kB) of a /proc file (``/proc/self/status``, ``/proc/meminfo``); None if absent."""
    try:
        with open(path) as f:
            for ln in f:
                if ln.startswith(key + ":"):
                    return float(ln.split()[1]) * 1024
    except OSError:
        pass
    return None


def _cgroup_room() -> float | None:
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            top = f.read().strip()
        if top == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            return float(top) - float(f.read().strip())
    except (OSError, ValueError):
        return None


def available() -> tuple[float, str]:
    """(bytes this process may still allocate, what limits it): the least of the
    address-space limit (``ulimit -v``) less the process's size, the data limit
    (``ulimit -d``) less its data, the container's limit less its use, and the machine's
    available memory (with free swap)."""
    import resource

    out: list[tuple[float, str]] = []
    for lim, key, what in ((resource.RLIMIT_AS, "VmSize", "the address-space limit, ulimit -v"),
                           (resource.RLIMIT_DATA, "VmData", "the data-size limit, ulimit -d")):
        soft = resource.getrlimit(lim)[0]
        used = _proc_kb("/proc/self/status", key)
        if soft != resource.RLIM_INFINITY and used is not None:
            out.append((soft - used, what))
    room = _cgroup_room()
    if room is not None:
        out.append((room, "the container's memory limit"))
    free = _proc_kb("/proc/meminfo", "MemAvailable")
    if free is not None:
        out.append((free + (_proc_kb("/proc/meminfo", "SwapFree") or 0.0), "the machine's available memory"))
    if not out:
        return math.inf, "no known limit"
    b, what = min(out)
    return max(b, 0.0), what


def _gb(b: float) -> str:
    return f"{b / 2**30:.2g} GB" if b >= 2**30 / 10 else f"{max(b, 2**20) / 2**20:.0f} MB"


HINTS = {  # what to change, by command
    "simulate": "use fewer jobs (--jobs, --limit, --days or --sample)",
    "sweep": "use fewer jobs (--jobs, --limit, --days or --sample)",
    "experiment": "use fewer jobs (--jobs, --limit, --days or --sample)",
    "instances": "use fewer jobs (--limit or --days)",
    "generate": "use fewer jobs (--jobs)",
}
DEFAULT_HINT = "use a smaller instance (split the workload: sensaopt instances from-trace)"


def line(need: float | None = None) -> str:
    """The one line for a command that needs more memory than it may take: its size
    (jobs, nodes, rounds, or the file being read), the memory it needs by estimate
    (``need`` in bytes; None: from the noted size), what is available and what to change."""
    s = _size
    cmd = s.get("command") or "the command"
    parts = [f"{s[k]} {k if s[k] != 1 else k[:-1]}" for k in ("jobs", "nodes", "rounds", "segments") if s.get(k)]
    if s.get("file") is not None:
        parts.append(f"reading {s['file']} ({_gb(s.get('file_bytes') or 0)})")
    size = f" ({', '.join(parts)})" if parts else ""
    if need is None and (s.get("jobs") or s.get("segments")):
        need = estimate(s.get("jobs") or 0, s.get("nodes") or 0, s.get("rounds") or 0, parsed=s.get("segments") or 0)
    room, what = available()
    needs = f"needs about {_gb(need)} by estimate" if need else "needs more memory"
    has = f"{_gb(room)} is available ({what})" if math.isfinite(room) else "the memory ran out"
    hint = HINTS.get(str(cmd).split()[0], DEFAULT_HINT)
    return f"out of memory: {cmd}{size} {needs}; {has}; {hint}, or free or allow more memory"


def check(jobs: int, nodes: int = 0, rounds: int = 0, run: bool = True, parsed: int = 0) -> None:
    """Refuse a size known before its allocation: :class:`OutOfMemory` (the line of
    :func:`line`) when :func:`estimate` exceeds :func:`available`. The size is noted.

    Args:
        jobs: jobs to build (and run).
        nodes: nodes of the cluster.
        rounds: rounds it runs at least (0: unknown).
        run: whether the jobs are also simulated or validated (else only built).
        parsed: jobs or segments of a file still to be validated (:func:`estimate`)."""
    note(jobs=jobs, nodes=nodes or None, rounds=rounds or None)
    if os.environ.get(NO_CHECK_ENV, "") not in ("", "0"):
        return
    need = estimate(jobs, nodes, rounds, run, parsed)
    room, _ = available()
    if need > room:
        raise OutOfMemory(line(need))


def check_items(raw: Any, key: str) -> None:
    """Refuse (:func:`check`) a parsed file whose ``key`` list (``jobs``, ``segments``) is
    too long to validate and build here, before pydantic sees it (its Rust core aborts the
    process when memory runs out). Lists under 10,000 items pass unchecked.

    Args:
        raw: the parsed JSON.
        key: ``jobs`` (an instance file) or ``segments`` (a schedule file)."""
    items = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(items, list) or len(items) < 10_000:
        return
    if key == "jobs":
        check(len(items), run=False, parsed=len(items))
    else:
        note(segments=len(items))
        check(0, run=False, parsed=len(items))


def command_of(args: list[str]) -> str:
    """The command words of a command line's remaining arguments (``experiment paper``)."""
    words, skip = [], False
    for a in args:
        if skip or a.startswith("-"):
            skip = a in ("--log-level", "--data-dir", "--mirror")  # the root options that take a value
            continue
        words.append(a)
    groups = ("instances", "experiment", "data")
    return " ".join(words[:2] if words and words[0] in groups else words[:1]) or "sensaopt"


NO_CHECK_ENV = "SENSAOPT_NO_MEMORY_CHECK"  # set (not 0): no up-front refusal; a MemoryError still gives the line
