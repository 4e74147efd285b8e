"""Exact models: brute force agreement, backend agreement, validator/metrics agreement,
never worse than the heuristics, honest statuses, size refusal."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensaopt.changes import classify
from sensaopt.errors import SensaoptError
from sensaopt.exact.model.data import build_data, placements_of
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.instance import Change, Cluster, Instance, Job, NodeType, SoftDeadline
from sensaopt.metrics import compute_metrics
from sensaopt.profiles import get_profile
from sensaopt.result import Status
from sensaopt.schedule import Schedule
from sensaopt.simulator import simulate
from sensaopt.solve import solve_cpsat, solve_milp
from sensaopt.validator import check_schedule

from .conftest import PROOF_S
from .util import grid_optimal


def _check_result(inst, res):
    """The extracted schedule validates, its metrics objective is the result objective,
    and equals the model's own objective when proven optimal."""
    assert res.schedule is not None
    ev = check_schedule(inst, res.schedule)
    assert ev.errors == []
    m = compute_metrics(inst, ev)
    assert res.objective == pytest.approx(m.objective, abs=1e-9)
    if res.status == Status.OPTIMAL:
        assert res.params["model_objective"] == pytest.approx(res.objective, rel=1e-9, abs=1e-6)
        assert res.bound == pytest.approx(res.objective, rel=1e-9, abs=1e-6)


# ---- brute force ---------------------------------------------------------------------------------
def micro_instance(seed: int) -> Instance:
    """≤ 4 jobs on one 4-GPU node, profiles with few allocation options, 10-minute rounds."""
    import random

    rnd = random.Random(seed)
    node = NodeType("n", 4, 12, 250.0, 1)
    jobs = []
    for k in range(rnd.randint(2, 4)):
        a = float(rnd.choice([0, 0, 5, 10, 20]))
        g = rnd.choice([1, 2, 2, 4])
        w = float(rnd.choice([8, 10, 15, 20, 25]))
        prof = get_profile(rnd.choice(["bert", "gnmt", "deepspeech", "vae"]))
        dl = None
        soft = ()
        if rnd.random() < 0.8:
            dl = a + rnd.choice([15, 20, 30, 40])
            if rnd.random() < 0.4:
                soft = (SoftDeadline(dl + 20, 0.5),)
        jobs.append(Job(f"j{k}", a, g, w, prof, deadline=dl, soft_deadlines=soft))
    return Instance(f"micro-{seed}", Cluster((node,)), 10.0, tuple(jobs), source=f"micro-{seed}")


