"""One name for every workload source: ``make_trace(spec, ...) -> TraceData``.

``spec`` is one of

* ``chronus-slo``, ``chronus-mix1``, ``chronus-mix2``: the Chronus Philly traces in
  the shared traces folder;
* ``helios-gen``, ``philly-gen``: the calibrated generators;
* ``helios-venus``, ``helios-earth``, ``helios-saturn``, ``helios-uranus``: the real
  Helios job logs (HeliosData ``cluster_log.csv``, GPU jobs; no deadlines in the log:
  :class:`sensaopt.traces.trace.DeadlineRule` adds them, as for ``helios-gen``);
* ``synthetic``: :func:`sensaopt.generate.generate`'s job mix (small, file-free; for
  tests and quick sweeps; ``jobs`` sets the job count);
* a name added with ``SOURCES.register(name, fn)`` (``fn(SourceRequest) -> TraceData``) or
  by an installed package's entry point in the group ``sensaopt.trace_sources``;
* a file path: ``*.json`` is a Philly ``cluster_job_log``; a ``*.csv`` whose header has
  ``expect_time_list`` is a Chronus trace, one with ``gpu_num`` a Helios job log; any
  other CSV through a column mapping (``columns``, :mod:`sensaopt.traces.mapped`).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sensaopt import memory
from sensaopt.datasets import HELIOS_CLUSTERS
from sensaopt.errors import InputError
from sensaopt.registry import Registry
from sensaopt.traces.paths import CHRONUS_TRACES, data_file
from sensaopt.traces.trace import TraceData, TraceJob, window

if TYPE_CHECKING:
    from sensaopt.config import WorkloadConfig
    from sensaopt.instance import Instance

@dataclass(frozen=True)
class SourceRequest:
    """What a named source is asked for: window ``start`` (minutes) + ``days``, the first
    ``limit`` jobs; ``seed`` and ``jobs`` (job count) for generators; ``cluster_gpus``
    sizes the Philly generator's arrival rate; ``on_error``: raise or skip bad rows."""

    start: float = 0.0
    days: float | None = None
    limit: int | None = None
    seed: int = 0
    jobs: int | None = None
    cluster_gpus: int = 960
    on_error: str = "raise"


SourceFn = Callable[[SourceRequest], TraceData]


def _chronus_trace(name: str) -> SourceFn:
    def load(q: SourceRequest) -> TraceData:
        from sensaopt.traces.chronus import read_chronus

        return window(read_chronus(data_file(CHRONUS_TRACES[name]), q.on_error, name=name), q.start, q.days, q.limit)

    return load


def _helios_log(cluster: str) -> SourceFn:
    def load(q: SourceRequest) -> TraceData:
        from sensaopt.datasets import DATA_FILES
        from sensaopt.traces.helios import read_helios

        f = DATA_FILES[f"{cluster}-log"]
        return window(read_helios(data_file(f.path), q.on_error, name=f"helios-{cluster}"), q.start, q.days, q.limit)

    return load


def _helios_gen(q: SourceRequest) -> TraceData:
    from sensaopt.traces.generators import HeliosConfig, generate_helios

    d = generate_helios(HeliosConfig(days=q.days or 7.0, start_day=q.start / 1440.0, seed=q.seed))
    return window(d, 0.0, None, q.limit)


def _philly_gen(q: SourceRequest) -> TraceData:
    from sensaopt.traces.generators import PhillyConfig, generate_philly

    d = generate_philly(PhillyConfig(jobs=q.jobs or q.limit or 1000, cluster_gpus=q.cluster_gpus, seed=q.seed))
    return window(d, q.start, q.days, q.limit)


def _synthetic_source(q: SourceRequest) -> TraceData:
    return window(_synthetic(q.jobs or q.limit or 20, q.seed), q.start, q.days, q.limit)


