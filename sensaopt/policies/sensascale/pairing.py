"""Step 3 of SensaScale: pair sensitive with insensitive jobs by maximum-weight matching.

A pair shares one node. The insensitive partner runs at its optimal demand (which
for a flat profile is the floor), and the sensitive job gets what the pair's joint
GPU-proportional share leaves (capped at its optimal demand). The edge weight is the
speed the pair gains over both running at their base allocation, per GPU-weighted
and scaled by urgency (1 + R / (R + slack to LST)), then scaled to an ``int`` so the
matching works in exact integer arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sensaopt.allocations import proportional_allocation
from sensaopt.instance import Cluster
from sensaopt.profiles import Option

from .analysis import JobInfo
from .config import SensaScaleConfig


def pair_options(s: JobInfo, i: JobInfo, cluster: Cluster) -> tuple[Option, Option] | None:
    """Per-GPU options (for s, for i) when s and i share a node of the main type."""
    nt = cluster.reference_type
    g = s.gpus + i.gpus
    if g > nt.gpus:
        return None
    share_cpu, share_mem = proportional_allocation(nt, g)
    cpu = share_cpu - i.gpus * i.facts.opt.cpu
    mem = share_mem - i.gpus * i.facts.opt.mem
    best = None
    for o in s.facts.options:
        if o.speed > s.facts.opt.speed + 1e-12:
            break
        if o.cpu * s.gpus <= cpu and o.mem * s.gpus <= mem + 1e-9:
            best = o
    return (best, i.facts.opt) if best is not None else None


def urgency(info: JobInfo, now: float, R: float, levels: int = 0) -> float:
    if info.tier != 0:
        return 1.0
    u = 1.0 + R / (R + max(0.0, info.lst - now))
    return 1.0 + round((u - 1.0) * levels) / levels if levels > 0 else u


def pair_gains(s: JobInfo, i: JobInfo, cluster: Cluster) -> tuple[float, float] | None:
    """Relative speed change of (s, i) when paired vs. at their base allocations."""
    po = pair_options(s, i, cluster)
    if po is None:
        return None
    so, io = po
    nt = cluster.reference_type
    return so.speed / s.facts.base[nt].speed - 1.0, io.speed / i.facts.base[nt].speed - 1.0


def pair_weight(s: JobInfo, i: JobInfo, cluster: Cluster, now: float, R: float, scale: int, levels: int = 0) -> int:
    """Integer edge weight of one pair (0: no edge). Reference for :func:`weight_matrix`."""
    gains = pair_gains(s, i, cluster)
    if gains is None:
        return 0
    w = s.gpus * gains[0] * urgency(s, now, R, levels) + i.gpus * gains[1] * urgency(i, now, R, levels)
    return int(round(w * scale)) if w > 0 else 0


class Side(list):
    """One side of the matching (a list of JobInfo, as :func:`candidates` returns it)
    with the per-job numbers the matrices read, gathered in the same pass: ``cols``, one
    row per job: GPUs, LST (minutes), tier, then for a running single-node job its node,
    current per-GPU speed, remaining minutes, speed correction, resize and migration
    minutes (any other job: -1, 1.0, 0.0, 1.0, 0.0, 0.0). :func:`urgencies`,
    :func:`_stay_terms` and :func:`switch_penalty` read them instead of the jobs: the
    same floats as from a plain list."""

    __slots__ = ("cols",)

    def finish(self, flat: list[float]) -> Side:
        self.cols = np.array(flat, dtype=np.float64).reshape(-1, SIDE_COLS)
        return self


SIDE_COLS = 9  # Side.cols' columns


def _side_row(x: JobInfo) -> tuple:
    """``x``'s row of :attr:`Side.cols`."""
    lp = x.last_placements
    if x.running and len(lp) == 1:
        return (x.gpus, x.lst, x.tier, lp[0].node, (x.cur or x.current).speed, x.remaining, x.corr,  # type: ignore[union-attr]
                x.c_resize, x.c_mig)
    return (x.gpus, x.lst, x.tier, -1, 1.0, 0.0, 1.0, 0.0, 0.0)