def brute_force(inst: Instance, H: int) -> float | None:
    """Best metrics objective over every schedule of H rounds using the model's
    allocation choices, by dynamic programming over rounds on the validator's state
    (progress, last round's placements, ran before, finish round; the change a round
    starts with by :func:`sensaopt.changes.classify`); the winner is re-scored by
    the validator and the metrics module."""
    data = build_data(inst, H)
    R = inst.round_minutes
    jobs = data.jobs
    choices = [[None] + list(jd.pairs) for jd in jobs]
    # state per job: (progress, placements of the last round or None, ran_before, finish_round)
    start = tuple((0.0, None, False, None) for _ in jobs)
    states = {start: []}
    for t in range(H):
        nxt = {}
        for stt, hist in states.items():
            for combo in itertools.product(*choices):
                ok = True
                use = {}
                for jd, ch, js in zip(jobs, combo, stt):
                    if ch is None:
                        continue
                    if t < jd.release or js[3] is not None:
                        ok = False
                        break
                    for p in placements_of(data, jd, ch):
                        u = use.setdefault(p.node, [0, 0, 0.0])
                        u[0] += p.gpus; u[1] += p.cpus; u[2] += p.mem_gb
                if not ok:
                    continue
                node = inst.cluster.nodes[0]
                if any(u[0] > node.gpus or u[1] > node.cpus or u[2] > node.mem_gb + 1e-6 for u in use.values()):
                    continue
                new = []
                for jd, ch, js in zip(jobs, combo, stt):
                    prog, last, ran_before, fin = js
                    if ch is None:
                        new.append((prog, None, ran_before, fin))
                        continue
                    pls = placements_of(data, jd, ch)
                    kind = Change.NONE if not ran_before else classify(last, t if last is not None else t - 1, pls, t)
                    sp = min(jd.job.profile.speed(p.cpus / p.gpus, p.mem_gb / p.gpus) for p in pls)
                    prog2 = prog + sp * max(R - inst.overheads.minutes(kind, jd.gpus), 0.0)
                    fin2 = t if prog2 >= jd.job.work - 1e-6 else None
                    new.append((round(prog2, 9), pls, True, fin2))
                key = tuple(new)
                if key not in nxt:
                    nxt[key] = hist + [(t, combo)]
        states = nxt
    best, best_hist = None, None
    for stt, hist in states.items():
        if any(js[3] is None for js in stt):
            continue
        loss = sum(jd.job.loss((js[3] + 1) * R) for jd, js in zip(jobs, stt))
        jct = sum((js[3] + 1) * R - jd.job.arrival for jd, js in zip(jobs, stt)) / len(jobs)
        obj = inst.objective.violation_weight * loss + jct
        if best is None or obj < best - 1e-9:
            best, best_hist = obj, hist
    if best is not None:  # re-score the winner with the validator + metrics
        rounds = [(t, {jd.id: placements_of(data, jd, ch) for jd, ch in zip(jobs, combo) if ch is not None}) for t, combo in best_hist]
        ev = check_schedule(inst, Schedule.from_rounds(rounds, R))
        assert ev.errors == []
        assert compute_metrics(inst, ev).objective == pytest.approx(best)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_brute_force_agrees(exact_backend, seed):
    inst = micro_instance(seed)
    H = 6
    bf = brute_force(inst, H)
    res = exact_backend(inst, horizon=H, time_limit=PROOF_S, workers=1)
    if bf is None:
        assert res.status == Status.INFEASIBLE
        return
    assert res.status == Status.OPTIMAL
    _check_result(inst, res)
    assert res.objective == pytest.approx(bf, abs=1e-6)


# ---- backends agree; schedules validate ---------------------------------------------------------
@pytest.mark.parametrize("seed,jobs", [(2, 6), (4, 6), (3, 5)])
def test_cpsat_and_highs_prove_same_optimum(seed, jobs):
    inst = generate(GeneratorConfig(jobs=jobs, nodes=1, seed=seed))
    a = solve_cpsat(inst, time_limit=PROOF_S, relax_time_limit=0)  # the multi-node model is the point
    b = solve_milp(inst, backend="highs", time_limit=PROOF_S, relax_time_limit=0)
    assert grid_optimal(a) and grid_optimal(b), (a.message, b.message)  # over the grid; the relaxation bounds the rest
    _check_result(inst, a)
    _check_result(inst, b)
    assert a.objective == pytest.approx(b.objective, abs=1e-6)
    assert a.objective <= a.params["heuristic_objective"] + 1e-6


def test_two_nodes_with_symmetry_breaking():
    inst = generate(GeneratorConfig(jobs=4, nodes=2, seed=3))
    a = solve_cpsat(inst, time_limit=PROOF_S)
    b = solve_cpsat(inst, time_limit=PROOF_S, strength={"symmetry": False, "aggregate": False, "prune": False, "trim": False}, warm_start=False)
    assert a.status == Status.OPTIMAL and b.status == Status.OPTIMAL
    _check_result(inst, a)
    _check_result(inst, b)
    assert a.objective == pytest.approx(b.objective, abs=1e-6)


