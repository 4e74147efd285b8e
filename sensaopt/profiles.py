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
        check_profile(self)

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


def check_profile(p: SensitivityProfile) -> None:
    """The rules of a sensitivity profile, alike for files (``profiles.NAME``,
    ``jobs[k].profile``) and profiles built in code: each axis a non-empty, strictly
    increasing tuple of numbers within its range (:data:`sensaopt.limits.INSTANCE`:
    ``profile.cpu_levels``, ``profile.mem_levels``), ``speeds`` a grid of one row per CPU
    level and one number per memory level, each within ``profile.speeds``. Lists are taken
    as tuples. Raises :class:`~sensaopt.errors.InputError` (``profile NAME``, the field
    within the profile, what is wrong; a ``ValueError``)."""
    from sensaopt.errors import InputError
    from sensaopt.limits import INSTANCE, name_problem, type_problem

    where = f"profile {p.name}"
    if not isinstance(p.name, str) or name_problem(p.name):
        raise InputError("profile", "name", type_problem(str, p.name) if not isinstance(p.name, str) else str(name_problem(p.name)))
    if not isinstance(p.task, str):
        raise InputError(where, "task", type_problem(str, p.task))
    axes = {}
    for axis in ("cpu_levels", "mem_levels"):
        levels = _numbers(where, axis, getattr(p, axis), INSTANCE[f"profile.{axis}"])
        if any(b <= a for a, b in zip(levels, levels[1:])):
            raise InputError(where, axis, f"levels must increase strictly, got {', '.join(f'{x:g}' for x in levels)}")
        axes[axis] = levels
    rows = p.speeds
    if not isinstance(rows, (tuple, list)) or len(rows) != len(axes["cpu_levels"]):
        got = f"{len(rows)} rows" if isinstance(rows, (tuple, list)) else type(rows).__name__
        raise InputError(where, "speeds", f"must be a grid of {len(axes['cpu_levels'])} rows (one per CPU level), got {got}")
    grid = tuple(_numbers(where, f"speeds[{i}]", r, INSTANCE["profile.speeds"], len(axes["mem_levels"])) for i, r in enumerate(rows))
    object.__setattr__(p, "cpu_levels", axes["cpu_levels"])
    object.__setattr__(p, "mem_levels", axes["mem_levels"])
    object.__setattr__(p, "speeds", grid)


def _numbers(where: str, field: str, xs: object, rng: object, length: int | None = None) -> tuple[float, ...]:
    """``xs`` as a tuple of numbers within ``rng`` (a :class:`sensaopt.limits.Range`),
    non-empty (of ``length`` when given); else :class:`~sensaopt.errors.InputError`."""
    import numbers

    from sensaopt.errors import InputError
    from sensaopt.limits import type_problem

    if not isinstance(xs, (tuple, list)):
        raise InputError(where, field, type_problem(list, xs))
    if not xs or (length is not None and len(xs) != length):
        want = f"{length} numbers (one per memory level)" if length is not None else "at least one level"
        raise InputError(where, field, f"must hold {want}, got {len(xs)}")
    for k, x in enumerate(xs):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise InputError(where, f"{field}[{k}]", type_problem(float, x))
        problem = rng.problem(float(x))  # type: ignore[attr-defined]
        if problem is not None:
            raise InputError(where, f"{field}[{k}]", problem)
    return tuple(float(x) for x in xs)


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
