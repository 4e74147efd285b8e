"""Property tests (hypothesis) over small generated instances: every fast policy's
schedule validates; the simulator conserves work and never exceeds capacity; the same
seed gives the same result; the exact optimum (CP-SAT, when proven OPTIMAL) is never
worse than a heuristic and does not depend on the order of the jobs in the file.

Units: minutes (work, times), cores, GB.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sensaopt.changes import classify
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import instance_from_dict, instance_to_dict
from sensaopt.policies import policy_names
from sensaopt.result import Status
from sensaopt.simulator import simulate
from sensaopt.solve import solve_cpsat
from sensaopt.validator import WORK_EPS, check_schedule, segment_speed

FAST_POLICIES = [p for p in policy_names() if not p.startswith("rolling-")]
EXACT_LIMIT_S = 5.0
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@st.composite
def configs(draw, max_jobs: int = 8, max_nodes: int = 2) -> GeneratorConfig:
    return GeneratorConfig(
        jobs=draw(st.integers(2, max_jobs)),
        nodes=draw(st.integers(1, max_nodes)),
        node_gpus=draw(st.sampled_from([4, 8])),
        node_cpus=draw(st.sampled_from([12, 24])),
        node_mem_gb=draw(st.sampled_from([250.0, 500.0])),
        round_minutes=draw(st.sampled_from([10.0, 30.0])),
        load=draw(st.floats(0.5, 3.0)),
        work_max=draw(st.sampled_from([120.0, 240.0])),
        sensitive_fraction=draw(st.sampled_from([0.0, 0.5, 1.0])),
        best_effort_fraction=draw(st.sampled_from([0.0, 0.3])),
        seed=draw(st.integers(0, 10_000)),
    )


def test_fast_policies_are_the_registered_ones():
    assert {"edf", "fifo", "sensascale"} <= set(FAST_POLICIES) and not any(p.startswith("rolling") for p in FAST_POLICIES)


@pytest.mark.parametrize("name", policy_names())
def test_every_registered_policy_keeps_the_protocol(name):
    """Every policy (the rolling ones too) is a Policy with a frozen dataclass config,
    its stats (a dict, or a dataclass like Chronus's typed counters), and both reach Result.params."""
    import dataclasses

    from sensaopt.policies import Policy, make_policy, policy_config_class

    pol = make_policy(name)
    assert isinstance(pol, Policy) and (isinstance(pol.stats, dict) or dataclasses.is_dataclass(pol.stats))
    assert dataclasses.is_dataclass(pol.config) and type(pol.config).__dataclass_params__.frozen
    assert policy_config_class(name) is type(pol.config)
    if not name.startswith("rolling-"):  # a solver per round: too slow here
        res = simulate(generate(GeneratorConfig(jobs=4, seed=1)), pol)
        stats = pol.stats if isinstance(pol.stats, dict) else dataclasses.asdict(pol.stats)
        assert res.params["policy_stats"] == stats and res.params["config"] == dataclasses.asdict(pol.config)


def recount_progress(inst, schedule) -> dict[str, list[float]]:
    """Per job, the work done in each round it ran (minutes at speed 1.0), recounted
    from the schedule: speed x (round length, less the change cost in the first round
    of a segment)."""
    R = inst.round_minutes
    out: dict[str, list[float]] = {}
    by_job: dict[str, list] = {}
    for s in schedule.segments:
        by_job.setdefault(s.job, []).append(s)
    for jid, segs in by_job.items():
        job = inst.job(jid)
        prev = None
        per = out.setdefault(jid, [])
        for s in sorted(segs, key=lambda s: s.start):
            v = segment_speed(job, s)
            kind = classify(None if prev is None else prev.placements, None if prev is None else prev.end, s.placements, s.start)
            for r in range(s.rounds):
                lost = inst.overheads.minutes(kind, job.gpus) if r == 0 else 0.0
                per.append(v * max(R - lost, 0.0))
            prev = s
    return out


@settings(max_examples=20, **SETTINGS)
@given(cfg=configs(), policy=st.sampled_from(FAST_POLICIES), sigma=st.sampled_from([0.0, 0.3]))
def test_policy_schedules_validate_conserve_work_and_respect_capacity(cfg, policy, sigma):
    inst = generate(cfg)
    res = simulate(inst, policy, seed=cfg.seed, profile_error=sigma, validate=False)
    truth = _truth(inst, sigma, cfg.seed)
    ev = check_schedule(truth, res.schedule)
    assert ev.ok, ev.errors[:3]
    assert res.status == Status.FEASIBLE and res.metrics.finished == len(inst.jobs)
    # work: every job finished, in the round where its recounted work reaches its work
    prog = recount_progress(truth, res.schedule)
    total_done = 0.0
    for j in truth.jobs:
        per = prog[j.id]
        assert sum(per) >= j.work - WORK_EPS
        assert sum(per[:-1]) < j.work - WORK_EPS  # no round held after completion
        assert ev.outcomes[j.id].work_done == pytest.approx(j.work)
        total_done += min(sum(per), j.work)
    assert total_done == pytest.approx(sum(j.work for j in truth.jobs))
    # capacity: per node and round, from the validator's usage arrays
    nodes = truth.cluster.nodes
    caps = {"gpu": [n.gpus for n in nodes], "cpu": [n.cpus for n in nodes], "mem": [n.mem_gb for n in nodes]}
    for res_name, cap in caps.items():
        use = ev.usage[res_name]
        assert use.shape[1] == len(nodes)
        assert (use <= np.array(cap)[None, :] + 1e-6).all()
    assert ev.gpu_minutes == pytest.approx(float(ev.usage["gpu"].sum()) * truth.round_minutes)


def _truth(inst, sigma, seed):
    from sensaopt.simulator import apply_profile_error

    return apply_profile_error(inst, sigma, seed)


@settings(max_examples=8, **SETTINGS)
@given(cfg=configs(), policy=st.sampled_from(FAST_POLICIES))
def test_same_seed_same_result(cfg, policy):
    a, b = generate(cfg), generate(cfg)
    assert instance_to_dict(a) == instance_to_dict(b)
    ra = simulate(a, policy, seed=cfg.seed, profile_error=0.3)
    rb = simulate(b, policy, seed=cfg.seed, profile_error=0.3)
    assert ra.objective == rb.objective
    assert ra.schedule.to_dict(a) == rb.schedule.to_dict(b)


def _exact(inst):
    return solve_cpsat(inst, time_limit=EXACT_LIMIT_S, workers=1, seed=0)


@settings(max_examples=6, **SETTINGS)
@given(cfg=configs(max_jobs=5, max_nodes=2))
def test_exact_optimum_never_worse_than_a_heuristic(cfg):
    inst = generate(cfg)
    ex = _exact(inst)
    event(f"exact {ex.status.value}, {len(inst.jobs)} jobs")
    assert ex.status != Status.INFEASIBLE
    if ex.status != Status.OPTIMAL:
        return
    assert check_schedule(inst, ex.schedule).ok
    assert ex.bound is None or ex.bound <= ex.objective + 1e-6
    for p in FAST_POLICIES:
        h = simulate(inst, p)
        assert ex.objective <= h.objective + 1e-6 * max(1.0, abs(h.objective)), (p, ex.objective, h.objective)


@settings(max_examples=5, **SETTINGS)
@given(cfg=configs(max_jobs=5, max_nodes=2), perm_seed=st.integers(0, 1000))
def test_job_order_does_not_change_the_exact_optimum(cfg, perm_seed):
    inst = generate(cfg)
    d = instance_to_dict(inst)
    jobs = list(d["jobs"])
    random.Random(perm_seed).shuffle(jobs)
    d["jobs"] = jobs
    shuffled = instance_from_dict(d, "shuffled")
    a, b = _exact(inst), _exact(shuffled)
    event(f"exact {a.status.value}/{b.status.value}, {len(inst.jobs)} jobs")
    if a.status == b.status == Status.OPTIMAL:
        assert math.isclose(a.objective, b.objective, rel_tol=1e-9, abs_tol=1e-6), (a.objective, b.objective)
