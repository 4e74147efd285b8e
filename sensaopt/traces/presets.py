"""Cluster presets: the same total GPUs on 8-GPU or 16-GPU nodes.

===========  =====================  ==========
preset       nodes                  total GPUs
===========  =====================  ==========
philly-8     120 × 8 GPUs           960
philly-16    60 × 16 GPUs           960
helios-8     96 × 8 GPUs            768
helios-16    48 × 16 GPUs           768
===========  =====================  ==========

CPU cores and memory (GB) per GPU are parameters. The default is Synergy's server
ratio, 3 cores and 62.5 GB per GPU (``node="synergy"``); ``node="chronus"`` is the
Chronus artifact's server, 128 cores and 256 GB per 8 GPUs (16 cores, 32 GB per GPU).
A preset name may carry the node variant as a suffix: ``philly-8-chronus``.
``NxG`` (e.g. ``2x8``) is a custom cluster of N nodes with G GPUs each (small
instances, tests).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sensaopt.errors import InputError
from sensaopt.instance import Cluster, NodeType
from sensaopt.registry import Registry

PRESETS: Registry[tuple[int, int]] = Registry("cluster preset", {  # name -> (nodes, GPUs per node)
    "philly-8": (120, 8),
    "philly-16": (60, 16),
    "helios-8": (96, 8),
    "helios-16": (48, 16),
})
NODE_VARIANTS: Registry[tuple[float, float]] = Registry("node variant", {  # name -> (cores per GPU, GB per GPU)
    "synergy": (3.0, 62.5),
    "chronus": (16.0, 32.0),
})


@dataclass(frozen=True)
class ClusterSpec:
    nodes: int
    node_gpus: int
    cpu_per_gpu: float = 3.0  # cores
    mem_per_gpu: float = 62.5  # GB
    name: str = "node"

    def cluster(self) -> Cluster:
        cpus = int(round(self.cpu_per_gpu * self.node_gpus))
        mem = float(self.mem_per_gpu * self.node_gpus)
        return Cluster((NodeType(self.name, self.node_gpus, cpus, mem, self.nodes),))

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.node_gpus


def preset_names() -> list[str]:
    return PRESETS.names() + sorted(f"{p}-{v}" for p in PRESETS.names() for v in NODE_VARIANTS.names() if v != "synergy")


def preset_spec(name: str, cpu_per_gpu: float | None = None, mem_per_gpu: float | None = None, node: str | None = None) -> ClusterSpec:
    """The :class:`ClusterSpec` of a preset. ``cpu_per_gpu``/``mem_per_gpu`` override
    the node variant's ratio (cores, GB per GPU)."""
    base, variant = name, node or "synergy"
    for v in NODE_VARIANTS.names():
        if name.endswith(f"-{v}") and (name[: -len(v) - 1] in PRESETS or re.fullmatch(r"\d+x\d+", name[: -len(v) - 1])):
            base, variant = name[: -len(v) - 1], v
    custom = re.fullmatch(r"(\d+)x(\d+)", base)
    if custom and int(custom.group(1)) > 0 and int(custom.group(2)) > 0:
        nodes, gpus = int(custom.group(1)), int(custom.group(2))
    elif base in PRESETS:
        nodes, gpus = PRESETS.get(base)
    else:
        raise InputError("--preset", "preset", f"unknown cluster preset {name!r} (known: {', '.join(preset_names())}, or NxG)")
    if variant not in NODE_VARIANTS:
        raise InputError("--preset", "node", f"unknown node variant {variant!r} (known: {', '.join(NODE_VARIANTS.names())})")
    c, m = NODE_VARIANTS.get(variant)
    c = c if cpu_per_gpu is None else cpu_per_gpu
    m = m if mem_per_gpu is None else mem_per_gpu
    if not (c > 0 and m > 0 and math.isfinite(c) and math.isfinite(m)):
        raise InputError("--preset", "cpu/mem per GPU", "must be positive")
    return ClusterSpec(nodes, gpus, c, m, f"n{gpus}")


def preset_cluster(name: str, cpu_per_gpu: float | None = None, mem_per_gpu: float | None = None, node: str | None = None) -> Cluster:
    return preset_spec(name, cpu_per_gpu, mem_per_gpu, node).cluster()
