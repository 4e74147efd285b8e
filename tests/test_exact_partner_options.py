"""``partner_options``: raw options of the cooperating backend, apart from the primary's."""

from __future__ import annotations

import pytest

from sensaopt.config import parse_settings
from sensaopt.errors import InputError
from sensaopt.exact.common import engine_of, partner_of
from sensaopt.exact.outcome import EXACT_OPTIONS, PARTNER_OPTIONS
from sensaopt.exact.settings import SolveSettings
from sensaopt.io import load_instance


def test_partner_options_reach_the_partner_only():
    s = SolveSettings(workers=1, cooperate=True, partner_options={"mip_heuristic_effort": 0.3})
    cp = engine_of("cpsat", s)
    partner = partner_of(cp, s)
    assert partner.backend == "highs" and partner.params.extra["mip_heuristic_effort"] == 0.3
    assert partner.params.extra["mip_abs_gap"] == EXACT_OPTIONS["highs"]["mip_abs_gap"]  # still exact
    assert "mip_heuristic_effort" not in cp.params.extra
    plain = partner_of(cp, SolveSettings(workers=1, cooperate=True))
    assert dict(plain.params.extra) == {**EXACT_OPTIONS["highs"], **PARTNER_OPTIONS["highs"]}


def test_partner_options_parse_from_json_and_bad_text_is_one_line():
    out = parse_settings(['partner_options={"mip_heuristic_effort": 0.3}'], SolveSettings, "the exact solve", field="--exact-option")
    assert out == {"partner_options": {"mip_heuristic_effort": 0.3}}
    with pytest.raises(InputError, match="partner_options.*JSON object"):
        parse_settings(["partner_options=[1, 2]"], SolveSettings, "the exact solve", field="--exact-option")


def test_a_cooperating_solve_records_its_partner_options_and_is_never_worse_than_its_start():
    from sensaopt.simulator import simulate
    from sensaopt.solve import solve

    inst = load_instance("tiny-8gpu")
    res = solve(inst, "cpsat", time_limit=20, workers=1, seed=0, cooperate=True, partner_options={"mip_heuristic_effort": 0.3})
    assert res.params["partner_options"] == {**PARTNER_OPTIONS["highs"], "mip_heuristic_effort": 0.3}
    assert res.objective is not None and res.objective <= simulate(inst, "sensascale").objective + 1e-6
    if res.bound is not None:
        assert res.bound <= res.objective + 1e-6
    plain = solve(inst, "cpsat", time_limit=20, workers=1, seed=0, cooperate=True)
    assert ("partner_options" in plain.params) == bool(PARTNER_OPTIONS["highs"])


def test_cpsat_runs_at_linearization_level_2_unless_told_otherwise():
    """The exact CP-SAT solve's own raw options (``EXACT_OPTIONS``, models/measurements.md,
    "Session 41"): level 2 by default, a ``solver_options`` value wins, and the Result records
    what ran."""
    from sensaopt.solve import solve

    assert dict(engine_of("cpsat", SolveSettings(workers=1)).params.extra) == {"linearization_level": 2}
    told = engine_of("cpsat", SolveSettings(workers=1, solver_options={"linearization_level": 0}))
    assert told.params.extra["linearization_level"] == 0
    assert "linearization_level" not in engine_of("highs", SolveSettings(workers=1)).params.extra
    inst = load_instance("tiny-8gpu")
    res = solve(inst, "cpsat", time_limit=20, workers=1, seed=0, solver_options={"linearization_level": 1})
    assert res.params["solver_options"] == {"linearization_level": 1}
    assert res.objective is not None and res.bound is not None and res.bound <= res.objective + 1e-6
