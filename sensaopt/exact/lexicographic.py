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
bound is a global bound; the status is phase 2's. ``Result.params["lexicographic"]``
records both phases.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from sensaopt.errors import SensaoptError
from sensaopt.exact.builder import Vars, add_constraint, loss_expr, model_variables, objective_expr
from sensaopt.exact.data import ModelData
from sensaopt.result import Status

DEFAULT_PHASE1_SHARE = 0.5


def check_phase1_share(share: float) -> None:
    if not 0 < share <= 1:
        raise SensaoptError(f"phase1_share must be in (0, 1], got {share}")


def _min_value(terms, const) -> int:
    """Smallest value of ``const + Σ c·x`` over 0/1 variables (every objective variable
    is a done/met indicator offline; leftover rounds, in windows only, are ≥ 0)."""
    return const + sum(c for c, _ in terms if c < 0)


def jct_lower_bound(v: Vars) -> int:
    """Smallest value of the scaled JCT part (objective minus loss part): every
    ``done`` variable at 1, every leftover at 0. The two parts share no variable, so
    it is the objective's minimum minus the loss part's minimum."""
    return _min_value(v.objective_terms, v.objective_const) - _min_value(v.loss_terms, v.loss_const)


def _raise(bound, floor):
    """The larger of a solver bound (None: none) and a bound known without solving."""
    return floor if bound is None else max(bound, floor)


def _value_of(terms, const, values: dict) -> int:
    """Objective terms are integer variables (done, met, leftover): MILP round-off removed."""
    return const + sum(c * round(values.get(x, 0)) for c, x in terms)


def solve_lexicographic(data: ModelData, be, v: Vars, run_fn: Callable, seconds: float, hinted: bool,
                        phase1_share: float = DEFAULT_PHASE1_SHARE):
    """Run both phases within ``seconds``. ``run_fn`` as in :func:`sensaopt.exact.common.solve_exact`.

    Returns ``(status, value, scaled bound, message, scaled objective, fallback values,
    info dict)``; ``fallback values`` is the phase-1 solution (a feasible incumbent of
    the phase-2 model) or None."""
    check_phase1_share(phase1_share)
    t0 = time.perf_counter()
    info: dict = {"phase1_share": phase1_share}
    trivial = _min_value(v.loss_terms, v.loss_const)  # every open deadline met
    jlb = jct_lower_bound(v)
    if not v.loss_terms:  # no deadline decision left open: one phase
        info["phase1"] = "skipped (no open deadline decision)"
        status, value, bound, msg, sobj = run_fn(be, v, seconds, hinted)
        return status, value, _raise(bound, trivial + jlb), msg, sobj, None, info
    be.minimize(loss_expr(be, v))
    s1, value1, b1, msg1, obj1 = run_fn(be, v, max(seconds * phase1_share, 0.05), hinted)
    t1 = time.perf_counter() - t0
    scale = max(data.n, 1) * data.obj_scale  # scaled loss / scale = violation_weight × lost value
    info["phase1"] = {"status": s1.value, "seconds": round(t1, 3),
                      "loss_incumbent": None if obj1 is None else obj1 / scale,
                      "loss_bound": None if b1 is None else max(b1, 0) / scale}
    be.minimize(objective_expr(be, v))
    left = max(seconds - t1, 0.05)
    if s1 == Status.INFEASIBLE:
        return s1, None, None, f"lexicographic: phase 1 (deadline loss) {msg1}", None, None, info
    if value1 is None:  # no phase-1 solution: the whole objective from the original hint
        status, value, bound, msg, sobj = run_fn(be, v, left, hinted)
        floor = trivial if b1 is None else max(trivial, math.ceil(b1 - 1e-6))
        return (status, value, _raise(bound, floor + jlb),
                f"lexicographic: phase 1 (deadline loss) {s1.value} without a solution ({msg1}); phase 2 {msg}", sobj, None, info)
    values = {x: value1(x) for x in model_variables(v)}
    loss1 = _value_of(v.loss_terms, v.loss_const, values)
    jct1 = _value_of(v.objective_terms, v.objective_const, values) - loss1
    cap = loss1 + (jct1 - jlb)
    add_constraint(be, v, loss_expr(be, v) <= cap, "lexicographic")
    lo = trivial
    if b1 is not None and s1 in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE) and math.ceil(b1 - 1e-6) > trivial:
        lo = math.ceil(b1 - 1e-6)
        add_constraint(be, v, loss_expr(be, v) >= lo, "lexicographic")
    info["loss_cap"], info["loss_floor"] = cap, lo
    be.hint(values)
    status, value, bound, msg, sobj = run_fn(be, v, left, True)
    bound = _raise(bound, lo + jlb)  # every schedule: loss >= lo, JCT part >= its bound
    msg = f"lexicographic: phase 1 (deadline loss) {s1.value} in {t1:.2f} s; phase 2 {msg}"
    return status, value, bound, msg, sobj, values, info
