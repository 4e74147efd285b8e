"""Calibrated, seeded workload generators for when the real job log is not at hand.

Both return a :class:`~sensaopt.traces.trace.TraceData` without deadlines;
:func:`~sensaopt.traces.trace.build_instance` adds deadlines by the SPEC rule
(:class:`~sensaopt.traces.trace.DeadlineRule`, parameterised) and model types.
Nothing is read at import time; calibration files are read (and cached) on first use
from :func:`sensaopt.traces.paths.traces_dir`.

**Helios (Venus)** — :class:`HeliosConfig`:

* arrivals: the Venus cluster's 10-minute GPU-job submission counts
  (``helios/Venus_cluster_throughput.csv``, column ``submit_gpu_job``) over the chosen
  days; each 10-minute bin gets ``Poisson(scale × count)`` jobs, uniform within the bin;
* run time (seconds): a log-normal truncated at ``max_duration_s`` (default 7 days)
  whose median (204 s) and mean (13,041 s) equal the Venus GPU-job figures
  (``mu``/``sigma`` solved numerically); work = run time / 60 minutes;
* GPUs per job: :data:`HELIOS_GPU_MIX`, chosen so that the median is 1 and the mean
  6.74 (Venus: 6.736); sizes follow the Helios paper's powers of two.

**Philly** — :class:`PhillyConfig`:

* run time: resampled from the 83,154 Philly runtimes
  (``philly/philly_runtime_from_alibaba_v2020_analysis.csv``, seconds), keeping those
  within ``[min_runtime_s, max_runtime_s]`` (default: at least 60 s);
* GPUs per job: :data:`PHILLY_GPU_MIX`, the GPU counts of the Chronus Philly SLO
  trace (GPU jobs only);
* arrivals: uniform over a window sized so that the offered GPU work equals
  ``load`` × ``cluster_gpus`` over it (default 1.15 × 960 GPUs, the Chronus traces'
  offered load), i.e. a Poisson process conditioned on the job count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sensaopt.traces.trace import TraceData, TraceJob

VENUS = {"gpu_jobs": 125303, "duration_mean_s": 13040.598, "duration_median_s": 204.0, "gpus_mean": 6.736, "gpus_median": 1.0}
# GPUs per job -> probability (median 1, mean 6.74)
HELIOS_GPU_MIX: tuple[tuple[int, float], ...] = ((1, 0.55), (2, 0.07), (4, 0.06), (8, 0.16), (16, 0.0855), (32, 0.05), (64, 0.0245))
# GPU counts of the Chronus Philly SLO trace (30,735 GPU jobs)
PHILLY_GPU_COUNTS: tuple[tuple[int, int], ...] = ((1, 28319), (2, 215), (4, 1186), (8, 894), (12, 2), (16, 105), (20, 1), (32, 13))
PHILLY_GPU_MIX: tuple[tuple[int, float], ...] = tuple((g, c / sum(c for _, c in PHILLY_GPU_COUNTS)) for g, c in PHILLY_GPU_COUNTS)


def _mix_draw(rng: np.random.Generator, mix: Sequence[tuple[int, float]], n: int) -> np.ndarray:
    sizes = np.array([g for g, _ in mix])
    p = np.array([w for _, w in mix], dtype=float)
    return sizes[rng.choice(len(sizes), size=n, p=p / p.sum())]


# ---- Helios ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeliosConfig:
    days: float = 7.0
    start_day: float = 0.0  # offset into the Venus counts (days from 2020-04-01)
    scale: float = 1.0  # multiplies the submission counts
    limit: int | None = None  # keep the first `limit` jobs
    duration_median_s: float = VENUS["duration_median_s"]
    duration_mean_s: float = VENUS["duration_mean_s"]
    max_duration_s: float = 7 * 86400.0
    gpu_mix: tuple[tuple[int, float], ...] = HELIOS_GPU_MIX
    seed: int = 0


@lru_cache(maxsize=8)
def lognormal_params(median: float, mean: float, cap: float) -> tuple[float, float]:
    """(mu, sigma) of a log-normal truncated at ``cap`` with the given median and mean."""
    from scipy import optimize, stats

    if not (0 < median < mean < cap):
        raise ValueError("need 0 < median < mean < cap")

    def eqs(x: Sequence[float]) -> list[float]:
        mu, s = x
        s = abs(s)
        F = stats.norm.cdf((math.log(cap) - mu) / s)
        m = mu + s * stats.norm.ppf(F / 2)
        tm = mu + s * s / 2 + math.log(stats.norm.cdf((math.log(cap) - mu - s * s) / s) / F)
        return [m - math.log(median), tm - math.log(mean)]

    mu, s = optimize.fsolve(eqs, [math.log(median), 2.5])
    if max(abs(v) for v in eqs([mu, s])) > 1e-6:
        raise ValueError(f"cannot fit a truncated log-normal with median {median}, mean {mean}, cap {cap}")
    return float(mu), float(abs(s))


def truncated_lognormal(rng: np.random.Generator, n: int, median: float, mean: float, cap: float) -> np.ndarray:
    from scipy import stats

    mu, s = lognormal_params(median, mean, cap)
    F = stats.norm.cdf((math.log(cap) - mu) / s)
    u = rng.random(n)
    return np.exp(mu + s * stats.norm.ppf(u * F))


@lru_cache(maxsize=1)
def venus_submissions() -> np.ndarray:
    """GPU jobs submitted per 10-minute bin in Venus, from 2020-04-01 00:00."""
    import pandas as pd

    from sensaopt.traces.paths import VENUS_THROUGHPUT, data_file

    return pd.read_csv(data_file(VENUS_THROUGHPUT), usecols=["submit_gpu_job"])["submit_gpu_job"].to_numpy(dtype=float)


def generate_helios(cfg: HeliosConfig = HeliosConfig()) -> TraceData:
    counts = venus_submissions()
    b0 = int(round(cfg.start_day * 144))
    b1 = min(len(counts), b0 + int(math.ceil(cfg.days * 144)))
    if not (0 <= b0 < b1) or cfg.scale <= 0:
        raise ValueError(f"Venus counts cover {len(counts) / 144:g} days; need 0 <= start_day < that, days > 0, scale > 0")
    rng = np.random.default_rng(cfg.seed)
    per_bin = rng.poisson(cfg.scale * counts[b0:b1])
    n = int(per_bin.sum())
    arrivals = np.sort(np.repeat(np.arange(len(per_bin)) * 10.0, per_bin) + rng.uniform(0, 10.0, n))
    if cfg.limit is not None:
        arrivals = arrivals[: cfg.limit]
        n = len(arrivals)
    gpus = _mix_draw(rng, cfg.gpu_mix, n)
    dur = truncated_lognormal(rng, n, cfg.duration_median_s, cfg.duration_mean_s, cfg.max_duration_s)
    jobs = [TraceJob(f"h{k}", float(arrivals[k]), int(gpus[k]), float(dur[k]) / 60.0) for k in range(n)]
    return TraceData(f"helios-gen-s{cfg.seed}", f"helios generator (seed {cfg.seed})", jobs, has_deadlines=False)


# ---- Philly ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PhillyConfig:
    jobs: int = 1000
    load: float = 1.15  # offered GPU work / (cluster_gpus × window)
    cluster_gpus: int = 960
    min_runtime_s: float = 60.0
    max_runtime_s: float | None = None
    gpu_mix: tuple[tuple[int, float], ...] = PHILLY_GPU_MIX
    seed: int = 0


@lru_cache(maxsize=1)
def philly_runtimes() -> np.ndarray:
    """The Philly job runtimes, seconds."""
    import pandas as pd

    from sensaopt.traces.paths import PHILLY_RUNTIMES, data_file

    return pd.read_csv(data_file(PHILLY_RUNTIMES))["runtime"].to_numpy(dtype=float)


def philly_runtime_pool(min_s: float = 60.0, max_s: float | None = None) -> np.ndarray:
    r = philly_runtimes()
    keep = r >= min_s
    if max_s is not None:
        keep &= r <= max_s
    if not keep.any():
        raise ValueError("no Philly runtime within the bounds")
    return r[keep]


def generate_philly(cfg: PhillyConfig = PhillyConfig()) -> TraceData:
    if cfg.jobs < 1 or cfg.load <= 0 or cfg.cluster_gpus < 1:
        raise ValueError("jobs, load and cluster_gpus must be positive")
    rng = np.random.default_rng(cfg.seed)
    pool = philly_runtime_pool(cfg.min_runtime_s, cfg.max_runtime_s)
    work = pool[rng.integers(0, len(pool), cfg.jobs)] / 60.0
    gpus = _mix_draw(rng, [(g, p) for g, p in cfg.gpu_mix if g <= cfg.cluster_gpus], cfg.jobs)
    span = float((gpus * work).sum()) / (cfg.cluster_gpus * cfg.load)
    arrivals = np.sort(rng.uniform(0, span, cfg.jobs))
    arrivals -= arrivals[0]
    jobs = [TraceJob(f"p{k}", float(arrivals[k]), int(gpus[k]), float(work[k])) for k in range(cfg.jobs)]
    return TraceData(f"philly-gen-s{cfg.seed}", f"philly generator (seed {cfg.seed})", jobs, has_deadlines=False)
