"""Chronus baseline: lease helpers, admission by hand, the lease MILP against brute
force, counted fallbacks, and validated schedules on generated instances."""

from __future__ import annotations

import itertools
import logging
import random
from dataclasses import replace

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.instance import Cluster, Instance, Job, NodeType, SoftDeadline
from sensaopt.policies import make_policy
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.chronus import ChronusConfig, ChronusPolicy
from sensaopt.policies.chronus import selection as sel_mod
from sensaopt.policies.chronus.admission import admit, earliest_feasible_m, greedy_pack
from sensaopt.policies.chronus.lease import estimate_duration, leases_needed, maximum_lease, rounded_gpus
from sensaopt.policies.chronus.lease_step import lease_requests
from sensaopt.policies.chronus.rules import filled_by_filling
from sensaopt.policies.chronus.selection import LeaseJob, check_plans, greedy_selection, objective_value, solve_selection
from sensaopt.profiles import get_profile
from sensaopt.result import Status
from sensaopt.simulator import simulate
from sensaopt.validator import check_schedule

from .conftest import PROOF_S

FLAT = get_profile("bert")  # speed 1.0 at every allocation: planned duration = work


def test_lease_helpers():
    assert [rounded_gpus(g) for g in (1, 2, 3, 4, 5, 6, 7, 8, 12, 16)] == [1, 2, 4, 4, 8, 8, 8, 8, 12, 16]
    assert estimate_duration(60, 1, 20) == 67  # int(60 * 1.025 * 1.1) = int(67.65)
    assert estimate_duration(60, 8, 20) == 72  # int(60 * 1.1 * 1.1) = int(72.6)
    assert leases_needed(67, 20) == 4 and leases_needed(60, 20) == 3 and leases_needed(0, 20) == 0
    assert maximum_lease(100, 20, 20) == 4 and maximum_lease(99, 20, 20) == 3 and maximum_lease(10, 20, 20) == 0


def test_greedy_pack_by_hand():
    cap = [4, 4, 4]
    # A (r4, l2, m3) first (larger r): slots 2, 1; B (r2, l1, m1): slot 0
    assert greedy_pack([("A", 4, 2, 3), ("B", 2, 1, 1)], cap, 4) == {"A": [1, 2], "B": [0]}
    # adding C (r4, l1, m2): order A, C (same r and slack, larger m first), B;
    # C takes slot 0 (1 is full), leaving nothing for B
    assert greedy_pack([("A", 4, 2, 3), ("B", 2, 1, 1), ("C", 4, 1, 2)], cap, 4) is None
    dec = admit([("A", 4, 2, 3), ("B", 2, 1, 1)], ("C", 4, 1, 2), cap, 4, last_m=2)
    assert not dec.admitted
    # earliest deadline that would work for C: slot 3 (past the list: total capacity)
    assert earliest_feasible_m([("A", 4, 2, 3), ("B", 2, 1, 1)], ("C", 4, 1, 2), cap, 4) == 4
    dec = admit([("A", 4, 2, 3)], ("C", 4, 1, 2), cap, 4, last_m=2)
    assert dec.admitted and dec.plan == (0,)


def _tiny_instance(jobs, R=5.0) -> Instance:
    return Instance("tiny", Cluster((NodeType("n", 8, 24, 500.0, 1),)), R, tuple(jobs))


def _state(inst: Instance, r: int = 0) -> RoundState:
    js = [JobState(spec=j, remaining=j.work) for j in inst.jobs if inst.release_round(j) <= r]
    return RoundState(r, r * inst.round_minutes, inst.round_minutes, inst.cluster, inst.overheads, js)


def _by_hand_instance() -> Instance:
    """A to E of :func:`test_admission_by_hand` (its comments give the arithmetic)."""
    return _tiny_instance([
        Job("A", 0.0, 8, 60.0, FLAT, deadline=100.0),
        Job("B", 0.0, 8, 20.0, FLAT, deadline=120.0),
        Job("C", 0.0, 4, 20.0, FLAT, deadline=200.0),
        Job("D", 0.0, 2, 30.0, FLAT),
        Job("E", 0.0, 1, 20.0, FLAT, deadline=30.0),
    ])


