"""Phase 1 of the lexicographic solve: shortfall first (``models/formulation.md``,
"Shortfall first").

On the deadline-trimmed model (:func:`sensaopt.exact.model.data.shortfall_data`: only jobs
with an open deadline, slots from release to their deadline slots, no job has to
finish) minimize the work units short at the open deadlines,
``Σ short_jd`` with ``cum_j[last slot of d] + short_jd >= W_j``. Running nothing is
feasible, so the solver never hunts for feasibility, and progress is graded.

* a proven bound > 0 proves that every schedule misses an open deadline (the model
  is a relaxation: any schedule cut to these slots is feasible in it, with the same
  progress by each deadline);
* an incumbent of 0 whose schedule meets every open deadline by the validator's
  arithmetic (checked here) proves that a zero-miss schedule exists.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sensaopt.exact.model.builder import BuildTimeout, ModelSpec, Strength, Vars, objective_parts
from sensaopt.exact.model.data import ModelData, shortfall_data
from sensaopt.exact.model.values import extract_schedule, finish_minutes, hint_values
from sensaopt.exact.outcome import BuildFn, RunFn
from sensaopt.result import ShortfallReport, Status
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget

PROOF_UNITS = 0.5  # work units: the shortfall optimum is integral, a bound above this proves >= 1 unit short


@dataclass(frozen=True)
class ShortfallOutcome:
    """The report (:class:`~sensaopt.result.ShortfallReport`) and, when ``report.zero_miss``, the schedule of the deadline jobs
    meeting every open deadline (the other jobs absent); ``best``: the incumbent's
    schedule whatever its shortfall (None without one)."""

    report: ShortfallReport
    schedule: Schedule | None = None
    best: Schedule | None = None


def _meets_every_open_deadline(sd: ModelData, schedule: Schedule) -> bool:
    fin = finish_minutes(sd.instance, schedule)
    for k, d in sd.tiers:
        jd = sd.jobs[k]
        at = jd.job.deadlines()[d][0]
        f = fin.get(jd.id)
        if f is None or f > at + 1e-9:
            return False
    return True


def _start(sd: ModelData, v: Vars, schedule: Schedule) -> dict:
    """Start values from a valid schedule (the warm start), cut to the model's slots:
    feasible, its shortfall the work it has not done by each deadline."""
    vals = hint_values(sd, v, schedule)
    if vals:
        for (k, d), short in v.shortfall.items():
            done = round(vals.get(v.cum[k, sd.jobs[k].deadlines[d][0]], 0))
            vals[short] = max(sd.jobs[k].work_units - done, 0)
    return vals


def solve_shortfall(data: ModelData, strength: ModelSpec | Strength, build_fn: BuildFn, run_fn: RunFn,
                    budget: TimeBudget, warm: Schedule | None = None, max_vars: int | None = None) -> ShortfallOutcome | None:
    """Build and solve the shortfall model of ``data`` (the offline model's data)
    within ``budget``, from ``warm`` (a valid schedule) if given; None when no
    deadline decision is open or the model would have more than about ``max_vars``
    variables (deadlines far beyond the horizon). A ``warm`` that meets every open
    deadline by the validator's arithmetic settles the phase without a model: its
    shortfall is 0, the least there is (proven, so OPTIMAL), and it is the zero-miss
    schedule (on a 40-job Philly window the model's build alone took more than the
    phase's 12 s)."""
    sd = shortfall_data(data)
    if not sd.tiers:
        return None
    met_coef = objective_parts(data)[1]
    cost = min(met_coef[t] for t in sd.tiers)
    t0 = time.perf_counter()
    if warm is not None and _meets_every_open_deadline(sd, warm):
        note = "the warm start meets every open deadline: shortfall 0 without a solve"
        return ShortfallOutcome(ShortfallReport(Status.OPTIMAL, time.perf_counter() - t0, 0.0, 0.0, len(sd.tiers), True,
                                                False, note, cost), warm, warm)
    if max_vars is not None and sd.estimate_vars() > max_vars:
        return None
    try:
        mb = build_fn(sd, strength, budget)
    except BuildTimeout as e:
        return ShortfallOutcome(ShortfallReport(Status.TIME_LIMIT, time.perf_counter() - t0, None, None, len(sd.tiers),
                                                False, False, str(e), cost))
    start = _start(sd, mb.vars, warm) if warm is not None else {}
    if start:
        mb.backend.hint(start)
    out = run_fn(mb, budget)
    bound = None if out.bound is None else max(float(out.bound), 0.0)
    proves_miss = bound is not None and bound > PROOF_UNITS and out.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE)
    zero, sched = False, None
    if out.value is not None:
        sched = extract_schedule(sd, mb.vars, out.value)
        zero = out.objective is not None and out.objective < PROOF_UNITS and _meets_every_open_deadline(sd, sched)
    report = ShortfallReport(out.status, time.perf_counter() - t0, out.objective, bound, len(sd.tiers), zero, proves_miss,
                             out.message, cost)
    return ShortfallOutcome(report, sched if zero else None, sched)
