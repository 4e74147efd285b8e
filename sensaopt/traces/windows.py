"""Small instances cut from a trace, for the optimality-gap study.

A window is ``n_jobs`` consecutive jobs (by arrival) starting at job ``k·stride``.
Its arrivals are shifted by the first arrival rounded down to ``align`` minutes (60:
hour-rounded deadlines stay hour-aligned). The cluster is scaled to the window's
load: with offered work ``W = Σ gpus·work`` (GPU-minutes) over the horizon
``H = arrival span + mean work``, it gets
``max(ceil(max job GPUs / node_gpus), round(W / (load · H · node_gpus)), 1)`` nodes of
``node_gpus`` GPUs (``cpu_per_gpu`` cores, ``mem_per_gpu`` GB per GPU), capped at
``max_nodes``. Deadlines: the trace's own (``deadlines="keep"``, default for traces
that have them; the Chronus deadlines follow the SPEC rule) or drawn by the SPEC rule
(``"rule"``, always for traces without deadlines).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sensaopt.instance import Instance
from sensaopt.traces.presets import ClusterSpec
from sensaopt.traces.sensitivity import SensitivityMix
from sensaopt.traces.trace import DeadlineRule, TraceData, TraceJob, build_instance


@dataclass(frozen=True)
class WindowConfig:
    n_jobs: int = 8
    count: int = 20
    stride: int | None = None  # jobs between window starts (default: n_jobs, no overlap)
    first: int = 0  # index of the first window's first job
    node_gpus: int = 8
    cpu_per_gpu: float = 3.0
    mem_per_gpu: float = 62.5
    load: float = 1.15
    max_nodes: int = 4
    round_minutes: float = 10.0
    deadlines: str | None = None  # "keep" | "rule"; default keep if the trace has deadlines
    align: float = 60.0
    seed: int = 0


def window_nodes(jobs: Sequence[TraceJob], cfg: WindowConfig) -> int:
    W = sum(j.gpus * j.work for j in jobs)
    arr = [j.arrival for j in jobs]
    H = (max(arr) - min(arr)) + float(np.mean([j.work for j in jobs]))
    need = math.ceil(max(j.gpus for j in jobs) / cfg.node_gpus)
    by_load = int(round(W / (cfg.load * H * cfg.node_gpus)))
    return max(need, min(cfg.max_nodes, by_load), 1)


def cut_windows(data: TraceData, cfg: WindowConfig, mix: SensitivityMix | None = None) -> list[tuple[Instance, dict]]:
    """(instance, provenance) per window; fewer than ``cfg.count`` if the trace ends."""
    jobs = sorted(data.jobs, key=lambda j: j.arrival)
    stride = cfg.stride or cfg.n_jobs
    mode = cfg.deadlines or ("keep" if data.has_deadlines else "rule")
    if mode not in ("keep", "rule"):
        raise ValueError("deadlines must be 'keep' or 'rule'")
    out = []
    for k in range(cfg.count):
        a = cfg.first + k * stride
        chunk = jobs[a : a + cfg.n_jobs]
        if len(chunk) < cfg.n_jobs:
            break
        nodes = window_nodes(chunk, cfg)
        if max(j.gpus for j in chunk) > nodes * cfg.node_gpus:
            continue  # a job larger than max_nodes allows; skip this window
        shift = math.floor(chunk[0].arrival / cfg.align) * cfg.align if cfg.align > 0 else chunk[0].arrival
        sub = TraceData(f"{data.name}-w{k}", data.source, [j.shifted(-shift) for j in chunk], mode == "keep")
        spec = ClusterSpec(nodes, cfg.node_gpus, cfg.cpu_per_gpu, cfg.mem_per_gpu, f"n{cfg.node_gpus}")
        inst = build_instance(sub, spec.cluster(), mix=mix, seed=cfg.seed + k, round_minutes=cfg.round_minutes, deadlines=DeadlineRule())
        prov = {"generator": "sensaopt instances from-trace", "trace": data.name, "source": data.source, "window": k,
                "first_job": a, "n_jobs": cfg.n_jobs, "shift_minutes": shift, "nodes": nodes, "deadlines": mode,
                "config": dict(cfg.__dict__)}
        out.append((inst, prov))
    return out
