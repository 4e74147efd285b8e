"""Lexicographic solve: deadline loss first, then the whole objective.

The objective ``violation_weight × lost value + average JCT`` is, for the weights in
use (10^5 per unit of value against JCTs of hundreds of minutes), a lexicographic
objective. Solving it in one go makes the solver spend its effort on JCT while the
deadline decisions are still open. Here:

1. **phase 1** minimizes the deadline-loss part alone (scaled units of the model
   objective), from the warm start, for at most ``phase1_share`` of the time left:
   incumbent loss ``L1`` and proven bound ``B1``;
2. **phase 2** minimizes the whole objective from the phase-1 solution with
   ``B1 ≤ loss ≤ L1 + (J1 − J_lb)``, where ``J1`` is the JCT part of the phase-1
   solution and ``J_lb`` the JCT part's trivial lower bound (every job done as early
   as the model allows).

Both added constraints are valid: no schedule has a loss below the proven ``B1``,
and a schedule with a loss above the cap is worse than the phase-1 solution (its
objective exceeds ``L1 + J1``). So phase 2's optimum is the global optimum and its
bound is a global bound; the status is phase 2's. ``Result.lexicographic`` records
both phases (:meth:`LexicographicOutcome.report`; JSON: ``params["lexicographic"]``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

from sensaopt.errors import SensaoptError
from sensaopt.exact.model.builder import Vars, add_constraint, loss_expr, model_variables, objective_expr
from sensaopt.exact.outcome import ModelBuild, RunFn, SolveOutcome
from sensaopt.result import SKIPPED_NO_OPEN, LexicographicReport, LossProof, PhaseReport, ShortfallReport, Status
from sensaopt.solvers import TimeBudget

DEFAULT_PHASE1_SHARE = 0.5


def check_phase1_share(share: float) -> None:
    if not 0 < share <= 1:
        raise SensaoptError(f"phase1_share must be in (0, 1], got {share}")


def _min_value(terms: list[tuple[int, Any]], const: int) -> int:
    """Smallest value of ``const + Σ c·x`` over 0/1 variables (every objective variable
    is a done/met indicator offline; leftover rounds, in windows only, are ≥ 0)."""
    return const + sum(c for c, _ in terms if c < 0)


def jct_lower_bound(v: Vars) -> int:
    """Smallest value of the scaled JCT part (objective minus loss part): every
    ``done`` variable at 1, every leftover at 0. The two parts share no variable, so
    it is the objective's minimum minus the loss part's minimum."""
    return _min_value(v.objective_terms, v.objective_const) - _min_value(v.loss_terms, v.loss_const)


@dataclass(frozen=True)
class ObjectiveFloors:
    """What no schedule beats, known without solving (scaled model units): the loss
    part with every open deadline met, and :func:`jct_lower_bound`."""

    loss: int
    jct: int

    @classmethod
    def of(cls, v: Vars) -> ObjectiveFloors:
        return cls(loss=_min_value(v.loss_terms, v.loss_const), jct=jct_lower_bound(v))


def one_miss_floor(v: Vars, miss_cost: int) -> int:
    """The loss part's floor once some deadline that can be met is proven missed
    (scaled): the hopeless losses plus ``miss_cost``, the cheapest such deadline."""
    return _min_value(v.loss_terms, v.loss_const) + miss_cost


@dataclass(frozen=True)
class LexicographicOutcome:
    """Both phases. ``final``: the last run, its bound raised to the global floors;
    ``start_values``: the phase-1 solution (a feasible incumbent of the phase-2 model)
    or None; ``loss_cap``/``loss_floor``: the scaled loss limits added for phase 2;
    ``shortfall``: the shortfall run before phase 1 (:mod:`sensaopt.exact.phases.shortfall`);
    ``loss_lower``: a proven lower bound of every schedule's loss part (scaled)."""

    final: SolveOutcome
    share: float
    phase1: PhaseReport | None = None
    skipped: str = ""
    start_values: dict | None = None
    loss_cap: int | None = None
    loss_floor: int | None = None
    shortfall: ShortfallReport | None = None
    loss_lower: int = 0

    def loss_proof(self) -> LossProof:
        """What :meth:`report` proves about the loss: phase 1's bound, or fixed when skipped."""
        return LossProof(bound=self.phase1.loss_bound) if self.phase1 is not None else LossProof(fixed=True)

    def report(self) -> LexicographicReport:
        return LexicographicReport(phase1_share=self.share, phase1=self.phase1, skipped=self.skipped, shortfall=self.shortfall,
                                   loss_cap=self.loss_cap, loss_floor=self.loss_floor)


