"""Completion-time cover cuts (sensaopt/exact/decompositions/cuts.py): valid on every schedule of a
job (brute force), the separation finds the most violated one, they lift the LP bound
where the LP idles a job before a fractional completion, and solving with them gives
the same optimum as without on every backend."""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace

import pytest

from sensaopt.exact.common import prepare
from sensaopt.exact.decompositions.cuts import FAMILY, CoverCut, is_valid_for, most_violated, separate, slack, with_cuts
from sensaopt.exact.model.builder import Strength, to_objective
from sensaopt.instance import Cluster, Instance, Job, NodeType, Overheads
from sensaopt.profiles import get_profile
from sensaopt.result import Status
from sensaopt.warm_start import policy_warm_start
from tests.conftest import EXACT_BACKENDS, REPO


def _job(release: int, need: int) -> SimpleNamespace:
    """What the cut functions read of a JobData: index, release slot, earliest completion."""
    return SimpleNamespace(k=0, release=release, earliest_done=release + need - 1)


def _schedules(release: int, need: int, horizon: int):
    """Every (run slots, completion slot) of one job in slots [0, horizon): it runs only
    from its release to its completion and at least ``need`` slots in between."""
    slots = range(release, horizon)
    for c in range(release + need - 1, horizon):
        span = [u for u in slots if u <= c]
        for k in range(need, len(span) + 1):
            for runs in itertools.combinations(span, k):
                yield set(runs), c


@pytest.mark.parametrize("release,need", [(0, 1), (0, 3), (2, 2), (1, 4)])
def test_every_cover_cut_holds_on_every_schedule(release, need):
    H = 8
    jd = _job(release, need)
    scheds = list(_schedules(release, need, H))
    checked = 0
    for t in range(jd.earliest_done, H):
        s = slack(jd, t)
        span = range(release, t + 1)
        for size in range(s + 1, len(span) + 1):
            for U in itertools.combinations(span, size):
                cut = CoverCut(0, t, U, size - s)
                assert all(is_valid_for(jd, cut, runs, c) for runs, c in scheds), (t, U)
                checked += 1
    assert checked > 0


def test_a_cut_with_one_more_on_the_right_is_not_valid():
    """The slack is tight: raising the coefficient by one cuts off a schedule (so the
    brute-force check above can fail)."""
    jd = _job(1, 3)
    t = 5
    s = slack(jd, t)
    U = tuple(range(1, t + 1))
    scheds = list(_schedules(1, 3, 8))
    assert all(is_valid_for(jd, CoverCut(0, t, U, len(U) - s), r, c) for r, c in scheds)
    assert not all(is_valid_for(jd, CoverCut(0, t, U, len(U) - s + 1), r, c) for r, c in scheds)


@pytest.mark.parametrize("seed", range(6))
def test_separation_finds_the_most_violated_set(seed):
    rnd = random.Random(seed)
    jd = _job(rnd.randint(0, 2), rnd.randint(1, 4))
    t = jd.earliest_done + rnd.randint(0, 3)
    runs = {u: rnd.choice([0.0, 0.1, 0.5, 0.9, 1.0]) for u in range(jd.release, t + 3)}
    done = rnd.choice([0.3, 0.6, 1.0])
    s = slack(jd, t)
    best = 1e-3
    span = range(jd.release, t + 1)
    for size in range(s + 1, len(span) + 1):
        for U in itertools.combinations(span, size):
            best = max(best, (size - s) * done - sum(runs[u] for u in U))
    cut = most_violated(jd, t, done, runs)
    if best <= 1e-3:
        assert cut is None
    else:
        assert cut is not None and cut.coef == len(cut.slots) - s
        assert cut.coef * done - sum(runs[u] for u in cut.slots) == pytest.approx(best)


def blocked_instance() -> Instance:
    """Job a (4 GPUs, 1.5 slots of work) from round 0; job b (4 GPUs, half a slot) only
    in round 1 (arrives at 10, deadline 20): a cannot run in round 1, so it completes at
    the end of round 2 at the earliest. The LP can set done[a, 1] = 1/2 with a idle in
    round 1; the cover cut run[a, 1] >= done[a, 1] forbids that. No change costs."""
    node = NodeType("n", 4, 48, 1000.0, 1)
    prof = get_profile("bert")
    R = 10.0
    per_slot = prof.peak * R
    jobs = (Job("a", 0.0, 4, 1.5 * per_slot, prof), Job("b", 10.0, 4, 0.5 * per_slot, prof, deadline=20.0))
    zero = Overheads(base_minutes=0.0, per_log2_gpu_minutes=0.0, migration_base_minutes=0.0, migration_per_log2_gpu_minutes=0.0,
                     resize_minutes=0.0)
    return Instance("blocked", Cluster((node,)), R, jobs, overheads=zero, source="test_exact_cuts.blocked_instance")


