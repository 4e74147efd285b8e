"""The performance fast paths give exactly what the plain code gives.

* the free-GPU bucket search of the SensaScale planner picks the node
  :meth:`NodePool.place` picks (random pools, random feasibility rules);
* the per-run caches (job constants in ``analyse``, pair gains in
  ``weight_matrix``) change nothing;
* the simulator's decision check reports the same errors.

Timing is measured in ``benchmarks/``, never asserted here. The end-to-end proof
(schedules identical to the pre-optimisation commit) is
``benchmarks/check_equivalence.py``.
"""

import random

import numpy as np
import pytest

from sensaopt.errors import PolicyError
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.instance import Cluster, NodeType
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.placement import NodePool, proportional_placement
from sensaopt.policies.sensascale import SensaScalePolicy, backfill
from sensaopt.policies.sensascale.analysis import analyse
from sensaopt.policies.sensascale.pairing import weight_matrix
from sensaopt.policies.sensascale.placement import Planner
from sensaopt.policies.sensascale.round_plan import FreeIndex
from sensaopt.schedule import Placement
from sensaopt.simulator import _check_decision


def random_pool(rng, cluster):
    pool = NodePool(cluster)
    for n, node in enumerate(pool.nodes):
        used = rng.randint(0, node.gpus)
        pool.gpus[n] -= used
        pool.cpus[n] -= rng.randint(0, min(pool.cpus[n], 3 * used))
        pool.mem[n] -= rng.choice([0.0, 62.5 * used * rng.random()])
    return pool


@pytest.mark.parametrize("seed", range(30))
def test_bucket_search_picks_the_node_nodepool_picks(seed):
    rng = random.Random(seed)
    types = (NodeType("a", 8, 24, 500.0, rng.randint(1, 12)),) + ((NodeType("b", 4, 16, 200.0, rng.randint(1, 6)),) if seed % 3 == 0 else ())
    cluster = Cluster(types)
    pool = random_pool(rng, cluster)
    planner = Planner(pool, 0.0, SensaScalePolicy().config, round_minutes=5.0)
    banned = {n for n in range(len(pool.nodes)) if rng.random() < 0.2}

    def make(node, g):  # an arbitrary feasibility rule on top of the GPU count
        return None if node.index in banned else proportional_placement(node, g)

    for gpus in range(1, cluster.max_node_gpus + 1):
        prefer = None
        if rng.random() < 0.3:
            n = rng.randrange(len(pool.nodes))
            prefer = (Placement(n, gpus, 1, 1.0),)
        assert planner._place(gpus, make, prefer) == pool.place(gpus, make, prefer)


def test_free_index_follows_commits():
    rng = random.Random(3)
    cluster = Cluster((NodeType("a", 8, 24, 500.0, 10),))
    pool = NodePool(cluster)
    idx = FreeIndex(pool.gpus, 8)
    for _ in range(200):
        n = rng.randrange(10)
        new = rng.randint(0, 8)
        idx.move(n, pool.gpus[n], new)
        pool.gpus[n] = new
        assert idx.total == sum(pool.gpus)
        expect = sorted((n for n in range(10) if pool.gpus[n] >= 3), key=lambda n: (pool.gpus[n], n))
        assert list(idx.best_fit(3)) == expect


def test_free_index_deferred_moves_equal_eager_ones():
    """Moves deferred and made at the next read give the buckets eager moves give."""
    rng = random.Random(5)
    free = [rng.randint(0, 8) for _ in range(12)]
    eager, lazy = FreeIndex(free, 8), FreeIndex(free, 8, free)
    for _ in range(300):
        n, new = rng.randrange(12), rng.randint(0, 8)
        eager.move(n, free[n], new)
        old, free[n] = free[n], new
        lazy.defer(n, old, new)
        assert lazy.total == eager.total == sum(free)
        if rng.random() < 0.2:
            g = rng.randint(1, 8)
            assert list(lazy.best_fit(g)) == list(eager.best_fit(g))
            assert lazy.buckets == eager.buckets and not lazy.pending


