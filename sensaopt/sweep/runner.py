"""Running a sweep on Dask distributed (or serially), resuming from the store.

Default: a :class:`distributed.LocalCluster` on this machine (``n_workers`` worker
processes, one thread each); ``scheduler="tcp://HOST:PORT"`` uses an existing Dask
cluster. Every finished run is written to the :class:`ResultStore` as soon as it
arrives at the client, so stopping a sweep loses at most the runs in flight; runs
already stored are not submitted again.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sensaopt.sweep.config import RunConfig, run_config
from sensaopt.sweep.store import ResultStore


@dataclass
class SweepReport:
    total: int
    reused: int  # already in the store
    computed: list[str] = field(default_factory=list)  # keys run now
    failed: dict[str, str] = field(default_factory=dict)  # key -> error

    @property
    def ok(self) -> bool:
        return not self.failed


def _unique(configs: Iterable[RunConfig]) -> dict[str, RunConfig]:
    out: dict[str, RunConfig] = {}
    for c in configs:
        out.setdefault(c.key(), c)
    return out


def _run_safely(cfg: RunConfig) -> tuple[bool, object]:
    try:
        return True, run_config(cfg)
    except Exception as e:  # reported per run; the sweep continues
        return False, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}"


def run_serial(configs: Iterable[RunConfig], store: ResultStore, progress: Callable[[int, int], None] | None = None) -> SweepReport:
    todo = _unique(configs)
    pending = [k for k in todo if not store.has(k)]
    rep = SweepReport(len(todo), len(todo) - len(pending))
    for n, k in enumerate(pending, 1):
        ok, out = _run_safely(todo[k])
        _record(store, rep, k, todo[k], ok, out)
        if progress:
            progress(n, len(pending))
    return rep


def run_sweep(
    configs: Iterable[RunConfig],
    store: ResultStore,
    *,
    scheduler: str | None = None,
    client=None,
    n_workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> SweepReport:
    """Run the configurations not yet in ``store`` on Dask; see the module doc."""
    todo = _unique(configs)
    pending = [k for k in todo if not store.has(k)]
    rep = SweepReport(len(todo), len(todo) - len(pending))
    if not pending:
        return rep
    from distributed import Client, LocalCluster, as_completed

    cluster = own_client = None
    try:
        if client is None:
            if scheduler:
                client = own_client = Client(scheduler)
            else:
                cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0")
                client = own_client = Client(cluster)
        futures = {client.submit(_run_safely, todo[k], key=f"sensaopt-run-{k}", pure=False): k for k in pending}
        for n, (fut, out) in enumerate(as_completed(futures, with_results=True), 1):
            k = futures[fut]
            ok, val = out
            _record(store, rep, k, todo[k], ok, val)
            if progress:
                progress(n, len(pending))
    finally:
        if own_client is not None:
            own_client.close()
        if cluster is not None:
            cluster.close()
    return rep


def _record(store: ResultStore, rep: SweepReport, key: str, cfg: RunConfig, ok: bool, out) -> None:
    if ok:
        store.put(out)
        rep.computed.append(key)
    else:
        store.put_failure(key, cfg.to_dict(), str(out))
        rep.failed[key] = str(out).splitlines()[0]
