"""Running a sweep on Dask distributed (or serially), resuming from the store.

Default: a :class:`distributed.LocalCluster` on this machine (``n_workers`` worker
processes, one thread each); ``scheduler="tcp://HOST:PORT"`` uses an existing Dask
cluster. Every finished run is written to the :class:`ResultStore` as soon as it
arrives at the client, so stopping a sweep loses at most the runs in flight; runs
already stored are not submitted again.

A run is computed only under its claim (:meth:`ResultStore.claim`), so two sweeps on one
store share the work instead of doing it twice: a run another live sweep has claimed is
left to it, and this sweep waits (polling every ``poll_s`` seconds) until its record is
stored, counting it as reused. If that sweep stops without storing it (its claim is
released, or goes stale because its process ended), this sweep computes it.

The runs are :class:`RunConfig` by default; any :class:`Task` (a ``key()`` naming its
stored record and a ``to_dict()`` kept with a failure) runs the same way with its own
``run`` function and ``cost`` (e.g. :mod:`sensaopt.sweep.gaps`' trace windows).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from sensaopt.errors import InputError
from sensaopt.sweep.config import RunConfig, expected_cost, run_config
from sensaopt.sweep.store import ResultStore

POLL_S = 1.0  # seconds between looks at runs another sweep is computing


class Task(Protocol):
    """What the runner needs of a run: the key of its stored record, and its JSON form."""

    def key(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


RunFn = Callable[[Any], dict]  # a task -> its record (run_config for a RunConfig, or a test's fake)
CostFn = Callable[[Any], float]  # a task -> its rough cost (only an ordering: the longest runs start first)


@dataclass
class SweepReport:
    """What a sweep did.

    Attributes:
        total: distinct configurations.
        reused: already stored (or stored meanwhile by another sweep).
        computed: config keys run now.
        failed: config key -> error (retried next time).
    """

    total: int
    reused: int  # already in the store, or stored meanwhile by another sweep
    computed: list[str] = field(default_factory=list)  # keys run now
    failed: dict[str, str] = field(default_factory=dict)  # key -> error

    @property
    def ok(self) -> bool:
        return not self.failed


def _unique(configs: Iterable[Task]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in configs:
        out.setdefault(c.key(), c)
    return out


def check_configs(configs: Iterable[RunConfig], *, trace_files: bool = True) -> None:
    """Refuse, before any run starts, an option no run of ``configs`` could use: an
    unknown policy or cluster preset (node variant, cores and GB per GPU included), or
    (``trace_files``; off when the runs execute on another machine) a trace that is
    neither a known source nor a file here. Raises :class:`InputError` (the runs' own message)."""
    from pathlib import Path

    from sensaopt.policies import check_policy
    from sensaopt.traces.presets import preset_spec
    from sensaopt.traces.sources import source_names
    from sensaopt.traces.trace import DURATION_AT, resolve_duration_at

    sources = set(source_names())
    clusters: set[tuple[str, float | None, float | None]] = set()
    traces: set[str] = set()
    for c in configs:
        check_policy(c.policy)
        if (c.preset, c.cpu_per_gpu, c.mem_per_gpu) not in clusters:
            preset_spec(c.preset, c.cpu_per_gpu, c.mem_per_gpu)
            clusters.add((c.preset, c.cpu_per_gpu, c.mem_per_gpu))
        if c.duration_at is not None and c.duration_at not in DURATION_AT:
            resolve_duration_at(c.duration_at, preset_spec(c.preset, c.cpu_per_gpu, c.mem_per_gpu).cluster())  # raises
        if trace_files and c.trace not in sources and c.trace not in traces and not Path(c.trace).is_file():
            raise InputError(c.trace, "--trace", f"no such file, and not a known source ({', '.join(sorted(sources))})")
        traces.add(c.trace)


def _run_safely(cfg: Task, run: RunFn = run_config) -> tuple[bool, object]:
    try:
        return True, run(cfg)
    except Exception as e:  # reported per run; the sweep continues
        return False, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}"


def _claim(store: ResultStore, rep: SweepReport, key: str) -> bool | None:
    """True: this sweep now holds run ``key``'s claim and must compute it; False: its
    record is stored (counted as reused); None: another live sweep is computing it.
    Claim first, then look: a sweep stores a record before it releases the claim."""
    if not store.claim(key):
        return None
    if store.has(key):
        store.release(key)
        rep.reused += 1
        return False
    return True


class _Ticker:
    """Calls ``progress(done, total)`` once per settled run."""

    def __init__(self, progress: Callable[[int, int], None] | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self) -> None:
        self.done += 1
        if self.progress:
            self.progress(self.done, self.total)