SOURCES: Registry[SourceFn] = Registry("trace source", {
    **{name: _chronus_trace(name) for name in CHRONUS_TRACES},
    "helios-gen": _helios_gen,
    **{f"helios-{c.lower()}": _helios_log(c.lower()) for c in HELIOS_CLUSTERS},
    "philly-gen": _philly_gen,
    "synthetic": _synthetic_source,
}, entry_points="sensaopt.trace_sources")
"""Named sources; installed packages add theirs through the entry-point group
``sensaopt.trace_sources`` (``name = "module:function"``, the function taking a
:class:`SourceRequest` and returning a :class:`TraceData`; a built-in name wins)."""


def source_names() -> list[str]:
    return SOURCES.names()


# the data files (names in sensaopt.datasets.DATA_FILES) each named source reads
SOURCE_DATA: dict[str, tuple[str, ...]] = {**{name: (name,) for name in CHRONUS_TRACES},
                                           **{f"helios-{c.lower()}": (f"{c.lower()}-log",) for c in HELIOS_CLUSTERS},
                                           "helios-gen": ("venus-throughput",), "philly-gen": ("philly-runtimes",)}


def data_needed(trace: str, guided: bool = False) -> tuple[str, ...]:
    """Names of the data files a workload on ``trace`` reads (a guided mix also reads the
    Alibaba pods), for :func:`sensaopt.datasets.require` before any work starts."""
    return SOURCE_DATA.get(trace, ()) + (("alibaba-pods",) if guided else ())


def make_trace(
    spec: str,
    *,
    start: float = 0.0,
    days: float | None = None,
    limit: int | None = None,
    seed: int = 0,
    jobs: int | None = None,
    cluster_gpus: int = 960,
    on_error: str = "raise",
    columns: str | None = None,
) -> TraceData:
    """The jobs of ``spec`` (a name in :data:`SOURCES` or a file; window ``start``
    minutes + ``days``, first ``limit``). ``seed`` drives generators; ``jobs`` sets the
    generators' job count (Philly, synthetic); ``cluster_gpus`` sizes the Philly
    generator's arrival rate; ``columns``: a CSV file in another layout, read through
    that mapping (:mod:`sensaopt.traces.mapped`)."""
    q = SourceRequest(start, days, limit, seed, jobs, cluster_gpus, on_error)
    if columns is not None:
        from sensaopt.traces.mapped import parse_columns, read_mapped

        mapping = parse_columns(columns)  # a bad mapping: one line before the file is read
        if spec in SOURCES or not Path(spec).is_file():
            raise InputError(spec, "--columns", "a column mapping reads a CSV file, not a named source" if spec in SOURCES
                             else "no such file")
        return window(read_mapped(spec, mapping, on_error), start, days, limit)
    if spec in SOURCES:
        return SOURCES.get(spec)(q)
    p = Path(spec)
    if not p.exists():
        raise InputError(spec, "--trace", f"no such file, and not a known source ({', '.join(source_names())})")
    if p.suffix.lower() == ".json":
        from sensaopt.traces.philly import read_philly

        return window(read_philly(p, on_error), start, days, limit)
    header = _header(p)
    if "expect_time_list" in header:
        from sensaopt.traces.chronus import read_chronus

        return window(read_chronus(p, on_error), start, days, limit)
    if "gpu_num" in header:
        from sensaopt.traces.helios import read_helios

        return window(read_helios(p, on_error), start, days, limit)
    raise InputError(str(p), "header", "not a Chronus trace (expect_time_list) nor a Helios job log (gpu_num); "
                     "map its columns with --columns arrival=COL,gpus=COL,work=COL[:s|min|h]")


def _header(p: Path) -> list[str]:
    """The first CSV row of a trace file, after the same checks as every trace reader
    (a directory, FIFO, gzip, UTF-16 or non-UTF-8 file is one :class:`InputError`)."""
    from sensaopt.traces._rows import check_text_file

    check_text_file(p)
    with p.open(newline="", encoding="utf-8-sig") as f:
        return next(csv.reader(f), [])


