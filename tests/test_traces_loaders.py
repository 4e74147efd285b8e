"""Loaders of the Chronus CSV, Helios job-log CSV and Philly cluster_job_log JSON,
tested on small files written here in those formats."""

import json

import pytest

from sensaopt.errors import InputError
from sensaopt.traces.chronus import load_chronus, read_chronus
from sensaopt.traces.helios import load_helios, read_helios
from sensaopt.traces.philly import load_philly, read_philly
from sensaopt.traces.presets import preset_cluster
from sensaopt.traces.trace import window

CHRONUS_HEADER = "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type\n"
CHRONUS_ROWS = [
    "0,vc_a,1,5601,5530,mobilenet_v2,96,5,159-189-229-289,10-8-5-2,0,soft",
    "1,vc_b,1,7505,760,alexnet,106,6,235,10,0,strict",
    "2,vc_c,4,12378,3495,vgg16,26,14,102,10,1,best",
    "3,vc_d,0,61,8388,inception_v3,83,18,119,10,0,strict",
    "4,vc_e,8,3000,100,resnet101,600,5,1100,10,0,strict",
]


def write_chronus(tmp_path, rows=CHRONUS_ROWS, name="trace.csv"):
    p = tmp_path / name
    p.write_text(CHRONUS_HEADER + "\n".join(rows) + "\n")
    return p


def test_chronus_job_kinds_and_skip_count(tmp_path):
    d = read_chronus(write_chronus(tmp_path))
    assert d.skipped == {"no_gpu": 1}
    jobs = {j.id: j for j in d.jobs}
    assert set(jobs) == {"0", "1", "2", "4"}
    soft = jobs["0"]
    assert (soft.arrival, soft.work, soft.gpus) == (5601, 96, 1)
    assert (soft.deadline, soft.value) == (5601 + 159, 10)
    assert [(s.at, s.value) for s in soft.soft_deadlines] == [(5601 + 189, 8), (5601 + 229, 5), (5601 + 289, 2)]
    strict = jobs["1"]
    assert (strict.deadline, strict.value, strict.soft_deadlines) == (7505 + 235, 10, ())
    assert jobs["2"].deadline is None


def test_chronus_instance_and_window(tmp_path):
    p = write_chronus(tmp_path)
    inst = load_chronus(p, preset_cluster("2x8"), start=3000, days=2, seed=3)
    assert [j.id for j in inst.jobs] == ["4", "0"]  # window [3000, 5880): 61 (no GPU), 7505 and 12378 are out
    assert inst.jobs[0].arrival == 0 and inst.jobs[0].deadline == 1100
    assert inst.jobs[1].arrival == 2601
    # soft job keeps its value ladder; Job.loss sees it
    soft = inst.jobs[1]
    assert soft.loss(soft.deadline + 1) == 2  # 10 - 8
    lim = load_chronus(p, preset_cluster("2x8"), limit=2)
    assert [j.id for j in lim.jobs] == ["4", "0"]


@pytest.mark.parametrize(
    "row, field",
    [
        ("9,vc,x,10,1,m,50,1,60,10,0,strict", "num_gpu"),
        ("9,vc,1,10,1,m,-5,1,60,10,0,strict", "duration"),
        ("9,vc,1,10,1,m,50,1,60-70,10,0,strict", "expect_value_list"),
        ("9,vc,1,10,1,m,50,1,60,10,0,urgent", "job_type"),
        ("9,vc,1,10,1,m,50,1,60-50,10-8,0,soft", "expect_time_list"),
        ("9,vc,1,,1,m,50,1,60,10,0,strict", "submit_time"),
    ],
)
def test_chronus_malformed_rows_raise_or_skip(tmp_path, row, field):
    p = write_chronus(tmp_path, CHRONUS_ROWS + [row])
    with pytest.raises(InputError) as e:
        read_chronus(p)
    err = e.value
    assert err.file == str(p) and err.job == "9"
    assert err.field == f"line 7: {field}"
    d = read_chronus(p, on_error="skip")
    assert d.skipped == {"no_gpu": 1, "malformed": 1} and len(d.jobs) == 4


