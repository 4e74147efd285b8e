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

    def checked(state, facts_of, cfg, constants=None, tables=None, memo=None):
        before = {jid: c.info[0] for jid, c in (constants or {}).items()}
        out = analyse(state, facts_of, cfg, constants, tables, memo)
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


def _view(infos):
    return [tuple(getattr(x, f) for f in FIELDS) for x in infos]


def _states(seed: int, rounds: int = 12):
    """Hand-made round states of one instance: jobs arrive, leave and come back, the
    list's order is shuffled, and the jobs' progress, placements and last round
    change between rounds (what the memo and the kept constants must follow)."""
    import random

    from sensaopt.policies.base import JobState, RoundState
    from sensaopt.schedule import Placement

    inst = _instance(seed)
    rng = random.Random(seed)
    states = {j.id: JobState(spec=j, remaining=j.work) for j in inst.jobs}
    out = []
    for r in range(1, rounds + 1):
        jobs = [states[j.id] for j in inst.jobs if rng.random() < 0.6]
        rng.shuffle(jobs)
        for js in jobs:
            if rng.random() < 0.5:  # it ran last round somewhere
                g = js.spec.gpus
                js.last_round = r - 1
                js.placements = (Placement(rng.randrange(4), g, 3 * g, 62.5 * g),) if g <= 8 else None
                if js.placements is None:
                    js.last_round = None
                js.predicted_work += 5.0
                js.observed_work += rng.uniform(4.0, 6.0)
                js.remaining = max(1.0, js.remaining - rng.uniform(0.0, 10.0))
        out.append(RoundState(r, 5.0 * r, 5.0, inst.cluster, inst.overheads, jobs))
    return inst, out


@pytest.mark.parametrize("seed", range(3))
def test_queue_memo_and_eviction_give_the_fresh_queue(seed, monkeypatch):
    """``analyse`` with its run memory (constants, the last queue as the sort's start,
    constants of jobs gone dropped at once here) equals a fresh ``analyse`` every
    round, with jobs leaving, coming back changed and arriving in any order."""
    from sensaopt.policies.sensascale import analysis
    from sensaopt.policies.sensascale.analysis import QueueMemo

    monkeypatch.setattr(analysis, "EVICT_SLACK", 0)
    inst, states = _states(seed)
    pol = SensaScalePolicy()
    pol.reset(inst)
    constants, tables, memo = {}, {}, QueueMemo()
    for st in states:
        out = analyse(st, pol.facts, pol.config, constants, tables, memo)
        assert _view(out) == _view(analyse(st, pol.facts, pol.config))
        assert set(constants) == {js.id for js in st.jobs}  # the jobs gone were dropped
        assert memo.infos is out and len(out) == len(st.jobs)


def test_a_job_dropped_and_back_is_analysed_anew(monkeypatch):
    """A job whose constants were dropped and that comes back with other progress gets
    its fields from its state now, not from the JobInfo it had (a stale cache)."""
    from sensaopt.policies.base import RoundState
    from sensaopt.policies.sensascale import analysis
    from sensaopt.policies.sensascale.analysis import QueueMemo

    monkeypatch.setattr(analysis, "EVICT_SLACK", 0)
    inst, states = _states(0, rounds=1)
    pol = SensaScalePolicy()
    pol.reset(inst)
    constants, tables, memo = {}, {}, QueueMemo()
    jobs = states[0].jobs
    first = analyse(states[0], pol.facts, pol.config, constants, tables, memo)
    gone = first[0].js
    rest = [js for js in jobs if js is not gone]
    analyse(RoundState(2, 10.0, 5.0, inst.cluster, inst.overheads, rest), pol.facts, pol.config, constants, tables, memo)
    assert gone.id not in constants
    gone.remaining *= 0.5
    back = RoundState(3, 15.0, 5.0, inst.cluster, inst.overheads, rest + [gone])
    out = analyse(back, pol.facts, pol.config, constants, tables, memo)
    assert _view(out) == _view(analyse(back, pol.facts, pol.config))
    assert next(x for x in out if x.id == gone.id).remaining == gone.remaining


def test_a_run_keeps_constants_of_active_jobs_only(monkeypatch):
    """Over a whole simulation the constants kept stay within the active jobs plus the
    slack (the per-run memory no longer grows with the trace), and dropping them
    changes no decision: the schedule equals the one kept with every job's constants."""
    from sensaopt.policies.sensascale import analysis

    inst = generate(GeneratorConfig(jobs=400, nodes=2, seed=1, load=1.0))
    monkeypatch.setattr(analysis, "EVICT_SLACK", 10)
    pol = SensaScalePolicy()
    sizes = []
    decide = pol.decide

    def watched(state):
        out = decide(state)
        sizes.append((len(pol._constants), len(state.jobs)))
        return out

    pol.decide = watched
    kept = simulate(inst, pol).schedule
    assert all(k <= n + 10 for k, n in sizes) and max(n for _, n in sizes) < 200
    monkeypatch.setattr(analysis, "EVICT_SLACK", 10**9)
    assert simulate(inst, SensaScalePolicy()).schedule.segments == kept.segments
