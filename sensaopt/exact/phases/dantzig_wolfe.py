"""The deadline-hard relaxation's Dantzig–Wolfe bound and price and branch on it
(``SolveSettings.relax_colgen``; ``models/formulation.md``, "The relaxation's
Dantzig–Wolfe bound"): column generation over whole per-job schedules of the relaxation,
before its root LP (:mod:`sensaopt.exact.decompositions.colgen`), then its restricted
master as a MIP, whose schedule, lifted to valid allocations
(:func:`~sensaopt.exact.phases.lift.lift_columns`), is a valid schedule."""

from __future__ import annotations

import math
import time

from sensaopt.exact.common import MIN_EXTEND_S, SolveSettings
from sensaopt.exact.decompositions.colgen import ColgenOutcome, Master
from sensaopt.exact.model.builder import round_bound, to_objective
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.phases.lift import Lifted, lift_columns
from sensaopt.solvers import TimeBudget

DW_MAX_S = 30.0  # seconds: at most this for the relaxation's column generation, over both its runs
DW_MIP_S = 5.0  # seconds: at most this (and a quarter of the call's time after the relaxations' share) for its restricted master MIP
DW_FIRST_SHARE = 0.25  # of the stage's time left: column generation's first run, before any root LP (class doc)
DW_FIRST_MAX_JOBS = 40  # jobs: above this the root LP goes first (class doc)


class DantzigWolfe:
    """The Dantzig–Wolfe bound of the relaxation ``outer`` (column generation over whole
    per-job schedules, :class:`~sensaopt.exact.decompositions.colgen.Master`; scaled model
    units, rounded up to the granularity), in at most two runs of :data:`DW_MAX_S` seconds
    in all: the root-LP stage runs it first (up to :data:`DW_FIRST_MAX_JOBS` jobs) for :data:`DW_FIRST_SHARE` of its time and
    solves the relaxation's compact root LP only when it has not converged, then resumes
    it (``allocation._root_lp_stage``).

    Why first: on the 40-job Philly windows of session 27 the compact root LP took about
    9-31 s of a stage (13.6, 10.6 and 13.2 s alone on w1, w14, w19) and column generation
    1-25 s, and wherever column generation converged its bound
    was at least the root LP's (18 of 18 windows, and every converged stage of the 20-job,
    MIX1 and scaling sets). The master keeps the compact model's capacity rows and every
    per-job constraint inside its columns, so its LP is at least the compact LP without the
    compact model's cross-job symmetry rows (``models/formulation.md``).

    Why a quarter: where column generation does not converge the root LP is the bound, and it
    needs its time after the first run. At half, on the 80-job windows of the scaling set
    (about 500 rounds; root LP 16-24 s alone) the root LP no longer ended within the 36-s
    stage, and two bounds fell to the unconverged Lagrangian (w0 326.2 → 301.1, w2 157.7 →
    134.1). Standalone, column generation converged within a quarter of the 40-job stage
    (9 s) on 11 of the 14 windows timed (not w3, w14, w19). At a quarter, w0 (80 jobs, 504 rounds; root LP 24 s alone)
    still lost its root LP. Above :data:`DW_FIRST_MAX_JOBS` jobs the root LP therefore goes
    first, as before session 28: on none of the 80-job windows with a root-LP stage (3 in
    sessions 27 and 28) did column generation converge within its 30 s.

    Pricing seeks only columns that price out (``Master.solve(lagrangian=False)``): 1.1-1.7×
    faster on those windows, the same columns and bound at convergence; an unconverged run's
    bound is weaker than the Lagrangian one, and there the root LP is solved. On the open
    20-job Philly windows the converged bound lifts the root LP by 0.5-2.0 min on 6 of 8
    (``models/measurements.md``, session 24): the root LP shares a job's slots between
    schedules that no single schedule of that job can take. Run on refine 1 only (the
    caller): at refine 2 it gave the same bounds on w1, w3, w5 and w12, 1.5-2× slower."""

    def __init__(self, outer: ModelData) -> None:
        self.outer = outer
        self.master = Master(outer, None)
        self.best = -math.inf  # the best bound over the runs (scaled)
        self.lp: float | None = None
        self.iterations = 0
        self.seconds = 0.0
        self.stop = "not run"

    @classmethod
    def begin(cls, outer: ModelData, settings: SolveSettings, budget: TimeBudget) -> DantzigWolfe | None:
        """A column generation of ``outer`` not yet run; None when ``settings.relax_colgen``
        is off, under a work budget (column generation runs on wall-clock seconds) or with
        no time left."""
        if not settings.relax_colgen or settings.work is not None or budget.short_of(MIN_EXTEND_S):
            return None
        return cls(outer)

    @property
    def converged(self) -> bool:
        return self.stop == "converged"

    def run(self, budget: TimeBudget, share: float = 1.0) -> None:
        """Column generation from where it stopped, for ``share`` of ``budget``'s time left
        and within :data:`DW_MAX_S` seconds over every run; nothing once converged."""
        seconds = min(share * budget.left(), DW_MAX_S - self.seconds)
        if self.stop in ("converged", "infeasible") or seconds <= 0:
            return
        t0 = time.monotonic()
        node = self.master.solve(t0 + seconds, lagrangian=False)
        self.seconds += time.monotonic() - t0
        self.iterations += node.iterations
        self.best, self.lp = max(self.best, node.bound), node.lp
        self.stop = "infeasible" if node.bound == math.inf else node.stop

    def outcome(self, budget: TimeBudget, lifts: list[Lifted] | None = None) -> ColgenOutcome | None:
        """What the runs proved (None: no bound). With ``lifts`` given, first its restricted
        master as a MIP for at most :data:`DW_MIP_S` seconds and a quarter of what the whole
        call has beyond ``budget`` (a primal heuristic for the inner solve, so its time is the
        inner solve's, not the relaxations' share, which column generation keeps whole:
        taking the MIP's seconds from the share left w12's column generation unconverged,
        its bound 1.0 lower; price and branch: one generated column per job): a schedule of
        the relaxation, which goes into ``lifts`` when it lifts to a valid one
        (:func:`~sensaopt.exact.phases.lift.lift_columns`). On the open 20-job windows, in 5 s,
        these schedules are better than any other run's on w1, w3, w12, w16 and w17 (w12:
        80.6 against 83.6)."""
        if self.stop == "not run" or self.best == -math.inf:
            return None
        outer = self.outer
        if self.stop == "infeasible":
            return ColgenOutcome(None, self.lp, self.iterations, len(self.master.columns), self.seconds, self.stop)
        beyond = max(budget.outer_deadline - time.perf_counter() - budget.left(), 0.0)  # the whole call's seconds after this share
        mip_s = min(DW_MIP_S, beyond / 4) if lifts is not None else 0.0
        chosen = self.master.restricted_mip(mip_s) if mip_s > 0 else None
        if chosen is not None and lifts is not None:
            lifted = lift_columns(outer, chosen, to_objective(outer, sum(c.cost for c in chosen)))
            if lifted is not None:
                lifts.append(lifted)
        return ColgenOutcome(round_bound(outer, self.best, self.master.step), self.lp, self.iterations, len(self.master.columns),
                             self.seconds, self.stop, None if chosen is None else tuple(chosen))
