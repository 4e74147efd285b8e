"""``cpsat_workers``: CP-SAT's search workers apart from the other backends' threads."""

from __future__ import annotations

import pytest

from sensaopt.exact.common import engine_of, partner_of
from sensaopt.exact.phases.allocation import bound_engine
from sensaopt.exact.settings import SolveSettings
from sensaopt.io import load_instance


@pytest.mark.parametrize("cpsat_workers, expect", [(None, 1), (6, 6)])
def test_cpsat_runs_its_own_workers_and_highs_keeps_the_threads(cpsat_workers, expect):
    s = SolveSettings(workers=1, cooperate=True, cpsat_workers=cpsat_workers)
    cp = engine_of("cpsat", s)
    assert cp.params.workers == expect and s.cpsat_threads == expect
    assert partner_of(cp, s).params.workers == 1  # HiGHS beside it: one thread
    assert bound_engine(cp, s).params.workers == 1  # the relaxation's HiGHS too
    hi = engine_of("highs", s)
    assert hi.params.workers == 1 and partner_of(hi, s).params.workers == expect


def test_a_solve_records_its_cpsat_workers_and_stays_exact():
    from sensaopt.solve import solve

    inst = load_instance("tiny-8gpu")
    plain = solve(inst, "cpsat", time_limit=10, workers=1, seed=0)
    wide = solve(inst, "cpsat", time_limit=10, workers=1, seed=0, cpsat_workers=4)
    assert wide.params["cpsat_workers"] == 4 and "cpsat_workers" not in plain.params
    if plain.status.value == "OPTIMAL" and wide.status.value == "OPTIMAL":
        assert wide.objective == pytest.approx(plain.objective)
    # each solve's bound holds for the other's schedule (both valid over the same problem)
    assert wide.bound <= plain.objective + 1e-6 and plain.bound <= wide.objective + 1e-6


def test_cpsat_workers_is_checked():
    from sensaopt.errors import ArgumentError

    with pytest.raises(ArgumentError, match="cpsat_workers"):
        SolveSettings.of("solve", {"cpsat_workers": 0})
