"""Seeded synthetic instances.

Jobs are drawn first (GPUs, work, model type); arrivals are then spread uniformly
(a Poisson process conditioned on the job count) over a window sized so that the
offered GPU work equals ``load`` × the cluster's GPU capacity over that window.
Deadlines follow the rule inferred from the Chronus traces:
``arrival + λ·work`` with ``λ ~ U(lo, min(hi, cap/work))``, rounded up to a multiple
of ``deadline_round`` minutes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from sensaopt import memory
from sensaopt.instance import Cluster, Instance, Job, NodeType
from sensaopt.profiles import catalog


@dataclass(frozen=True)
class GeneratorConfig:
    jobs: int = 20
    nodes: int = 2
    node_gpus: int = 8
    node_cpus: int = 24  # cores per node (Synergy's server: 3 per GPU)
    node_mem_gb: float = 500.0  # GB per node (62.5 per GPU)
    round_minutes: float = 10.0
    load: float = 1.3  # offered GPU work / capacity during the arrival window
    gpu_mix: tuple[tuple[int, float], ...] = ((1, 0.6), (2, 0.2), (4, 0.15), (8, 0.05))
    work_median: float = 60.0  # minutes at speed 1.0
    work_sigma: float = 0.8  # lognormal shape
    work_min: float = 10.0
    work_max: float = 480.0
    deadline_lo: float = 1.1  # λ range of the deadline rule
    deadline_hi: float = 2.0
    deadline_cap: float = 5040.0  # λ ≤ cap / work (Chronus rule)
    deadline_round: float = 60.0  # deadlines rounded up to a multiple of this (minutes)
    best_effort_fraction: float = 0.0
    sensitive_fraction: float = 0.5
    sensitivity_threshold: float = 0.1
    seed: int = 0
    name: str | None = None

    def check(self) -> None:
        if self.jobs < 1 or self.nodes < 1 or self.node_gpus < 1 or self.node_cpus < 1 or self.node_mem_gb <= 0:
            raise ValueError("jobs, nodes, node_gpus, node_cpus and node_mem_gb must be positive")
        if not (self.load > 0 and self.round_minutes > 0):
            raise ValueError("load and round_minutes must be positive")
        for name in ("best_effort_fraction", "sensitive_fraction"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within [0, 1]")
        if not (1.0 <= self.deadline_lo <= self.deadline_hi):
            raise ValueError("need 1 <= deadline_lo <= deadline_hi")
        if not (0 < self.work_min <= self.work_median <= self.work_max):
            raise ValueError(f"need 0 < work_min ({self.work_min:g}) <= work_median ({self.work_median:g}) <= work_max ({self.work_max:g})")
        weights = [w for _, w in self.gpu_mix]
        if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(f"gpu_mix weights must be finite, >= 0 and not all 0, got {', '.join(f'{w:g}' for w in weights)}")


def model_classes(threshold: float = 0.1) -> tuple[list[str], list[str]]:
    """Catalog model names split by sensitivity.

    Args:
        threshold: the sensitivity threshold (:meth:`SensitivityProfile.is_sensitive`).

    Returns:
        ``(sensitive, insensitive)`` model names, each sorted.
    """
    cat = catalog()
    sens = sorted(n for n, p in cat.items() if p.is_sensitive(threshold))
    return sens, sorted(n for n in cat if n not in sens)


def deadline_rule(arrival: float, work: float, lam: float, round_to: float) -> float:
    """SPEC section 5's deadline: ``arrival + λ·work`` rounded up to a multiple of ``round_to``.

    Args:
        arrival: the job's arrival, minutes.
        work: the job's work, minutes at speed 1.0.
        lam: the slack factor λ (>= 1).
        round_to: minutes to round up to (0: not rounded).

    Returns:
        The deadline, absolute minutes.
    """
    d = arrival + lam * work
    return math.ceil(d / round_to - 1e-9) * round_to if round_to > 0 else d


def generate(cfg: GeneratorConfig) -> Instance:
    """A synthetic instance (``sensaopt generate``): GPU sizes from ``cfg.gpu_mix``, log-normal
    work, uniform arrivals over the window that gives ``cfg.load``, model types by
    ``cfg.sensitive_fraction`` and deadlines by :func:`deadline_rule`, all seeded by ``cfg.seed``.

    Args:
        cfg: the generator's settings (minutes, cores, GB).

    Returns:
        The instance, on ``cfg.nodes`` identical nodes.

    Raises:
        ValueError: settings out of range, or no GPU size of ``gpu_mix`` fits the cluster.
    """
    cfg.check()
    memory.check(cfg.jobs, cfg.nodes, run=False)  # a size this process cannot build: refused before it is drawn
    rng = np.random.default_rng(cfg.seed)
    cluster = Cluster((NodeType("node", cfg.node_gpus, cfg.node_cpus, cfg.node_mem_gb, cfg.nodes),))
    sizes = [g for g, _ in cfg.gpu_mix if g <= cluster.total_gpus]
    probs = np.array([p for g, p in cfg.gpu_mix if g <= cluster.total_gpus], dtype=float)
    if not sizes:
        raise ValueError("no GPU size in gpu_mix fits the cluster")
    gpus = rng.choice(sizes, size=cfg.jobs, p=probs / probs.sum())
    work = np.clip(np.round(cfg.work_median * np.exp(rng.normal(0, cfg.work_sigma, cfg.jobs))), cfg.work_min, cfg.work_max)
    window = float((gpus * work).sum()) / (cluster.total_gpus * cfg.load)
    arrivals = np.sort(np.floor(rng.uniform(0, window, cfg.jobs)))
    arrivals -= arrivals[0]
    sens, insens = model_classes(cfg.sensitivity_threshold)
    is_sens = rng.random(cfg.jobs) < cfg.sensitive_fraction
    pick_s = rng.integers(0, len(sens), cfg.jobs)
    pick_i = rng.integers(0, len(insens), cfg.jobs)
    best_effort = rng.random(cfg.jobs) < cfg.best_effort_fraction
    u = rng.random(cfg.jobs)
    cat = catalog()
    jobs = []
    for k in range(cfg.jobs):
        w = float(work[k])
        hi = max(cfg.deadline_lo, min(cfg.deadline_hi, cfg.deadline_cap / w))
        lam = cfg.deadline_lo + u[k] * (hi - cfg.deadline_lo)
        a = float(arrivals[k])
        model = sens[pick_s[k]] if is_sens[k] else insens[pick_i[k]]
        jobs.append(
            Job(
                id=f"j{k}",
                arrival=a,
                gpus=int(gpus[k]),
                work=w,
                profile=cat[model],
                deadline=None if best_effort[k] else deadline_rule(a, w, lam, cfg.deadline_round),
            )
        )
    name = cfg.name or f"gen-{cfg.jobs}j-{cfg.nodes}x{cfg.node_gpus}-s{cfg.seed}"
    return Instance(name=name, cluster=cluster, round_minutes=cfg.round_minutes, jobs=tuple(jobs), source=name)


def provenance(cfg: GeneratorConfig) -> dict:
    """What an instance file records about how it was generated.

    Args:
        cfg: the generator's settings.

    Returns:
        ``{"generator": "sensaopt.generate", "config": {...}}`` (JSON-ready).
    """
    d = asdict(cfg)
    d["gpu_mix"] = [list(x) for x in cfg.gpu_mix]
    return {"generator": "sensaopt.generate", "config": d}