# ---- never worse than a heuristic --------------------------------------------------------------
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), jobs=st.integers(3, 4))
def test_exact_never_worse_than_heuristics(seed, jobs):
    inst = generate(GeneratorConfig(jobs=jobs, nodes=1, seed=seed))
    heur = {p: simulate(inst, p) for p in ("sensascale", "edf", "fifo")}
    H = max(math.ceil(r.metrics.makespan / inst.round_minutes - 1e-9) for r in heur.values())
    res = solve_cpsat(inst, time_limit=20, horizon=H)
    assert res.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE)
    _check_result(inst, res)
    if res.status == Status.OPTIMAL:
        for p, r in heur.items():
            assert res.objective <= r.objective + 1e-6, p
    # even without a proof, the bound never exceeds a feasible heuristic's value
    for r in heur.values():
        assert res.bound <= r.objective + 1e-6


# ---- honest statuses --------------------------------------------------------------------------
def test_status_honest_under_tiny_time_limit(exact_backend):
    inst = generate(GeneratorConfig(jobs=12, nodes=2, seed=7))
    res = exact_backend(inst, time_limit=0.05, workers=1)
    assert res.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE)
    assert res.params["time_limit"] == 0.05 and res.params["workers"] == 1 and res.params["seed"] == 0
    assert res.versions.get("ortools")
    if res.status == Status.OPTIMAL:
        assert res.bound == pytest.approx(res.objective)
    if res.objective is not None:
        _check_result(inst, res)
        if res.bound is not None:
            assert res.bound <= res.objective + 1e-6


def test_refuses_too_large_model():
    inst = generate(GeneratorConfig(jobs=8, nodes=1, seed=1))
    with pytest.raises(SensaoptError, match="rolling"):
        solve_cpsat(inst, max_vars=100)


def test_size_limit_applies_to_the_model_built():
    """tiny-16gpu: SensaScale meets every deadline, so only the deadline-hard model is
    built (about 709 variables); the whole model (about 1,327) is refused only where a
    phase needs it (the weighted solve)."""
    from sensaopt.io import load_instance

    inst = load_instance("instances/tiny-16gpu.json")
    res = solve_cpsat(inst, max_vars=1000, time_limit=20, workers=1)
    assert res.objective is not None and res.lexicographic is not None
    assert res.lexicographic.phase2 == "deadline-hard, trimmed"
    _check_result(inst, res)
    with pytest.raises(SensaoptError, match="about 1327 variables"):
        solve_cpsat(inst, max_vars=1000, time_limit=20, workers=1, lexicographic=False)


def test_short_horizon_is_infeasible():
    inst = generate(GeneratorConfig(jobs=3, nodes=1, seed=1))
    res = solve_cpsat(inst, horizon=1)
    assert res.status == Status.INFEASIBLE and res.schedule is None


# ---- rolling horizon ----------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["rolling-cpsat", "rolling-milp"])
def test_rolling_policy_valid_and_not_better_than_optimum(policy):
    from sensaopt.policies import policy_names

    assert policy in policy_names()
    inst = generate(GeneratorConfig(jobs=4, nodes=1, seed=4))
    res = simulate(inst, policy, policy_config={"window": 3, "time_limit": 1.0})  # validates the schedule
    assert check_schedule(inst, res.schedule).errors == []
    backend = {"rolling-cpsat": "cpsat", "rolling-milp": "highs"}[policy]
    assert res.params["config"] == {"window": 3, "time_limit": 1.0, "workers": 1, "seed": 0, "backend": backend, "budget": None}
    st = res.params["policy_stats"]
    assert st["rounds"] > 0 and st["optimal_rounds"] + st["fallback_rounds"] <= st["rounds"]
    opt = solve_cpsat(inst, time_limit=PROOF_S)
    assert opt.status == Status.OPTIMAL
    assert res.objective >= opt.objective - 1e-6


def test_rolling_config_is_frozen_and_checked():
    import dataclasses

    from sensaopt.policies import make_policy
    from sensaopt.rolling import RollingConfig

    pol = make_policy("rolling-milp", backend="cbc", window=2)
    assert pol.config.backend == "cbc" and pol.config.window == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        pol.config.window = 3
    with pytest.raises(ValueError, match="backend"):
        RollingConfig(backend="gurobi")