def test_chronus_missing_column_and_file(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("job_id,num_gpu\n1,1\n")
    with pytest.raises(InputError, match="missing column"):
        read_chronus(p)
    with pytest.raises(InputError, match="no such file"):
        read_chronus(tmp_path / "nope.csv")


def test_window_rejects_empty(tmp_path):
    d = read_chronus(write_chronus(tmp_path))
    with pytest.raises(InputError, match="no jobs arrive"):
        window(d, start=50000)


HELIOS_HEADER = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"


def write_helios(tmp_path, rows):
    p = tmp_path / "cluster_log.csv"
    p.write_text(HELIOS_HEADER + "\n".join(rows) + "\n")
    return p


HELIOS_ROWS = [
    "a1,u1,vcA,8,32,1,COMPLETED,2020-04-01 00:10:00,2020-04-01 00:11:00,2020-04-01 02:11:00,7200,0",
    "a2,u2,vcA,0,4,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:00,2020-04-01 00:05:00,300,0",
    "a3,u1,vcB,1,4,1,FAILED,2020-04-01 00:00:30,2020-04-01 00:01:00,2020-04-01 00:31:00,,30",
    "a4,u3,vcB,2,8,1,CANCELLED,2020-04-01 01:00:30,2020-04-01 01:01:00,2020-04-01 01:01:00,0,30",
]


def test_helios_units_and_skips(tmp_path):
    d = read_helios(write_helios(tmp_path, HELIOS_ROWS))
    assert d.skipped == {"no_gpu": 1, "zero_duration": 1}
    jobs = {j.id: j for j in d.jobs}
    assert jobs["a3"].arrival == 0 and jobs["a3"].work == 30  # duration from end - start
    assert jobs["a1"].arrival == pytest.approx(9.5) and jobs["a1"].work == 120 and jobs["a1"].gpus == 8
    only = read_helios(write_helios(tmp_path, HELIOS_ROWS), states=("completed",))
    assert [j.id for j in only.jobs] == ["a1"] and only.skipped["state"] == 2


def test_helios_numeric_times_and_rule_deadlines(tmp_path):
    rows = ["b1,u,v,1,1,1,COMPLETED,1000,1000,4600,3600,0", "b2,u,v,4,1,1,COMPLETED,4600,4600,4660,60,0"]
    inst = load_helios(write_helios(tmp_path, rows), preset_cluster("1x8"), seed=1)
    j1, j2 = inst.jobs
    assert (j1.arrival, j1.work, j2.arrival, j2.work) == (0, 60, 60, 1)
    for j in inst.jobs:
        assert j.deadline % 60 == 0 and j.deadline >= j.arrival + 1.1 * j.work


def test_helios_malformed(tmp_path):
    p = write_helios(tmp_path, HELIOS_ROWS + ["a9,u,v,1,1,1,COMPLETED,yesterday,,,60,0"])
    with pytest.raises(InputError) as e:
        read_helios(p)
    assert e.value.job == "a9" and e.value.field == "line 6: submit_time"
    assert read_helios(p, on_error="skip").skipped["malformed"] == 1


def philly_job(jid, submitted, attempts, status="Pass"):
    return {"status": status, "vc": "6214e9", "jobid": jid, "user": "u1", "submitted_time": submitted, "attempts": attempts}


def attempt(start, end, *gpus_per_machine):
    return {"start_time": start, "end_time": end, "detail": [{"ip": f"m{k}", "gpus": [f"gpu{g}" for g in range(n)]} for k, n in enumerate(gpus_per_machine)]}


def write_philly(tmp_path, jobs):
    p = tmp_path / "cluster_job_log"
    p.write_text(json.dumps(jobs))
    return p


PHILLY_JOBS = [
    philly_job("application_1", "2017-10-03 02:54:07", [attempt("2017-10-03 02:55:07", "2017-10-03 03:55:07", 8, 8)]),
    philly_job("application_2", "2017-10-03 02:00:07", [attempt("2017-10-03 02:10:07", "2017-10-03 02:20:07", 2), attempt("2017-10-03 02:30:07", "2017-10-03 03:10:07", 2)], "Failed"),
    philly_job("application_3", "2017-10-03 03:00:00", []),
    philly_job("application_4", "2017-10-03 03:00:00", [attempt("2017-10-03 03:01:00", "None", 1)], "Killed"),
]


def test_philly_format(tmp_path):
    d = read_philly(write_philly(tmp_path, PHILLY_JOBS))
    assert d.skipped == {"no_gpu": 1, "unfinished": 1}
    jobs = {j.id: j for j in d.jobs}
    assert jobs["application_2"].arrival == 0 and jobs["application_2"].work == 60  # first start -> last end
    assert jobs["application_1"].gpus == 16 and jobs["application_1"].arrival == 54 and jobs["application_1"].work == 60
    passed = read_philly(write_philly(tmp_path, PHILLY_JOBS), statuses=("Pass",))
    assert [j.id for j in passed.jobs] == ["application_1"]
    inst = load_philly(write_philly(tmp_path, PHILLY_JOBS), preset_cluster("2x8"), seed=0)
    assert len(inst.jobs) == 2 and all(j.deadline is not None for j in inst.jobs)


def test_philly_malformed(tmp_path):
    bad = philly_job("application_9", "not a date", [attempt("2017-10-03 02:55:07", "2017-10-03 03:55:07", 1)])
    p = write_philly(tmp_path, PHILLY_JOBS + [bad])
    with pytest.raises(InputError) as e:
        read_philly(p)
    assert e.value.job == "application_9" and e.value.field == "[4].submitted_time"
    assert read_philly(p, on_error="skip").skipped["malformed"] == 1
    p2 = tmp_path / "obj.json"
    p2.write_text("{}")
    with pytest.raises(InputError, match="JSON list"):
        read_philly(p2)


def test_thin_and_scale_load():
    from sensaopt.traces.trace import TraceData, TraceJob, scale_load, thin

    jobs = [TraceJob(str(k), float(k), 1, 10.0, deadline=k + 60.0) for k in range(2000)]
    d = TraceData("t", "t", jobs, has_deadlines=True)
    t = thin(d, 0.25, seed=1)
    assert 400 < len(t.jobs) < 600 and [j.id for j in thin(d, 0.25, seed=1).jobs] == [j.id for j in t.jobs]
    assert thin(d, 1.0, seed=1) is d
    with pytest.raises(InputError):
        thin(d, 0.0, seed=1)
    fast = scale_load(d, 2.0)
    assert [j.arrival for j in fast.jobs[:3]] == [0.0, 0.5, 1.0]
    assert all(j.deadline - j.arrival == 60.0 for j in fast.jobs)  # relative deadlines kept
