"""The Chronus lease-selection MILP (``models/chronus.md``), written once over the
exact models' backend interface (:class:`sensaopt.exact.builder.Backend`) and solved
by HiGHS or CP-SAT through the exact backends' own run functions.

Jobs ``a`` with deadline options ``k`` (``m`` slots before that deadline, value
``v``), ``r`` rounded GPUs, ``l`` leases still needed; slots ``t`` (0 = the lease
starting now) with ``C_t`` GPUs free::

    max  Σ v·s[a,k] + sign · Σ r·x[a,k,0] / max_t C_t
    s.t. Σ_{t<m} x[a,k,t] = l·s[a,k]    (lease)
         Σ_k s[a,k] = 1                  (one option per job)
         Σ r·x[a,k,t] ≤ C_t              (capacity)

A backend that takes only integer coefficients (CP-SAT) gets this objective times
``1000 · max_t C_t`` (values rounded to 1/1000).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from sensaopt.exact.budget import TimeBudget
from sensaopt.exact.builder import Backend
from sensaopt.exact.outcome import SolveOutcome

LEASE_SOLVERS = ("highs", "highspy", "cpsat")  # "highspy": the former name of the direct HiGHS path, same model
VALUE_DIGITS = 1000  # integer backends: option values in 1/1000


@dataclass(frozen=True)
class LeaseJob:
    """One admitted job that still needs leases: ``r`` rounded GPUs, ``l`` ≥ 1 leases
    (slots), ``options`` (m, value) per deadline option with m ≥ l slots before it."""

    key: Hashable
    r: int
    l: int  # noqa: E741 (the paper's name)
    options: tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class LeaseModel:
    """The model built on ``backend``: ``s[a, k]`` option and ``x[a, k, t]`` slot
    variables (``a`` the job's position in ``jobs``)."""

    backend: Backend
    jobs: tuple[LeaseJob, ...]
    s: dict[tuple[int, int], Any]
    x: dict[tuple[int, int, int], Any]

    @property
    def variables(self) -> int:
        return len(self.s) + len(self.x)


def build_lease_model(be: Backend, jobs: list[LeaseJob], capacity: list[int], sign: float) -> LeaseModel:
    """Variables, the three constraint families and the objective on ``be``;
    ``capacity`` holds ``C_t`` for every slot up to the largest ``m``."""
    maxc = max(max(capacity), 1)
    if be.integer_only:
        def value_coef(v: float) -> float:
            return round(v * VALUE_DIGITS) * maxc

        def tie_coef(r: int) -> float:
            return int(sign) * r * VALUE_DIGITS
    else:
        def value_coef(v: float) -> float:
            return v

        def tie_coef(r: int) -> float:
            return sign * r / maxc
    s: dict[tuple[int, int], Any] = {}
    x: dict[tuple[int, int, int], Any] = {}
    objective: list[Any] = []
    slot_terms: list[list[Any]] = [[] for _ in capacity]
    for a, j in enumerate(jobs):
        options = []
        for k, (m, v) in enumerate(j.options):
            s[a, k] = sk = be.bool_var(f"s_{a}_{k}")
            options.append(sk)
            objective.append(value_coef(v) * sk)
            xs = []
            for t in range(m):
                x[a, k, t] = xt = be.bool_var(f"x_{a}_{k}_{t}")
                xs.append(xt)
                slot_terms[t].append(j.r * xt)
            objective.append(tie_coef(j.r) * xs[0])
            be.add(be.sum(xs) - j.l * sk == 0, "lease")
        be.add(be.sum(options) == 1, "one_option")
    for t, terms in enumerate(slot_terms):
        if terms:
            be.add(be.sum(terms) <= capacity[t], "capacity")
    be.minimize(-be.sum(objective))  # maximize
    return LeaseModel(backend=be, jobs=tuple(jobs), s=s, x=x)


def new_backend(solver: str) -> Backend:
    """An empty backend for ``solver`` (one of :data:`LEASE_SOLVERS`)."""
    if solver in ("highs", "highspy"):
        from sensaopt.exact.highs import HighsBackend

        return HighsBackend()
    if solver == "cpsat":
        from sensaopt.exact.cpsat import CpSatBackend

        return CpSatBackend()
    raise ValueError(f"unknown lease solver {solver!r} ({', '.join(LEASE_SOLVERS)}, greedy)")


def run_lease_model(model: LeaseModel, solver: str, budget: TimeBudget, threads: int, seed: int) -> SolveOutcome:
    """Solve with the exact backends' run function for ``solver``."""
    if solver == "cpsat":
        from sensaopt.exact.cpsat import CpSatOptions, run_cpsat

        return run_cpsat(model.backend, budget, CpSatOptions(workers=max(1, threads), seed=seed))  # type: ignore[arg-type]
    from sensaopt.exact.highs import HighsOptions, run_highs

    return run_highs(model.backend, budget, HighsOptions(threads=threads, seed=seed))  # type: ignore[arg-type]


def plans_of(model: LeaseModel, outcome: SolveOutcome) -> dict[Hashable, tuple[int, tuple[int, ...]]]:
    """key -> (chosen option, its slots) read from the incumbent (jobs without a chosen
    option are left out)."""
    value = outcome.value
    assert value is not None
    plans: dict[Hashable, tuple[int, tuple[int, ...]]] = {}
    for a, j in enumerate(model.jobs):
        for k, (m, _) in enumerate(j.options):
            if value(model.s[a, k]) > 0.5:
                plans[j.key] = (k, tuple(t for t in range(m) if value(model.x[a, k, t]) > 0.5))
    return plans
