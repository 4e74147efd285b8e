"""sensaopt.metrics: per-job and aggregate definitions, checked by hand on a tiny
schedule, and every table (frames, jobs CSV, sweep summary, Result.to_dict) taking its
columns from them."""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import fields

import numpy as np
import pandas as pd
import pytest

import sensaopt.validator
from sensaopt import frames
from sensaopt.metrics import JOB_METRIC_COLUMNS, METRIC_COLUMNS, JobMetrics, Metrics, compute_metrics, job_metrics
from sensaopt.result import Result, Status
from sensaopt.schedule import Placement as P
from sensaopt.schedule import Schedule, Segment
from sensaopt.simulator import simulate
from sensaopt.sweep.paper import RUN_METRICS
from sensaopt.sweep.report import SUMMARY_COLUMNS, summary_csv
from sensaopt.traces.run import JOB_COLUMNS, jobs_csv, run_policy
from sensaopt.validator import check_schedule

from .util import instance, job


def tiny():
    """One node of 4 GPUs, 10-minute rounds, speed 1.0 at 3 cores / 62.5 GB per GPU.
    a: rounds 0 and 2 (preempted; 1 min restart overhead), finishes at 30 = its deadline;
    b: arrives at 5, runs round 1, finishes at 20 > deadline 15, loses its value 2;
    c: best effort, round 0 (left out with ``with_c=False``: never runs)."""
    inst = instance([job("a", gpus=2, work=15.0, deadline=30.0), job("b", arrival=5.0, gpus=2, work=10.0, deadline=15.0, value=2.0),
                     job("c", gpus=1, work=10.0)], nodes=1, gpus=4, cpus=12, mem=250.0)
    return inst


def tiny_schedule(with_c: bool = True) -> Schedule:
    segs = [Segment("a", 0, 1, (P(0, 2, 6, 125.0),)), Segment("b", 1, 1, (P(0, 2, 6, 125.0),)), Segment("a", 2, 1, (P(0, 2, 6, 125.0),))]
    if with_c:
        segs.append(Segment("c", 0, 1, (P(0, 1, 3, 62.5),)))
    return Schedule(tuple(segs), 10.0)


HAND = [  # pending = finish - arrival - rounds held x 10
    JobMetrics("a", first_start=0.0, finish=30.0, jct=30.0, queueing=0.0, met_deadline=True, lost_value=0.0, preemptions=1, migrations=0,
               resizes=0, restart_minutes_lost=1.0, migration_minutes_lost=0.0, resize_minutes_lost=0.0, pending=10.0),
    JobMetrics("b", first_start=10.0, finish=20.0, jct=15.0, queueing=5.0, met_deadline=False, lost_value=2.0, preemptions=0, migrations=0,
               resizes=0, restart_minutes_lost=0.0, migration_minutes_lost=0.0, resize_minutes_lost=0.0, pending=5.0),
    JobMetrics("c", first_start=0.0, finish=10.0, jct=10.0, queueing=0.0, met_deadline=None, lost_value=0.0, preemptions=0, migrations=0,
               resizes=0, restart_minutes_lost=0.0, migration_minutes_lost=0.0, resize_minutes_lost=0.0, pending=0.0),
]
C_NEVER_RUNS = JobMetrics("c", first_start=None, finish=None, jct=None, queueing=None, met_deadline=None, lost_value=0.0,
                          preemptions=0, migrations=0, resizes=0, restart_minutes_lost=0.0, migration_minutes_lost=0.0,
                          resize_minutes_lost=0.0, pending=None)


def test_job_metrics_by_hand():
    inst = tiny()
    ev = check_schedule(inst, tiny_schedule())
    assert ev.ok, ev.errors
    assert job_metrics(inst, ev) == HAND
    ev2 = check_schedule(inst, tiny_schedule(with_c=False), require_complete=False)
    assert job_metrics(inst, ev2) == HAND[:2] + [C_NEVER_RUNS]


def test_metrics_by_hand():
    inst = tiny()
    m = compute_metrics(inst, check_schedule(inst, tiny_schedule()))
    avg_jct = (30.0 + 15.0 + 10.0) / 3
    assert m == Metrics(
        slo_violations=1, slo_violation_rate=0.5, avg_jct=avg_jct, avg_queueing_time=5.0 / 3, avg_pending_time=5.0, makespan=30.0,
        jobs=3, finished=3,
        slo_jobs=2, weighted_violations=2.0, weighted_violation_rate=2.0 / 3.0,
        gpu_utilization=(3 * 10 + 2 * 10 + 2 * 10) / (4 * 30.0), cpu_utilization=(9 * 10 + 6 * 10 + 6 * 10) / (12 * 30.0),
        mem_utilization=(187.5 * 10 + 125 * 10 + 125 * 10) / (250 * 30.0), preemptions=1, migrations=0,
        resizes=0, restart_minutes_lost=1.0, migration_minutes_lost=0.0, resize_minutes_lost=0.0, objective=1e5 * 2.0 + avg_jct,
    )
    m2 = compute_metrics(inst, check_schedule(inst, tiny_schedule(with_c=False), require_complete=False))
    assert (m2.finished, m2.avg_jct, m2.avg_queueing_time, m2.avg_pending_time, m2.objective) == (2, 22.5, 2.5, 7.5, None)