def urgencies(infos: list[JobInfo], now: float, R: float, levels: int = 0) -> np.ndarray:
    """GPUs × :func:`urgency` of every job, as an array (same floats as the scalar code)."""
    if isinstance(infos, Side):
        c = infos.cols
        lst, tier0, g = c[:, 1], c[:, 2] == 0, c[:, 0]
    else:
        lst = np.array([x.lst for x in infos], dtype=float)
        tier0 = np.array([x.tier == 0 for x in infos], dtype=bool)
        g = np.array([x.gpus for x in infos], dtype=float)
    u = np.ones(len(infos))
    if tier0.any():
        u[tier0] = 1.0 + R / (R + np.maximum(0.0, lst[tier0] - now))
        if levels > 0:
            u[tier0] = 1.0 + np.round((u[tier0] - 1.0) * levels) / levels
    return g * u


class GainTable:
    """The pair gains of every (sensitive type, insensitive type) seen so far, types
    being (profile facts, GPUs), as dense arrays indexed by a run-wide type number per
    side, grown as new types appear: a round gathers its job pairs' gains from them
    instead of filling a table of its own type pairs (:func:`weight_matrix`)."""

    def __init__(self) -> None:
        self.index: tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]] = ({}, {})
        self.reps: tuple[list[JobInfo], list[JobInfo]] = ([], [])
        self.gs = np.zeros((0, 0))  # gain of the sensitive member
        self.gi = np.zeros((0, 0))  # gain of the insensitive member
        self.ok = np.zeros((0, 0), dtype=bool)  # the pair fits a node

    def numbers(self, infos: list[JobInfo], side: int) -> np.ndarray:
        """Type numbers of ``infos`` on one side (0: sensitive rows, 1: insensitive columns)."""
        index, reps = self.index[side], self.reps[side]
        out: list[int] = []
        add = out.append
        for x in infos:
            pt = x.pair_type  # (the index it was numbered in, its number): kept on the job across rounds
            if pt is not None and pt[0] is index:
                add(pt[1])
                continue
            k = (id(x.facts), x.gpus)
            t = index.get(k)
            if t is None:
                t = index[k] = len(reps)
                reps.append(x)
            x.pair_type = (index, t)
            add(t)
        return np.array(out, dtype=np.intp)

    def fill(self, cluster: Cluster, cache: dict) -> None:
        """Gains of the type pairs not in the arrays yet (``cache``: type pair -> gains)."""
        (s_reps, i_reps), (r, c) = self.reps, self.gs.shape
        if (len(s_reps), len(i_reps)) == (r, c):
            return
        gs = np.zeros((len(s_reps), len(i_reps)))
        gi = np.zeros_like(gs)
        ok = np.zeros(gs.shape, dtype=bool)
        gs[:r, :c], gi[:r, :c], ok[:r, :c] = self.gs, self.gi, self.ok
        for a, s in enumerate(s_reps):
            for b, i in enumerate(i_reps):
                if a < r and b < c:
                    continue
                key = (id(s.facts), s.gpus, id(i.facts), i.gpus)
                g = cache.get(key, False)
                if g is False:
                    g = cache[key] = pair_gains(s, i, cluster)
                if g is not None:
                    gs[a, b], gi[a, b], ok[a, b] = g[0], g[1], True
        self.gs, self.gi, self.ok = gs, gi, ok


def weight_matrix(
    sens: list[JobInfo], insens: list[JobInfo], cluster: Cluster, now: float, R: float, scale: int, gain_cache: dict | None = None,
    levels: int = 0, us: np.ndarray | None = None, ui: np.ndarray | None = None,
) -> np.ndarray:
    """All edge weights at once. Gains depend only on the two jobs' (profile, GPUs)
    types, so they are computed once per type pair (and kept in ``gain_cache``, a
    dict the caller may keep for a whole run, with its :class:`GainTable`) and
    broadcast with numpy. ``us``, ``ui``: the two sides' :func:`urgencies` if the
    caller has them already."""
    cache = gain_cache if gain_cache is not None else {}
    table = cache.get(GainTable)
    if table is None:
        table = cache[GainTable] = GainTable()
    s_idx = table.numbers(sens, 0)
    i_idx = table.numbers(insens, 1)
    table.fill(cluster, cache)
    if us is None:
        us = urgencies(sens, now, R, levels)
    if ui is None:
        ui = urgencies(insens, now, R, levels)
    cell = (s_idx * table.gs.shape[1])[:, None] + i_idx[None, :]  # every job pair's type-pair cell, as a flat index
    w = table.gs.take(cell)
    w *= us[:, None]
    wi = table.gi.take(cell)
    wi *= ui[None, :]
    w += wi
    w *= scale
    np.rint(w, out=w)
    np.maximum(w, 0.0, out=w)  # (integers: the same as after the cast)
    W = w.astype(np.int64)
    if not (np.isfinite(us).all() and np.isfinite(ui).all()):  # else a pair that fits no node has gains 0, so weight 0
        W[~table.ok.take(cell)] = 0
        np.maximum(W, 0, out=W)
    return W