def test_cuts_lift_the_lp_bound_of_a_constructed_case():
    inst = blocked_instance()
    data = prepare(inst, None, 2, False, 10_000, 300_000, policy_warm_start(inst)).data
    sep = separate(data, Strength(), 30.0)
    before, after = to_objective(data, sep.lp_before), to_objective(data, sep.lp_after)
    # optimum: a in rounds 0 and 2 (JCT 30), b in round 1 (JCT 10): average 20 minutes
    assert before == pytest.approx(17.5, abs=1e-6)  # a "done" half at the end of round 1
    assert after == pytest.approx(20.0, abs=1e-6)
    assert any(c.t == 1 and c.slots == (1,) for c in sep.cuts)


def test_cuts_lift_tiny_8gpu_and_stay_below_the_heuristic():
    """tiny-8gpu within the SensaScale horizon: the LP misses the deadline conflict
    without cuts; with them its bound rises but never above a feasible schedule's
    objective (the SensaScale warm start lies in the model)."""
    from sensaopt.io import load_instance

    inst = load_instance(REPO / "instances" / "tiny-8gpu.json")
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))
    sep = separate(prep.data, Strength(), 30.0)
    before, after = to_objective(prep.data, sep.lp_before), to_objective(prep.data, sep.lp_after)
    assert after > before + 1.0
    assert after <= prep.heuristic.objective + 1e-6
    assert sep.stop == "none violated"


def _run(backend: str, data, cuts: bool):
    """The model of ``data`` on ``backend`` (with the cover cuts or not), solved to optimality."""
    from sensaopt.exact.cpsat import build_cpsat
    from sensaopt.exact.milp import build_highs, build_milp
    from sensaopt.exact.outcome import exact_params
    from sensaopt.solvers import SolverParams, TimeBudget
    from sensaopt.solvers.cbc import CbcOptions, run_cbc
    from sensaopt.solvers.cpsat import run_cpsat
    from sensaopt.solvers.highs import run_highs

    build_fn, run = {
        "cpsat": (build_cpsat, lambda be, b: run_cpsat(be, b, SolverParams(workers=1))),
        "highs": (build_highs, lambda be, b: run_highs(be, b, exact_params("highs", 1, 0))),
        "cbc": (build_milp, lambda be, b: run_cbc(be, b, CbcOptions.of(exact_params("cbc", 1, 0)), False)),
    }[backend]
    budget = TimeBudget.start(60.0)
    mb = (with_cuts(build_fn) if cuts else build_fn)(data, Strength(), budget)
    return mb, run(mb.backend, budget)


@pytest.mark.parametrize("backend", EXACT_BACKENDS)
@pytest.mark.parametrize("which", ["blocked", "gen4x1"])
def test_same_optimum_with_and_without_cuts(backend, which):
    from sensaopt.generate import GeneratorConfig, generate

    inst = blocked_instance() if which == "blocked" else generate(GeneratorConfig(jobs=4, nodes=1, seed=3))
    data = prepare(inst, None, 2, False, 10_000, 300_000, policy_warm_start(inst)).data
    _, plain = _run(backend, data, False)
    mb, cut = _run(backend, data, True)
    assert plain.status == Status.OPTIMAL and cut.status == Status.OPTIMAL
    assert to_objective(data, cut.objective) == pytest.approx(to_objective(data, plain.objective), abs=1e-6)
    if which == "blocked":
        assert to_objective(data, plain.objective) == pytest.approx(20.0, abs=1e-6)
        assert mb.vars.families.get(FAMILY, 0) >= 1


def test_no_cuts_in_the_shortfall_model():
    from sensaopt.exact.model.data import shortfall_data

    inst = blocked_instance()
    data = shortfall_data(prepare(inst, None, 2, False, 10_000, 300_000, policy_warm_start(inst)).data)
    mb, _ = _run("highs", data, True)
    assert FAMILY not in mb.vars.families
