"""The solvers layer (sensaopt.solvers): one registry and alias table, build and solve
through one interface, raw solver options passed through."""

from __future__ import annotations

import pytest

from sensaopt.errors import SensaoptError
from sensaopt.result import Status
from sensaopt.solvers import ALIASES, BACKENDS, SolverParams, TimeBudget, new_backend, resolve


def test_names_and_aliases_resolve_in_one_place():
    assert BACKENDS.names() == ["cbc", "cpsat", "highs"]
    assert resolve("milp") == resolve("milp:highs") == resolve("highspy") == "highs"
    assert resolve("milp:cbc") == "cbc" and resolve("cpsat") == "cpsat"
    assert set(ALIASES.values()) <= set(BACKENDS.names())
    with pytest.raises(SensaoptError, match="unknown solver backend 'gurobi'"):
        resolve("gurobi")


def _knapsack(name: str):
    """max 3a + 2b + 2c with a + b + c <= 2 (as a minimisation): optimum -5."""
    be = new_backend(name, "knapsack")
    a, b, c = (be.bool_var(n) for n in "abc")
    be.add(be.sum([a, b, c]) <= 2, "capacity")
    be.minimize(be.sum([-3 * a, -2 * b, -2 * c]))
    return be, (a, b, c)


@pytest.mark.parametrize("name", ["cpsat", "highs", "cbc"])
def test_every_backend_builds_and_solves_through_one_interface(name):
    be, (a, b, c) = _knapsack(name)
    assert be.name == name
    out = be.solve(TimeBudget.start(20), SolverParams(workers=1, seed=0))
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(-5) and out.bound == pytest.approx(-5)
    assert out.value is not None and round(out.value(a)) == 1 and round(out.value(b)) + round(out.value(c)) == 1


@pytest.mark.parametrize("name, good, bad", [
    ("cpsat", {"max_number_of_conflicts": 10_000}, {"no_such_parameter": 1}),
    ("highs", {"mip_rel_gap": 0.0}, {"no_such_option": 1}),
])
def test_raw_solver_options_pass_through(name, good, bad):
    be, _ = _knapsack(name)
    assert be.solve(TimeBudget.start(20), SolverParams(extra=good)).status == Status.OPTIMAL
    be, _ = _knapsack(name)
    with pytest.raises(SensaoptError, match="no_such"):
        be.solve(TimeBudget.start(20), SolverParams(extra=bad))


def test_a_hinted_backend_starts_from_its_hint():
    be, (a, b, c) = _knapsack("cbc")
    assert not be.hinted
    be.hint({a: 1, b: 1, c: 0})
    assert be.hinted
    out = be.solve(TimeBudget.start(20), SolverParams())
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(-5)