@dataclass(frozen=True)
class Incumbents:
    """What the pair hysteresis needs of the round before: GPUs per node held by the
    running jobs, and who was paired with whom (job id -> partner id; None: any two
    running jobs that shared a node count as partners)."""

    held: np.ndarray
    partners: dict[str, str] | None = None
    room: np.ndarray | None = None  # GPUs per node less ``held`` (None: computed when needed)

    @classmethod
    def of(cls, infos: list[JobInfo], cluster: Cluster, partners: dict[str, str] | None = None,
           held: list[int] | None = None, capacity: np.ndarray | None = None) -> Incumbents:
        """From the running jobs of ``infos``; or, given ``held`` (GPUs per node held by
        them, e.g. :attr:`.round_plan.RoundPlan.held_gpus` before any placement) and
        ``capacity`` (GPUs per node), from those."""
        if held is not None and capacity is not None:
            h = np.array(held, dtype=np.int64)
            return cls(h, partners, capacity - h)
        h = np.zeros(cluster.num_nodes, dtype=np.int64)
        for x in infos:
            if x.running:
                for q in x.last_placements:
                    h[q.node] += q.gpus
        return cls(h, partners)


def _stay_terms(infos: list[JobInfo], u: np.ndarray, cluster: Cluster, held: np.ndarray,
                room: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Per job: (node it ran on, single-node running jobs only, else -1; GPUs still
    unheld on that node; rate factor GPUs × urgency ÷ remaining minutes at its current
    allocation (0 unless running); resize and migration minutes). ``room``: GPUs per
    node less ``held``, if the caller has it."""
    if room is None:
        room = np.array([nd.gpus for nd in cluster.nodes], dtype=np.int64) - held
    if isinstance(infos, Side):
        c = infos.cols
        node = c[:, 3].astype(np.int64)
        ran = node >= 0
        # JobInfo.time_at elementwise: remaining / (speed × correction), the same floats (0 where not run)
        t = c[:, 5] / (c[:, 4] * c[:, 6])
        rate = np.where(ran, u / np.maximum(t, 1e-9), 0.0)
        return node, np.where(ran, room[np.maximum(node, 0)], -1), rate, c[:, 7], c[:, 8]
    k = len(infos)
    node = np.full(k, -1, dtype=np.int64)
    rate = np.zeros(k)
    cr = np.zeros(k)
    cm = np.zeros(k)
    at = [n for n, x in enumerate(infos) if x.running and len(x.last_placements) == 1]
    if at:
        run = [infos[n] for n in at]
        idx = np.array(at, dtype=np.intp)
        # one row per job: node, speed at its current option, remaining minutes, speed correction, resize and migration minutes
        flat: list[float] = []
        add = flat.extend  # (a flat list converts faster than a list of tuples)
        for x in run:
            add((x.last_placements[0].node, (x.cur or x.current).speed, x.remaining, x.corr, x.c_resize, x.c_mig))  # type: ignore[union-attr]  # running: current is set
        v: np.ndarray = np.array(flat, dtype=np.float64).reshape(-1, 6)
        node[idx] = v[:, 0]  # node numbers, exact as floats
        # JobInfo.time_at elementwise: remaining / (speed × correction), the same floats
        t = v[:, 2] / (v[:, 1] * v[:, 3])
        rate[idx] = u[idx] / np.maximum(t, 1e-9)
        cr[idx] = v[:, 4]
        cm[idx] = v[:, 5]
    return node, np.where(node >= 0, room[np.maximum(node, 0)], -1), rate, cr, cm


def _gpus(infos: list[JobInfo]) -> np.ndarray:
    """GPUs of every job (int64)."""
    if isinstance(infos, Side):
        return infos.cols[:, 0].astype(np.int64)
    return np.array([x.gpus for x in infos], dtype=np.int64)


def switch_penalty(sens: list[JobInfo], insens: list[JobInfo], us: np.ndarray, ui: np.ndarray, cluster: Cluster,
                   inc: Incumbents) -> np.ndarray | None:
    """Cost of forming each pair for its running members, in the units of the pair
    gains (GPUs × urgency × relative speed): minutes lost ÷ the member's remaining
    minutes at its current allocation (a pair's gain is a rate; a change's cost is
    spread over the time left to earn it back). Last round's partners pay nothing;
    two jobs that shared a node without being partners pay a resize each (their CPU
    is re-split); otherwise the pair goes where it is cheapest: the sensitive job's
    node (if it has room for the partner: a resize for s, a migration for i if i ran
    elsewhere), the partner's node (the mirror), or a third node (both migrate).
    None when no candidate ran the round before."""
    ns, rs, As, crs, cms = _stay_terms(sens, us, cluster, inc.held, inc.room)
    ni, ri, Ai, cri, cmi = _stay_terms(insens, ui, cluster, inc.held, inc.room)
    rows = np.flatnonzero(ns >= 0)
    cols = np.flatnonzero(ni >= 0)
    if not len(rows) and not len(cols):
        return None
    gs, gi = _gpus(sens), _gpus(insens)
    mig_s, mig_i = (As * cms)[:, None], (Ai * cmi)[None, :]
    rsz_s, rsz_i = (As * crs)[:, None], (Ai * cri)[None, :]
    # min(both to a third node, at s's node, at i's node), built in place (the same floats
    # as np.minimum of the three matrices: min is exact in any order)
    pen = rsz_s + mig_i  # at s's node: a resize for s, a migration for i (if it ran elsewhere) ...
    np.copyto(pen, np.inf, where=rs[:, None] < gi[None, :])  # ... if s's node has room for i
    at_i = rsz_i + mig_s  # the mirror
    np.copyto(at_i, np.inf, where=ri[None, :] < gs[:, None])
    np.minimum(pen, at_i, out=pen)
    np.add(mig_s, mig_i, out=at_i)  # both to a third node (0 for a member that did not run)
    np.minimum(pen, at_i, out=pen)
    # the pairs that ran on one node (few: only running single-node jobs can), row by row
    # in column order: the running rows' and columns' nodes compared at once
    ia, ib = np.nonzero(ns[rows][:, None] == ni[cols][None, :])
    at_a, at_b = rows[ia], cols[ib]
    if inc.partners is None:
        pen[at_a, at_b] = 0.0
        return pen
    pen[at_a, at_b] = rsz_s[at_a, 0] + rsz_i[0, at_b]
    partner = inc.partners.get  # partners that ran together: on one node, so among those pairs
    for a, b in zip(at_a.tolist(), at_b.tolist()):
        if partner(sens[a].id, "") == insens[b].id:
            pen[a, b] = 0.0
    return pen


def match_assignment(W: np.ndarray) -> list[tuple[int, int]]:
    """Maximum-weight matching of a bipartite graph with non-negative weights (0 = no
    edge) via the assignment problem: same total weight as the general matching."""
    from scipy.optimize import linear_sum_assignment

    if W.size == 0:
        return []
    edge = W > 0
    if not edge.any():
        return []
    r = np.flatnonzero(edge.any(axis=1))  # rows and columns without an edge cannot be matched:
    c = np.flatnonzero(edge.any(axis=0))  # dropped, the assignment is smaller (same total weight)
    sub = W[r][:, c]  # (rows, then columns: faster than np.ix_)
    rows, cols = linear_sum_assignment(sub, maximize=True)
    keep = sub[rows, cols] > 0
    return list(zip(r[rows[keep]].tolist(), c[cols[keep]].tolist()))


def job_classes(infos: list[JobInfo], u: np.ndarray, single_running: bool = False) -> tuple[np.ndarray, list[list[int]]]:
    """Group jobs by (profile facts, GPUs, GPUs × urgency): members of a class have
    identical weight rows. With ``single_running`` every running job is a class of its
    own (its switch penalty is its own). Returns each job's class and each class's
    members in queue order."""
    index: dict = {}
    cls = np.empty(len(infos), dtype=np.int64)
    members: list[list[int]] = []
    for n, (x, un) in enumerate(zip(infos, u.tolist())):
        key = (id(x.facts), x.gpus, un, x.id if single_running and x.running else None)
        c = index.get(key)
        if c is None:
            c = index[key] = len(members)
            members.append([])
        members[c].append(n)
        cls[n] = c
    return cls, members


def match_classes(Wc: np.ndarray, r_members: list[list[int]], c_members: list[list[int]]) -> list[tuple[int, int]]:
    """Exact maximum-weight matching of the job graph given at class level.

    Jobs of one class have identical weight rows (columns), so the matching is a
    b-matching between classes with their sizes as capacities: one min-cost flow
    (OR-Tools) on classes × classes arcs instead of an assignment on jobs × jobs.
    Expanded to jobs in queue order it has the total weight of a maximum-weight
    matching of the job graph (tests check against networkx)."""
    from ortools.graph.python import min_cost_flow

    if Wc.size == 0 or Wc.max() <= 0:
        return []
    nr, nc = Wc.shape
    r_cnt = np.array([len(m) for m in r_members], dtype=np.int64)
    c_cnt = np.array([len(m) for m in c_members], dtype=np.int64)
    src, snk = nr + nc, nr + nc + 1
    k = int(min(r_cnt.sum(), c_cnt.sum()))
    ra, ca = np.nonzero(Wc > 0)
    tails = np.concatenate([np.full(nr, src), ra, nr + np.arange(nc), [src]]).astype(np.int32)
    heads = np.concatenate([np.arange(nr), nr + ca, np.full(nc, snk), [snk]]).astype(np.int32)
    caps = np.concatenate([r_cnt, np.minimum(r_cnt[ra], c_cnt[ca]), c_cnt, [k]]).astype(np.int64)
    costs = np.concatenate([np.zeros(nr, dtype=np.int64), -Wc[ra, ca], np.zeros(nc + 1, dtype=np.int64)]).astype(np.int64)
    mcf = min_cost_flow.SimpleMinCostFlow()
    mcf.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
    mcf.set_node_supply(src, k)
    mcf.set_node_supply(snk, -k)
    if mcf.solve() != mcf.OPTIMAL:  # pragma: no cover - always feasible (the bypass arc)
        raise RuntimeError("min-cost flow failed on the pairing graph")
    flows = mcf.flows(np.arange(nr, nr + len(ra), dtype=np.int32))
    left_r = [iter(m) for m in r_members]
    left_c = [iter(m) for m in c_members]
    out = []
    for rc, cc, f in zip(ra.tolist(), ca.tolist(), flows.tolist()):
        for _ in range(f):
            out.append((next(left_r[rc]), next(left_c[cc])))
    return sorted(out)


def class_weights(
    sens: list[JobInfo], insens: list[JobInfo], cluster: Cluster, now: float, R: float, scale: int, gain_cache: dict | None = None,
    levels: int = 0, inc: Incumbents | None = None, hysteresis: float = 0.0,
) -> tuple[np.ndarray, list[list[int]], list[list[int]]]:
    """The weight matrix between job classes (see :func:`job_classes`) and the classes'
    members; entry (a, b) equals :func:`pair_matrix` at any member pair."""
    us = urgencies(sens, now, R, levels)
    ui = urgencies(insens, now, R, levels)
    own = inc is not None and hysteresis > 0
    s_cls, s_members = job_classes(sens, us, own)
    i_cls, i_members = job_classes(insens, ui, own)
    s_rep = [sens[m[0]] for m in s_members]
    i_rep = [insens[m[0]] for m in i_members]
    return pair_matrix(s_rep, i_rep, cluster, now, R, scale, gain_cache, levels, inc, hysteresis), s_members, i_members


def pair_matrix(
    sens: list[JobInfo], insens: list[JobInfo], cluster: Cluster, now: float, R: float, scale: int, gain_cache: dict | None = None,
    levels: int = 0, inc: Incumbents | None = None, hysteresis: float = 0.0,
) -> np.ndarray:
    """The matching's weights: :func:`weight_matrix` less ``hysteresis`` × the
    :func:`switch_penalty` (``inc``: the round before; None or hysteresis 0: no
    penalty); only positive entries are edges."""
    us, ui = urgencies(sens, now, R, levels), urgencies(insens, now, R, levels)
    W = weight_matrix(sens, insens, cluster, now, R, scale, gain_cache, levels, us, ui)
    if inc is None or hysteresis <= 0 or W.size == 0:
        return W
    pen = switch_penalty(sens, insens, us, ui, cluster, inc)
    if pen is None:
        return W
    pen *= hysteresis * scale
    np.minimum(pen, float(np.iinfo(np.int64).max // 4), out=pen)
    np.rint(pen, out=pen)
    W -= pen.astype(np.int64)
    np.maximum(W, 0, out=W)
    return W


def match_networkx(W: np.ndarray) -> list[tuple[int, int]]:
    """Reference: networkx.max_weight_matching on the same graph (Python int weights)."""
    import networkx as nx

    G = nx.Graph()
    for a in range(W.shape[0]):
        for b in range(W.shape[1]):
            if W[a, b] > 0:
                G.add_edge(("s", a), ("i", b), weight=int(W[a, b]))
    out = []
    for u, v in nx.max_weight_matching(G):
        if u[0] == "i":  # networkx returns edges in either orientation
            u, v = v, u
        out.append((u[1], v[1]))
    return sorted(out)


def candidates(infos: list[JobInfo], cluster: Cluster, cfg: SensaScaleConfig) -> tuple[list[JobInfo], list[JobInfo]]:
    """(rows, columns) of the matching among the jobs smaller than a node within the
    queue prefix that asks for at most ``pairing_window`` × the cluster's GPUs: with
    ``pairing_classes="sensitive-insensitive"`` (sensitive, insensitive) jobs; with
    ``"cpu-memory"`` the sensitive jobs only, (CPU-leaning, memory-leaning) by their
    optimal demand relative to the reference share (cores ÷ share ≥ GB ÷ share: CPU).
    The column job of a pair gets its optimal demand, the row job the rest
    (:func:`pair_options`)."""
    budget = cfg.pairing_window * cluster.total_gpus
    ref = cluster.reference_type
    max_g = ref.gpus
    within = cfg.pairing_classes == "cpu-memory"
    sc, sm = ref.cpu_per_gpu, ref.mem_per_gpu
    rows, cols = Side(), Side()
    r_flat: list[float] = []  # (Side.cols, flat: converts faster than a list of tuples)
    c_flat: list[float] = []
    add_r, add_c, ext_r, ext_c = rows.append, cols.append, r_flat.extend, c_flat.extend
    used = 0
    for info in infos:
        g = info.gpus
        if used + g > budget:
            break
        used += g
        if g >= max_g:
            continue
        f = info.facts
        if not within:
            to_row = f.sensitive
        elif f.sensitive:
            to_row = f.opt.cpu / sc >= f.opt.mem / sm
        else:
            continue
        if to_row:
            add_r(info)
            ext = ext_r
        else:
            add_c(info)
            ext = ext_c
        lp = info.last_placements  # the job's Side row (_side_row, inline)
        if info.running and len(lp) == 1:
            ext((g, info.lst, info.tier, lp[0].node, (info.cur or info.current).speed, info.remaining,  # type: ignore[union-attr]
                 info.corr, info.c_resize, info.c_mig))
        else:
            ext((g, info.lst, info.tier, -1, 1.0, 0.0, 1.0, 0.0, 0.0))
    return rows.finish(r_flat), cols.finish(c_flat)


def match(W: np.ndarray, method: str = "assignment") -> list[tuple[int, int]]:
    """Maximum-weight matching of ``W`` by ``method`` (see ``SensaScaleConfig.pairing_method``)."""
    return match_assignment(W) if method == "assignment" else match_networkx(W)


def make_pairs(
    infos: list[JobInfo], cluster: Cluster, cfg: SensaScaleConfig, now: float, R: float, gain_cache: dict | None = None,
    partners: dict[str, str] | None = None, held: list[int] | None = None, capacity: np.ndarray | None = None,
) -> dict[str, tuple[JobInfo, JobInfo]]:
    """Pairs among the queue prefix; maps each paired job id to its (s, i) pair.
    ``partners``: last round's pairs that ran together (job id -> partner id) for the
    hysteresis (None: running jobs sharing a node count as partners); ``held`` and
    ``capacity``: see :meth:`Incumbents.of`."""
    if not cfg.pairing:
        return {}
    sens, insens = candidates(infos, cluster, cfg)
    if not sens or not insens:
        return {}
    inc = Incumbents.of(infos, cluster, partners, held, capacity) if cfg.pair_hysteresis > 0 else None
    h = cfg.pair_hysteresis
    if cfg.pairing_method == "classes":
        Wc, s_members, i_members = class_weights(sens, insens, cluster, now, R, cfg.weight_scale, gain_cache, cfg.urgency_levels, inc, h)
        pairs = match_classes(Wc, s_members, i_members)
    else:
        W = pair_matrix(sens, insens, cluster, now, R, cfg.weight_scale, gain_cache, cfg.urgency_levels, inc, h)
        pairs = match(W, cfg.pairing_method)
    out = {}
    for a, b in pairs:
        out[sens[a].id] = out[insens[b].id] = (sens[a], insens[b])
    return out
