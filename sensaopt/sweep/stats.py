"""Summary statistics over repeated runs (seeds): the one interval helper of the project."""

from __future__ import annotations

import math
from collections.abc import Iterable


def mean_interval(values: Iterable[float | None], confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, lo, hi): the sample mean and its two-sided Student-t ``confidence`` interval.

    ``None`` and NaN values are dropped first (a seed whose metric is undefined). With one
    value the interval is undefined: ``lo`` and ``hi`` are NaN; with none, all three are NaN.
    Equal values give a zero-width interval. Units are the values'.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = math.fsum(xs) / n
    if n == 1:
        return mean, math.nan, math.nan
    from scipy.stats import t

    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(t.ppf(0.5 + confidence / 2.0, n - 1)) * sd / math.sqrt(n)
    return mean, mean - half, mean + half