def _drive(store: ResultStore, rep: SweepReport, pending: list[str], tick: _Ticker, poll_s: float,
           execute: Callable[[list[str]], Iterator[tuple[str, bool, object]]], batch: bool,
           record: Callable[[str, bool, object], None]) -> None:
    """Settle every key of ``pending``: claim, run through ``execute`` (``batch``: all
    claimed keys of a pass at once; else one at a time, so two serial sweeps interleave),
    record and release; then wait for the keys other sweeps hold, and repeat."""
    def settle(keys: list[str]) -> None:
        for key, ok, out in execute(keys):
            record(key, ok, out)
            store.release(key)
            tick()

    waiting = pending
    try:
        while waiting:
            busy: list[str] = []
            mine: list[str] = []
            for k in waiting:
                got = _claim(store, rep, k)
                if got is None:
                    busy.append(k)
                elif not got:
                    tick()
                elif batch:
                    mine.append(k)
                else:
                    settle([k])
            if mine:
                settle(mine)
            waiting = busy
            if waiting:
                time.sleep(poll_s)
    finally:
        store.release_all()


def run_serial(configs: Iterable[Task], store: ResultStore, progress: Callable[[int, int], None] | None = None, *,
               run: RunFn = run_config, poll_s: float = POLL_S) -> SweepReport:
    """Run the configurations not yet in ``store`` in this process, one at a time.

    Args:
        configs: the configurations (duplicates run once).
        store: the ResultStore.
        progress: called with (done, total).
        run: configuration -> record (default :func:`run_config`).
        poll_s: seconds between looks at runs another sweep is computing.

    Returns:
        The SweepReport."""
    todo = _unique(configs)
    pending = [k for k in todo if not store.has(k)]
    rep = SweepReport(len(todo), len(todo) - len(pending))

    def execute(keys: list[str]) -> Iterator[tuple[str, bool, object]]:
        for k in keys:
            yield (k, *_run_safely(todo[k], run))

    _drive(store, rep, pending, _Ticker(progress, len(pending)), poll_s, execute, False,
           lambda k, ok, out: _record(store, rep, k, todo[k], ok, out))
    return rep


def run_sweep(
    configs: Iterable[Task],
    store: ResultStore,
    *,
    scheduler: str | None = None,
    client: Any = None,
    n_workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    run: RunFn = run_config,
    poll_s: float = POLL_S,
    cost: CostFn = expected_cost,
) -> SweepReport:
    """Run the configurations not yet in ``store`` on Dask, longest first; see the module doc.

    Args:
        configs: the configurations (duplicates run once).
        store: the ResultStore.
        scheduler: ``tcp://HOST:PORT`` of an existing Dask scheduler (None: a LocalCluster).
        client: an existing Dask client (instead of ``scheduler``).
        n_workers: LocalCluster worker processes (>= 1).
        progress: called with (done, total).
        run: configuration -> record (default :func:`run_config`).
        poll_s: seconds between looks at runs another sweep is computing.
        cost: configuration -> its rough cost, any unit (default :func:`expected_cost`): the costliest start first.

    Returns:
        The SweepReport."""
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise InputError("run_sweep", "n_workers", f"must be an integer >= 1, got {n_workers!r}")
    todo = _unique(configs)
    pending = sorted((k for k in todo if not store.has(k)), key=lambda k: -cost(todo[k]))  # longest first
    rep = SweepReport(len(todo), len(todo) - len(pending))
    if not pending:
        return rep

    cluster = own_client = None

    def execute(keys: list[str]) -> Iterator[tuple[str, bool, object]]:
        nonlocal client, cluster, own_client
        from distributed import Client, LocalCluster, as_completed

        if client is None:  # started only when this sweep has a run of its own to compute
            if scheduler:
                client = own_client = Client(scheduler)
            else:
                cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0")
                client = own_client = Client(cluster)
        # Dask runs higher priority first: keep the longest-first order on the workers
        futures = {client.submit(_run_safely, todo[k], run, key=f"sensaopt-run-{k}", pure=False, priority=len(keys) - i): k
                   for i, k in enumerate(keys)}
        for fut, out in as_completed(futures, with_results=True):
            ok, val = out
            yield futures[fut], ok, val

    try:
        _drive(store, rep, pending, _Ticker(progress, len(pending)), poll_s, execute, True,
               lambda k, ok, out: _record(store, rep, k, todo[k], ok, out))
    finally:
        if own_client is not None:
            own_client.close()
        if cluster is not None:
            cluster.close()
    return rep


def _record(store: ResultStore, rep: SweepReport, key: str, cfg: Task, ok: bool, out: object) -> None:
    if ok:
        assert isinstance(out, dict)
        store.put(out)
        rep.computed.append(key)
    else:
        store.put_failure(key, cfg.to_dict(), str(out))
        rep.failed[key] = str(out).splitlines()[0]
