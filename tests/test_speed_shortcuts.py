"""The round-to-round shortcuts of SensaScale decide as the plain code does.

* ``analyse`` reuses each job's JobInfo across rounds (its fields set again);
* ``Planner._pair_stays``: a pair that stays where it ran skips the node search;
* ``Repacker._node_units``: a node's movable units are kept while its plans stay;
* ``Planner.try_stay``: a single job staying where it ran skips ``place_single``'s steps.

Each is compared with the plain path on whole simulations (the schedules) or on
every round of one. Timing is measured in ``benchmarks/``, never asserted here.
"""

import pytest

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies.sensascale import SensaScalePolicy, policy
from sensaopt.policies.sensascale.analysis import analyse
from sensaopt.policies.sensascale.placement import Planner
from sensaopt.policies.sensascale.repack import Repacker
from sensaopt.simulator import simulate

FIELDS = ("id", "key", "tier", "target", "lst", "running", "cur", "remaining", "corr", "started", "last_placements",
          "overhead", "c_none", "c_mig", "c_resize")


def _instance(seed: int):
    return generate(GeneratorConfig(jobs=160, nodes=4, seed=seed, load=2.0))


@pytest.mark.parametrize("seed", range(3))
def test_reused_jobinfo_equals_a_fresh_one_every_round(seed, monkeypatch):
    seen = {"rounds": 0, "reused": 0}

    def checked(state, facts_of, cfg, constants=None, tables=None):
        before = {jid: c.info[0] for jid, c in (constants or {}).items()}
        out = analyse(state, facts_of, cfg, constants, tables)
        fresh = analyse(state, facts_of, cfg)
        assert [tuple(getattr(x, f) for f in FIELDS) for x in out] == [tuple(getattr(x, f) for f in FIELDS) for x in fresh]
        seen["rounds"] += 1
        seen["reused"] += sum(before.get(x.id) is x for x in out)
        return out

    monkeypatch.setattr(policy, "analyse", checked)
    simulate(_instance(seed), SensaScalePolicy())
    assert seen["rounds"] > 10 and seen["reused"] > 10


@pytest.mark.parametrize("seed", range(3))
def test_pair_stay_shortcut_decides_as_the_search(seed, monkeypatch):
    inst = _instance(seed)
    fired = []
    stays = Planner._pair_stays

    def counted(self, s, i, so, io):
        ok = stays(self, s, i, so, io)
        fired.append(ok)
        return ok

    monkeypatch.setattr(Planner, "_pair_stays", counted)
    fast = simulate(inst, SensaScalePolicy()).schedule
    assert sum(fired) > 5
    monkeypatch.setattr(Planner, "_pair_stays", lambda self, s, i, so, io: False)
    assert simulate(inst, SensaScalePolicy()).schedule.segments == fast.segments


@pytest.mark.parametrize("seed", range(3))
def test_repack_units_memo_changes_nothing(seed, monkeypatch):
    inst = generate(GeneratorConfig(jobs=200, nodes=4, seed=seed, load=3.0))
    units = Repacker._node_units
    calls = {"n": 0}

    def counted(self, n, plans, paired):
        calls["n"] += 1
        return units(self, n, plans, paired)

    monkeypatch.setattr(Repacker, "_node_units", counted)
    kept = simulate(inst, SensaScalePolicy()).schedule
    assert calls["n"] > 0

    candidates = Repacker.candidates

    def forgetful(self, g):  # every node's units built anew (candidates reads the memo inline)
        self._units.clear()
        return candidates(self, g)

    monkeypatch.setattr(Repacker, "candidates", forgetful)
    assert simulate(inst, SensaScalePolicy()).schedule.segments == kept.segments


@pytest.mark.parametrize("seed", range(3))
def test_try_stay_decides_as_keep_and_keep_wins(seed, monkeypatch):
    """Whenever ``try_stay`` keeps a job, ``_keep`` and ``_keep_wins`` (asked first, on
    the same plan) keep it too, with the same option and end; the schedules equal
    those without ``try_stay``."""
    inst = _instance(seed)
    fast = simulate(inst, SensaScalePolicy()).schedule
    stays = Planner.try_stay
    fired = []

    def checked(self, info):
        keep = self._keep(info) if info.running and self.cfg.stay_put else None
        end = None if keep is None else self._keep_wins(info, keep)
        ok = stays(self, info)
        if ok:
            p = self.planned[info.id]
            assert end is not None and (p.placements, p.option, p.end) == (keep[0], keep[1], end)
        fired.append(ok)
        return ok

    monkeypatch.setattr(Planner, "try_stay", checked)
    assert simulate(inst, SensaScalePolicy()).schedule.segments == fast.segments
    assert sum(fired) > 10
    monkeypatch.setattr(Planner, "try_stay", lambda self, info: False)
    assert simulate(inst, SensaScalePolicy()).schedule.segments == fast.segments