def test_validator_runs_on_the_warm_start_and_on_the_result(exact_backend, monkeypatch):
    """check_schedule runs twice per solve: on the warm start (a Schedule argument of
    the pipeline, validated into a WarmStart) and on the returned schedule, whose
    evaluation is the Result's, scored on the instance itself (hints and extraction
    replay progress themselves). Counted where the warm start, the result packaging and
    the loss phases' start choice call it."""
    import sensaopt.exact.common as common
    import sensaopt.exact.phases.loss as loss

    calls = []
    real = common.check_schedule

    def counted(*a, **k):
        calls.append(real(*a, **k))
        return calls[-1]

    monkeypatch.setattr(common, "check_schedule", counted)
    monkeypatch.setattr(loss, "check_schedule", counted)
    inst = generate(GeneratorConfig(jobs=4, nodes=1, seed=1))
    res = exact_backend(inst, time_limit=PROOF_S, workers=1)
    assert len(calls) == 2 and res.evaluation is calls[-1] and res.evaluation.ok
    assert calls[0].ok and calls[0] is not calls[-1]  # the warm start's
    assert res.truth is inst
    assert {j: o.finish for j, o in res.evaluation.outcomes.items()} == common.finish_minutes(inst, res.schedule)


def test_per_round_gap_nonnegative():
    from sensaopt.rolling import per_round_gaps

    inst = generate(GeneratorConfig(jobs=3, nodes=1, seed=2))
    rows = per_round_gaps(inst, "sensascale", window=3, time_limit=2.0)
    assert rows
    for r in rows:
        if r["optimum_proven"] and r.get("objective_diff") is not None:
            assert r["objective_diff"] >= -1e-6


def test_multi_node_job_and_heterogeneous_nodes():
    """A 12-GPU job must take one whole 8-GPU node plus part of another; two node
    types (no symmetry between them); both backends agree and the schedule validates."""
    big = NodeType("big", 8, 24, 500.0, 1)
    small = NodeType("small", 4, 16, 250.0, 2)
    jobs = (
        Job("a", 0.0, 12, 30.0, get_profile("bert"), deadline=60.0),
        Job("b", 0.0, 4, 20.0, get_profile("res18"), deadline=40.0),
        Job("c", 10.0, 2, 25.0, get_profile("deepspeech")),
    )
    inst = Instance("hetero", Cluster((big, small)), 10.0, jobs, source="hetero")
    a = solve_cpsat(inst, time_limit=PROOF_S, relax_time_limit=0)  # the multi-node model is the point
    b = solve_milp(inst, backend="highs", time_limit=PROOF_S, relax_time_limit=0)
    assert grid_optimal(a) and grid_optimal(b), (a.message, b.message)  # over the grid; the relaxation bounds the rest
    _check_result(inst, a)
    _check_result(inst, b)
    assert a.objective == pytest.approx(b.objective, abs=1e-6)
    segs = [s for s in a.schedule.segments if s.job == "a"]
    assert all(len(s.placements) == 2 for s in segs)


def test_highs_gets_the_model_pulp_gave_it():
    """The direct HiGHS backend passes HiGHS exactly the LP that PuLP's HiGHS interface
    built from the same model (columns by name, rows in order, same bounds, costs,
    integrality and matrix), so its runs are the former PuLP runs."""
    import numpy as np
    import pulp

    from sensaopt.exact.common import prepare
    from sensaopt.exact.milp import build_highs, build_milp
    from sensaopt.io import load_instance
    from sensaopt.solvers import SolverParams, TimeBudget
    from sensaopt.solvers.highs import _highs_model
    from sensaopt.warm_start import policy_warm_start

    inst = load_instance("instances/tiny-8gpu.json")
    data = prepare(inst, None, 2, False, 10_000, 10**6, policy_warm_start(inst)).data
    prob = build_milp(data).backend.prob
    ref = pulp.HiGHS(msg=False)
    ref.createAndConfigureSolver(prob)
    ref.buildSolverModel(prob)
    a = prob.solverModel.getLp()
    hb = build_highs(data).backend
    h, _ = _highs_model(hb, hb.columns(), SolverParams(), TimeBudget.start(10), False)
    b = h.getLp()
    assert (a.num_col_, a.num_row_) == (b.num_col_, b.num_row_) and a.num_col_ > 100
    for f in ("col_cost_", "col_lower_", "col_upper_", "row_lower_", "row_upper_", "integrality_"):
        assert np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f))), f
    for f in ("start_", "index_", "value_"):
        assert np.array_equal(np.asarray(getattr(a.a_matrix_, f)), np.asarray(getattr(b.a_matrix_, f))), f


