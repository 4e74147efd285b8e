"""pandas views of instances, schedules and results (for notebooks and reports).

Every outcome comes from the validator's evaluation (the one a Result carries, else
:func:`sensaopt.validator.check_schedule`) through the definitions of
:mod:`sensaopt.metrics`, whose dataclass fields are also the columns, so a frame can
never disagree with the metrics.
Units: minutes (times), cores, GB, deadline value; ``*_pct`` columns percent.

* :func:`jobs_frame`: the instance's jobs (model, sensitivity, GPUs, work, deadline);
* :func:`outcomes_frame`: one row per job of a schedule or Result: start, finish,
  JCT, queueing time, met deadline, lost value, preemptions (restarts), migrations,
  resizes, minutes lost per kind of change, pending time;
* :func:`metrics_frame`: one row per Result (the :mod:`sensaopt.metrics` figures);
* :func:`usage_frame`: cluster-wide GPU/CPU/memory use per round (fractions);
* :func:`gap_frame`: heuristic results against an exact result on one instance
  (:func:`sensaopt.compare.compare`: misses / lost value and avg JCT apart).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import astuple
from typing import get_type_hints

import numpy as np
import pandas as pd

from sensaopt.compare import compare
from sensaopt.instance import Instance
from sensaopt.metrics import JOB_METRIC_COLUMNS, JobMetrics, job_metrics
from sensaopt.metrics import METRIC_COLUMNS as _METRICS
from sensaopt.result import PartBounds, Result
from sensaopt.schedule import Schedule
from sensaopt.tables import GAP_COLUMNS as TABLE_GAP_COLUMNS
from sensaopt.tables import gap_record
from sensaopt.validator import Evaluation, check_schedule

JOB_COLUMNS = ("job", "model", "sensitive", "gpus", "arrival", "work", "deadline", "value")  # jobs_frame, with the index
OUTCOME_COLUMNS = JOB_COLUMNS + JOB_METRIC_COLUMNS[1:]
# a Result's own fields and the bounds of its parts (sensaopt.result.PartBounds: lost value, avg JCT minutes)
RESULT_COLUMNS = ("solver", "status", "objective", "bound", "loss_bound", "jct_bound", "runtime_s")
METRIC_COLUMNS = RESULT_COLUMNS + tuple(c for c in _METRICS if c not in RESULT_COLUMNS)
GAP_COLUMNS = TABLE_GAP_COLUMNS  # gap_frame's columns (sensaopt.tables)
_GAP_TEXT = ("instance", "policy", "exact", "exact_status")
# per-job fields that may be None: float columns with NaN, bool ones (met_deadline) pandas' nullable "boolean" (<NA>)
_HINTS = get_type_hints(JobMetrics)
_OPTIONAL = tuple(name for name, t in _HINTS.items() if type(None) in getattr(t, "__args__", ()))
_OPTIONAL_DTYPES = {name: "boolean" if bool in getattr(_HINTS[name], "__args__", ()) else float for name in _OPTIONAL}


def truth_instance(instance: Instance, result: Result | None) -> Instance:
    """The instance a result was scored on: ``result.truth`` (with the hidden speed
    factors when profile error applied), else ``instance``."""
    if result is None or result.truth is None:
        if result is not None and float(result.params.get("profile_error") or 0.0) > 0:
            raise ValueError(f"result of {result.solver} was simulated with profile error but carries no truth instance")
        return instance
    if len(result.truth.jobs) != len(instance.jobs) or any(a.id != b.id for a, b in zip(result.truth.jobs, instance.jobs)):
        raise ValueError(f"result of {result.solver} was scored on instance {result.truth.name!r}, "
                         f"whose jobs differ from {instance.name!r}'s")
    return result.truth


def evaluate(instance: Instance, result_or_schedule: Result | Schedule, require_complete: bool = True) -> Evaluation:
    """Validator evaluation of a Result's (or a bare) schedule on ``instance``: the
    evaluation a Result carries when it answers the same question (every job finished,
    so ``require_complete`` changes nothing), else a fresh one on its truth instance.

    Args:
        instance: the instance scheduled.
        result_or_schedule: a Result (its schedule) or a bare Schedule.
        require_complete: an unfinished job is an error.

    Returns:
        The validator's Evaluation."""
    if isinstance(result_or_schedule, Schedule):
        return check_schedule(instance, result_or_schedule, require_complete)
    res = result_or_schedule
    if res.schedule is None:
        raise ValueError(f"result of {res.solver} ({res.status.value}) has no schedule")
    truth = truth_instance(instance, res)
    ev = res.evaluation
    if ev is not None and all(o.finish is not None for o in ev.outcomes.values()):
        return ev
    return check_schedule(truth, res.schedule, require_complete)