def test_outcomes_frame_and_jobs_csv_hold_the_hand_values():
    inst = tiny()
    ev = check_schedule(inst, tiny_schedule(with_c=False), require_complete=False)
    df = frames.outcomes_frame(inst, tiny_schedule(with_c=False))
    b = df.loc["b", ["first_start", "finish", "jct", "queueing", "met_deadline", "lost_value"]]
    assert list(b) == [10.0, 20.0, 15.0, 5.0, False, 2.0]
    assert df["met_deadline"].dtype == "boolean" and bool(df.loc["a", "met_deadline"]) and not bool(df.loc["b", "met_deadline"])
    assert df.loc["a", "preemptions"] == 1
    assert df.loc["c", ["first_start", "finish", "jct", "queueing", "met_deadline"]].isna().all()
    assert df["preemptions"].dtype == np.int64 and df["jct"].dtype == np.float64
    rows = {r["job"]: r for r in csv.DictReader(io.StringIO(jobs_csv(inst, ev)))}
    assert [rows["b"][c] for c in JOB_METRIC_COLUMNS[1:]] == ["10.0", "20.0", "15.0", "5.0", "False", "2.0", "0", "0", "0",
                                                           "0.0", "0.0", "0.0", "5.0"]
    assert [rows["a"][c] for c in ("met_deadline", "preemptions")] == ["True", "1"]
    assert {rows[j]["sensitive"] for j in rows} <= {"True", "False"}
    read = pd.read_csv(io.StringIO(jobs_csv(inst, ev)), index_col="job")  # pandas reads them back as booleans
    assert bool(read.loc["a", "met_deadline"]) and not bool(read.loc["b", "met_deadline"])
    assert pd.isna(read.loc["c", "met_deadline"]) and read["sensitive"].dtype == bool
    assert [rows["c"][c] for c in ("first_start", "finish", "jct", "queueing", "met_deadline", "deadline", "value")] == [""] * 7


def test_every_table_takes_its_columns_from_the_dataclasses():
    """A field added to Metrics or JobMetrics reaches every table without another edit."""
    assert tuple(f.name for f in fields(Metrics)) == METRIC_COLUMNS
    assert tuple(f.name for f in fields(JobMetrics)) == JOB_METRIC_COLUMNS
    inst = tiny()
    ev = check_schedule(inst, tiny_schedule())
    m = compute_metrics(inst, ev)
    res = Result("hand", Status.FEASIBLE, m.objective, None, 0.0, tiny_schedule(), m, evaluation=ev, truth=inst)
    assert tuple(res.to_dict(inst)["metrics"]) == METRIC_COLUMNS
    mf = frames.metrics_frame([res])
    assert tuple(mf.columns) == frames.RESULT_COLUMNS + tuple(c for c in METRIC_COLUMNS if c != "objective")
    assert mf.iloc[0]["weighted_violation_rate"] == m.weighted_violation_rate
    n = len(JOB_METRIC_COLUMNS) - 1
    assert tuple(frames.outcomes_frame(inst, res).columns[-n:]) == JOB_METRIC_COLUMNS[1:]
    header = jobs_csv(inst, ev).splitlines()[0].split(",")
    assert tuple(header) == JOB_COLUMNS and tuple(header[-n:]) == JOB_METRIC_COLUMNS[1:]
    record = {"key": "k", "config": {}, "metrics": m.to_dict(), "simulate_s": 0.1}
    (row,) = csv.DictReader(io.StringIO(summary_csv([record])))
    assert tuple(row) == SUMMARY_COLUMNS and all(row[c] == str(v) for c, v in m.to_dict().items())
    assert {source for _, source, _ in RUN_METRICS} <= set(METRIC_COLUMNS)
    assert [r.jct for r in res.job_metrics()] == [30.0, 15.0, 10.0]


def test_run_policy_validates_once_and_returns_the_carried_evaluation(monkeypatch):
    inst = tiny()
    calls = []
    original = sensaopt.validator.check_schedule

    def counting(*a, **kw):
        calls.append(1)
        return original(*a, **kw)

    # every reference to the validator in sensaopt's modules (however it was imported)
    for mod in [m for name, m in sys.modules.items() if name.startswith("sensaopt") and m is not None]:
        if getattr(mod, "check_schedule", None) is original:
            monkeypatch.setattr(mod, "check_schedule", counting)
    res, ev = run_policy(inst, "edf", seed=2, profile_error=0.3)
    assert len(calls) == 1
    assert ev is res.evaluation and res.truth is not None
    assert [j.speed_factor for j in res.truth.jobs] != [1.0] * 3  # scored on the hidden speeds
    assert frames.evaluate(inst, res) is ev and len(calls) == 1
    frames.outcomes_frame(inst, res)
    assert len(calls) == 1


def test_result_rows_use_the_truth_instance_of_a_noisy_run():
    inst = tiny()
    res = simulate(inst, "fifo", seed=5, profile_error=0.5)
    rows = res.job_metrics()
    assert rows == job_metrics(res.truth, res.evaluation)
    assert sum(r.jct for r in rows) / len(rows) == res.metrics.avg_jct
    assert list(frames.outcomes_frame(inst, res)["jct"]) == [r.jct for r in rows]
    no_eval = Result("x", Status.FEASIBLE, None, None, 0.0, res.schedule, res.metrics, params={"profile_error": 0.5})
    with pytest.raises(ValueError, match="no truth"):
        frames.outcomes_frame(inst, no_eval)
    with pytest.raises(ValueError, match="carries no evaluation"):
        no_eval.job_metrics()
    other = instance([job("z")], name="other")
    with pytest.raises(ValueError, match="jobs differ"):
        frames.evaluate(other, res)
    assert "heuristic:fifo" in repr(res) and "schedule" not in repr(res)
