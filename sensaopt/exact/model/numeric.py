"""Numeric range of the scaled integer model, checked before any solver sees it.

The exact models multiply the objective by ``n_jobs · obj_scale`` and count work in
``1 / work_scale`` minutes (:mod:`sensaopt.exact.model.data`). With large job values or
violation weights these integers leave the range a backend computes exactly: CP-SAT
reports objective and bound as doubles (exact only below 2^53) and needs every linear
expression in int64; HiGHS and CBC compute in doubles with tolerances of about 1e-6,
so two coefficients of one row (or of the objective) more than about 1e9 apart make
the small one meaningless. A model outside its backend's range is refused with one
line (:class:`~sensaopt.errors.SensaoptError`) instead of returning a wrong status.

Two checks: :func:`precheck_numbers` from the instance alone (lower bounds of the
scaled values: it refuses only what the model would break, before the heuristic warm
start and the data build), and :func:`check_numbers` on the model data (exact values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sensaopt.errors import SensaoptError
from sensaopt.exact.model.data import ModelData
from sensaopt.instance import Instance
from sensaopt.progress import WORK_EPS
from sensaopt.solvers.base import NumericLimits

_OBJECTIVE_HINT = "lower violation_weight or the job values, or use --solver heuristic"
_WORK_HINT = "lower the job's work or work_scale, or use --solver heuristic"


@dataclass(frozen=True)
class _Quantity:
    """One scaled number of the model and what it is made of (for the message)."""

    value: float
    what: str
    hint: str
    ratio: bool = True  # counts for the coefficient-ratio limit


def _refuse(name: str, q: _Quantity, limit: str, backend: str) -> SensaoptError:
    return SensaoptError(f"exact model of {name}: {q.what} is {q.value:.3g} in scaled integer units, more than {backend} "
                         f"computes exactly ({limit}); {q.hint}")


def _check(name: str, objective: list[_Quantity], matrix: list[_Quantity], objective_max: _Quantity, lim: NumericLimits) -> None:
    for q in [*objective, *matrix, objective_max]:
        if not (q.value <= lim.max_value):  # also NaN/inf
            raise _refuse(name, q, f"at most {lim.max_value:.3g}", lim.backend)
    if lim.max_ratio is None:
        return
    coefs = [q for q in objective if q.ratio and q.value > 0]
    if coefs:
        small = min(q.value for q in coefs)
        big = max(coefs, key=lambda q: q.value)
        if big.value > lim.max_ratio * small:
            raise _refuse(name, big, f"at most {lim.max_ratio:.3g} times the smallest objective coefficient, {small:.3g}",
                          lim.backend)
    for q in matrix:
        if q.ratio and q.value > lim.max_ratio:
            raise _refuse(name, q, f"a constraint coefficient of at most {lim.max_ratio:.3g} next to 1", lim.backend)


def _deadline_steps(name: str, deadlines: list[tuple[float, float]], wv: float, n: int, scale: float) -> list[_Quantity]:
    """The objective coefficients of one job's deadline steps (wv·n·scale·Δvalue)."""
    vals = [v for _, v in deadlines] + [0.0]
    return [_Quantity(wv * n * scale * (a - b), f"the objective coefficient of a deadline of job {name} "
                      f"(violation_weight {wv:g} x {n} jobs x value {a - b:g})", _OBJECTIVE_HINT)
            for a, b in zip(vals, vals[1:])]


def precheck_numbers(instance: Instance, work_scale: int, limits: NumericLimits) -> None:
    """Refuse from the instance alone what the scaled model cannot hold (lower bounds of
    the scaled values: the objective scale and the horizon are at least 1)."""
    n = max(len(instance.jobs), 1)
    R = instance.round_minutes
    wv = instance.objective.violation_weight
    objective = [_Quantity(R, "the objective coefficient of a round", _OBJECTIVE_HINT)]
    for job in instance.jobs:
        objective += _deadline_steps(job.id, list(job.deadlines()), wv, n, 1.0)
    total = _Quantity(sum(q.value for q in objective), "the objective with every deadline missed",
                      _OBJECTIVE_HINT, ratio=False)
    matrix = [_Quantity((job.work - WORK_EPS) * work_scale, f"the work of job {job.id} ({job.work:g} minutes x work_scale "
                        f"{work_scale})", _WORK_HINT) for job in instance.jobs]
    _check(instance.name, objective, matrix, total, limits)


def check_numbers(data: ModelData, limits: NumericLimits) -> None:
    """Refuse a model whose scaled integers leave ``limits`` (exact values of the data)."""
    from sensaopt.exact.model.builder import objective_parts

    slot_coef, met_coef = objective_parts(data)
    n = max(data.n, 1)
    objective = [_Quantity(slot_coef, "the objective coefficient of a round", _OBJECTIVE_HINT)]
    wv = data.instance.objective.violation_weight
    for jd in data.jobs:
        objective += _deadline_steps(jd.id, list(jd.deadlines), wv, n, data.obj_scale)
    top = float(slot_coef) * sum(max(data.H - jd.release, 0) + math.ceil(jd.work_units / jd.best_full) for jd in data.jobs)
    total = _Quantity(top + sum(met_coef.values()), "the objective with every deadline missed", _OBJECTIVE_HINT, ratio=False)
    matrix: list[_Quantity] = []
    for jd in data.jobs:
        work = f"the work of job {jd.id} ({jd.job.work:g} minutes x work_scale {data.work_scale})"
        matrix.append(_Quantity(jd.work_units, work, _WORK_HINT))
        matrix.append(_Quantity(jd.work_units + jd.best_full * data.H, f"the progress bound of job {jd.id}", _WORK_HINT,
                                ratio=False))
    caps = sum(data.mem_units(nd.mem_gb, up=False) for nd in data.instance.cluster.nodes)
    matrix.append(_Quantity(caps, "the cluster's memory in 1/mem_scale GB", "lower the nodes' mem_gb", ratio=False))
    _check(data.instance.name, objective, matrix, total, limits)
