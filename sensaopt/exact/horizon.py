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
from dataclasses import dataclass

from sensaopt.exact.data import ModelData


@dataclass(frozen=True)
class HorizonProof:
    """``needed``: slots (rounds from the model's first) within which every optimal
    schedule finishes the jobs not ``exempt`` (None: no incumbent to argue from);
    ``horizon``: the model's; ``contains_optimum``: ``horizon >= needed``."""

    horizon: int
    needed: int | None

    @property
    def contains_optimum(self) -> bool:
        return self.needed is not None and self.horizon >= self.needed

    def to_dict(self) -> dict:
        return {"horizon": self.horizon, "needed": self.needed, "contains_optimum": self.contains_optimum}


def horizon_needed(data: ModelData, objective: float, loss_floor: float, exempt: frozenset[int] = frozenset()) -> int:
    """The slots every optimal schedule needs at most for the jobs not in ``exempt``
    (job indices), from a valid schedule's ``objective`` and a lower bound
    ``loss_floor`` of the loss part of every schedule (both metrics units)."""
    n, R = max(data.n, 1), data.R
    m = [(max(jd.earliest_done, 0) + 1 + data.start_round) * R - jd.job.arrival for jd in data.jobs]
    slack = n * (objective - loss_floor) - sum(m)
    tol = 1e-6 * max(1.0, abs(n * objective))
    needed = 0
    for jd, mj in zip(data.jobs, m):
        if jd.k in exempt:
            continue
        needed = max(needed, math.floor((slack + mj + jd.job.arrival + tol) / R) - data.start_round)
    return needed


def proof_of(data: ModelData, objective: float | None, loss_floor: float, exempt: frozenset[int] = frozenset()) -> HorizonProof:
    return HorizonProof(data.H, None if objective is None else horizon_needed(data, objective, loss_floor, exempt))