@pytest.mark.parametrize("name, lexicographic", [("tiny-16gpu", True), pytest.param("tiny-8gpu", True, marks=pytest.mark.slow),  # 23 s
                                                   ("tiny-16gpu", False)])
def test_typed_reports_on_the_result_match_their_json_form(name, lexicographic):
    """What the phases prove reaches the Result typed (model size, horizon proof, loss
    proof, lexicographic and allocation reports); the JSON form holds the same facts
    under the ``params`` keys it always had, and reads back to the same reports."""
    from sensaopt.io import load_instance
    from sensaopt.result import Result

    inst = load_instance(name)
    res = solve_cpsat(inst, time_limit=60, workers=1, lexicographic=lexicographic)
    js = json.loads(json.dumps(res.to_dict(inst)))
    p = js["params"]
    assert res.model_size is not None and res.model_size.to_dict() == p["model_size"]
    assert res.horizon_proof is not None and res.horizon_proof.to_dict() == p["horizon_proof"]
    assert res.horizon == p["horizon"] == res.horizon_proof.horizon
    assert res.allocations is not None and res.allocations.to_dict() == p["allocations"]
    lex, check = p["lexicographic"], res.allocations
    if check.check == "relaxation":  # the loss floor valid over every allocation replaces the grid's (issue 24)
        assert res.loss_proof is not None and res.loss_proof.bound == check.loss_floor and not res.loss_proof.fixed
        assert lex is not False or not lexicographic
    elif not lexicographic:
        assert lex is False and res.loss_proof is None and res.lexicographic is None
    else:
        assert res.lexicographic is not None and res.lexicographic.to_dict() == lex
        p1 = res.lexicographic.phase1
        assert res.loss_proof is not None and res.loss_proof.fixed == (p1 is None)
        assert res.loss_proof.bound == (None if p1 is None else p1.loss_bound)
    back = Result.from_dict(js, inst)  # the JSON boundary both ways: the same reports (as far as JSON keeps them), same file
    assert (back.allocations, back.model_size, back.horizon) == (res.allocations, res.model_size, res.horizon)
    assert (back.lexicographic is None) == (res.lexicographic is None) and back.loss_proof == res.loss_proof
    assert back.to_dict(inst) == res.to_dict(inst)


def test_vars_tell_fixed_values_from_decisions():
    """``Indicators`` hold each key as a decision variable or a value the data fix (0/1),
    never both; the model's decisions are exactly what the warm start's complete hint sets."""
    from sensaopt.exact.common import hint_values, prepare
    from sensaopt.exact.cpsat import build_cpsat
    from sensaopt.exact.model.builder import model_variables
    from sensaopt.io import load_instance
    from sensaopt.warm_start import policy_warm_start

    inst = load_instance("tiny-16gpu")
    prep = prepare(inst, None, 2, True, 10_000, 10**6, policy_warm_start(inst))
    v = build_cpsat(prep.data).vars
    fixed = 0
    for ind in (v.rb, v.done, v.met):
        for key, x in ind.items():
            if ind.fixed(key) is None:
                assert ind.var(key) is x and not isinstance(x, int)
            else:
                assert ind.var(key) is None and x == ind.fixed(key) in (0, 1)
                fixed += 1
    assert fixed > 0  # the data fix some (before release, before the earliest finish)
    assert prep.hint is not None
    hint = hint_values(prep.data, v, prep.hint)
    assert {id(x) for x in hint} == {id(x) for x in model_variables(v)}