@pytest.mark.parametrize("name", ["chronus", "chronus-clean"])
def test_admission_by_hand(name):
    # One 8-GPU node, R = 5, L = 20. At t = 0 the lease step runs first, then the
    # arrivals are admitted against the slots of the next lease (slot 0 = [20, 40)).
    # A: 8 GPUs, 60 min, deadline 100: est int(60*1.1*1.1)=72 -> l=4; m=(100-20)/20=4: slots 0-3.
    # B: 8 GPUs, 20 min, deadline 120: est 24 -> l=2; m=5: only slot 4 left -> unadmitted.
    # C: 4 GPUs (r 4), 20 min, deadline 200: est int(20*1.075*1.1)=23 -> l=2; m=9: slots 7, 8.
    # D: best effort.
    # E: 1 GPU, 20 min, deadline 30: m=0 -> unadmitted; it fits in the rest of lease 0, so
    #    it is force-guaranteed, and the artifact relabels it admitted (submitted in this lease).
    # (In the artifact B's rejected request stays in the packing lists for the rest of the
    # step, moved to the end of its binary search: C still packs.)
    inst = _by_hand_instance()
    pol = make_policy(name)
    assert isinstance(pol, ChronusPolicy)
    pol.reset(inst)
    out = pol.decide(_state(inst))
    art = name == "chronus"
    assert pol.classes == {"A": "admitted", "B": "unadmitted", "C": "admitted", "D": "best_effort",
                           "E": "admitted" if art else "unadmitted"}
    assert pol.stats.admitted == 2 and pol.stats.forced == 1 and pol.stats.relabelled_admitted == int(art)
    assert pol.state.jobs["A"].deadline_check == 100.0 and pol.state.jobs["C"].deadline_check == 200.0
    assert pol.state.jobs["E"].forced and pol.state.jobs["E"].lease_planned is not art  # relabelled: never planned by the lease MILP
    # nothing is guaranteed in lease 0: E (forced) first, then unadmitted/best-effort by
    # remaining x GPUs: D (best effort: est int(30*1.05*1.1)=34, x2 = 68), then B (24*8)
    # does not fit, then admitted C
    assert set(out) == {"E", "D", "C"}


def test_planner_alone():
    # the planner without the policy around it: the by-hand case above, with the artifact's rules
    from sensaopt.policies.chronus.planner import ChronusPlanner

    inst = _by_hand_instance()
    planner = ChronusPlanner(ChronusConfig(), inst)
    out = planner.plan(_state(inst))
    assert set(out) == {"E", "D", "C"}
    assert planner.state.classes == {"A": "admitted", "B": "unadmitted", "C": "admitted", "D": "best_effort", "E": "admitted"}
    assert planner.state.stats.admitted == 2 and planner.state.stats.forced == 1


def test_admitted_job_meets_deadline_end_to_end():
    jobs = [
        Job("A", 0.0, 8, 60.0, FLAT, deadline=100.0),
        Job("B", 0.0, 8, 20.0, FLAT, deadline=120.0),
        Job("C", 0.0, 4, 20.0, FLAT, deadline=200.0),
        Job("D", 0.0, 2, 30.0, FLAT),
    ]
    inst = _tiny_instance(jobs)
    pol = ChronusPolicy()
    res = simulate(inst, pol)
    ev = check_schedule(inst, res.schedule)
    assert ev.errors == []
    fin = {k: o.finish for k, o in ev.outcomes.items()}
    assert fin["A"] <= 100.0 and fin["C"] <= 200.0
    assert pol.stats.fallbacks == 0 and pol.stats.lease_solves >= 1


# ---------------------------------------------------------------- MILP vs brute force
def _brute(jobs: list[LeaseJob], cap: list[int], sign: float):
    """Best objective over every choice of (option, slot subset) per job; None if
    no choice plans every job."""
    per_job = []
    for j in jobs:
        ch = []
        for k, (m, _) in enumerate(j.options):
            for slots in itertools.combinations(range(m), j.l):
                ch.append((k, slots))
        per_job.append(ch)
    best = None
    for combo in itertools.product(*per_job):
        use = [0] * len(cap)
        for j, (_k, slots) in zip(jobs, combo):
            for t in slots:
                use[t] += j.r
        if any(u > c for u, c in zip(use, cap)):
            continue
        v = objective_value(jobs, {j.key: c for j, c in zip(jobs, combo)}, cap, sign)
        best = v if best is None else max(best, v)
    return best