def some_state(seed):
    inst = generate(GeneratorConfig(jobs=120, nodes=4, seed=seed, load=1.5))
    rng = random.Random(seed)
    states = []
    for j in inst.jobs[:80]:
        js = JobState(spec=j, remaining=j.work * rng.uniform(0.2, 1.0))
        if rng.random() < 0.3:
            js.last_round = rng.choice([2, 4])
            js.placements = (Placement(rng.randrange(4), j.gpus, 3 * j.gpus, 62.5 * j.gpus),) if j.gpus <= 8 else None
            js.predicted_work, js.observed_work = 10.0, rng.uniform(8, 12)
            if js.placements is None:
                js.last_round = None
        states.append(js)
    return inst, RoundState(5, 50.0, 10.0, inst.cluster, inst.overheads, states)


@pytest.mark.parametrize("seed", range(4))
def test_cached_analysis_and_weights_equal_uncached(seed):
    inst, st = some_state(seed)
    pol = SensaScalePolicy()
    pol.reset(inst)
    cache: dict = {}
    for _ in range(2):  # second pass reads the cache
        a = analyse(st, pol.facts, pol.config, cache)
        b = analyse(st, pol.facts, pol.config)
        assert [(x.id, x.key, x.tier, x.target, x.lst, x.overhead) for x in a] == [(x.id, x.key, x.tier, x.target, x.lst, x.overhead) for x in b]
    sens = [x for x in a if x.facts.sensitive and x.gpus < 8]
    insens = [x for x in a if not x.facts.sensitive and x.gpus < 8]
    gains: dict = {}
    W1 = weight_matrix(sens, insens, inst.cluster, 50.0, 10.0, 10**6, gains)
    W2 = weight_matrix(sens, insens, inst.cluster, 50.0, 10.0, 10**6, gains)
    W3 = weight_matrix(sens, insens, inst.cluster, 50.0, 10.0, 10**6)
    assert np.array_equal(W1, W2) and np.array_equal(W1, W3) and W1.sum() > 0


@pytest.mark.parametrize("seed", range(4))
def test_analyse_hands_jobinfo_what_it_would_compute(seed):
    """``analyse`` gives JobInfo the speed correction and the plain NONE / MIGRATION /
    RESIZE costs it has already: the same as JobInfo computes from the job alone."""
    from sensaopt.policies.sensascale.analysis import JobInfo

    inst, st = some_state(seed)
    pol = SensaScalePolicy()
    pol.reset(inst)
    for x in analyse(st, pol.facts, pol.config, {}):
        plain = JobInfo(x.js, x.facts, x.running, x.overhead, x.target, x.tier, x.key, x.lst, x.costs, x.cur)
        assert (x.corr, x.c_none, x.c_mig, x.c_resize) == (plain.corr, plain.c_none, plain.c_mig, plain.c_resize)


def test_decide_is_repeatable_with_warm_caches():
    inst, st = some_state(7)
    warm = SensaScalePolicy()
    warm.reset(inst)
    first = warm.decide(st)
    cold = SensaScalePolicy()
    cold.reset(inst)
    assert warm.decide(st) == first == cold.decide(st)


def test_decision_check_reports_the_first_bad_node():
    inst = generate(GeneratorConfig(jobs=4, nodes=2, seed=1))
    active = {j.id: JobState(spec=j, remaining=j.work) for j in inst.jobs}
    j0, j1 = inst.jobs[0], inst.jobs[1]
    over = {j0.id: (Placement(1, j0.gpus, 30, 10.0),), j1.id: (Placement(1, j1.gpus, 1, 10.0),)}
    with pytest.raises(PolicyError, match="over-committed node"):
        _check_decision(over, active, inst, "p", 0)
    with pytest.raises(PolicyError, match="needs"):
        _check_decision({j0.id: (Placement(0, j0.gpus + 1, 3, 10.0),)}, active, inst, "p", 0)
    with pytest.raises(PolicyError, match="not waiting"):
        _check_decision({"nope": (Placement(0, 1, 3, 10.0),)}, active, inst, "p", 0)
    _check_decision({j0.id: (Placement(0, j0.gpus, 3 * j0.gpus, 62.5 * j0.gpus),)}, active, inst, "p", 0)


