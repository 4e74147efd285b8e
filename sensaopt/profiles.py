"""Sensitivity profiles: training speed as a function of CPU and memory **per GPU**.

A profile is a grid of measured speeds (relative to the GPU-proportional reference
share, where the speed is 1.0) over CPU cores per GPU × memory GB per GPU. Between
grid points the speed is interpolated bilinearly, which is piecewise linear along
every grid line (the curves the exact models use); above the largest measured value
of an axis it stays flat. An allocation below the smallest measured value of either
axis (the *floor*) is not allowed: the validator rejects it.

An :class:`Option` is a per-GPU allocation with the speed it gives. Which allocations
are valid and which ones policies and exact models choose from (the optimal demand
among them): :mod:`sensaopt.allocations`.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from functools import cache

from sensaopt import profile_data


@dataclass(frozen=True)
class Option:
    """A per-GPU allocation and the profile speed it gives."""

    cpu: float  # cores per GPU (whole cores in the policies' options; finer in the exact models' grids: sensaopt.allocations)
    mem: float  # GB per GPU
    speed: float


@dataclass(frozen=True)
class SensitivityProfile:
    name: str
    cpu_levels: tuple[float, ...]  # cores per GPU, increasing
    mem_levels: tuple[float, ...]  # GB per GPU, increasing
    speeds: tuple[tuple[float, ...], ...]  # speeds[i][k] at cpu_levels[i], mem_levels[k]
    task: str = "custom"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        ci, mk = self.cpu_levels, self.mem_levels
        if len(ci) < 1 or len(mk) < 1:
            raise ValueError(f"profile {self.name}: empty axis")
        if any(b <= a for a, b in zip(ci, ci[1:])) or any(b <= a for a, b in zip(mk, mk[1:])):
            raise ValueError(f"profile {self.name}: axis levels must increase strictly")
        if ci[0] <= 0 or mk[0] <= 0:
            raise ValueError(f"profile {self.name}: axis levels must be positive")
        if len(self.speeds) != len(ci) or any(len(r) != len(mk) for r in self.speeds):
            raise ValueError(f"profile {self.name}: speed grid must be {len(ci)} x {len(mk)}")
        if any(not (math.isfinite(s) and s > 0) for r in self.speeds for s in r):
            raise ValueError(f"profile {self.name}: speeds must be positive and finite")

    # ---- speed -------------------------------------------------------------------
    @property
    def floor(self) -> tuple[float, float]:
        """Smallest allowed allocation: (cores per GPU, GB per GPU)."""
        return self.cpu_levels[0], self.mem_levels[0]

    @property
    def peak(self) -> float:
        return max(max(r) for r in self.speeds)

    def speed(self, cpu_per_gpu: float, mem_per_gpu: float) -> float:
        """Speed at a per-GPU allocation; 0.0 below the floor (not allowed)."""
        key = (cpu_per_gpu, mem_per_gpu)
        s = self._cache.get(key)
        if s is None:
            s = self._cache[key] = self._interpolate(cpu_per_gpu, mem_per_gpu)
        return s

    def _interpolate(self, c: float, m: float) -> float:
        ci, mk, sp = self.cpu_levels, self.mem_levels, self.speeds
        eps = 1e-9
        if c < ci[0] - eps or m < mk[0] - eps:
            return 0.0
        i, a = _locate(ci, c)
        k, b = _locate(mk, m)
        s00 = sp[i][k]
        s10 = sp[i + 1][k] if a > 0 else s00
        s01 = sp[i][k + 1] if b > 0 else s00
        s11 = sp[i + 1][k + 1] if a > 0 and b > 0 else (s10 if a > 0 else s01)
        return (1 - a) * (1 - b) * s00 + a * (1 - b) * s10 + (1 - a) * b * s01 + a * b * s11

    # ---- classification -------------------------------------------------------------
    def sensitivity(self, share: tuple[float, float] | None = None) -> tuple[float, float]:
        """(gain, loss): relative speed-up from the proportional share to the peak, and
        relative slow-down from the share to the floor."""
        sc, sm = share or profile_data.REFERENCE_SHARE
        base = self.speed(sc, sm)
        if base <= 0:
            return math.inf, 1.0
        return self.peak / base - 1.0, 1.0 - self.speed(*self.floor) / base

    def is_sensitive(self, threshold: float = 0.1, share: tuple[float, float] | None = None) -> bool:
        """Sensitive: gains more than ``threshold`` above the proportional share, or
        loses more than ``threshold`` when cut to the floor. Insensitive jobs can give
        their CPU and memory away at (almost) no cost."""
        gain, loss = self.sensitivity(share)
        return gain > threshold or loss > threshold


def _locate(levels: tuple[float, ...], x: float) -> tuple[int, float]:
    """Index i and weight a in [0, 1) with x = (1-a)·levels[i] + a·levels[i+1]; clamps above."""
    if x >= levels[-1]:
        return len(levels) - 1, 0.0
    i = bisect.bisect_right(levels, x) - 1
    i = max(i, 0)
    a = (x - levels[i]) / (levels[i + 1] - levels[i])
    return i, max(0.0, a)


@cache
def catalog() -> dict[str, SensitivityProfile]:
    """The 12 measured model profiles, by name."""
    return {
        name: SensitivityProfile(
            name=name,
            cpu_levels=tuple(float(c) for c in profile_data.CPU_PER_GPU),
            mem_levels=tuple(float(m) for m in profile_data.MEM_PER_GPU_GB),
            speeds=grid,
            task=profile_data.TASK[name],
        )
        for name, grid in profile_data.SPEED.items()
    }


def get_profile(name: str) -> SensitivityProfile:
    """A catalog profile by model name.

    Args:
        name: a catalog model name (:func:`catalog`).

    Returns:
        The profile.

    Raises:
        KeyError: an unknown name (the message lists the known ones).
    """
    cat = catalog()
    if name not in cat:
        raise KeyError(f"unknown model type {name!r}; known: {', '.join(sorted(cat))}")
    return cat[name]
