"""Column generation and branch and price (sensaopt/exact/decompositions/pricing.py, colgen.py,
branch_price.py): pricing is exact (brute force over every schedule of a job), the
columns cost what the model and the validator say, the Dantzig–Wolfe bound is valid,
branch and price proves a known optimum, and the objective's granularity rounds bounds
without ever passing an optimum."""

from __future__ import annotations

import itertools
import random
import time

import pytest

from sensaopt.exact.common import granular_proof, make_result, prepare
from sensaopt.exact.cpsat import build_cpsat
from sensaopt.exact.decompositions.branch_price import branch_and_price, scaled_value
from sensaopt.exact.decompositions.colgen import Master, column_generation, schedule_of_columns, start_columns
from sensaopt.exact.decompositions.pricing import JobPricer, JobRule, job_cost
from sensaopt.exact.model.builder import objective_step, round_bound, to_objective
from sensaopt.exact.model.data import JobData, ModelData, hard_data, placements_of
from sensaopt.exact.phases.deadline_hard import branch_and_price_after
from sensaopt.instance import Change
from sensaopt.io import load_instance
from sensaopt.result import Status
from sensaopt.solve import solve_cpsat
from sensaopt.solvers import SolveOutcome, TimeBudget
from sensaopt.validator import check_schedule
from sensaopt.warm_start import policy_warm_start
from tests.conftest import PROOF_S, REPO


@pytest.fixture(scope="module")
def tiny16():
    inst = load_instance(REPO / "instances" / "tiny-16gpu.json")
    return prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))


def _brute(data: ModelData, jd: JobData, prices: dict[tuple[int, int], float], rule: JobRule, last: int) -> float:
    """The cheapest schedule of ``jd`` over slots [release, last] obeying ``rule``, by
    enumerating every slot's choice (idle or a pair) and replaying the model's units."""
    slots = range(jd.release, last + 1)
    best = float("inf")
    forced = dict(rule.forced)
    for choice in itertools.product([None, *range(len(jd.pairs))], repeat=len(slots)):
        prog, ran, prev, price = 0, False, None, 0.0
        for t, b in zip(slots, choice):
            if (b is None and t in forced) or (b is not None and ((t, b) in rule.banned or forced.get(t, b) != b)):
                break
            if b is None:
                prev = None
                continue
            pair = jd.pairs[b]
            prog += jd.units(data.change(jd, ran, prev, pair), pair[1])
            price += prices[t, b]
            ran, prev = True, placements_of(data, jd, pair)
            if prog >= jd.work_units:  # complete at the end of t: the rest of the choice must be idle
                rest = choice[t - jd.release + 1:]
                if rule.lo <= t <= rule.hi and t >= max(forced, default=-1) and all(c is None for c in rest):
                    best = min(best, price + job_cost(data, jd, t))
                break
    return best


@pytest.mark.parametrize("job,last,seed", [("j2", 7, 0), ("j2", 7, 1), ("j3", 6, 2), ("j3", 6, 3)])
@pytest.mark.parametrize("rule_kind", ["none", "window", "banned", "forced"])
def test_pricing_finds_the_cheapest_schedule(tiny16, job, last, seed, rule_kind):
    data = tiny16.data
    jd = next(j for j in data.jobs if j.id == job)
    rng = random.Random(seed)
    slots = list(data.slots(jd))
    prices = {(t, b): rng.choice([0.0, 0.0, rng.uniform(0, 3e4), rng.uniform(0, 2e5)])
              for t in slots for b in range(len(jd.pairs))}
    rule = {"none": JobRule(hi=last),
            "window": JobRule(lo=jd.release + 2, hi=last),
            "banned": JobRule(hi=last, banned=frozenset({(jd.release, 0), (jd.release + 1, 1), (jd.release + 1, 0)})),
            "forced": JobRule(hi=last, forced=((jd.release + 2, len(jd.pairs) - 1),))}[rule_kind]
    table = [[prices[t, b] for b in range(len(jd.pairs))] for t in slots]
    total, col = JobPricer.of(data, jd).price(table, rule)
    want = _brute(data, jd, prices, rule, last)
    assert total == pytest.approx(want, rel=1e-12, abs=1e-6)
    assert col is not None and rule.allows(col)
    assert col.cost + sum(prices[t, b] for t, b in col.runs) == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("job,last,seed", [("j2", 7, 0), ("j3", 6, 2), ("j2", 7, 4)])
