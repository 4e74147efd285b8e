"""min_run_slots written through a running count (``Strength(run_count=True)``) is the same
constraint set as the prefix sums, projected: same LP optimum, same MIP optimum, and the
warm start's values satisfy it (``models/formulation.md``, "min_run_slots as a running count")."""

from __future__ import annotations

import time

import pytest
from ortools.sat.python import cp_model

from sensaopt.exact.common import prepare
from sensaopt.exact.cpsat import build_cpsat
from sensaopt.exact.milp import build_highs
from sensaopt.exact.model.builder import Strength, to_objective
from sensaopt.exact.model.values import hint_values
from sensaopt.exact.outcome import exact_params
from sensaopt.exact.phases.allocation import LP_OPTIONS
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance
from sensaopt.solvers import SolverParams, TimeBudget
from sensaopt.solvers.cpsat import run_cpsat
from sensaopt.solvers.highs import lp_bound, run_highs
from sensaopt.warm_start import policy_warm_start
from tests.conftest import REPO

SPARSE, DENSE = Strength(run_count=True), Strength()


def _prep(inst):
    return prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))


def test_the_running_count_has_the_prefix_sums_lp_optimum():
    prep = _prep(load_instance(REPO / "instances" / "tiny-8gpu.json"))
    lps = []
    for strength, extra in ((DENSE, {}), (SPARSE, {}), (SPARSE, LP_OPTIONS)):
        mb = build_highs(prep.data, strength)
        lp = lp_bound(mb.backend, TimeBudget(600.0, time.perf_counter()), SolverParams(workers=1, extra=extra))
        assert lp is not None
        lps.append(to_objective(prep.data, lp))
    assert mb.vars.runs and not build_highs(prep.data, DENSE).vars.runs  # the count exists only when asked
    assert lps[1] == pytest.approx(lps[0], abs=1e-6)
    # interior point, no crossover: its safe dual bound is a bound (never above), and close
    assert lps[2] <= lps[0] + 1e-9
    assert lps[2] == pytest.approx(lps[0], rel=1e-4)


def test_the_warm_start_satisfies_the_running_count():
    """Every hinted value fixed: the sparse CP-SAT model stays feasible, and each count is
    the number of slots the warm start ran up to that slot."""
    prep = _prep(load_instance(REPO / "instances" / "tiny-8gpu.json"))
    mb = build_cpsat(prep.data, SPARSE)
    vals = hint_values(prep.data, mb.vars, prep.heuristic.schedule)
    assert vals and all(var in vals for var in mb.vars.runs.values())
    for (k, t), var in mb.vars.runs.items():
        assert vals[var] == sum(vals[mb.vars.x[key]] for key in mb.vars.x if key[0] == k and key[1] <= t)
    model: cp_model.CpModel = mb.backend.model
    for var, val in vals.items():
        model.add(var == int(round(val)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 60.0
    assert solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_same_optimum_with_the_running_count(backend):
    inst = generate(GeneratorConfig(jobs=4, nodes=1, seed=3))
    data = _prep(inst).data
    build, run = {"cpsat": (build_cpsat, lambda be, b: run_cpsat(be, b, SolverParams(workers=1))),
                  "highs": (build_highs, lambda be, b: run_highs(be, b, exact_params("highs", 1, 0)))}[backend]
    out = []
    for strength in (DENSE, SPARSE):
        budget = TimeBudget.start(60.0)
        res = run(build(data, strength, budget).backend, budget)
        if res.status.value != "OPTIMAL":
            pytest.skip(f"{backend} did not prove the 4-job instance in 60 s on this machine ({res.status.value})")
        out.append(to_objective(data, res.objective))
    assert out[1] == pytest.approx(out[0], abs=1e-6)


def test_the_safe_dual_bound_of_a_small_lp():
    """min x + y, x + 2y >= 2, 3x + y >= 3, 0 <= x, y <= 10: optimum 1.4 (x 0.8, y 0.6), by
    simplex and by interior point without crossover."""
    import highspy
    import numpy as np

    from sensaopt.solvers.highs import safe_dual_bound

    for extra in ({}, LP_OPTIONS):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for k, val in extra.items():
            h.setOptionValue(k, val)
        h.addVars(2, np.array([0.0, 0.0]), np.array([10.0, 10.0]))
        h.changeColsCost(2, np.array([0, 1], dtype=np.int32), np.array([1.0, 1.0]))
        h.addRows(2, np.array([2.0, 3.0]), np.array([highspy.kHighsInf] * 2), 4, np.array([0, 2], dtype=np.int32),
                  np.array([0, 1, 0, 1], dtype=np.int32), np.array([1.0, 2.0, 3.0, 1.0]))
        h.run()
        bound = safe_dual_bound(h)
        assert bound is not None and bound <= 1.4 + 1e-9
        assert bound == pytest.approx(1.4, abs=1e-6)