def jobs_frame(instance: Instance) -> pd.DataFrame:
    """One row per job of ``instance``: model, whether its profile is sensitive, GPUs
    (per job), arrival (minute), work (minutes at speed 1.0), deadline (minute; NaN:
    best effort), value (deadline value); indexed by job id.

    Args:
        instance: the instance.

    Returns:
        DataFrame indexed by job id (minutes)."""
    rows = [
        {
            "job": j.id, "model": j.model, "sensitive": bool(j.profile.is_sensitive()), "gpus": j.gpus,
            "arrival": j.arrival, "work": j.work, "deadline": np.nan if j.deadline is None else j.deadline,
            "value": j.value if j.deadline is not None else np.nan,
        }
        for j in instance.jobs
    ]
    return pd.DataFrame(rows, columns=list(JOB_COLUMNS)).set_index("job")


def outcomes_frame(instance: Instance, result_or_schedule: Result | Schedule, evaluation: Evaluation | None = None) -> pd.DataFrame:
    """Per-job outcomes of ``result_or_schedule`` (a Schedule or a Result's schedule) on
    ``instance``, indexed by job id: :func:`jobs_frame`'s columns, then
    :class:`sensaopt.metrics.JobMetrics`' (minutes; NaN where a job never finished /
    started; ``met_deadline`` a nullable bool, <NA> for best-effort jobs; ``lost_value`` in
    deadline value; counts of restarts (``preemptions``), migrations and resizes and the
    wall minutes each kind cost). Pass ``evaluation`` (the
    validator's, :func:`sensaopt.validator.check_schedule`) to skip re-running it.

    Args:
        instance: the instance scheduled.
        result_or_schedule: a Result (its schedule) or a Schedule.
        evaluation: the validator's evaluation when the caller has it (None: validated here).

    Returns:
        One row per job, indexed by job id (minutes)."""
    ev = evaluation if evaluation is not None else evaluate(instance, result_or_schedule, require_complete=False)
    df = pd.DataFrame.from_records([astuple(r) for r in job_metrics(instance, ev)], columns=JOB_METRIC_COLUMNS)
    for c, dtype in _OPTIONAL_DTYPES.items():
        df[c] = df[c].astype(dtype)
    return jobs_frame(instance).join(df.set_index("job"))[list(OUTCOME_COLUMNS[1:])]


def result_frame(result: Result, label: str | None = None) -> pd.DataFrame:
    """One Result as a one-row :func:`metrics_frame` (minutes, seconds, fractions),
    indexed by ``label`` (default: the result's ``solver``)."""
    return metrics_frame({result.solver if label is None else label: result})


