"""The allocation relaxation's schedule made valid ("lifted"): every outer option of a
job's CPU-exact grid (:func:`sensaopt.allocations.exact_cpu_options`) is a whole-core
CPU value with the highest speed over a memory interval; raising its memory to the
least amount at which the profile reaches that speed gives a real allocation of the same
CPU and speed. When every node still holds the raised memory, the relaxation's schedule
is valid, and its objective is at most the relaxation's own (``models/formulation.md``,
"Lifting the relaxation's schedule"). The validator decides: a lifted schedule it does
not accept is dropped. :func:`lift` lifts a solution of the compact model,
:func:`lift_columns` one of column generation's restricted master (one schedule per job);
both share the option lifting and the validation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sensaopt.allocations import refined_axis
from sensaopt.allocations.rule import EPS, lattice
from sensaopt.errors import SensaoptError
from sensaopt.exact.decompositions.colgen import schedule_of_columns
from sensaopt.exact.decompositions.pricing import Column
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.model.values import extract_schedule
from sensaopt.exact.model.variables import Vars
from sensaopt.metrics import Metrics, compute_metrics
from sensaopt.profiles import Option, SensitivityProfile
from sensaopt.schedule import Schedule
from sensaopt.solvers import ValueFn
from sensaopt.validator import Evaluation, check_schedule

SPEED_TOL = 1e-9  # an outer option's speed is the box's rounded up to 1e-12


@dataclass(frozen=True)
class Lifted:
    """A valid schedule lifted from a relaxation's: its metrics objective, the schedule,
    its metrics and the validator's evaluation."""

    objective: float
    schedule: Schedule
    metrics: Metrics
    evaluation: Evaluation
    model_objective: float | None = None  # the relaxation's own value of its schedule (metrics units)


def lifted_option(profile: SensitivityProfile, gpus: int, option: Option, refine: int) -> Option | None:
    """The real allocation an outer option stands for: its whole-core CPU (k / ``gpus``)
    and the least memory at or above its own (a refined memory point of ``refine`` steps
    or a level: where the bilinear surface's maximum over a memory interval lies) at which
    the profile reaches the option's speed; None when no such point exists (a box that
    is not exact in CPU, e.g. a gang job's)."""
    k = round(option.cpu * gpus)
    if k < 1 or abs(option.cpu * gpus - k) > 1e-6:  # the CPU-exact grid holds k / gpus exactly
        return None
    cpu = k / gpus
    points = {lattice(m, up=False) for m in refined_axis(profile.mem_levels, refine)} | set(profile.mem_levels)
    for m in sorted(p for p in points | {option.mem} if p >= option.mem - EPS):
        s = profile.speed(cpu, m)
        if s >= option.speed - SPEED_TOL:
            return Option(cpu, m, s)
    return None


def lift(data: ModelData, v: Vars, value: ValueFn, model_objective: float | None = None) -> Lifted | None:
    """The relaxation ``data``'s solution (``v`` at ``value``; its value ``model_objective``,
    metrics units, kept in the result) as a valid schedule (module doc), or None when an
    option it uses does not lift or the validator refuses the lifted schedule (a node's
    memory, mostly)."""
    chosen = [(k, pair) for (k, _t, pair), x in v.x.items() if value(x) > 0.5]
    lifted = _lifted_data(data, chosen)
    if lifted is None:
        return None
    try:
        schedule = extract_schedule(lifted, v, value)
    except SensaoptError:  # a placement the schedule format refuses (fractional cores)
        return None
    return _validated(data, schedule, model_objective)


def lift_columns(data: ModelData, columns: Sequence[Column], model_objective: float | None = None) -> Lifted | None:
    """The relaxation ``data``'s schedule made of ``columns`` (one whole schedule per job,
    column generation's restricted master) as a valid schedule, as :func:`lift` does for
    a solution of the compact model; None when it does not lift."""
    chosen = [(c.k, data.jobs[c.k].pairs[b]) for c in columns for _t, b in c.runs]
    lifted = _lifted_data(data, chosen)
    if lifted is None:
        return None
    try:
        schedule = schedule_of_columns(lifted, list(columns))
    except SensaoptError:
        return None
    return _validated(data, schedule, model_objective)


def _lifted_data(data: ModelData, chosen: list[tuple[int, tuple[int, int]]]) -> ModelData | None:
    """``data`` with every option that the (job, (pattern, option)) pairs ``chosen`` use
    lifted to its real allocation (:func:`lifted_option`); None when one does not lift or
    a pair is a gang job's (its boxes are not exact in CPU)."""
    if any(len(data.jobs[k].patterns[pair[0]].parts) > 1 for k, pair in chosen):
        return None
    used = {(k, pair[1]) for k, pair in chosen}
    jobs = []
    for jd in data.jobs:
        opts = list(jd.options)
        for k, o in used:
            if k == jd.k:
                up = lifted_option(jd.job.profile, jd.gpus, jd.options[o], data.refine)
                if up is None:
                    return None
                opts[o] = up
        jobs.append(replace(jd, options=tuple(opts)))
    return replace(data, jobs=jobs)


def _validated(data: ModelData, schedule: Schedule, model_objective: float | None) -> Lifted | None:
    """``schedule`` as a :class:`Lifted` when the validator accepts it (and it has an
    objective), else None."""
    ev = check_schedule(data.instance, schedule)
    if ev.errors:
        return None
    metrics = compute_metrics(data.instance, ev)
    if metrics.objective is None:
        return None
    return Lifted(metrics.objective, schedule, metrics, ev, model_objective)


__all__ = ["Lifted", "lift", "lift_columns", "lifted_option"]