def _synthetic(n: int, seed: int) -> TraceData:
    """Jobs from sensaopt.generate (GPU mix, log-normal work), arrivals kept."""
    from sensaopt.generate import GeneratorConfig, generate

    inst = generate(GeneratorConfig(jobs=n, seed=seed))
    jobs = [TraceJob(j.id, j.arrival, j.gpus, j.work) for j in inst.jobs]
    return TraceData(f"synthetic-{n}j-s{seed}", f"synthetic (seed {seed})", jobs, has_deadlines=False)


def make_instance(
    spec: str,
    preset: str = "philly-8",
    *,
    start: float = 0.0,
    days: float | None = None,
    limit: int | None = None,
    jobs: int | None = None,
    seed: int = 0,
    round_minutes: float = 5.0,
    load: float = 1.0,
    sensitive_fraction: float = 0.5,
    mix_mode: str = "fraction",
    guided: bool = False,
    cpu_per_gpu: float | None = None,
    mem_per_gpu: float | None = None,
    best_effort_fraction: float = 0.0,
    sample: float = 1.0,
    on_error: str = "raise",
    duration_at: str | None = None,
    columns: str | None = None,
) -> tuple[Instance, TraceData]:
    """(instance, trace data) of a source on a cluster preset. ``sample`` keeps that
    fraction of the jobs (seeded, :func:`thin`). ``load`` multiplies the
    arrival rate (:func:`scale_load`); model types by :class:`SensitivityMix`; traces
    without deadlines get them by :class:`DeadlineRule` (``best_effort_fraction``);
    ``duration_at``: what a trace duration means on the preset's node
    (:func:`sensaopt.traces.trace.resolve_duration_at`; None: the default for its shape)."""
    from sensaopt.traces.presets import preset_cluster
    from sensaopt.traces.sensitivity import SensitivityMix
    from sensaopt.traces.trace import DeadlineRule, build_instance, resolve_duration_at, scale_load, thin

    cluster = preset_cluster(preset, cpu_per_gpu, mem_per_gpu)
    convention = resolve_duration_at(duration_at, cluster)  # a bad value: one line before the trace is read
    if jobs is not None:  # a generator's size, known before it runs: refused if it cannot be simulated here
        memory.check(jobs, cluster.num_nodes)
    data = make_trace(spec, start=start, days=days, limit=limit, seed=seed, jobs=jobs, cluster_gpus=cluster.total_gpus, on_error=on_error,
                      columns=columns)
    data = scale_load(thin(data, sample, seed), load)
    memory.check(len(data.jobs), cluster.num_nodes)  # before the instance is built
    mix = SensitivityMix(mode=mix_mode, sensitive_fraction=sensitive_fraction, guided=guided)
    try:
        mix.check()
    except ValueError as e:
        raise InputError("--sensitive-fraction", "mix", str(e)) from None
    inst = build_instance(data, cluster, mix=mix, seed=seed, round_minutes=round_minutes,
                          deadlines=DeadlineRule(best_effort_fraction=best_effort_fraction), name=f"{data.name}@{preset}",
                          duration_at=convention)
    memory.note_instance(inst)  # a later MemoryError names its size
    return inst, data


def workload_instance(w: WorkloadConfig, on_error: str = "raise") -> tuple[Instance, TraceData]:
    """(instance, trace data) of a :class:`sensaopt.config.WorkloadConfig` (its
    ``profile_error`` is the simulator's business, not the instance's; its
    ``move_cost_scale`` multiplies the instance's change costs)."""
    inst, data = make_instance(
        w.trace, w.preset, start=w.start, days=w.days, limit=w.limit, jobs=w.jobs, seed=w.seed, round_minutes=w.round_minutes,
        load=w.load, sensitive_fraction=w.sensitive_fraction, mix_mode=w.mix, guided=w.guided, cpu_per_gpu=w.cpu_per_gpu,
        mem_per_gpu=w.mem_per_gpu, best_effort_fraction=w.best_effort_fraction, sample=w.sample, on_error=on_error,
        duration_at=w.duration_at, columns=w.columns,
    )
    return inst.with_move_cost_scale(w.move_cost_scale), data