def _micro(rng: random.Random):
    T = rng.randint(2, 4)
    jobs = []
    for a in range(rng.randint(1, 3)):
        r = rng.choice([1, 2, 4])
        l = rng.randint(1, 2)  # noqa: E741 (the paper's name)
        ms = sorted(rng.sample(range(l, T + 1), k=min(rng.randint(1, 2), T + 1 - l)))
        vals = [10.0, 8.0, 5.0][: len(ms)]
        jobs.append(LeaseJob(f"j{a}", r, l, tuple(zip(ms, vals))))
    cap = [rng.choice([2, 4, 5]) for _ in range(T)]
    return jobs, cap, rng.choice([1.0, -1.0])


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_milp_equals_brute_force(solver):
    rng = random.Random(7)
    n_feasible = n_infeasible = 0
    for _ in range(40):
        jobs, cap, sign = _micro(rng)
        best = _brute(jobs, cap, sign)
        sel = solve_selection(jobs, cap, sign, solver=solver, time_limit=PROOF_S)
        if best is None:
            assert sel.fallback and sel.status == Status.INFEASIBLE  # infeasible model: never silent
            check_plans(jobs, sel.plans, cap)
            n_infeasible += 1
        else:
            assert not sel.fallback and sel.status == Status.OPTIMAL
            assert set(sel.plans) == {j.key for j in jobs}
            check_plans(jobs, sel.plans, cap)
            assert sel.objective == pytest.approx(best, abs=1e-6)
            n_feasible += 1
    assert n_feasible >= 10 and n_infeasible >= 1


def test_certified_greedy_is_optimal():
    """When the greedy certifies (its objective reaches the upper bound), its plans are
    feasible and as good as the brute-force optimum; solve_selection then returns them
    as OPTIMAL without a MILP. Some problems certify, some do not (then HiGHS solves)."""
    from sensaopt.policies.chronus.selection import certified_greedy, upper_bound

    rng = random.Random(11)
    certified = declined = 0
    for _ in range(300):
        jobs, cap, sign = _micro(rng)
        best = _brute(jobs, cap, sign)
        if best is not None:
            assert upper_bound(jobs, cap, sign) >= best - 1e-9
        got = certified_greedy(jobs, cap, sign)
        if got is None:
            declined += 1
            continue
        certified += 1
        plans, value = got
        assert best is not None and set(plans) == {j.key for j in jobs}
        check_plans(jobs, plans, cap)
        assert value == pytest.approx(best, abs=1e-9) == objective_value(jobs, plans, cap, sign)
        sel = solve_selection(jobs, cap, sign, certify_greedy=True)
        assert sel.certified and sel.status == Status.OPTIMAL and sel.plans == plans
    assert certified >= 30 and declined >= 30


def test_certified_greedy_counted():
    inst = generate(GeneratorConfig(jobs=30, seed=2))
    pol = ChronusPolicy(certify_greedy=True)
    simulate(inst, pol)
    st = pol.stats
    assert st.certified >= 1 and st.certified <= st.milp_optimal
    assert st.milp_optimal + st.milp_time_limit + st.fallbacks == st.lease_solves
    off = ChronusPolicy()  # default: every lease solved by the MILP
    simulate(inst, off)
    assert off.stats.certified == 0 and off.stats.lease_solves >= 1


def test_tie_break_sign():
    # one job, 1 lease needed within 2 slots: '+' runs it now, '-' defers it
    jobs = [LeaseJob("a", 2, 1, ((2, 10.0),))]
    assert solve_selection(jobs, [4, 4], 1.0).plans["a"] == (0, (0,))
    assert solve_selection(jobs, [4, 4], -1.0).plans["a"] == (0, (1,))


def test_soft_deadline_option_by_value():
    # capacity lets only one of two jobs meet its first deadline; the second takes its
    # soft option: objective 10 + 8
    jobs = [LeaseJob("a", 4, 1, ((1, 10.0), (2, 8.0))), LeaseJob("b", 4, 1, ((1, 10.0), (2, 8.0)))]
    sel = solve_selection(jobs, [4, 4], 1.0)
    assert sorted(k for k, _ in sel.plans.values()) == [0, 1]


def test_one_model_for_both_solvers():
    """HiGHS gets the documented objective, CP-SAT the same times 1000·max C (integers):
    where the tie-break (-1 for slot 0) outweighs a value difference (0.5), both take
    the later, lower-valued option (9.5 > 10 - 1)."""
    jobs = [LeaseJob("a", 4, 1, ((1, 10.0), (2, 9.5)))]
    for s in ("highs", "cpsat"):
        sel = solve_selection(jobs, [4, 4], -1.0, solver=s)
        assert sel.plans == {"a": (1, (1,))} and sel.objective == pytest.approx(9.5), s
        assert solve_selection(jobs, [4, 4], 1.0, solver=s).plans == {"a": (0, (0,))}
    with pytest.raises(ValueError, match="unknown lease solver"):
        solve_selection(jobs, [4, 4], solver="gurobi")