@pytest.mark.parametrize("seed", range(5))
def test_validator_usage_equals_plain_accumulation(seed):
    """The validator's per-round, per-node usage (np.bincount) equals the plain
    np.add.at accumulation, bit for bit, on a valid and an over-committed schedule."""
    from sensaopt.schedule import Schedule, Segment
    from sensaopt.validator import check_schedule

    inst = generate(GeneratorConfig(jobs=60, nodes=3, seed=seed, load=2.0))
    from sensaopt.simulator import simulate

    sched = simulate(inst, "edf").schedule
    rng = random.Random(seed)
    extra = [Segment(j.id, rng.randint(0, 5), rng.randint(1, 3), (Placement(rng.randrange(3), j.gpus, 3 * j.gpus, 62.5 * j.gpus),)) for j in inst.jobs[:10] if j.gpus <= 8]
    for s in (sched, Schedule(sched.segments + tuple(extra), sched.round_minutes)):
        ev = check_schedule(inst, s, require_complete=False)
        T = max(seg.end for seg in s.segments)
        for res, attr in (("gpu", "gpus"), ("cpu", "cpus"), ("mem", "mem_gb")):
            diff = np.zeros((T + 1, len(inst.cluster.nodes)))
            for seg in s.segments:
                for p in seg.placements:
                    np.add.at(diff, (seg.start, p.node), float(getattr(p, attr)))
            for seg in s.segments:
                for p in seg.placements:
                    np.add.at(diff, (seg.end, p.node), -float(getattr(p, attr)))
            assert np.array_equal(ev.usage[res], np.cumsum(diff, axis=0)[:T])


def _busy_plain(planner, n):
    """backfill.busy as it was: every held job scanned for node ``n``."""
    out = [(p.end, sum(q.gpus for q in p.placements if q.node == n), "") for p in planner.by_node.get(n, ())]
    if planner.held_gpus[n]:
        for jid, pls in planner.held.items():
            g = sum(q.gpus for q in pls if q.node == n)
            if g:
                info = planner.ranked[planner.rank[jid]]
                out.append((planner.now + info.time_at(info.current), g, jid))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_busy_from_holders_equals_scan_of_held(seed, monkeypatch):
    """``backfill.busy`` reads the jobs holding GPUs on the node from ``holders``: the same
    (end, GPUs, job) entries as scanning every held job, at every call of a run."""
    from sensaopt.simulator import simulate

    fast = backfill.busy
    seen = {"calls": 0, "held": 0}

    def checked(plan, n):
        out = fast(plan, n)
        assert sorted(out) == sorted(_busy_plain(plan, n))
        seen["calls"] += 1
        seen["held"] += any(jid for _, _, jid in out)
        return out

    monkeypatch.setattr(backfill, "busy", checked)
    simulate(generate(GeneratorConfig(jobs=150, nodes=4, seed=seed, load=2.0)), SensaScalePolicy())
    assert seen["held"] > 0  # the held-jobs part was exercised


def _plan_singles(st, pol, shortcut):
    """Step 4 of ``decide`` without pairs: every job placed alone in queue order."""
    infos = analyse(st, pol.facts, pol.config)
    planner = Planner(NodePool(st.cluster), st.now, pol.config, infos, round_minutes=st.round_minutes)
    if not shortcut:
        planner._keep_wins = lambda info, keep: None  # type: ignore[method-assign]
        planner.try_stay = lambda info: False  # type: ignore[method-assign]
    for info in infos:
        if not planner.place_single(info):
            backfill.reserve(planner, info.gpus)
    return {j: (p.placements, p.option, p.end) for j, p in planner.planned.items()}, planner


class _Forgetful(dict):
    """A memo that never remembers: every lookup misses."""

    def get(self, key, default=None):
        return default


