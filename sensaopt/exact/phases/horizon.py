"""Horizon with a proof (``models/formulation.md``, "Horizon with a proof").

The time-indexed model only sees schedules that end within its horizon ``H``. An
optimum of the model is the optimum of the instance when some optimal schedule ends
within ``H``. The JCT argument gives a round by which *every* optimal schedule has
finished every job: with ``V`` the objective of any valid schedule (the incumbent),
``Lb`` a lower bound of the deadline-loss part (violation_weight × lost value) of
every schedule, and ``m_i = (e_i + 1)·R − a_i`` the JCT of job ``i`` done at its
earliest solo finish, a schedule in which job ``j`` completes at the end of slot ``c``
has objective at least ``Lb + ((c + 1)·R − a_j + Σ_{i≠j} m_i) / n``; above ``V`` it is
not optimal. So ``c + 1 <= (n·(V − Lb) − Σ_i m_i + m_j + a_j) / R`` for every job
of every optimal schedule.
"""

from __future__ import annotations

import math
from dataclasses import replace

from sensaopt.exact.model.data import ModelData
from sensaopt.result import HorizonProof, Result, Status


def _solo_jcts(data: ModelData) -> list[float]:
    """``m_i``: each job's JCT done at its earliest solo finish (minutes)."""
    return [(max(jd.earliest_done, 0) + 1 + data.start_round) * data.R - jd.job.arrival for jd in data.jobs]


def outside_bound(data: ModelData, loss_floor: float, exempt: frozenset[int] = frozenset()) -> float | None:
    """The least objective of a schedule in which some job not in ``exempt`` completes
    at slot ``H`` or later (metrics units; None if every job is exempt)."""
    n, R = max(data.n, 1), data.R
    m = _solo_jcts(data)
    tot = sum(m)
    late = [(data.H + 1 + data.start_round) * R - jd.job.arrival - mj for jd, mj in zip(data.jobs, m) if jd.k not in exempt]
    return loss_floor + (tot + min(late)) / n if late else None


def horizon_needed(data: ModelData, objective: float, loss_floor: float, exempt: frozenset[int] = frozenset()) -> int:
    """The slots every optimal schedule needs at most for the jobs not in ``exempt``
    (job indices), from a valid schedule's ``objective`` and a lower bound
    ``loss_floor`` of the loss part of every schedule (both metrics units)."""
    n, R = max(data.n, 1), data.R
    m = _solo_jcts(data)
    slack = n * (objective - loss_floor) - sum(m)
    tol = 1e-6 * max(1.0, abs(n * objective))
    needed = 0
    for jd, mj in zip(data.jobs, m):
        if jd.k in exempt:
            continue
        needed = max(needed, math.floor((slack + mj + jd.job.arrival + tol) / R) - data.start_round)
    return needed


def proof_of(data: ModelData, objective: float | None, bound: float | None, loss_floor: float,
             exempt: frozenset[int] = frozenset()) -> HorizonProof:
    """The proof for a result with ``objective`` and model ``bound`` (metrics units)."""
    needed = None if objective is None else horizon_needed(data, objective, loss_floor, exempt)
    return HorizonProof(data.H, needed, outside_bound(data, loss_floor, exempt), bound)


def with_horizon_proof(res: Result, data: ModelData, loss_lower: int, exempt: frozenset[int] = frozenset()) -> Result:
    """``Result.horizon_proof`` and the status message: OPTIMAL is the optimum when
    every optimal schedule provably ends within the horizon; otherwise the proof
    (``optimal_within_horizon``) and the message say it is the optimum among schedules
    ending within H rounds."""
    loss_floor = loss_lower / (max(data.n, 1) * data.obj_scale)
    proof = proof_of(data, res.objective, res.bound, loss_floor, exempt)
    res.horizon_proof = proof
    if res.status != Status.OPTIMAL:
        return res
    if proof.contains_optimum:
        note = f"; globally optimal: every optimal schedule ends within the horizon of {data.H} rounds (needs {proof.needed})"
    else:
        res.horizon_proof = replace(proof, optimal_within_horizon=True)
        note = f"; optimal within a horizon of {data.H} rounds (not proven beyond: an optimal schedule may need {proof.needed})"
    return replace(res, message=res.message + note)