def test_greedy_fallback_by_hand():
    # sorted (-value, -r, slack, -m): b (r4) first -> its latest slot 1; a (r2) -> slot 0
    jobs = [LeaseJob("a", 2, 1, ((2, 10.0),)), LeaseJob("b", 4, 1, ((2, 10.0),))]
    assert greedy_selection(jobs, [4, 4]) == {"b": (0, (1,)), "a": (0, (0,))}


def test_fallback_is_counted_and_logged(monkeypatch, caplog):
    def boom(*a, **k):
        raise RuntimeError("solver down")

    monkeypatch.setattr(sel_mod.lease_model, "run_lease_model", boom)
    inst = generate(GeneratorConfig(jobs=12, seed=3))
    pol = ChronusPolicy()
    with caplog.at_level(logging.WARNING):
        res = simulate(inst, pol)
    assert check_schedule(inst, res.schedule).errors == []
    assert pol.stats.fallbacks >= 1
    assert pol.stats.milp_optimal + pol.stats.milp_time_limit + pol.stats.fallbacks == pol.stats.lease_solves
    assert any("error: RuntimeError" in r for r in pol.stats.fallback_reasons)
    assert any("greedy fallback" in r.message for r in caplog.records)
    assert res.params["policy_stats"]["fallbacks"] == pol.stats.fallbacks  # in the Result too


def test_greedy_solver_counts_every_lease_as_fallback():
    inst = generate(GeneratorConfig(jobs=10, seed=1))
    pol = ChronusPolicy(solver="greedy")
    simulate(inst, pol)
    assert pol.stats.fallbacks == pol.stats.lease_solves > 0


# ---------------------------------------------------------------- whole runs
def _with_soft(inst: Instance, seed: int) -> Instance:
    rng = random.Random(seed)
    jobs = []
    for j in inst.jobs:
        if j.deadline is not None and rng.random() < 0.6:
            span = j.deadline - j.arrival
            sd = tuple(SoftDeadline(j.deadline + f * span, v) for f, v in ((0.25, 8.0), (0.5, 5.0), (1.0, 2.0)))
            j = replace(j, value=10.0, soft_deadlines=sd)
        jobs.append(j)
    return inst.with_jobs(jobs)


