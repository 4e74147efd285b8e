"""The warm start of an exact solve (sensaopt.warm_start): SensaScale's by default, one
named policy's, or (``start_policy="best"``) the best registered heuristic policy's
schedule; recorded as ``Result.warm_start_from``."""

from __future__ import annotations

import pytest

import sensaopt
from sensaopt.errors import ArgumentError, PolicyError
from sensaopt.io import load_instance
from sensaopt.result import Result, WarmStartReport
from sensaopt.simulator import simulate
from sensaopt.solve import solve_cpsat
from sensaopt.warm_start import BEST, DEFAULT_START_POLICY, FIRST_POLICY, choose_start, heuristic_policies

TINY = "tiny-8gpu"  # SensaScale is not the best policy here (chronus, fifo and synergy-tune do better)


def test_heuristic_policies_are_the_registered_non_exact_ones():
    names = heuristic_policies()
    assert names[0] == FIRST_POLICY and {"edf", "fifo", "chronus", "synergy-tune"} <= set(names)
    assert not any(n.startswith("rolling") for n in names)
    assert set(names) == {n for n in sensaopt.policies.policy_names() if not n.startswith("rolling-")}


def test_the_best_warm_start_is_the_best_policy_schedule():
    inst = load_instance(TINY)
    chosen = choose_start(inst)
    objectives = {p: simulate(inst, p).objective for p in heuristic_policies()}
    assert dict(chosen.report.candidates) == objectives
    best = min(objectives.values())
    assert objectives[chosen.report.policy] == best and objectives[FIRST_POLICY] > best
    first_best = next(p for p in heuristic_policies() if objectives[p] == best)
    assert chosen.report.policy == first_best  # ties: the first tried
    assert chosen.schedule.to_dict(inst) == simulate(inst, first_best).schedule.to_dict(inst)


def test_the_exact_result_is_never_worse_than_any_heuristic_policy():
    """Whatever the solver proves in its time, its incumbent starts from the best policy's schedule."""
    inst = load_instance(TINY)
    res = solve_cpsat(inst, time_limit=5, workers=1, relax_time_limit=0, start_policy=BEST)
    assert res.objective is not None and res.warm_start_from is not None
    for p in heuristic_policies():
        assert res.objective <= simulate(inst, p).objective + 1e-6, p
    assert res.warm_start_from.policy == choose_start(inst).report.policy


def test_one_named_policy_or_a_schedule_instead():
    inst = load_instance(TINY)
    default = solve_cpsat(inst, time_limit=2, workers=1, relax_time_limit=0)
    assert default.warm_start_from.policy == DEFAULT_START_POLICY == FIRST_POLICY  # SensaScale's: it shapes the model too
    res = solve_cpsat(inst, start_policy="edf", time_limit=2, workers=1, relax_time_limit=0)
    assert res.warm_start_from == WarmStartReport("edf", (("edf", simulate(inst, "edf").objective),))
    given = solve_cpsat(inst, start=simulate(inst, "fifo").schedule, time_limit=2, workers=1, relax_time_limit=0)
    assert given.warm_start_from == WarmStartReport(None)
    with pytest.raises(ArgumentError, match=r"^solve_cpsat\(\): start_policy: must be a registered policy name"):
        solve_cpsat(inst, start_policy="no-such-policy", time_limit=2)
    with pytest.raises(ArgumentError, match=r"^solve\(\): start_policy: give a warm start schedule"):
        sensaopt.solve(inst, "highs", start_policy="edf", start=simulate(inst, "edf").schedule, time_limit=2)


def test_a_policy_that_fails_is_skipped_and_recorded(monkeypatch):
    import sensaopt.simulator

    real = sensaopt.simulator.simulate

    def failing_edf(instance, policy, **kw):
        if policy == "edf":
            raise PolicyError("edf: cannot run here")
        return real(instance, policy, **kw)

    monkeypatch.setattr(sensaopt.simulator, "simulate", failing_edf)
    chosen = choose_start(load_instance(TINY))
    assert dict(chosen.report.candidates)["edf"] is None and chosen.report.policy != "edf"
    with pytest.raises(PolicyError, match="edf: cannot run here"):
        choose_start(load_instance(TINY), "edf")


def test_the_report_reaches_params_only_in_json():
    report = WarmStartReport("fifo", (("sensascale", 2.5), ("fifo", 1.5)))
    res = Result(solver="cpsat", status=sensaopt.Status.TIME_LIMIT, objective=None, bound=None, runtime_s=0.0, schedule=None,
                 metrics=None, warm_start_from=report)
    d = res.to_dict()
    assert "warm_start_from" not in res.params
    assert d["params"]["warm_start_from"] == {"policy": "fifo", "candidates": {"sensascale": 2.5, "fifo": 1.5}}
    assert Result.from_dict(d).warm_start_from == report
