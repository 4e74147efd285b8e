"""A brute-force oracle for the exact backends (issue 24, ``models/formulation.md``,
"Exact over every valid allocation").

On tiny instances (one node, one or two jobs, a few rounds) the oracle enumerates every
start/pause pattern and, in every round, every allocation of a fine per-job grid (whole
cores per job, the feasible set's granularity; memory at the levels, at what another
job's levels leave, half and all of the node), with the validator's progress and
change arithmetic (:mod:`sensaopt.progress`, :mod:`sensaopt.changes`). Its best
schedule is valid (checked by the validator, its objective by the metrics module), so
the true optimum is at most the oracle's. Every backend must then report a bound no
higher than the oracle and, when it says OPTIMAL, an objective no higher either; on the
three cases of the issue the oracle's value is the optimum and every backend must reach
it."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sensaopt
from sensaopt.changes import classify
from sensaopt.instance import Cluster, Instance, Job, NodeType, ObjectiveWeights, Overheads
from sensaopt.metrics import compute_metrics
from sensaopt.profiles import SensitivityProfile
from sensaopt.progress import first_round
from sensaopt.schedule import Placement, Schedule
from sensaopt.validator import check_schedule

BACKENDS = ("cpsat", "highs", "cbc")
TOL = 1e-6


def _instance(node: tuple[int, float, float], jobs: list[dict], name: str = "oracle", base: float = 0.5) -> Instance:
    g, c, m = node
    return Instance(
        name=name, round_minutes=10.0,
        cluster=Cluster((NodeType("node", gpus=g, cpus=c, mem_gb=m, count=1),)),
        jobs=tuple(Job(id=j["id"], arrival=j.get("arrival", 0.0), gpus=j["gpus"], work=j["work"], deadline=j.get("deadline"),
                       profile=SensitivityProfile(j["id"] + "-p", tuple(j["cpu"]), tuple(j["mem"]), tuple(map(tuple, j["speeds"]))))
                   for j in jobs),
        objective=ObjectiveWeights(violation_weight=1000.0),
        overheads=Overheads(base_minutes=base, per_log2_gpu_minutes=0.0),
    )


def _grid(inst: Instance, job: Job) -> list[Placement]:
    """Per-job allocations of the oracle: whole cores per job from the floor to the node,
    memory at the levels, at what another job's levels leave of the node, half and all of
    it; dominated ones dropped."""
    node = inst.cluster.nodes[0]
    fc, fm = job.profile.floor
    g = job.gpus
    cores = list(range(max(math.ceil(fc * g - 1e-9), 1), node.cpus + 1))
    levels = {lv * g for lv in job.profile.mem_levels}
    rest = {node.mem_gb - lv * o.gpus for o in inst.jobs if o is not job for lv in o.profile.mem_levels}  # what another job leaves
    mems = sorted(levels | rest | {node.mem_gb / 2, node.mem_gb})
    pts = [(c, mm) for c in cores for mm in mems if fm * g - 1e-9 <= mm <= node.mem_gb + 1e-9]
    speed = {p: job.profile.speed(p[0] / g, p[1] / g) for p in pts}
    kept = [p for p in pts if not any(q != p and q[0] <= p[0] and q[1] <= p[1] and speed[q] >= speed[p] for q in pts)]
    return [Placement(0, g, c, mm) for c, mm in kept]


def oracle(inst: Instance, rounds: int) -> tuple[float, Schedule] | None:
    """The best objective (and its schedule) over the oracle's schedules of at most
    ``rounds`` rounds (None: none finishes every job)."""
    R = inst.round_minutes
    jobs = inst.jobs
    grids = [_grid(inst, j) for j in jobs]
    node = inst.cluster.nodes[0]
    wv = inst.objective.violation_weight
    best: list = [math.inf, None]

    def objective(fin: list[float]) -> float:
        jct = sum(f - j.arrival for f, j in zip(fin, jobs)) / len(jobs)
        lost = sum(j.value for f, j in zip(fin, jobs) if j.deadline is not None and f > j.deadline + 1e-9)
        return wv * lost + jct

    def go(r: int, left: list[float], prev: list, prev_end: list, fin: list, plan: list) -> None:
        if all(f is not None for f in fin):
            obj = objective(fin)
            if obj < best[0] - TOL:
                best[0], best[1] = obj, list(plan)
            return
        if r >= rounds:
            return
        choices = []
        for k, j in enumerate(jobs):
            ready = fin[k] is None and inst.release_round(j) <= r
            choices.append([None] + grids[k] if ready else [None])
        for combo in itertools.product(*choices):
            run = [(k, p) for k, p in enumerate(combo) if p is not None]
            if (sum(p.gpus for _, p in run) > node.gpus or sum(p.cpus for _, p in run) > node.cpus + 1e-9
                    or sum(p.mem_gb for _, p in run) > node.mem_gb + 1e-9):
                continue
            nl, npv, npe, nf = list(left), list(prev), list(prev_end), list(fin)
            for k, p in run:
                j = jobs[k]
                cost = inst.overheads.minutes(classify(prev[k], prev_end[k], (p,), r), j.gpus)
                speed = j.profile.speed(p.cpus / p.gpus, p.mem_gb / p.gpus) * j.speed_factor
                _, work, done = first_round(left[k], speed, R, cost)
                nl[k] = left[k] - work
                npv[k], npe[k] = (p,), r + 1
                if done:
                    nf[k] = (r + 1) * R
            plan.append((r, {jobs[k].id: (p,) for k, p in run}))
            go(r + 1, nl, npv, npe, nf, plan)
            plan.pop()

    go(0, [j.work for j in jobs], [None] * len(jobs), [None] * len(jobs), [None] * len(jobs), [])
    if best[1] is None:
        return None
    sched = Schedule.from_rounds(best[1], R)
    ev = check_schedule(inst, sched)
    assert not ev.errors, ev.errors[:2]
    got = compute_metrics(inst, ev).objective
    assert got == pytest.approx(best[0], abs=1e-6), "the oracle's arithmetic disagrees with the validator"
    return best[0], sched


def _check(inst: Instance, rounds: int, backend: str) -> tuple[float, sensaopt.Result]:
    found = oracle(inst, rounds)
    assert found is not None
    value, _ = found
    res = sensaopt.solve(inst, solver=backend, time_limit=60, workers=1, seed=0)
    assert res.bound is not None and res.bound <= value + TOL, (res.status, res.bound, value, res.message)
    if res.status == sensaopt.Status.OPTIMAL:
        assert res.objective <= value + TOL, (res.objective, value, res.message)
    if res.objective is not None:
        assert res.bound <= res.objective + TOL
    return value, res


# the three cases of issue 24: CPU between levels for a two-GPU job, memory between levels, a deadline only they meet
CPU_BETWEEN = ((2, 3, 100.0), [{"id": "a", "gpus": 2, "work": 15.0, "cpu": [1, 2], "mem": [10], "speeds": [[1], [2]]}])
CPU_DEADLINE = ((2, 3, 100.0), [{"id": "a", "gpus": 2, "work": 15.0, "deadline": 10.0, "cpu": [1, 2], "mem": [10], "speeds": [[1], [2]]}])
MEM_BETWEEN = ((2, 4, 100.0), [{"id": i, "gpus": 1, "work": 15.0, "cpu": [1], "mem": [10, 100], "speeds": [[1, 3]]} for i in "ab"])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", [CPU_BETWEEN, CPU_DEADLINE, MEM_BETWEEN], ids=["cpu-between", "cpu-deadline", "mem-between"])
def test_issue_cases_reach_the_true_optimum(case, backend):
    inst = _instance(*case)
    value, res = _check(inst, 3, backend)
    assert value == pytest.approx(10.0)  # the oracle's schedule: one round at the in-between allocation
    assert res.status == sensaopt.Status.OPTIMAL and res.objective == pytest.approx(10.0), res.message
    assert res.metrics.slo_violations == 0


# whole cores per job above a fractional top level (1.5 per GPU: 2 cores saturate), beside a job
# that runs fastest on few cores; the inner grid had only 1 core (whole cores per GPU up to the top level)
ABOVE_TOP = ((2, 3, 100.0), [
    {"id": "j0", "gpus": 1, "work": 5.0, "cpu": [0.5, 1.5], "mem": [15, 45], "speeds": [[2.5, 2.5], [0.4, 2.5]]},
    {"id": "j1", "gpus": 1, "work": 20.0, "deadline": 30.0, "cpu": [0.5, 1.5], "mem": [15, 45], "speeds": [[0.4, 0.4], [1.0, 0.4]]}])


@pytest.mark.parametrize("backend", BACKENDS)
def test_whole_cores_per_job_above_a_fractional_top_level(backend):
    inst = _instance(*ABOVE_TOP, base=0.0)
    value, res = _check(inst, 3, backend)
    assert value == pytest.approx(15.0)  # j0 on 1 core for a round, j1 on 2 cores (flat above 1.5) for two
    assert res.status == sensaopt.Status.OPTIMAL and res.objective == pytest.approx(15.0), res.message


@st.composite
def tiny_instances(draw):
    g = draw(st.sampled_from([1, 2]))
    cpus = draw(st.sampled_from([2, 3, 4]))
    mem = draw(st.sampled_from([40.0, 60.0, 100.0]))
    n = draw(st.integers(1, 2))
    jobs = []
    for i in range(n):
        gj = draw(st.integers(1, g))
        c0 = draw(st.sampled_from([0.5, 1.0]))
        m0 = draw(st.sampled_from([10.0, 15.0]))
        speeds = [[draw(st.sampled_from([0.4, 0.8, 1.0, 1.5, 2.0, 2.5])) for _ in range(2)] for _ in range(2)]  # any shape
        work = draw(st.sampled_from([5.0, 8.0, 12.0, 15.0, 20.0]))
        arrival = draw(st.sampled_from([0.0, 0.0, 10.0]))
        slack = draw(st.sampled_from([None, 10.0, 20.0]))
        jobs.append({"id": f"j{i}", "gpus": gj, "work": work, "deadline": None if slack is None else arrival + slack,
                     "cpu": [c0, c0 + 1.0], "mem": [m0, m0 + 30.0], "speeds": speeds, "arrival": arrival})
    return _instance((g, cpus, mem), jobs, base=draw(st.sampled_from([0.0, 2.0])))


def _random_case(inst: Instance, backend: str) -> None:
    if any(j.profile.floor[0] * j.gpus > inst.cluster.nodes[0].cpus or j.profile.floor[1] * j.gpus > inst.cluster.nodes[0].mem_gb
           for j in inst.jobs):
        return  # no node can hold some job: refused at load, not an oracle case
    if oracle(inst, 3) is None:
        return  # needs more rounds than the oracle enumerates
    _check(inst, 3, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(inst=tiny_instances())
def test_random_tiny_instances_never_beat_the_oracle(backend, inst):
    _random_case(inst, backend)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(inst=tiny_instances())
def test_random_tiny_instances_never_beat_the_oracle_many(backend, inst):
    _random_case(inst, backend)


@st.composite
def profiles(draw):
    n_c, n_m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    c0 = draw(st.sampled_from([0.5, 1.0, 1.5]))
    cpu = [c0]
    for _ in range(n_c - 1):
        cpu.append(cpu[-1] + draw(st.sampled_from([0.5, 1.0, 2.5])))
    mem = [10.0]
    for _ in range(n_m - 1):
        mem.append(mem[-1] + draw(st.sampled_from([5.0, 20.0])))
    speeds = [[draw(st.sampled_from([0.2, 0.5, 1.0, 1.7, 3.0])) for _ in mem] for _ in cpu]
    return SensitivityProfile("p", tuple(cpu), tuple(mem), tuple(map(tuple, speeds)))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(profile=profiles(), gpus=st.integers(1, 4), refine=st.integers(1, 3))
def test_outer_grid_covers_every_whole_core_allocation(profile, gpus, refine):
    """The Lemma's step: every allocation a node can give (k/d cores per GPU for d <= the
    job's GPUs, any GB) has an outer option with no more CPU and memory and at least its
    speed; the whole-core grid's boxes are never more optimistic than the real-CPU grid's."""
    from sensaopt.allocations import outer_options
    outer = outer_options(profile, refine, gpus)
    real = outer_options(profile, refine)
    top_c, top_m = profile.cpu_levels[-1] + 1.0, profile.mem_levels[-1] + 10.0
    cpus = sorted({k / d for d in range(1, gpus + 1) for k in range(1, int(top_c * d) + 2)
                   if profile.cpu_levels[0] - 1e-9 <= k / d})
    mems = [profile.mem_levels[0] + i * 0.5 for i in range(int((top_m - profile.mem_levels[0]) / 0.5) + 1)]
    for c in cpus:
        for m in mems:
            s = profile.speed(c, m)
            assert any(o.cpu <= c + 1e-9 and o.mem <= m + 1e-9 and o.speed >= s - 1e-12 for o in outer), (c, m, s)
    for o in outer:  # never above what the real-CPU relaxation credits at no more resources
        assert any(r.cpu <= o.cpu + 1e-9 and r.mem <= o.mem + 1e-9 and r.speed >= o.speed - 1e-12 for r in real), o
