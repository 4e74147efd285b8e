"""Heuristic against exact, reported lexicographically: deadline misses / lost value
first, then average JCT — the one definition :func:`sensaopt.frames.gap_frame`,
``sensaopt gap``, ``sensaopt round-gap`` and the CLI summary lines share.

The objective ``violation_weight × lost value + avg JCT`` (weight W, default 10^5)
mixes the two parts, so its relative gap says nothing readable (one extra miss reads
as a ~100 000 % gap). Each part is therefore compared on its own:

* ``extra_misses`` / ``extra_lost_value``: the heuristic's SLO violations and lost
  deadline value beyond the exact schedule's;
* ``jct_gap_pct`` = 100 × (heuristic avg JCT − exact avg JCT) / exact avg JCT, only
  among equal misses and equal lost value (:func:`same_level`); blank otherwise, since
  a JCT difference between schedules on different loss levels is not a gap;
* the scalar objective and its relative gap stay as columns (``objective``, ``gap``).

Bounds of each part (:class:`~sensaopt.result.PartBounds`, defined with the Result it
reads; from one exact Result with objective bound B):

* ``loss_bound`` (value units): no schedule loses less deadline value. It is phase 1
  of the lexicographic solve (the typed ``Result.loss_proof``, written to JSON as
  ``params["lexicographic"]["phase1"]``; W × lost value, divided by W here); when
  phase 1 was skipped because no deadline decision was open, every schedule of the
  model loses the same value, the exact schedule's. A weighted (``--weighted``) solve gives none.
* ``jct_bound`` (minutes): every schedule s satisfies W·L(s) + J(s) ≥ B, so
  J(s) ≥ B − W·L(s). With L(s) = the loss bound L_lb this is B − W·L_lb — but it bounds
  only schedules that lose exactly L_lb, which may not exist while the loss is not
  proven optimal (for a schedule losing more, B − W·L_lb is no bound at all). So it is
  reported only when the exact schedule's lost value attains L_lb (the loss is then
  proven optimal), computed as B − W × the exact lost value: a lower bound on the avg
  JCT of every schedule losing no more than the exact schedule, in particular of the
  lexicographic optimum. ``jct_gap_to_bound_pct`` (an upper bound on the heuristic's
  true JCT gap) is reported when the heuristic is on the exact schedule's level.

Units: minutes (JCT, bounds of it), deadline value (lost value), seconds (runtimes);
``gap``, ``gap_to_bound``, ``exact_gap`` are fractions (0.05 = 5 %), ``*_pct`` percent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from sensaopt.instance import Instance
from sensaopt.result import VALUE_TOL, Level, PartBounds, Result

GAP_TOL = 1e-9  # percent: a jct_gap_pct above this is a positive gap (RoundGapSummary.longer)


def same_level(a: Level, b: Level) -> bool:
    """Equal misses and equal lost value (within :data:`VALUE_TOL`): the only case in
    which comparing average JCTs is a gap."""
    return (a.misses is not None and a.misses == b.misses and a.lost_value is not None and b.lost_value is not None
            and math.isclose(a.lost_value, b.lost_value, rel_tol=1e-9, abs_tol=VALUE_TOL))


def _pct(value: float | None, ref: float | None) -> float | None:
    """100 × (value − ref) / ref (percent) for a positive ref, else None."""
    if value is None or ref is None or ref <= 0:
        return None
    return 100.0 * (value - ref) / ref


def jct_gap_to(avg_jct: float | None, bound: float | None) -> float | None:
    """100 × (avg JCT − a JCT bound) / the bound (percent; None without both or a positive bound)."""
    return _pct(avg_jct, bound)


def jct_gap_pct(h: Level, ref: Level) -> float | None:
    """100 × (h JCT − ref JCT) / ref JCT when both are on the same level, else None."""
    return _pct(h.avg_jct, ref.avg_jct) if same_level(h, ref) else None


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _rel(value: float | None, ref: float | None) -> float | None:
    """(value − ref) / ref for a finite positive ref, else None."""
    if value is None or ref is None or not math.isfinite(ref) or ref <= 0:
        return None
    return (value - ref) / ref


def _solver_gap(objective: float | None, bound: float | None) -> float | None:
    """(objective − bound) / objective for a positive objective, else None."""
    if objective is None or bound is None or not objective > 0:
        return None
    return (objective - bound) / objective


@dataclass(frozen=True)
class Comparison:
    """One heuristic result against one exact result on one instance (field order =
    column order of ``sensaopt gap`` CSV/JSON and :func:`sensaopt.frames.gap_frame`).
    Units: minutes, deadline value, seconds; ``gap*`` fractions, ``*_pct`` percent."""

    instance: str
    policy: str  # the heuristic's label (policy name)
    exact: str  # exact solver, e.g. "cpsat", "milp:highs"
    exact_status: str
    misses: int | None  # heuristic SLO violations
    exact_misses: int | None
    extra_misses: int | None  # misses − exact_misses
    lost_value: float | None  # heuristic lost deadline value
    exact_lost_value: float | None
    extra_lost_value: float | None
    loss_bound: float | None  # no schedule loses less value (PartBounds.lost_value)
    avg_jct: float | None  # minutes
    exact_avg_jct: float | None
    jct_diff: float | None  # avg_jct − exact_avg_jct, minutes (any level)
    jct_gap_pct: float | None  # percent, only on the same level (misses and lost value)
    jct_bound: float | None  # minutes (PartBounds.avg_jct)
    jct_gap_to_bound_pct: float | None  # percent, only on the exact schedule's level
    objective: float | None  # heuristic objective (W × lost value + avg JCT)
    exact_objective: float | None
    exact_bound: float | None  # proven lower bound on the objective
    abs_gap: float | None  # objective − exact_objective
    gap: float | None  # abs_gap / exact_objective (fraction)
    gap_to_bound: float | None  # (objective − exact_bound) / exact_bound: bounds the true gap
    exact_gap: float | None  # (exact_objective − exact_bound) / exact_objective: the solver's own gap
    runtime_s: float
    exact_runtime_s: float
    horizon: int | None  # rounds of the exact model

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


COMPARISON_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Comparison))


def compare(heuristic: Result, exact: Result, instance: Instance | None = None, label: str | None = None,
            instance_label: str | None = None) -> Comparison:
    """Compare ``heuristic`` with ``exact`` part by part (see the module docstring).
    ``instance`` gives the violation weight (default: ``exact.truth``), ``label`` the
    policy column (default: the heuristic's solver), ``instance_label`` the instance
    column (default: the instance's name).

    Args:
        heuristic: the heuristic's Result.
        exact: the exact Result on the same instance.
        instance: gives the violation weight (None: ``exact.truth``).
        label: the policy column (None: ``heuristic.solver``).
        instance_label: the instance column (None: its name).

    Returns:
        The Comparison (minutes, deadline value; ``gap*`` fractions, ``*_pct`` percent).

    Raises:
        ArgumentError: an argument of the wrong type (named)."""
    from sensaopt.errors import ArgumentError

    for name, value, kind in (("heuristic", heuristic, Result), ("exact", exact, Result), ("instance", instance, Instance)):
        if not isinstance(value, kind) and not (name == "instance" and value is None):
            raise ArgumentError("compare()", name, f"must be a {kind.__name__}{' or None' if name == 'instance' else ''}, "
                                                   f"got {type(value).__name__}")
    inst = instance if instance is not None else (exact.truth or heuristic.truth)
    h, e = Level.of(heuristic), Level.of(exact)
    b = PartBounds.of(exact, inst)
    jct_to_bound = _pct(h.avg_jct, b.avg_jct) if same_level(h, e) else None
    extra_misses = None if h.misses is None or e.misses is None else h.misses - e.misses
    return Comparison(
        instance=instance_label if instance_label is not None else (inst.name if inst is not None else ""),
        policy=label if label is not None else heuristic.solver,
        exact=exact.solver,
        exact_status=exact.status.value,
        misses=h.misses, exact_misses=e.misses, extra_misses=extra_misses,
        lost_value=h.lost_value, exact_lost_value=e.lost_value, extra_lost_value=_diff(h.lost_value, e.lost_value),
        loss_bound=b.lost_value,
        avg_jct=h.avg_jct, exact_avg_jct=e.avg_jct, jct_diff=_diff(h.avg_jct, e.avg_jct), jct_gap_pct=jct_gap_pct(h, e),
        jct_bound=b.avg_jct, jct_gap_to_bound_pct=jct_to_bound,
        objective=heuristic.objective, exact_objective=exact.objective, exact_bound=exact.bound,
        abs_gap=_diff(heuristic.objective, exact.objective), gap=_rel(heuristic.objective, exact.objective),
        gap_to_bound=_rel(heuristic.objective, exact.bound),
        exact_gap=_solver_gap(exact.objective, exact.bound),
        runtime_s=heuristic.runtime_s, exact_runtime_s=exact.runtime_s,
        horizon=exact.horizon,
    )


# ---- per-round gap (sensaopt round-gap) --------------------------------------------------------
ROUND_COMPARISON_COLUMNS = ("extra_misses", "extra_lost_value", "jct_gap_pct")


def compare_round(row: Mapping[str, Any]) -> dict[str, Any]:
    """The per-round comparison of one :func:`sensaopt.rolling.per_round_gaps`
    row (``window_*`` = the window optimum, ``policy_*`` = slot 0 fixed to the policy's
    decision; misses, lost value, window-estimated avg JCT in minutes): the
    :data:`ROUND_COMPARISON_COLUMNS`, None where a side is missing."""
    opt = Level(row.get("window_misses"), row.get("window_lost_value"), row.get("window_jct"))
    pol = Level(row.get("policy_misses"), row.get("policy_lost_value"), row.get("policy_jct"))
    return {
        "extra_misses": None if opt.misses is None or pol.misses is None else pol.misses - opt.misses,
        "extra_lost_value": _diff(pol.lost_value, opt.lost_value),
        "jct_gap_pct": jct_gap_pct(pol, opt),
    }


@dataclass(frozen=True)
class RoundGapSummary:
    """Aggregate of per-round rows: ``rounds`` scored, ``scored`` with both values,
    ``more_loss`` rounds whose decision loses more deadline value than the window
    optimum (``extra_misses``, ``extra_lost_value`` summed over them), ``equal`` rounds on
    the same level, ``longer`` of them with a positive JCT gap, and the JCT gap (percent
    of the window-estimated avg JCT) mean / max over the ``equal`` rounds."""

    rounds: int
    scored: int
    more_loss: int
    extra_misses: int
    extra_lost_value: float
    equal: int
    longer: int
    jct_gap_mean_pct: float | None
    jct_gap_max_pct: float | None

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> RoundGapSummary:
        scored = [r for r in rows if r.get("extra_lost_value") is not None]
        worse = [r for r in scored if r["extra_lost_value"] > VALUE_TOL]
        gaps = [float(r["jct_gap_pct"]) for r in scored if r.get("jct_gap_pct") is not None]
        return cls(
            rounds=len(rows), scored=len(scored), more_loss=len(worse),
            extra_misses=sum(int(r.get("extra_misses") or 0) for r in worse),
            extra_lost_value=sum(float(r["extra_lost_value"]) for r in worse),
            equal=len(gaps), longer=sum(g > GAP_TOL for g in gaps),
            jct_gap_mean_pct=sum(gaps) / len(gaps) if gaps else None, jct_gap_max_pct=max(gaps, default=None),
        )

    def lines(self) -> list[str]:
        """The CLI summary: lost deadline value first, then avg JCT (each line under 100
        characters for a day of rounds, e.g. 1440 rounds with a 45.67 % max gap)."""
        first = (f"{self.rounds} rounds ({self.scored} scored): {self.more_loss} lost more value than the window optimum "
                 f"({self.extra_misses:+d} misses, {self.extra_lost_value:+.4g} value)")
        second = f"{self.equal} at equal lost value, {self.longer} of them with a longer avg JCT"
        if self.jct_gap_mean_pct is not None and self.jct_gap_max_pct is not None:
            second += f" (JCT gap mean {self.jct_gap_mean_pct:.2f} %, max {self.jct_gap_max_pct:.2f} %)"
        return [first, second]


__all__ = ["COMPARISON_COLUMNS", "Comparison", "Level", "PartBounds", "ROUND_COMPARISON_COLUMNS", "RoundGapSummary", "compare",
           "compare_round", "jct_gap_pct", "same_level"]
