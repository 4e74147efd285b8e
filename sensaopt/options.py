"""The per-GPU (cores, GB) options a job may be given: one computation, shared by the
policies (:mod:`sensaopt.policies.placement` re-exports it) and the exact models
(:mod:`sensaopt.exact.model.data`)."""

from __future__ import annotations

import math

from sensaopt.instance import Cluster, Node, NodeType
from sensaopt.profiles import Option, SensitivityProfile


def proportional_share(node: Node | NodeType) -> tuple[int, float]:
    """GPU-proportional per-GPU share of a node (or node type): (cores per GPU, floored;
    GB per GPU)."""
    return math.floor(node.cpus / node.gpus + 1e-9), node.mem_gb / node.gpus


def job_options(profile: SensitivityProfile, cluster: Cluster) -> tuple[Option, ...]:
    """Per-GPU options a policy may give a job: the profile's Pareto options plus the
    proportional share of every node type (the same set the exact models use)."""
    extra = tuple(sorted({proportional_share(n) for n in _type_reps(cluster)}))
    return profile.options(extra)


def _type_reps(cluster: Cluster) -> list[Node]:
    seen, out = set(), []
    for n in cluster.nodes:
        if n.type not in seen:
            seen.add(n.type)
            out.append(n)
    return out
