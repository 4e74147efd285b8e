"""Shared fixtures. Real traces are read from ../shared/traces (override with the
SENSAOPT_TRACES environment variable); tests that need them skip when absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The time limit of tests that assert a proof (OPTIMAL) or a result that needs one (two runs
# alike): a guard against a hang, not a timing. They prove in seconds on a quiet machine; on
# a busy one (load 4-6) a 20 or 60 s limit ran out (issue 26). Timing is benchmarks/'s part.
PROOF_S = 600.0
INSTANCE_FILES = sorted((REPO / "instances").glob("*.json"))


def traces_dir() -> Path:
    return Path(os.environ.get("SENSAOPT_TRACES", REPO.parent / "shared" / "traces"))


@pytest.fixture
def shared_traces() -> Path:
    d = traces_dir()
    if not d.is_dir():
        pytest.skip(f"shared traces not found at {d} (set SENSAOPT_TRACES)")
    return d


EXACT_BACKENDS = ["cpsat", "highs", "cbc"]


@pytest.fixture(params=EXACT_BACKENDS)
def exact_backend(request):
    """A solve function ``(instance, **kw) -> Result`` for each exact backend (every
    test taking this fixture runs once per backend)."""
    from sensaopt.solve import solve_cpsat, solve_milp

    name = request.param
    if name == "cpsat":
        return lambda inst, **kw: solve_cpsat(inst, **kw)
    return lambda inst, **kw: solve_milp(inst, backend=name, **kw)


@pytest.fixture
def ruin_shares(monkeypatch) -> set[float]:
    """The time shares ruin and recreate's moves ruin with (``recreate._ruin``'s last
    argument), collected while the test runs."""
    from sensaopt.exact.decompositions import recreate

    shares: set[float] = set()
    ruin = recreate._ruin

    def spy(rng, uses, row_slot, size, share):
        shares.add(share)
        return ruin(rng, uses, row_slot, size, share)

    monkeypatch.setattr(recreate, "_ruin", spy)
    return shares
