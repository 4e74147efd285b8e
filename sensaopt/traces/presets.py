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
Chronus artifact's server, 128 cores and 256 GB per 8 GPUs (16 cores, 32 GB per GPU);
``node="alibaba"`` is the most common 8-GPU node of the Alibaba v2023 GPU node list
(96 cores and 384 GiB per 8 GPUs: 12 cores, 48 GB per GPU; :func:`alibaba_node_shape`).
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
# The alibaba variant, pinned: the most common 8-GPU node shape of alibaba-v2023's
# openb_node_list_gpu_node.csv (549 of its 1,213 nodes: 96,000 cpu_milli, 393,216 MiB,
# 8 GPUs), derived by
#     python -c "from sensaopt.traces.presets import alibaba_node_shape; print(alibaba_node_shape())"
# (tests/test_node_shapes.py checks these numbers against the file when it is present).
# Memory: the file's MiB are read as binary units, 393,216 MiB = 384 GiB, and the project's
# "GB" is taken as GiB (like Synergy's 500 GB server, an operating-system figure), so
# 48 GB per GPU (51.5 decimal GB would be the other reading).
ALIBABA_NODE = {"gpus": 8, "cpu_milli": 96_000, "memory_mib": 393_216, "nodes": 549, "of_nodes": 1213}
ALIBABA_CPU_PER_GPU = ALIBABA_NODE["cpu_milli"] / 1000.0 / ALIBABA_NODE["gpus"]  # 12.0 cores
ALIBABA_MEM_PER_GPU = ALIBABA_NODE["memory_mib"] / 1024.0 / ALIBABA_NODE["gpus"]  # 48.0 GB (GiB)

NODE_VARIANTS: Registry[tuple[float, float]] = Registry("node variant", {  # name -> (cores per GPU, GB per GPU)
    "synergy": (3.0, 62.5),  # Synergy's server: 24 cores, 500 GB per 8 GPUs (the profiles' reference share)
    "chronus": (16.0, 32.0),  # the Chronus artifact's server: 128 cores, 256 GB per 8 GPUs
    "alibaba": (ALIBABA_CPU_PER_GPU, ALIBABA_MEM_PER_GPU),  # alibaba-v2023's most common 8-GPU node (above)
})


def alibaba_node_shape(path: str | None = None, gpus: int = 8) -> dict[str, int]:
    """The most common node shape with ``gpus`` GPUs in the Alibaba v2023 GPU node list
    (``alibaba-nodes``: ``openb_node_list_gpu_node.csv``, columns ``sn, cpu_milli,
    memory_mib, gpu, model``): ``{"gpus", "cpu_milli", "memory_mib", "nodes" (nodes of
    that shape), "of_nodes" (nodes in the file)}``. Ties go to the larger shape.
    :class:`InputError` naming the fetch command when the file is absent."""
    import csv
    from collections import Counter

    from sensaopt.datasets import DATA_FILES
    from sensaopt.traces.paths import data_file

    f = data_file(DATA_FILES["alibaba-nodes"].path) if path is None else path
    with open(f, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    shapes = Counter((int(r["cpu_milli"]), int(r["memory_mib"])) for r in rows if int(r["gpu"]) == gpus)
    if not shapes:
        raise InputError(str(f), "gpu", f"no node with {gpus} GPUs")
    (cpu, mem), n = max(shapes.items(), key=lambda kv: (kv[1], kv[0]))
    return {"gpus": gpus, "cpu_milli": cpu, "memory_mib": mem, "nodes": n, "of_nodes": len(rows)}


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
    """The preset names ``--preset`` knows (besides ``NxG``), with their node-variant suffixes.

    Returns:
        The names.
    """
    return PRESETS.names() + sorted(f"{p}-{v}" for p in PRESETS.names() for v in NODE_VARIANTS.names() if v != "synergy")


def preset_spec(name: str, cpu_per_gpu: float | None = None, mem_per_gpu: float | None = None, node: str | None = None) -> ClusterSpec:
    """The :class:`ClusterSpec` of a preset.

    Args:
        name: a preset name (:func:`preset_names`) or ``NxG`` (N nodes of G GPUs), optionally
            with a node-variant suffix (``-chronus``).
        cpu_per_gpu: cores per GPU (None: the node variant's).
        mem_per_gpu: GB per GPU (None: the node variant's).
        node: the node variant when ``name`` has no suffix (None: ``synergy``).

    Returns:
        The spec (nodes, GPUs per node, cores and GB per GPU).

    Raises:
        InputError: an unknown preset or variant, or a ratio that is not positive.
    """
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
    """The cluster of a preset (:func:`preset_spec`, the same arguments).

    Args:
        name: a preset name or ``NxG``.
        cpu_per_gpu: cores per GPU (None: the node variant's).
        mem_per_gpu: GB per GPU (None: the node variant's).
        node: the node variant when ``name`` has no suffix.

    Returns:
        The cluster.
    """
    return preset_spec(name, cpu_per_gpu, mem_per_gpu, node).cluster()