@pytest.mark.parametrize("R", [10.0, 5.0, 3.0, 7.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_generated_instances_validate(R, seed):
    cfg = GeneratorConfig(jobs=30, nodes=3, seed=seed, round_minutes=R, best_effort_fraction=0.2,
                          gpu_mix=((1, 0.5), (2, 0.2), (3, 0.05), (4, 0.1), (8, 0.1), (12, 0.05)))
    inst = _with_soft(generate(cfg), seed)
    pol = make_policy("chronus")
    res = simulate(inst, pol)
    ev = check_schedule(inst, res.schedule)
    assert ev.errors == []
    assert res.metrics.finished == len(inst.jobs)
    st = pol.stats
    assert st.lease_rounds == {10.0: 2, 5.0: 4, 3.0: 7, 7.0: 3}[R]
    assert st.admitted + st.unadmitted + st.best_effort == len(inst.jobs)
    assert st.fallbacks == 0


@pytest.mark.parametrize("R", [5.0, 7.0])
def test_clean_reading_validates(R):
    cfg = GeneratorConfig(jobs=30, nodes=3, seed=0, round_minutes=R, best_effort_fraction=0.2,
                          gpu_mix=((1, 0.5), (2, 0.2), (4, 0.1), (8, 0.15), (12, 0.05)))
    inst = _with_soft(generate(cfg), 0)
    pol = make_policy("chronus-clean")
    res = simulate(inst, pol)
    assert check_schedule(inst, res.schedule).errors == [] and res.metrics.finished == len(inst.jobs)
    assert pol.stats.filled == 0 and pol.stats.relabelled_admitted == 0


def test_admission_every_5_minutes_when_rounds_are_short():
    # R = 2: admission every floor(5/2 + 1/2) = 3 rounds (rounds 0, 3, 6, ...); a job
    # released in round 1 stays unseen (not run) until round 3 although GPUs are free
    jobs = [Job("a", 0.0, 1, 30.0, FLAT, deadline=200.0), Job("b", 2.0, 1, 30.0, FLAT, deadline=200.0)]
    inst = _tiny_instance(jobs, R=2.0)
    pol = ChronusPolicy()
    pol.reset(inst)
    assert pol.state.clock.admission_every_rounds == 3 and pol.state.clock.lease_rounds == 10
    assert set(pol.decide(_state(inst, 0))) == {"a"}
    assert set(pol.decide(_state(inst, 1))) == {"a"}
    assert "b" not in pol.classes
    assert set(pol.decide(_state(inst, 3))) == {"a", "b"}
    assert pol.classes["b"] == "admitted"


def test_cpsat_option_runs():
    inst = generate(GeneratorConfig(jobs=15, seed=2))
    pol = ChronusPolicy(ChronusConfig(solver="cpsat"))
    res = simulate(inst, pol)
    assert check_schedule(inst, res.schedule).errors == []
    assert pol.stats.fallbacks == 0


# ---------------------------------------------------------------- the artifact's behaviour vs the clean reading
def _runs_in_round(res, r: int) -> set[str]:
    return {seg.job for seg in res.schedule.segments if seg.start <= r < seg.end}


def test_filled_by_filling_minutes():
    # released at minute M: the odd-minute pass gets it unless M is a 5-minute step or
    # M is even and M + 1 is one
    assert [M for M in range(1, 21) if filled_by_filling(M)] == [1, 2, 3, 6, 7, 8, 9, 11, 12, 13, 16, 17, 18, 19]
    assert filled_by_filling(6.5) and not filled_by_filling(9.5)  # released at 7 and at 10


@pytest.mark.parametrize("x_work, hopeless_first", [(7.0, True), (10.0, False)])
def test_filling_serves_hopeless_first(x_work, hopeless_first):
    # One 8-GPU node, R = 5, lease = 4 rounds. X (best effort, least remaining) runs
    # first and ends at minute x_work in round 1. H (SLO, deadline 20, 30 min) is hopeless
    # from the start; B is best effort. In round 2 (inside lease 0) X's GPUs go to the
    # artifact's odd-minute filling pass when X ended at minute 7 (hopeless jobs first),
    # and to the 5-minute order (best effort before hopeless) when it ended at minute 10.
    jobs = [Job("X", 0.0, 8, x_work, FLAT), Job("H", 0.0, 8, 30.0, FLAT, deadline=20.0), Job("B", 0.0, 8, 30.0, FLAT)]
    inst = _tiny_instance(jobs)
    for name in ("chronus", "chronus-clean"):
        pol = make_policy(name)
        res = simulate(inst, pol)
        assert check_schedule(inst, res.schedule).errors == []
        assert _runs_in_round(res, 0) == _runs_in_round(res, 1) == {"X"}
        assert pol.classes["H"] == "hopeless"
        art_fill = name == "chronus" and hopeless_first
        assert _runs_in_round(res, 2) == ({"H"} if art_fill else {"B"}), name
        assert pol.stats.filled == int(art_fill)


def test_overrun_demotes_any_running_job_in_the_artifact():
    # best effort, 1 GPU, 20 min planned but running at half speed: estimate
    # int(20*1.025*1.1) = 22 min; after 5 rounds (25 min) it has overrun it. The artifact
    # demotes whatever runs past its estimate (to unadmitted, fake-forced); the clean
    # reading only admitted jobs.
    inst = _tiny_instance([Job("Q", 0.0, 1, 20.0, FLAT, speed_factor=0.5)])
    for name, cls, overruns in (("chronus", "unadmitted", 1), ("chronus-clean", "best_effort", 0)):
        pol = make_policy(name)
        simulate(inst, pol)
        assert pol.classes["Q"] == cls and pol.stats.overruns == overruns, name


@pytest.mark.parametrize("name", ["chronus", "chronus-clean"])
def test_admitted_job_overrunning_is_demoted(name):
    # admitted (1 GPU, 30 min, deadline 500; estimate int(30*1.025*1.1) = 33 min) but
    # running at half speed: at the lease boundary of minute 40 it has run 40 >= 33
    # minutes and is demoted to unadmitted in both readings
    inst = _tiny_instance([Job("Q", 0.0, 1, 30.0, FLAT, deadline=500.0, speed_factor=0.5)])
    pol = make_policy(name)
    res = simulate(inst, pol)
    assert pol.classes["Q"] == "unadmitted" and pol.stats.overruns == 1 and pol.stats.admitted == 1
    assert res.metrics.finished == 1


def test_soft_job_admission_picks_the_artifacts_deadline():
    # 8 GPUs, 60 min: estimate 72 -> 4 leases; slots from minute 20.
    # S1: deadlines 50 (value 10) and 300 (value 5): the first allows 1 slot < 4. The
    #     artifact packs a job on its first deadline -> unadmitted, then hopeless against
    #     that first deadline (0 + 60 > 50); the clean reading admits it on its last.
    # S2: deadlines 120 (5 slots) and 300: admitted in both, held to its last deadline
    #     snapped to a lease boundary (300).
    for name in ("chronus", "chronus-clean"):
        for deadlines, cls in (((50.0, 300.0), {"chronus": "hopeless", "chronus-clean": "admitted"}),
                               ((120.0, 300.0), {"chronus": "admitted", "chronus-clean": "admitted"})):
            job = Job("S", 0.0, 8, 60.0, FLAT, deadline=deadlines[0], value=10.0, soft_deadlines=(SoftDeadline(deadlines[1], 5.0),))
            inst = _tiny_instance([job])
            pol = make_policy(name)
            pol.reset(inst)
            pol.decide(_state(inst))
            assert pol.classes["S"] == cls[name], (name, deadlines)
            if cls[name] == "admitted":
                assert pol.state.jobs["S"].deadline_check == 300.0


def test_artifact_reoffers_every_deadline_option_at_each_lease():
    # a planned soft job: the artifact's lease MILP offers all its options again (its plan
    # may move to a more valuable deadline); the clean reading keeps the planned option
    job = Job("S", 0.0, 1, 30.0, FLAT, deadline=200.0, value=10.0, soft_deadlines=(SoftDeadline(400.0, 5.0),))
    inst = _tiny_instance([job])
    for name, n_opts in (("chronus", 2), ("chronus-clean", 1)):
        pol = make_policy(name)
        pol.reset(inst)
        pol.decide(_state(inst))
        cj = pol.state.jobs["S"]
        cj.option, cj.plan = 1, (5, 6)
        lease_jobs, opt_idx = lease_requests(pol.state, pol.rules, {"S": _state(inst).jobs[0]}, 20.0)
        assert len(lease_jobs[0].options) == n_opts and opt_idx["S"] == ([0, 1] if n_opts == 2 else [1]), name


def test_artifact_checks_preempted_jobs_for_hope_at_a_lease_boundary():
    # U: 8 GPUs, 30 min, deadline 35, unadmitted (no slot before 35), running alone at
    # half speed. At the boundary of minute 20 it has 20 min of work left = 40 minutes:
    # 20 + 40 > 35. The artifact preempts every job there and finds it hopeless; the
    # clean reading checks only jobs that did not run in the last round.
    inst = _tiny_instance([Job("U", 0.0, 8, 30.0, FLAT, deadline=35.0, speed_factor=0.5)])
    for name, hopeless in (("chronus", 1), ("chronus-clean", 0)):
        pol = make_policy(name)
        simulate(inst, pol)
        assert pol.stats.unadmitted == 1 and pol.stats.hopeless == hopeless, name


@pytest.mark.parametrize("soft", [True, False])
def test_artifact_rejection_cascades_within_an_admission_step(soft):
    # J (1 GPU, 60 min, first deadline 30: no lease slot before it) and K (30 min,
    # deadline 300, easy) arrive in the same 5-minute step, J first. The artifact keeps
    # J's entries in its packing lists for the rest of the step: a soft J is packed on its
    # first deadline, which cannot pack, so K is rejected too; a strict J's only entry was
    # moved to the end of its binary search and packs, so K is admitted. The clean
    # reading admits K either way. (K does not fit in lease 0's rest: not forced.)
    sd = (SoftDeadline(40.0, 5.0),) if soft else ()
    jobs = [Job("J", 0.0, 1, 60.0, FLAT, deadline=30.0, value=10.0, soft_deadlines=sd), Job("K", 0.0, 1, 30.0, FLAT, deadline=300.0)]
    inst = _tiny_instance(jobs)
    for name, k_cls in (("chronus", "unadmitted" if soft else "admitted"), ("chronus-clean", "admitted")):
        pol = make_policy(name)
        pol.reset(inst)
        pol.decide(_state(inst))
        assert pol.classes["J"] != "admitted" and pol.classes["K"] == k_cls and pol.stats.forced == 0, name