@pytest.mark.parametrize("seed", range(3))
def test_run_memos_change_nothing(seed, monkeypatch):
    """The per-run memos of the round plan (the placement objects, spare filling's
    best fits) give the schedule that recomputing every time gives."""
    from sensaopt.policies.sensascale import round_plan
    from sensaopt.simulator import simulate

    inst = generate(GeneratorConfig(jobs=200, nodes=4, seed=seed, load=2.0))
    kept = simulate(inst, SensaScalePolicy()).schedule
    init = round_plan.NodeShape.__init__

    def forgetful(self, cluster):
        init(self, cluster)
        self.placements, self.fitting = _Forgetful(), _Forgetful()

    monkeypatch.setattr(round_plan.NodeShape, "__init__", forgetful)
    assert simulate(inst, SensaScalePolicy()).schedule.segments == kept.segments


@pytest.mark.parametrize("seed", range(40))
def test_stay_put_shortcut_on_random_rounds(seed):
    """Running jobs on random CPU/memory splits (often below the base option, so the
    search may find faster room elsewhere): the plan with the shortcut equals the
    plan of the full search."""
    inst = generate(GeneratorConfig(jobs=120, nodes=6, seed=seed, load=1.5))
    pol = SensaScalePolicy()
    pol.reset(inst)
    rng = random.Random(seed)
    states, used = [], [0] * 6
    for j in inst.jobs[:90]:
        js = JobState(spec=j, remaining=j.work * rng.uniform(0.05, 10.0))
        n = rng.randrange(6)
        if j.gpus <= 8 and used[n] + j.gpus <= 8 and rng.random() < 0.6:
            used[n] += j.gpus
            js.last_round = 4
            o = rng.choice(pol.facts(j.profile, j.gpus).options)  # any of its options, slow ones too
            js.placements = (Placement(n, j.gpus, o.cpu * j.gpus, o.mem * j.gpus),)
            js.predicted_work, js.observed_work = 10.0, rng.uniform(8, 12)
        states.append(js)
    st = RoundState(5, 50.0, 10.0, inst.cluster, inst.overheads.scaled(rng.choice([0.0, 1.0, 4.0])), states)
    fast, planner = _plan_singles(st, pol, True)
    assert fast == _plan_singles(st, pol, False)[0]


@pytest.mark.parametrize("seed", range(3))
def test_stay_put_shortcut_decides_as_the_search(seed, monkeypatch):
    """``place_single`` skips the placement search when staying put wins whatever the
    search returns (``_keep_wins``): with the search run anyway, every job the
    shortcut would have kept is kept, and the schedules are the same."""
    from sensaopt.simulator import simulate

    inst = generate(GeneratorConfig(jobs=150, nodes=4, seed=seed, load=2.0))
    fast = simulate(inst, SensaScalePolicy()).schedule
    wins, place_single = Planner._keep_wins, Planner.place_single
    fired: list = []

    def search_anyway(self, info, keep):
        end = wins(self, info, keep)
        if end is not None:
            assert end == self.end(info, keep[1], keep[0])
            fired.append((info.id, keep))
        return None

    def checked(self, info):
        n = len(fired)
        ok = place_single(self, info)
        if len(fired) > n:  # the shortcut applied: the search's result lost to staying
            p = self.planned[info.id]
            assert ok and (p.placements, p.option) == fired[-1][1]
        return ok

    monkeypatch.setattr(Planner, "_keep_wins", search_anyway)
    monkeypatch.setattr(Planner, "try_stay", lambda self, info: False)
    monkeypatch.setattr(Planner, "place_single", checked)
    plain = simulate(inst, SensaScalePolicy()).schedule
    assert len(fired) > 10
    assert plain.segments == fast.segments


