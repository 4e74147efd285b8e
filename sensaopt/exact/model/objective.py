"""The exact model's objective (``models/formulation.md``): its integer coefficients
(:func:`objective_parts`), :func:`add_objective`, the expressions of its parts, the loss
floor of the lexicographic phases, and the conversions between scaled model units and
the metrics objective (:func:`to_objective`, :func:`to_scaled`). Re-exported by
:mod:`sensaopt.exact.model.builder`."""

from __future__ import annotations

import math
from typing import Any

from sensaopt.exact.model.data import ModelData
from sensaopt.exact.model.variables import Vars, add_constraint
from sensaopt.solvers import Backend


def objective_parts(data: ModelData) -> tuple[int, dict]:
    """Integer coefficients: (R·Q per unfinished slot, {(k, d): weight·n·Q·Δvalue})."""
    Q, n = data.obj_scale, max(data.n, 1)
    slot_coef = round(data.R * Q)
    wv = data.instance.objective.violation_weight
    met_coef = {}
    for jd in data.jobs:
        for d in range(len(jd.deadlines)):
            met_coef[jd.k, d] = round(wv * n * Q * jd.step(d))
    return slot_coef, met_coef


def objective_step(data: ModelData) -> int:
    """The scaled objective's granularity: the gcd of its coefficients (``R·Q`` per
    unfinished slot, each deadline's weight; leftover rounds cost ``R·Q`` too). Every
    schedule's scaled objective — constant included — is a multiple of it, so a bound
    ``b`` proves ``⌈b / step⌉·step`` (:func:`round_bound`)."""
    slot_coef, met_coef = objective_parts(data)
    return math.gcd(slot_coef, *(c for c in met_coef.values() if c)) or 1


def round_bound(data: ModelData, bound: float, step: int | None = None) -> float:
    """A proven bound (scaled) raised to the next multiple of :func:`objective_step`
    (``step``, if the caller has it; a float tolerance of 1e-6 relative is taken off first)."""
    step = objective_step(data) if step is None else step
    return float(math.ceil((bound - 1e-6 * max(1.0, abs(bound))) / step) * step)


def add_objective(data: ModelData, be: Backend, v: Vars) -> None:
    """n·Q × (violation_weight·Σ loss + avg JCT) minus a constant (see :func:`objective_offset`):
    Σ R·Q·(1 − done[t]) + Σ c_d·(1 − met_d) (+ leftover rounds in a rolling window).
    The deadline-loss part Σ c_d·(1 − met_d) is also kept apart (``v.loss_terms``,
    ``v.loss_const``) for the lexicographic solve."""
    slot_coef, met_coef = objective_parts(data)
    terms, const = [], 0
    have: dict = {}
    for (k, _t) in v.done:
        have[k] = have.get(k, 0) + 1
    for jd in data.jobs:  # slots without variables: before release unfinished, from the job's end on finished
        const += slot_coef * (data.end(jd) - have.get(jd.k, 0))
    for key, d in v.done.items():
        if v.done.fixed(key) is None:
            terms.append((-slot_coef, d))
            const += slot_coef
        elif d == 0:
            const += slot_coef
    loss_terms, loss_const = [], 0
    for (k, d), m in v.met.items():
        c = met_coef[k, d]
        if v.met.fixed((k, d)) is None:
            loss_terms.append((-c, m))
            loss_const += c
        elif m == 0:
            loss_const += c
    for lo in v.leftover.values():
        terms.append((slot_coef, lo))
    v.objective_terms, v.objective_const = terms + loss_terms, const + loss_const
    v.loss_terms, v.loss_const = loss_terms, loss_const
    be.minimize(objective_expr(be, v))


def floor_loss(data: ModelData, be: Backend, v: Vars, floor: float) -> bool:
    """Relaxation only: minimize the objective with its loss part raised to ``floor``
    (metrics units, violation weight × value; a loss every *valid* schedule pays at
    least), i.e. avg JCT + max(loss, ``floor``). A valid schedule costs at least that for
    its relaxed image (which completes no later: no more loss, no more JCT), so the
    bound stays a bound, and the relaxation can no longer trade a loss the problem
    cannot avoid for JCT. False (nothing changed) when no deadline decision is open."""
    units = math.floor(floor * max(data.n, 1) * data.obj_scale + 1e-6)
    if not v.loss_terms or units <= v.loss_const - sum(-c for c, _ in v.loss_terms):  # the fixed misses pay it
        return False
    paid = be.int_var(0, max(v.loss_const, units), "loss_at_floor")  # loss_const: every open deadline missed
    add_constraint(be, v, paid >= loss_expr(be, v), "loss_floor")
    add_constraint(be, v, paid >= units, "loss_floor")
    rest = v.objective_terms[:len(v.objective_terms) - len(v.loss_terms)]  # add_objective puts the loss terms last
    be.minimize(be.sum([c * x for c, x in rest]) + (v.objective_const - v.loss_const) + paid)
    return True


def objective_expr(be: Backend, v: Vars) -> Any:
    """The whole scaled objective as a backend expression."""
    return be.sum([c * x for c, x in v.objective_terms]) + v.objective_const


def loss_expr(be: Backend, v: Vars) -> Any:
    """The scaled deadline-loss part (weight·n·Q·lost value) as a backend expression."""
    return be.sum([c * x for c, x in v.loss_terms]) + v.loss_const


def shortfall_expr(be: Backend, v: Vars) -> Any:
    """Σ work units short at the priced deadlines (the shortfall model's objective)."""
    return be.sum(v.shortfall.values())


def model_variables(v: Vars) -> list[Any]:
    """Every decision variable of the model (constants left out), for complete hints."""
    out = list(v.x.values())
    out.extend(x for _, x in v.rb.decisions())
    out.extend(v.loss.values())
    out.extend(v.cum.values())
    out.extend(x for _, x in v.done.decisions())
    out.extend(x for _, x in v.met.decisions())
    for group in (v.leftover, v.ever, v.shortfall):
        out.extend(group.values())
    return out


def objective_offset(data: ModelData) -> float:
    """Objective = (scaled model objective) / (n·Q) + this offset (minutes):
    Σ_j ((start_round + 1)·R − arrival_j) / n (JCT = (C_j + 1)·R − a_j, C_j = unfinished slots)."""
    n = max(data.n, 1)
    tot = sum((data.start_round + 1) * data.R - jd.job.arrival for jd in data.jobs)
    return tot / n


def to_objective(data: ModelData, scaled: float) -> float:
    """Convert a scaled model objective (or bound) to metrics units."""
    return scaled / (max(data.n, 1) * data.obj_scale) + objective_offset(data)


def to_scaled(data: ModelData, objective: float) -> float:
    """The inverse of :func:`to_objective`: a metrics objective in scaled model units."""
    return (objective - objective_offset(data)) * max(data.n, 1) * data.obj_scale
