"""The exact models charge restart, migration and resize exactly as the validator does
(``models/formulation.md``, "Changes"): on micro instances where each kind of change
moves the optimum, every backend's proven optimum equals the best of every schedule
enumerated and scored by the validator and the metrics."""

from __future__ import annotations

import itertools

import pytest

from sensaopt.exact.common import prepare
from sensaopt.exact.model.builder import Strength, build
from sensaopt.exact.model.data import build_data, placements_of
from sensaopt.instance import Change, Cluster, Instance, Job, NodeType, Overheads
from sensaopt.metrics import compute_metrics
from sensaopt.profiles import SensitivityProfile
from sensaopt.result import Status
from sensaopt.schedule import Placement, Schedule
from sensaopt.solvers import SolverParams, TimeBudget
from sensaopt.solvers.cpsat import CpSatBackend, run_cpsat
from sensaopt.validator import check_schedule
from sensaopt.warm_start import policy_warm_start

from .conftest import PROOF_S
from .util import grid_optimal

# two per-GPU options: 1 core at speed 0.5, 2 cores at speed 1.0 (one memory level)
TWO = SensitivityProfile("two-options", (1.0, 2.0), (4.0,), ((0.5,), (1.0,)))
ZERO = Overheads(0.0, 0.0, 0.0, 0.0, 0.0)
R = 10.0  # minutes per round


def _restart_case() -> tuple[Cluster, tuple[Job, ...], int]:
    """One 1-GPU node; b (deadline 20) arrives at 10 and preempts a, which resumes."""
    return (Cluster((NodeType("n", 1, 2, 4.0, 1),)),
            (Job("a", 0.0, 1, 20.0, TWO), Job("b", 10.0, 1, 10.0, TWO, deadline=20.0)), 4)


def _resize_case() -> tuple[Cluster, tuple[Job, ...], int]:
    """One 2-GPU node with 3 cores: when b arrives, running a must drop to 1 core
    (a resize) for both to run, b at full speed."""
    return (Cluster((NodeType("n", 2, 3, 8.0, 1),)),
            (Job("a", 0.0, 1, 25.0, TWO), Job("b", 10.0, 1, 10.0, TWO, deadline=20.0)), 4)


def _migration_case() -> tuple[Cluster, tuple[Job, ...], int]:
    """A fast node (2 cores) and a slow one (1 core): b (deadline 10) takes the fast
    node first, then a moves there from the slow one (a migration)."""
    return (Cluster((NodeType("fast", 1, 2, 4.0, 1), NodeType("slow", 1, 1, 4.0, 1))),
            (Job("a", 0.0, 1, 15.0, TWO), Job("b", 0.0, 1, 10.0, TWO, deadline=10.0)), 3)


CASES = {  # name -> (case, change costs under which the zero-cost optimum is no longer reachable)
    "restart": (_restart_case, Overheads(5.0, 0.0, 0.0, 0.0, 0.0)),
    "resize-per-pair": (_resize_case, Overheads(0.0, 0.0, 0.0, 0.0, 5.0)),  # resize > migration: per-pair rows
    "resize-per-option": (_resize_case, Overheads(0.0, 0.0, 5.0, 0.0, 5.0)),  # migration >= resize: per-option rows
    "migration": (_migration_case, Overheads(0.0, 0.0, 5.0, 0.0, 0.0)),
    "all-defaults-x4": (_migration_case, Overheads().scaled(4.0)),
}


def _instance(name: str, overheads: Overheads) -> tuple[Instance, int]:
    cluster, jobs, H = CASES[name][0]()
    return Instance(f"costs-{name}", cluster, R, jobs, overheads=overheads, source=f"costs-{name}"), H


_BEST: dict[tuple[str, Overheads], float | None] = {}  # brute-force optima, shared by the backends' runs


def best_of(name: str, overheads: Overheads) -> float | None:
    """:func:`brute_force` of case ``name`` under ``overheads`` (computed once)."""
    if (name, overheads) not in _BEST:
        _BEST[name, overheads] = brute_force(*_instance(name, overheads))
    return _BEST[name, overheads]