@pytest.mark.parametrize("seed", range(3))
def test_open_index_stays_exact_when_jobs_stay(seed, monkeypatch):
    """``stay`` leaves the open index alone (its two moves cancel out) and a pair moves
    it once per node at the end: after every unit placed in a run, the open index
    equals one built afresh from free − held GPUs, the free index one from free GPUs."""
    from sensaopt.simulator import simulate

    stays, place_single, place_pair = Planner.stay, Planner.place_single, Planner.place_pair
    seen = {"stay": 0}

    def exact(self):
        fresh = FreeIndex([max(0, f - h) for f, h in zip(self.pool.gpus, self.held_gpus)], self.max_gpus)
        assert self.open.buckets == fresh.buckets and self.open.total == fresh.total
        self.free.flush()  # the deferred moves (as the next search would make them)
        fresh = FreeIndex(self.pool.gpus, self.max_gpus)
        assert self.free.buckets == fresh.buckets and self.free.total == fresh.total

    def stay(self, *a):
        seen["stay"] += 1
        stays(self, *a)
        exact(self)

    def single(self, info):
        ok = place_single(self, info)
        exact(self)
        return ok

    def pair(self, *a):
        ok = place_pair(self, *a)
        exact(self)
        return ok

    monkeypatch.setattr(Planner, "stay", stay)
    monkeypatch.setattr(Planner, "place_single", single)
    monkeypatch.setattr(Planner, "place_pair", pair)
    simulate(generate(GeneratorConfig(jobs=150, nodes=4, seed=seed, load=2.0)), SensaScalePolicy())
    assert seen["stay"] > 10


# ---- pairing: the plain versions of the fast paths in pairing.py, for reference -----------

def _weight_matrix_plain(sens, insens, cluster, now, R, scale, levels=0):
    """weight_matrix as it was: a table of this round's type pairs, gathered with take."""
    from sensaopt.policies.sensascale.pairing import pair_gains, urgencies

    def types(infos):
        index, reps = {}, []
        idx = np.empty(len(infos), dtype=np.int64)
        for n, x in enumerate(infos):
            t = index.setdefault((id(x.facts), x.gpus), len(reps))
            if t == len(reps):
                reps.append(x)
            idx[n] = t
        return reps, idx

    s_reps, s_idx = types(sens)
    i_reps, i_idx = types(insens)
    gs = np.zeros((len(s_reps), len(i_reps)))
    gi = np.zeros_like(gs)
    ok = np.zeros(gs.shape, dtype=bool)
    for a, s in enumerate(s_reps):
        for b, i in enumerate(i_reps):
            g = pair_gains(s, i, cluster)
            if g is not None:
                gs[a, b], gi[a, b], ok[a, b] = g[0], g[1], True
    us, ui = urgencies(sens, now, R, levels), urgencies(insens, now, R, levels)
    flat = s_idx[:, None] * len(i_reps) + i_idx[None, :]
    w = gs.ravel().take(flat)
    w *= us[:, None]
    w += gi.ravel().take(flat) * ui[None, :]
    w *= scale
    np.rint(w, out=w)
    W = w.astype(np.int64)
    W[~ok.ravel().take(flat)] = 0
    np.maximum(W, 0, out=W)
    return W


@pytest.mark.parametrize("seed", range(3))
def test_weight_matrix_from_gain_table_equals_plain_code_in_runs(seed, monkeypatch):
    """At every pairing of whole runs (one gain cache and its GainTable for the run, as
    the policy keeps them), weight_matrix gives, bit for bit, what the plain code gives."""
    from sensaopt.policies.sensascale import pairing
    from sensaopt.simulator import simulate

    wm = pairing.weight_matrix
    seen = {"wm": 0}

    def weights(sens, insens, cluster, now, R, scale, cache=None, levels=0, us=None, ui=None):
        W = wm(sens, insens, cluster, now, R, scale, cache, levels, us, ui)
        ref = _weight_matrix_plain(sens, insens, cluster, now, R, scale, levels)
        assert W.dtype == ref.dtype and np.array_equal(W, ref)
        seen["wm"] += 1
        return W

    monkeypatch.setattr(pairing, "weight_matrix", weights)
    simulate(generate(GeneratorConfig(jobs=150, nodes=4, seed=seed, load=2.0)), SensaScalePolicy())
    assert seen["wm"] > 5


