"""Lexicographic solve (deadline loss first, then the whole objective): the same
proven optimum as the weighted one-phase solve, a valid bound when phase 1 is cut
short, and a JCT lower bound that no solution beats."""

from __future__ import annotations

from pathlib import Path

import pytest

from sensaopt.exact.common import hint_values, prepare
from sensaopt.exact.cpsat import build_cpsat
from sensaopt.exact.model.builder import Strength
from sensaopt.exact.phases.lexicographic import jct_lower_bound
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance
from sensaopt.metrics import compute_metrics
from sensaopt.result import SKIPPED_NO_OPEN, SKIPPED_ZERO_MISS, Status
from sensaopt.validator import check_schedule
from sensaopt.warm_start import policy_warm_start

from .conftest import PROOF_S
from .util import grid_optimal

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def _valid(inst, res):
    ev = check_schedule(inst, res.schedule)
    assert ev.errors == []
    assert res.objective == pytest.approx(compute_metrics(inst, ev).objective, abs=1e-9)


@pytest.mark.parametrize("backend", ["cpsat", pytest.param("highs", marks=pytest.mark.slow),  # HiGHS: 21 s
                                     pytest.param("cbc", marks=pytest.mark.slow)])  # CBC: 70 s
def test_same_optimum_as_weighted_solve(backend):
    """tiny-8gpu needs one deadline miss: both ways prove 100115.4 over the model's grid."""
    from sensaopt.solve import solve_cpsat, solve_milp

    def exact_backend(inst, **kw):
        return solve_cpsat(inst, **kw) if backend == "cpsat" else solve_milp(inst, backend=backend, **kw)

    inst = load_instance(INSTANCES / "tiny-8gpu.json")
    lex = exact_backend(inst, time_limit=PROOF_S, workers=2, relax_time_limit=0)  # the grid model is the point
    one = exact_backend(inst, time_limit=PROOF_S, workers=2, lexicographic=False, relax_time_limit=0)
    assert grid_optimal(lex) and grid_optimal(one), (lex.message, one.message)  # optimal over the grid; issue 24 for the rest
    _valid(inst, lex)
    assert lex.objective == pytest.approx(one.objective, abs=1e-6)
    assert lex.lexicographic is not None and lex.lexicographic.phase1 is not None
    assert lex.lexicographic.phase1.status == Status.OPTIMAL and lex.lexicographic.phase1.loss_bound == pytest.approx(1e5)
    assert one.lexicographic is None and one.to_dict()["params"]["lexicographic"] is False


@pytest.mark.parametrize("seed", [pytest.param(1, marks=pytest.mark.slow), 2])  # seed 1: 12 s
def test_bound_valid_when_phase1_is_cut_short(seed):
    """Phase 1 with almost no time: the final bound still never exceeds the optimum."""
    from sensaopt.solve import solve_cpsat

    inst = generate(GeneratorConfig(jobs=6, nodes=1, seed=seed, load=2.5))
    ref = solve_cpsat(inst, time_limit=PROOF_S, lexicographic=False, relax_time_limit=0)
    assert grid_optimal(ref)
    cut = solve_cpsat(inst, time_limit=60, phase1_share=1e-4)
    _valid(inst, cut)
    assert cut.bound <= ref.objective + 1e-6
    assert cut.objective >= ref.objective - 1e-6
    if cut.status == Status.OPTIMAL:
        assert cut.objective == pytest.approx(ref.objective, abs=1e-6)


def test_jct_lower_bound_is_below_any_solution():
    inst = load_instance(INSTANCES / "tiny-16gpu.json")
    prep = prepare(inst, None, 2, True, 10_000, 10**6, policy_warm_start(inst))
    v = build_cpsat(prep.data, Strength()).vars
    vals = hint_values(prep.data, v, prep.hint)
    assert vals
    loss = v.loss_const + sum(c * vals[x] for c, x in v.loss_terms)
    total = v.objective_const + sum(c * vals[x] for c, x in v.objective_terms)
    assert 0 <= jct_lower_bound(v) <= total - loss


def test_no_open_deadline_skips_phase1():
    """Without deadline variables (every deadline beyond the horizon) there is one phase."""
    from sensaopt.solve import solve_cpsat

    inst = generate(GeneratorConfig(jobs=3, nodes=1, seed=0, deadline_lo=20.0, deadline_hi=30.0))
    res = solve_cpsat(inst, time_limit=PROOF_S)
    assert res.status == Status.OPTIMAL
    assert res.lexicographic is not None and res.lexicographic.phase1 is None
    assert res.lexicographic.skipped in (SKIPPED_NO_OPEN, SKIPPED_ZERO_MISS)  # no deadline decision left to phase 1
    assert res.to_dict()["params"]["lexicographic"]["phase1"] == res.lexicographic.skipped


@pytest.mark.parametrize("share", [0, 1.5])
def test_phase1_share_checked(share):
    from sensaopt.errors import SensaoptError
    from sensaopt.solve import solve_cpsat

    with pytest.raises(SensaoptError, match="phase1_share"):
        solve_cpsat(load_instance(INSTANCES / "tiny-16gpu.json"), time_limit=5, phase1_share=share)