def test_pricing_under_a_cutoff_finds_the_cheapest_schedule_below_it_or_a_bound(tiny16, job, last, seed):
    """With a cutoff above the cheapest schedule, pricing returns that schedule (the
    label pruning is exact); with one at or below it, no column and a value that is a
    lower bound of every schedule (brute force) and at least the cutoff."""
    data = tiny16.data
    jd = next(j for j in data.jobs if j.id == job)
    rng = random.Random(seed)
    slots = list(data.slots(jd))
    prices = {(t, b): rng.choice([0.0, rng.uniform(0, 3e4), rng.uniform(0, 2e5)]) for t in slots for b in range(len(jd.pairs))}
    table = [[prices[t, b] for b in range(len(jd.pairs))] for t in slots]
    rule = JobRule(hi=last)
    want = _brute(data, jd, prices, rule, last)
    pricer = JobPricer.of(data, jd)
    total, col = pricer.price(table, rule, want + 1.0)
    assert total == pytest.approx(want, rel=1e-12, abs=1e-6) and col is not None
    for cutoff in (want, want - 1.0, want * 0.5):
        total, col = pricer.price(table, rule, cutoff)
        assert col is None
        assert cutoff - 1e-6 <= total <= want + 1e-6
    assert pricer.price(table, JobRule(hi=jd.release - 1), want + 1.0) == (float("inf"), None)  # no slot at all: no schedule


def test_grouped_predecessors_match_the_pairwise_search(tiny16):
    """The grouped search (same pattern = resize, other = migration) gives the pairwise search's optimum."""
    data = tiny16.data
    for jd in data.jobs:
        p = JobPricer.of(data, jd)
        assert p.grouped
        rng = random.Random(jd.k)
        table = [[rng.choice([0.0, rng.uniform(0, 1e5)]) for _ in jd.pairs] for _ in data.slots(jd)]
        a = p.price(table)[0]
        p.grouped = False
        assert p.price(table)[0] == pytest.approx(a, rel=1e-12)


def test_columns_of_a_schedule_cost_its_validated_objective(tiny16):
    data = tiny16.data
    master = Master(data, tiny16.hint)
    cols = start_columns(data, master.pricers, tiny16.hint)
    assert len(cols) == data.n
    assert to_objective(data, sum(c.cost for c in cols)) == pytest.approx(tiny16.heuristic.objective)
    sched = schedule_of_columns(data, cols)
    assert not check_schedule(data.instance, sched).errors
    assert scaled_value(data, sched) == sum(c.cost for c in cols)


def test_objective_step_divides_every_objective_and_rounding_never_passes_it(tiny16):
    data = tiny16.data
    step = objective_step(data)
    assert step > 1
    value = scaled_value(data, tiny16.hint)
    assert value is not None and value % step == 0
    assert round_bound(data, value) == value
    assert round_bound(data, value - step + 0.5) == value
    assert round_bound(data, value - step) == value - step
    assert granular_proof(Status.TIME_LIMIT, "", value, value - 0.25)[0] == Status.OPTIMAL
    assert granular_proof(Status.TIME_LIMIT, "", value, value - step)[0] == Status.TIME_LIMIT
    assert granular_proof(Status.FEASIBLE, "", value, value)[0] == Status.FEASIBLE


