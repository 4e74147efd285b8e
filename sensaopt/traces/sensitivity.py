"""Assigning model types (sensitivity profiles) to trace jobs.

Trace jobs carry no CPU/memory profile; each gets a model from
:func:`sensaopt.profiles.catalog` by a seeded rule:

* ``mode="fraction"``: a job is sensitive with probability ``sensitive_fraction``
  (sensitive/insensitive as :func:`sensaopt.generate.model_classes` splits the
  catalog); the model is then uniform within its class.
* ``mode="synergy"``: Synergy's task split — image / language / speech with
  probabilities ``task_split`` (default 0.2 / 0.7 / 0.1) by ``profile.task``; the
  model is uniform among the catalog models of that task.

Optional guidance by real CPU asks (``guided=True``): every job draws a per-GPU CPU
request (cores per GPU) from the Alibaba GPU-pod requests in
``alibaba-v2023/openb_pod_list_default.csv`` (pods with ``num_gpu >= 1``,
``cpu_milli / 1000 / num_gpu``). The number of jobs of each class is drawn as
without guidance; the class that needs CPU most (sensitive, or image in ``synergy``
mode, then speech, then language) goes to the jobs with the highest draws (ties broken
at random). So pods asking more CPU per GPU are the ones that become image/sensitive
models, and the mix stays as configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sensaopt.generate import model_classes
from sensaopt.profiles import catalog

SYNERGY_SPLIT = (("image", 0.2), ("language", 0.7), ("speech", 0.1))
_CPU_NEED_ORDER = ("image", "speech", "language")  # most CPU-hungry task first


@dataclass(frozen=True)
class SensitivityMix:
    """How a trace's jobs get model types.

    Attributes:
        mode: ``"fraction"`` (a ``sensitive_fraction`` of the jobs sensitive) or ``"synergy"``
            (model classes by ``task_split`` weights).
        sensitive_fraction: fraction of jobs given sensitive models, in [0, 1].
        task_split: ``(model class, weight)`` pairs of ``"synergy"``.
        guided: give sensitive models to the jobs drawing high CPU-per-GPU asks.
        threshold: the sensitivity threshold of the model classes.
    """

    mode: str = "fraction"  # "fraction" | "synergy"
    sensitive_fraction: float = 0.5
    task_split: tuple[tuple[str, float], ...] = SYNERGY_SPLIT
    guided: bool = False
    threshold: float = 0.1  # sensitivity threshold of model_classes

    def check(self) -> None:
        if self.mode not in ("fraction", "synergy"):
            raise ValueError(f"sensitivity mode must be 'fraction' or 'synergy', not {self.mode!r}")
        if not 0 <= self.sensitive_fraction <= 1:
            raise ValueError("sensitive_fraction must be within [0, 1]")
        if self.mode == "synergy":
            tasks = {p.task for p in catalog().values()}
            for t, w in self.task_split:
                if t not in tasks:
                    raise ValueError(f"task {t!r} has no model in the catalog (tasks: {sorted(tasks)})")
                if w < 0:
                    raise ValueError("task weights must be >= 0")
            if sum(w for _, w in self.task_split) <= 0:
                raise ValueError("task weights must not all be 0")

    def assign(self, n: int, seed: int) -> list[str]:
        """Model names for ``n`` jobs (in job order), seeded."""
        self.check()
        rng = np.random.default_rng(seed)
        if self.mode == "fraction":
            sens, insens = model_classes(self.threshold)
            groups = [sens, insens]
            probs = np.array([self.sensitive_fraction, 1 - self.sensitive_fraction])
        else:
            cat = catalog()
            split = sorted(self.task_split, key=lambda tw: _CPU_NEED_ORDER.index(tw[0]) if tw[0] in _CPU_NEED_ORDER else 99)
            groups = [sorted(m for m, p in cat.items() if p.task == t) for t, _ in split]
            probs = np.array([w for _, w in split], dtype=float)
            probs /= probs.sum()
        cls = rng.choice(len(groups), size=n, p=probs)  # class per job, groups ordered by CPU need
        if self.guided and n:
            asks = sample_cpu_asks(n, rng)
            order = np.lexsort((rng.random(n), -asks))  # highest ask first, random ties
            counts = np.bincount(cls, minlength=len(groups))
            cls = np.empty(n, dtype=int)
            cls[order] = np.repeat(np.arange(len(groups)), counts)
        picks = rng.random(n)
        out = []
        for c, u in zip(cls, picks):
            g = groups[c]
            out.append(g[min(int(u * len(g)), len(g) - 1)])
        return out


@lru_cache(maxsize=1)
def alibaba_cpu_per_gpu() -> np.ndarray:
    """Per-GPU CPU requests (cores per GPU) of the Alibaba v2023 GPU pods."""
    import pandas as pd

    from sensaopt.traces.paths import ALIBABA_PODS, data_file

    df = pd.read_csv(data_file(ALIBABA_PODS), usecols=["cpu_milli", "num_gpu"])
    df = df[df.num_gpu >= 1]
    return (df.cpu_milli / 1000.0 / df.num_gpu).to_numpy(dtype=float)


def sample_cpu_asks(n: int, rng: np.random.Generator) -> np.ndarray:
    asks = alibaba_cpu_per_gpu()
    return asks[rng.integers(0, len(asks), n)]