def _raised(out: SolveOutcome, floor: int, message: str | None = None) -> SolveOutcome:
    """``out`` with its bound raised to ``floor`` (a bound known without solving)."""
    bound = floor if out.bound is None else max(out.bound, floor)
    return replace(out, bound=bound, message=out.message if message is None else message)


def _value_of(terms: list[tuple[int, Any]], const: int, values: dict) -> int:
    """Objective terms are integer variables (done, met, leftover): MILP round-off removed."""
    return const + sum(c * round(values.get(x, 0)) for c, x in terms)


def solve_lexicographic(mb: ModelBuild, run_fn: RunFn, budget: TimeBudget,
                        phase1_share: float = DEFAULT_PHASE1_SHARE,
                        shortfall: ShortfallReport | None = None) -> LexicographicOutcome:
    """Run both phases within ``budget``. ``shortfall``: the shortfall run before (its
    proof of a miss raises the loss floor of both phases)."""
    check_phase1_share(phase1_share)
    be, v, data = mb.backend, mb.vars, mb.data
    t0 = time.perf_counter()
    floors = ObjectiveFloors.of(v)
    if not v.loss_terms:  # no deadline decision left open: one phase
        out = run_fn(mb, budget)
        return LexicographicOutcome(final=_raised(out, floors.loss + floors.jct), share=phase1_share,
                                    skipped=SKIPPED_NO_OPEN, shortfall=shortfall, loss_lower=floors.loss)
    if shortfall is not None and shortfall.proves_miss and one_miss_floor(v, shortfall.miss_cost) > floors.loss:
        floors = replace(floors, loss=one_miss_floor(v, shortfall.miss_cost))  # every schedule misses a deadline
        add_constraint(be, v, loss_expr(be, v) >= floors.loss, "lexicographic")
    be.minimize(loss_expr(be, v))
    first = run_fn(mb, budget.split(phase1_share))
    t1 = time.perf_counter() - t0
    scale = max(data.n, 1) * data.obj_scale  # scaled loss / scale = violation_weight × lost value
    report = PhaseReport(status=first.status, seconds=t1,
                         loss_incumbent=None if first.objective is None else first.objective / scale,
                         loss_bound=None if first.bound is None else max(first.bound, 0) / scale)
    be.minimize(objective_expr(be, v))
    if first.status == Status.INFEASIBLE:
        final = SolveOutcome(status=first.status, value=None, objective=None, bound=None,
                             message=f"lexicographic: phase 1 (deadline loss) {first.message}", wall_s=first.wall_s)
        return LexicographicOutcome(final=final, share=phase1_share, phase1=report, shortfall=shortfall, loss_lower=floors.loss)
    if first.value is None:  # no phase-1 solution: the whole objective from the original hint
        out = run_fn(mb, budget)
        floor = floors.loss if first.bound is None else max(floors.loss, math.ceil(first.bound - 1e-6))
        msg = f"lexicographic: phase 1 (deadline loss) {first.status.value} without a solution ({first.message}); phase 2 {out.message}"
        return LexicographicOutcome(final=_raised(out, floor + floors.jct, msg), share=phase1_share, phase1=report,
                                    shortfall=shortfall, loss_lower=floor)
    values = {x: first.value(x) for x in model_variables(v)}
    loss1 = _value_of(v.loss_terms, v.loss_const, values)
    jct1 = _value_of(v.objective_terms, v.objective_const, values) - loss1
    cap = loss1 + (jct1 - floors.jct)
    add_constraint(be, v, loss_expr(be, v) <= cap, "lexicographic")
    lo = floors.loss
    if (first.bound is not None and first.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE)
            and math.ceil(first.bound - 1e-6) > floors.loss):
        lo = math.ceil(first.bound - 1e-6)
        add_constraint(be, v, loss_expr(be, v) >= lo, "lexicographic")
    be.hint(values)
    out = run_fn(mb, budget)
    msg = f"lexicographic: phase 1 (deadline loss) {first.status.value} in {t1:.2f} s; phase 2 {out.message}"
    # every schedule: loss >= lo, JCT part >= its floor
    return LexicographicOutcome(final=_raised(out, lo + floors.jct, msg), share=phase1_share, phase1=report,
                                start_values=values, loss_cap=cap, loss_floor=lo, shortfall=shortfall, loss_lower=lo)