def _switch_penalty_plain(sens, insens, us, ui, cluster, inc):
    """switch_penalty as it was: every term a full matrix, shared nodes by a dense mask."""
    from sensaopt.policies.sensascale.pairing import _stay_terms

    ns, rs, As, crs, cms = _stay_terms(sens, us, cluster, inc.held)
    ni, ri, Ai, cri, cmi = _stay_terms(insens, ui, cluster, inc.held)
    if (ns < 0).all() and (ni < 0).all():
        return None
    gs = np.array([x.gpus for x in sens], dtype=np.int64)
    gi = np.array([x.gpus for x in insens], dtype=np.int64)
    mig_s, mig_i = (As * cms)[:, None], (Ai * cmi)[None, :]
    rsz_s, rsz_i = (As * crs)[:, None], (Ai * cri)[None, :]
    away = mig_s + mig_i
    at_s = np.where((rs[:, None] >= gi[None, :]), rsz_s + mig_i, np.inf)
    at_i = np.where((ri[None, :] >= gs[:, None]), rsz_i + mig_s, np.inf)
    pen = np.minimum(away, np.minimum(at_s, at_i))
    together = (ns[:, None] == ni[None, :]) & (ns[:, None] >= 0)
    if inc.partners is None:
        pen[together] = 0.0
        return pen
    pen[together] = np.broadcast_to(rsz_s + rsz_i, pen.shape)[together]
    col = {x.id: b for b, x in enumerate(insens)}
    for a, x in enumerate(sens):
        b = col.get(inc.partners.get(x.id, ""), -1)
        if b >= 0 and together[a, b]:
            pen[a, b] = 0.0
    return pen


def _match_assignment_plain(W):
    from scipy.optimize import linear_sum_assignment

    if W.size == 0 or W.max() <= 0:
        return []
    r = np.flatnonzero((W > 0).any(axis=1))
    c = np.flatnonzero((W > 0).any(axis=0))
    sub = W[np.ix_(r, c)]
    rows, cols = linear_sum_assignment(sub, maximize=True)
    return [(int(r[a]), int(c[b])) for a, b in zip(rows, cols) if sub[a, b] > 0]


@pytest.mark.parametrize("seed", range(3))
def test_switch_penalty_and_matching_equal_plain_code_in_runs(seed, monkeypatch):
    """At every pairing of whole runs, switch_penalty (with last round's partners and
    without) and match_assignment give, bit for bit, what the plain code gives."""
    from sensaopt.policies.sensascale import pairing
    from sensaopt.simulator import simulate

    sp, ma = pairing.switch_penalty, pairing.match_assignment
    seen = {"sp": 0, "ma": 0}

    def penalty(sens, insens, us, ui, cluster, inc):
        pen = sp(sens, insens, us, ui, cluster, inc)
        for i in (inc, pairing.Incumbents(inc.held, None)):
            a, b = sp(sens, insens, us, ui, cluster, i), _switch_penalty_plain(sens, insens, us, ui, cluster, i)
            assert (a is None and b is None) or a.tobytes() == b.tobytes()
        seen["sp"] += pen is not None
        return pen

    def matching(W):
        out = ma(W)
        assert out == _match_assignment_plain(W)
        seen["ma"] += bool(out)
        return out

    monkeypatch.setattr(pairing, "switch_penalty", penalty)
    monkeypatch.setattr(pairing, "match_assignment", matching)
    simulate(generate(GeneratorConfig(jobs=150, nodes=4, seed=seed, load=2.0)), SensaScalePolicy())
    assert min(seen.values()) > 5


@pytest.mark.parametrize("seed", range(20))
def test_match_assignment_equals_plain_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(0, 30)), int(rng.integers(0, 30)))
    W = np.where(rng.random(shape) < rng.random(), rng.integers(-3, 6, shape), 0).astype(np.int64)
    assert pairing_match(W) == _match_assignment_plain(W)


def pairing_match(W):
    from sensaopt.policies.sensascale.pairing import match_assignment

    return match_assignment(W)
