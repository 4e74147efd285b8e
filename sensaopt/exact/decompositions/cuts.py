"""Completion-time cuts for the time-indexed model (issue 15, item 4): **run-cover
inequalities**, separated on the LP relaxation.

Job ``j`` complete by the end of slot ``t`` needs at least ``n_j`` run slots in
``[ρ_j, t]`` (``n_j`` = the slots it needs alone at its best usable speed), so at most
``s = t − e_j`` of the ``t − ρ_j + 1`` slots are idle (``e_j`` = earliest completion
slot = ``ρ_j + n_j − 1``). Hence, for **every** set ``U`` of the job's slots in
``[ρ_j, t]`` with ``|U| > s``:

    Σ_{u∈U} run[j, u]  >=  (|U| − s) · done[j, t]              (completion_cover)

``U`` = all of ``[ρ_j, t]`` is the model's ``min_run_slots``; smaller sets are what
the LP misses: it sets ``done[j, t]`` to a fraction while the job is idle in some
slots before ``t`` (completion is priced by cumulative progress only). The proof that
every integer solution of the model satisfies them is in ``models/formulation.md``
("Completion-time cuts"); they never cut off an optimal schedule.

There are exponentially many sets, so they are **separated**: the model's LP
relaxation is solved with HiGHS, and for each job and slot with ``done > 0`` the most
violated set (the ``u`` slots with the smallest LP ``run`` values, for the best ``u``)
is added; repeated until no cut is violated, ``MAX_ROUNDS`` rounds or the time cap.
The cuts found are then written into the model being built, on any backend.

Switched on by wrapping a backend's build function: ``with_cuts(build_cpsat)`` (any
:data:`~sensaopt.exact.outcome.BuildFn`). The builder cannot call this module itself:
separation builds the model on HiGHS (``builder`` <- ``highs`` <- ``cuts``), so the hook
belongs to the caller of the build functions.

Only offline models get cuts (not a rolling window, whose leftover term prices
unfinished work, nor the shortfall model, whose objective has no completion).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sensaopt.exact.model.builder import ModelSpec, Strength, Vars, build, spec_of
from sensaopt.exact.model.data import JobData, ModelData
from sensaopt.exact.outcome import BuildFn, ModelBuild
from sensaopt.solvers import Backend, SolverParams, TimeBudget
from sensaopt.solvers.highs import HighsBackend, _highs_model, limit_from_now

FAMILY = "completion_cover"
MAX_ROUNDS = 20  # separation rounds (each: one warm-started LP re-solve)
SHARE = 0.15  # at most this share of the build's time left goes to separation
MAX_SECONDS = 30.0  # and never more than this (seconds)
MIN_VIOLATION = 1e-3  # in units of done (the cut's right-hand side per unit of done)


@dataclass(frozen=True)
class CoverCut:
    """``Σ_{u∈slots} run[k, u] >= coef · done[k, t]`` (``coef = |slots| − (t − e_k)``)."""

    k: int
    t: int
    slots: tuple[int, ...]
    coef: int


@dataclass(frozen=True)
class Separation:
    """What separation did: the cuts, the LP bound (scaled model units, objective
    constant included) before the first and after the last round, rounds, seconds,
    and why it stopped (``none violated``, ``rounds``, ``time``, or the LP status)."""

    cuts: tuple[CoverCut, ...]
    lp_before: float | None
    lp_after: float | None
    rounds: int
    seconds: float
    stop: str


def slack(jd: JobData, t: int) -> int:
    """Idle slots a job complete by the end of ``t`` can have had in ``[ρ, t]``."""
    return t - jd.earliest_done


def most_violated(jd: JobData, t: int, done: float, runs: dict[int, float]) -> CoverCut | None:
    """The most violated cover cut of job ``jd`` at slot ``t`` for LP values ``done``
    (of ``done[jd, t]``) and ``runs`` (slot -> LP run value, the job's slots), or None
    when none is violated by more than ``MIN_VIOLATION``. For a size ``u`` the sum is
    least on the ``u`` smallest runs, so one sort decides every size."""
    s = slack(jd, t)
    pre = sorted((r, u) for u, r in runs.items() if jd.release <= u <= t)
    best, size, acc = MIN_VIOLATION, 0, 0.0
    for u in range(1, len(pre) + 1):
        acc += pre[u - 1][0]
        if u > s and (u - s) * done - acc > best:
            best, size = (u - s) * done - acc, u
    if not size:
        return None
    return CoverCut(jd.k, t, tuple(sorted(u for _, u in pre[:size])), size - s)


def is_valid_for(jd: JobData, cut: CoverCut, run_slots: set[int], complete_by: int) -> bool:
    """The cut at an integer point: the job runs in ``run_slots`` and is complete from
    slot ``complete_by`` on (used by the tests to check validity on schedules)."""
    done = 1 if complete_by <= cut.t else 0
    return sum(1 for u in cut.slots if u in run_slots) >= cut.coef * done


def separate(data: ModelData, strength: Strength, seconds: float) -> Separation:
    """Cover cuts of the model of ``data`` and ``strength`` by LP separation with
    HiGHS within ``seconds``."""
    import highspy  # as sensaopt.solvers.highs: only when a model is solved

    t0 = time.perf_counter()
    be = HighsBackend()
    v = build(data, be, strength)
    cols = be.columns()
    h, pos = _highs_model(be, cols, SolverParams(workers=1), TimeBudget(seconds, t0), False, relaxed=True)
    const = be.objective.const
    cuts: list[CoverCut] = []
    before = after = None
    rounds, stop = 0, "rounds"
    while rounds < MAX_ROUNDS:
        limit_from_now(h, seconds - (time.perf_counter() - t0))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            stop = h.modelStatusToString(h.getModelStatus())
            break
        after = h.getInfo().objective_function_value + const
        before = after if before is None else before
        new = _violated(data, v, _values(list(h.getSolution().col_value), pos))
        if not new:
            stop = "none violated"
            break
        rounds += 1
        cuts.extend(new)
        for cut in new:
            idx, val = _row(data, v, cut, pos)
            h.addRow(0.0, highspy.kHighsInf, len(idx), np.array(idx, dtype=np.int32), np.array(val))
        if time.perf_counter() - t0 >= seconds:
            stop = "time"
            break
    return Separation(tuple(cuts), before, after, rounds, time.perf_counter() - t0, stop)


def _values(col: list[float], pos: dict) -> Callable[[Any], float]:
    """LP value of a model term (a constant is itself; a column absent from the LP is 0)."""
    def val(x: Any) -> float:
        if isinstance(x, (int, float)):
            return float(x)
        i = pos.get(x)
        return col[i] if i is not None else 0.0
    return val


def _violated(data: ModelData, v: Vars, val: Callable[[Any], float]) -> list[CoverCut]:
    out = []
    for jd in data.jobs:
        sl = data.slots(jd)
        runs = {u: sum(val(v.x[jd.k, u, p]) for p in jd.pairs) for u in sl if u >= jd.release}
        for t in sl:
            d = v.done.var((jd.k, t))
            if d is None:
                continue
            dv = val(d)
            if dv > MIN_VIOLATION:
                cut = most_violated(jd, t, dv, runs)
                if cut is not None:
                    out.append(cut)
    return out


def _row(data: ModelData, v: Vars, cut: CoverCut, pos: dict) -> tuple[list[int], list[float]]:
    jd = data.jobs[cut.k]
    idx = [pos[v.x[cut.k, u, p]] for u in cut.slots for p in jd.pairs]
    return idx + [pos[v.done[cut.k, cut.t]]], [1.0] * (len(idx)) + [-float(cut.coef)]


def add_cover_cuts(be: Backend, v: Vars, cuts: tuple[CoverCut, ...]) -> None:
    """Write ``cuts`` into a model built on ``be`` (``v``: its variables)."""
    for cut in cuts:
        lhs = be.sum([v.run[cut.k, u] for u in cut.slots])
        be.add(lhs >= cut.coef * v.done[cut.k, cut.t], FAMILY)
        v.families[FAMILY] = v.families.get(FAMILY, 0) + 1


def add_completion_cuts(data: ModelData, be: Backend, v: Vars, strength: Strength, seconds: float) -> Separation | None:
    """Separate the cover cuts of ``data``'s model (built with ``strength``) within
    ``seconds`` and add them to ``be`` (``v``: its variables). None, and nothing added,
    for a rolling window or the shortfall model, or with less than 0.05 s."""
    if data.window or data.shortfall or seconds <= 0.05:
        return None
    sep = separate(data, strength, seconds)
    add_cover_cuts(be, v, sep.cuts)
    return sep


def with_cuts(build_fn: BuildFn) -> BuildFn:
    """``build_fn`` followed by the cover cuts on the model it built. Separation gets
    ``SHARE`` of the budget left after building, at most ``MAX_SECONDS`` seconds."""

    def build_and_cut(data: ModelData, spec: ModelSpec | Strength, budget: TimeBudget) -> ModelBuild:
        mb = build_fn(data, spec, budget)
        cap = MAX_SECONDS if budget is None else min(MAX_SECONDS, SHARE * budget.left())
        add_completion_cuts(mb.data, mb.backend, mb.vars, spec_of(spec).strength, cap)
        return mb

    return build_and_cut