def metrics_frame(results: Mapping[str, Result] | Iterable[Result]) -> pd.DataFrame:
    """One row per Result with :data:`METRIC_COLUMNS`: the Result's own fields, the
    bounds of its parts (``loss_bound``: lost deadline value, ``jct_bound``: avg JCT
    minutes, :class:`sensaopt.result.PartBounds`; NaN unless an exact solver proved
    them), then every :class:`sensaopt.metrics.Metrics` field. ``results``: Results, or a
    mapping whose keys become the index (e.g. policy names); otherwise the index is each
    result's ``solver``.

    Args:
        results: Results, or ``{label: Result}`` (labels become the index).

    Returns:
        One row per Result, columns :data:`METRIC_COLUMNS`."""
    if isinstance(results, Mapping):
        items = list(results.items())
    else:
        items = [(r.solver, r) for r in results]
    rows = []
    for _, r in items:
        row = r.metrics.to_dict() if r.metrics is not None else {}
        b = PartBounds.of(r)
        row.update({"solver": r.solver, "status": r.status.value, "objective": r.objective, "bound": r.bound,
                    "loss_bound": np.nan if b.lost_value is None else b.lost_value, "jct_bound": np.nan if b.avg_jct is None else b.avg_jct,
                    "runtime_s": r.runtime_s})
        rows.append(row)
    return pd.DataFrame(rows, index=pd.Index([lab for lab, _ in items], name="label"), columns=list(METRIC_COLUMNS))


def usage_frame(instance: Instance, evaluation: Evaluation) -> pd.DataFrame:
    """Cluster-wide share of GPUs, CPU cores and memory held in each round (fractions
    0..1 of ``instance``'s capacity), from the validator's ``evaluation`` of a schedule;
    indexed by the round's start minute.

    Args:
        instance: the instance scheduled.
        evaluation: the validator's evaluation of the schedule.

    Returns:
        DataFrame indexed by round start minute; ``gpu``, ``cpu``, ``mem`` as fractions 0-1."""
    c = instance.cluster
    caps = {"gpu": c.total_gpus, "cpu": c.total_cpus, "mem": c.total_mem_gb}
    T = max((a.shape[0] for a in evaluation.usage.values()), default=0)
    data = {res: (evaluation.usage[res].sum(axis=1) / caps[res]) if res in evaluation.usage else np.zeros(T) for res in caps}
    idx = pd.Index(np.arange(T) * instance.round_minutes, name="minute")
    return pd.DataFrame(data, index=idx)


def gap_frame(instance: Instance, heuristics: Mapping[str, Result], exact: Result) -> pd.DataFrame:
    """Heuristic results (``heuristics``: label → Result, one row each) against the
    ``exact`` result on ``instance`` (its violation weight splits the bounds); columns
    :data:`GAP_COLUMNS`, NaN where a value is unknown.

    One row is :func:`sensaopt.compare.compare`'s :class:`~sensaopt.compare.Comparison`
    (:func:`sensaopt.tables.gap_record`): the deadline misses beyond the exact schedule's
    (``extra_misses``, a count) and the lost deadline value beyond it
    (``extra_lost_value``), the avg JCT gap in percent only among equal misses and lost
    value (``jct_gap_pct``), ``jct_diff_min`` = avg JCT difference in minutes at any
    level, the bound of each part (``loss_bound``, ``jct_bound`` minutes), and the
    weighted objective (W × lost value + avg JCT, W = 10⁵: a policy with one more miss
    is ~10⁵ apart, so this gap measures misses first): ``objective_diff``,
    ``objective_gap_pct`` = 100 × (objective − exact objective) / exact objective (to the
    best exact schedule found; to the optimum when ``exact_status`` is OPTIMAL),
    ``objective_gap_to_bound_pct`` against the exact solver's proven bound (an upper
    bound on the true gap), ``exact_solver_gap_pct`` the solver's own gap.

    Args:
        instance: the instance (its violation weight).
        heuristics: ``{label: Result}``, one row each.
        exact: the exact Result on the same instance.

    Returns:
        One row per heuristic, columns :data:`GAP_COLUMNS` (``*_pct`` in percent, ``*_min`` in minutes).
    """
    rows = []
    for label, r in heuristics.items():
        rows.append(gap_record(compare(r, exact, instance, label=label)))
    df = pd.DataFrame(rows, columns=list(GAP_COLUMNS))
    for c in GAP_COLUMNS:
        if c not in _GAP_TEXT:
            df[c] = pd.to_numeric(df[c])
    return df