def brute_force(inst: Instance, H: int) -> float | None:
    """Best metrics objective over every schedule of H rounds built from the model's
    (pattern, option) pairs and the exact model's option set (the warm start's points
    included), each scored by the validator and the metrics module."""
    data = prepare(inst, H, 2, True, 10_000, 10**6, policy_warm_start(inst)).data
    nodes = inst.cluster.nodes
    per_round = []
    for combo in itertools.product(*[[None, *jd.pairs] for jd in data.jobs]):
        alloc = {jd.id: placements_of(data, jd, ch) for jd, ch in zip(data.jobs, combo) if ch is not None}
        use: dict[int, list[float]] = {}
        for pls in alloc.values():
            for p in pls:
                u = use.setdefault(p.node, [0, 0, 0.0])
                u[0] += p.gpus
                u[1] += p.cpus
                u[2] += p.mem_gb
        if all(u[0] <= nodes[n].gpus and u[1] <= nodes[n].cpus and u[2] <= nodes[n].mem_gb + 1e-9 for n, u in use.items()):
            per_round.append(alloc)  # the capacity rule, checked again by the validator below
    best = None
    for rounds in itertools.product(per_round, repeat=H):
        ev = check_schedule(inst, Schedule.from_rounds(list(enumerate(rounds)), R))
        if ev.ok:
            obj = compute_metrics(inst, ev).objective
            best = obj if best is None else min(best, obj)
    return best


@pytest.mark.parametrize("name", list(CASES))
def test_exact_optimum_is_the_brute_force_optimum_with_change_costs(exact_backend, name):
    costs = CASES[name][1]
    inst, H = _instance(name, costs)
    free, best = best_of(name, ZERO), best_of(name, costs)
    assert free is not None and best is not None
    assert best > free + 1e-6  # the costs matter: the zero-cost optimum is out of reach
    res = exact_backend(inst, horizon=H, time_limit=PROOF_S, workers=1, relax_time_limit=0)  # the grid is the point
    assert grid_optimal(res), res.message  # the brute force enumerates the model's grid (tests/test_exact_oracle.py: all allocations)
    ev = check_schedule(inst, res.schedule)
    assert ev.ok and compute_metrics(inst, ev).objective == pytest.approx(res.objective, abs=1e-9)
    assert res.objective == pytest.approx(best, abs=1e-6)


# ---- the rolling window's first slot: the change from the round before the window ----
def test_window_first_slot_charges_the_change_from_the_previous_round():
    """A job that ran the round before the window on the fast node at 1 core: slot 0 of
    a one-slot window, fixed to each pair in turn, with the least loss the model
    allows, makes the validator's progress of that round, rounded up to a work unit (a resize, a migration or no change) — and a
    restart's when it did not run the round before."""
    cluster, _, _ = _migration_case()
    inst = Instance("window", cluster, R, (Job("a", 0.0, 1, 100.0, TWO),), overheads=Overheads(1.0, 0.0, 3.0, 0.0, 2.0),
                    source="window")
    prev = (Placement(0, 1, 1, 4.0),)  # the fast node at 1 core: speed 0.5
    kinds = set()
    for ran_last in (True, False):
        data = build_data(inst, 1, states={"a": (100.0, True, prev if ran_last else None)}, start_round=1, window=True)
        jd = data.jobs[0]
        for pair in jd.pairs:
            be = CpSatBackend()
            v = build(data, be, Strength(symmetry=False))
            for p in jd.pairs:
                be.add(v.x[0, 0, p] == int(p == pair), "fixed_decision")
            be.minimize(be.sum([v.loss[0, 0]]))  # the least loss the model allows (its objective is indifferent)
            out = run_cpsat(be, TimeBudget.start(10), SolverParams(workers=1))
            assert out.status == Status.OPTIMAL and out.value is not None
            pls = placements_of(data, jd, pair)
            # the validator's replay: round 0 on prev, then pair right after (or after a pause)
            ev = check_schedule(inst, Schedule.from_rounds([(0, {"a": prev}), (1 if ran_last else 2, {"a": pls})], R),
                                require_complete=False)
            assert ev.ok
            true = ev.outcomes["a"].work_done - 0.5 * R  # minus round 0's progress
            assert 0 <= out.value(v.cum[0, 0]) - true * data.work_scale < 1 + 1e-6
            kinds.add(data.change(jd, True, prev if ran_last else None, pair))
    assert kinds == {Change.NONE, Change.RESIZE, Change.MIGRATION, Change.RESTART}
