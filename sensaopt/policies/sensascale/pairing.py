"""Step 3 of SensaScale: pair sensitive with insensitive jobs by maximum-weight matching.

A pair shares one node. The insensitive partner runs at its optimal demand (which
for a flat profile is the floor), and the sensitive job gets what the pair's joint
GPU-proportional share leaves (capped at its optimal demand). The edge weight is the
speed the pair gains over both running at their base allocation, per GPU-weighted
and scaled by urgency (1 + R / (R + slack to LST)), then scaled to an ``int`` so the
matching works in exact integer arithmetic.
"""

from __future__ import annotations

import math

import numpy as np

from sensaopt.instance import Cluster
from sensaopt.profiles import Option

from .analysis import JobInfo
from .config import SensaScaleConfig


def pair_options(s: JobInfo, i: JobInfo, cluster: Cluster) -> tuple[Option, Option] | None:
    """Per-GPU options (for s, for i) when s and i share a node of the main type."""
    nt = cluster.reference_type
    g = s.gpus + i.gpus
    if g > nt.gpus:
        return None
    cpu = math.floor(g * nt.cpus / nt.gpus + 1e-9) - i.gpus * i.facts.opt.cpu
    mem = g * nt.mem_gb / nt.gpus - i.gpus * i.facts.opt.mem
    best = None
    for o in s.facts.options:
        if o.speed > s.facts.opt.speed + 1e-12:
            break
        if o.cpu * s.gpus <= cpu and o.mem * s.gpus <= mem + 1e-9:
            best = o
    return (best, i.facts.opt) if best is not None else None


def urgency(info: JobInfo, now: float, R: float) -> float:
    if info.tier != 0:
        return 1.0
    return 1.0 + R / (R + max(0.0, info.lst - now))


def pair_weight(s: JobInfo, i: JobInfo, cluster: Cluster, now: float, R: float, scale: int) -> int:
    po = pair_options(s, i, cluster)
    if po is None:
        return 0
    so, io = po
    nt = cluster.reference_type
    gain_s = so.speed / s.facts.base[nt].speed - 1.0
    gain_i = io.speed / i.facts.base[nt].speed - 1.0
    w = s.gpus * gain_s * urgency(s, now, R) + i.gpus * gain_i * urgency(i, now, R)
    return int(round(w * scale)) if w > 0 else 0


def weight_matrix(sens: list[JobInfo], insens: list[JobInfo], cluster: Cluster, now: float, R: float, scale: int) -> np.ndarray:
    W = np.zeros((len(sens), len(insens)), dtype=np.int64)
    for a, s in enumerate(sens):
        for b, i in enumerate(insens):
            W[a, b] = pair_weight(s, i, cluster, now, R, scale)
    return W


def match_assignment(W: np.ndarray) -> list[tuple[int, int]]:
    """Maximum-weight matching of a bipartite graph with non-negative weights (0 = no
    edge) via the assignment problem: same total weight as the general matching."""
    from scipy.optimize import linear_sum_assignment

    if W.size == 0 or W.max() <= 0:
        return []
    rows, cols = linear_sum_assignment(W, maximize=True)
    return [(int(a), int(b)) for a, b in zip(rows, cols) if W[a, b] > 0]


def match_networkx(W: np.ndarray) -> list[tuple[int, int]]:
    """Reference: networkx.max_weight_matching on the same graph (Python int weights)."""
    import networkx as nx

    G = nx.Graph()
    n_s = W.shape[0]
    for a in range(W.shape[0]):
        for b in range(W.shape[1]):
            if W[a, b] > 0:
                G.add_edge(("s", a), ("i", b), weight=int(W[a, b]))
    out = []
    for u, v in nx.max_weight_matching(G):
        if u[0] == "i":
            u, v = v, u
        out.append((u[1], v[1]))
    del n_s
    return sorted(out)


def make_pairs(infos: list[JobInfo], cluster: Cluster, cfg: SensaScaleConfig, now: float, R: float) -> dict[str, tuple[JobInfo, JobInfo]]:
    """Pairs among the queue prefix; maps each paired job id to its (s, i) pair."""
    if not cfg.pairing:
        return {}
    budget = cfg.pairing_window * cluster.total_gpus
    max_g = cluster.reference_type.gpus
    sens, insens, used = [], [], 0
    for info in infos:
        if used + info.gpus > budget:
            break
        used += info.gpus
        if info.gpus < max_g:
            (sens if info.facts.sensitive else insens).append(info)
    if not sens or not insens:
        return {}
    W = weight_matrix(sens, insens, cluster, now, R, cfg.weight_scale)
    pairs = match_assignment(W) if cfg.pairing_method == "assignment" else match_networkx(W)
    out = {}
    for a, b in pairs:
        out[sens[a].id] = out[insens[b].id] = (sens[a], insens[b])
    return out