def test_dantzig_wolfe_bound_is_valid_and_branch_and_price_proves_the_optimum(tiny16):
    data = tiny16.data
    exact = solve_cpsat(tiny16.data.instance, time_limit=PROOF_S, workers=1)
    assert exact.status == Status.OPTIMAL
    cg = column_generation(data, 30, start=tiny16.hint)
    assert cg.stop == "converged" and cg.bound is not None
    assert to_objective(data, cg.bound) <= exact.objective + 1e-9
    bp = branch_and_price(data, 60, start=tiny16.hint)
    assert bp.proven and bp.open == 0 and bp.incumbent is not None and bp.schedule is not None
    assert to_objective(data, bp.incumbent) == pytest.approx(exact.objective)
    assert bp.root is not None and bp.root <= bp.incumbent


def test_branch_and_price_out_of_time_reports_a_valid_bound_only():
    inst = load_instance(REPO / "instances" / "tiny-8gpu.json")
    prep = prepare(inst, 35, 2, True, 10_000, 300_000, policy_warm_start(inst))
    bp = branch_and_price(prep.data, 1.0, start=prep.hint)
    assert not bp.proven and bp.open > 0
    assert bp.bound is not None and to_objective(prep.data, bp.bound) <= 100115.4 + 1e-6  # the proven optimum at H = 35


def test_deadline_hard_phase_takes_branch_and_prices_proof(tiny16):
    """The solver's run proved nothing (no incumbent, no bound): branch and price,
    started from the zero-miss schedule, closes the search and the Result is OPTIMAL
    with a schedule the validator accepts."""
    data = hard_data(tiny16.data)
    mb = build_cpsat(data)
    out = SolveOutcome(Status.TIME_LIMIT, None, None, None, "stub run", 0.0)
    out, bp = branch_and_price_after(mb, out, tiny16.hint, TimeBudget.start(60))
    assert bp.proven and out.status == Status.OPTIMAL and out.value is not None
    res = make_result("cpsat", mb, out, 0.0, {})
    assert res.status == Status.OPTIMAL and not res.evaluation.errors
    assert res.objective == pytest.approx(res.bound) == pytest.approx(78.0)


def test_solve_with_branch_and_price_keeps_the_proven_optimum(tiny16):
    res = solve_cpsat(tiny16.data.instance, time_limit=PROOF_S, workers=1, branch_price=True)
    assert res.status == Status.OPTIMAL and res.objective == pytest.approx(78.0)
    assert not res.evaluation.errors


def test_change_kinds_follow_the_validator(tiny16):
    data = tiny16.data
    jd = next(j for j in data.jobs if j.id == "j1")
    p = JobPricer.of(data, jd)
    for a, (pa, _) in enumerate(jd.pairs):
        for b, (pb, _) in enumerate(jd.pairs):
            want = Change.NONE if a == b else Change.RESIZE if pa == pb else Change.MIGRATION
            assert p.kinds[a][b] is want


def test_a_resolved_highs_model_gets_its_limit_from_now(tiny16):
    """HiGHS compares time_limit with its run time summed over every run() of the object:
    a re-solve (the master LP, cut separation) must add the time already used."""
    from sensaopt.solvers.highs import limit_from_now

    master = Master(tiny16.data, tiny16.hint)
    master.solve(time.monotonic() + 30)
    used = master.h.getRunTime()
    assert used > 0
    limit_from_now(master.h, 5.0)
    assert master.h.getOptionValue("time_limit")[1] == pytest.approx(used + 5.0, abs=0.05)


def test_an_integral_node_the_validator_values_higher_proves_nothing(tiny16, monkeypatch):
    """If the validator valued a node's schedule above the node's bound (the model's
    rounded-up units finishing a job earlier), the node must stay a bound, not a proof."""
    import sensaopt.exact.decompositions.branch_price as bpm

    data = tiny16.data
    step = objective_step(data)
    real = bpm.scaled_value
    monkeypatch.setattr(bpm, "scaled_value", lambda d, s: None if real(d, s) is None else real(d, s) + 2 * step)
    bp = branch_and_price(data, 60, start=tiny16.hint)
    assert not bp.proven
    assert bp.bound is not None and to_objective(data, bp.bound) <= 78.0 + 1e-9  # still a valid bound of the optimum
