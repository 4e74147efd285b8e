"""Both bounds of one instance, per speed regime, as one record: its JSON form and the
text lines of ``sensaopt bound`` (each part's reasoning)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from sensaopt.bounds.areas import REGIMES, Regime
from sensaopt.bounds.jct import JctBound, jct_bound
from sensaopt.bounds.misses import MAX_BLOCK_MINUTES, STEP_MINUTES, MissBound, miss_bound
from sensaopt.instance import Instance

RECORD_FIELDS = ("forced_misses", "forced_misses_share", "jct_bound", "jct_bound_share")  # Bounds.record()
REGIME_TEXT = {"best": "best speed (any policy)", "unit": "proportional-share speed (policies that never speed a job up)"}


@dataclass(frozen=True)
class Bounds:
    """The miss and average-JCT bounds of one instance, per regime."""

    instance: str
    jobs: int
    slo_jobs: int
    gpus: int
    round_minutes: float
    misses: dict[Regime, MissBound]
    jct: dict[Regime, JctBound]
    runtime_s: float  # seconds, both bounds, every regime

    def forced_misses(self, regime: Regime = "best") -> int:
        return self.misses[regime].misses

    def jct_bound(self, regime: Regime = "best") -> float:
        return self.jct[regime].avg_jct

    def record(self) -> dict[str, float]:
        """The four figures a sweep record keeps (:data:`RECORD_FIELDS`): forced misses and
        the average-JCT bound (minutes) at best speed and at the proportional share."""
        return {"forced_misses": self.forced_misses("best"), "forced_misses_share": self.forced_misses("unit"),
                "jct_bound": self.jct_bound("best"), "jct_bound_share": self.jct_bound("unit")}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every part, and the bounds themselves (``misses``/``lost_value``,
        ``avg_jct``) beside them."""
        out: dict[str, Any] = {k: getattr(self, k) for k in ("instance", "jobs", "slo_jobs", "gpus", "round_minutes")}
        out["misses"] = {r: {**asdict(b), "misses": b.misses, "lost_value": b.lost_value} for r, b in self.misses.items()}
        out["jct"] = {r: {**asdict(b), "avg_jct": b.avg_jct} for r, b in self.jct.items()}
        out["runtime_s"] = self.runtime_s
        return out


def compute_bounds(instance: Instance, regimes: tuple[Regime, ...] = REGIMES, step_minutes: float = STEP_MINUTES,
                   max_block_minutes: float = MAX_BLOCK_MINUTES) -> Bounds:
    """:func:`sensaopt.bounds.miss_bound` and :func:`sensaopt.bounds.jct_bound` of ``instance`` for each regime.

    Args:
        instance: the instance.
        regimes: ``"best"`` (any policy: best speed) and/or ``"unit"`` (the proportional share).
        step_minutes: the miss bound's block grid, minutes.
        max_block_minutes: the longest block, minutes.

    Returns:
        The bounds (forced misses, lost value, average-JCT bound in minutes, per regime).
    """
    t0 = time.perf_counter()
    misses = {r: miss_bound(instance, r, step_minutes, max_block_minutes) for r in regimes}
    jct = {r: jct_bound(instance, r) for r in regimes}
    return Bounds(instance=instance.name, jobs=len(instance.jobs), slo_jobs=sum(1 for j in instance.jobs if j.has_deadline),
                  gpus=instance.cluster.total_gpus, round_minutes=instance.round_minutes, misses=misses, jct=jct,
                  runtime_s=time.perf_counter() - t0)


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.2f}%" if d else "-"


def bounds_lines(b: Bounds, max_blocks: int = 5) -> list[str]:
    """Text of ``sensaopt bound``: the header, then per regime the miss bound and its
    parts (the ``max_blocks`` blocks forcing most), then the JCT bounds and their parts.

    Args:
        b: the bounds (:func:`compute_bounds`).
        max_blocks: blocks listed per regime.

    Returns:
        The lines.
    """
    out = [f"{b.instance}: {b.jobs} jobs ({b.slo_jobs} with deadlines) on {b.gpus} GPUs, rounds of {b.round_minutes:g} min"]
    for r, m in b.misses.items():
        out.append(f"deadline misses at {REGIME_TEXT[r]}: >= {m.misses} of {m.slo_jobs} ({_pct(m.misses, m.slo_jobs)}), "
                   f"lost value >= {m.lost_value:g}")
        out.append(f"  trivial: {m.trivial} job(s) miss even alone on the empty cluster (lost value {m.trivial_loss:g})")
        out.append(f"  interval: {m.interval} more, forced by pooled {m.resource} capacity over {len(m.blocks)} disjoint "
                   f"block(s) (lost value {m.interval_loss:g}, pooled {m.loss_resource})")
        for blk in sorted(m.blocks, key=lambda x: -x.forced)[:max_blocks]:
            out.append(f"    [{blk.start:g}, {blk.end:g}) min: {blk.jobs} deadline job(s) released inside need capacity inside, "
                       f">= {blk.forced} miss")
    for r, j in b.jct.items():
        out.append(f"average JCT at {REGIME_TEXT[r]}, every deadline relaxed: >= {j.avg_jct:.1f} min")
        out.append(f"  per job: {j.per_job:.1f} min (each job alone from its release round, whole rounds)")
        out.append(f"  pooled: {j.pooled:.1f} min (preemptive SRPT on one machine of the cluster's {j.resource} capacity)")
        out.append("  time-indexed LP: " + ("skipped (too many job-rounds for it)" if j.lp is None else
                                          f"{j.lp:.1f} min (each job's fewest rounds on the pooled GPUs, mean round + half its length)"))
    out.append(f"bounds computed in {b.runtime_s:.2f} s")
    return out
