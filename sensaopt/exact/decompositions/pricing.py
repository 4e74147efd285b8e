"""Pricing for column generation (:mod:`sensaopt.exact.decompositions.colgen`): the cheapest schedule
of **one job** under given resource prices, exactly as the time-indexed model
(:mod:`sensaopt.exact.model.builder`) counts it.

A job's schedule is a sequence, slot by slot from its release to its last slot
(``ModelData.slots``), of "idle" or one allowed (pattern, option) pair; each running
slot adds the pair's progress units less the loss of the change it starts with (the
model's ``full``/``kept`` units: nothing for the first start or the same pair, a
restart after a pause, a resize for another option on the same pattern, a migration
for another pattern — :meth:`ModelData.change`). The job is complete at the end of the
first slot where its progress reaches ``W``, and runs no more (the model's
``no_run_after_completion``). Its cost is its objective contribution
(:func:`job_cost`) plus the price of every slot it runs.

The search is a label-setting dynamic program over slots. A label is (progress units,
price so far) in a state — never ran, paused, or ran pair ``i`` in the slot before —
and a label is dropped when another in the same state has at least its progress at
no more price (Pareto dominance; progress is kept exactly, in integer units, so the
search is exact). A label is also dropped when even its earliest completion (its
missing units at the job's best units per slot, every later slot free) costs at least
the cheapest schedule found so far, or at least the caller's ``cutoff``: no schedule
through it could be returned. To avoid comparing every pair with every pair, the predecessors of
pair ``b`` are grouped by the kind of change they cause: ``b`` itself (no change),
the other pairs of ``b``'s pattern (resize), every running pair (migration), paused
(restart), never ran (first start, free). Taking the migration group as *all* running
pairs credits the same-pattern ones too little, never too much; they are also in their
own group with their true gain, which dominates. This grouping is used only when the
job's change kinds and losses are ordered that way (:func:`grouped_ok`); otherwise
each pair's predecessors are taken one by one.

The search itself runs compiled, on arrays (:mod:`sensaopt.exact.decompositions.label_search`,
Numba; several times less CPU than the pure-Python search it replaced, with the same answer on every
call: ``benchmarks/pricing_kernel.py``, ``models/measurements.md`` session 36). This module
keeps what is computed once per job and the conversion of rules to arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sensaopt.exact.decompositions import label_search
from sensaopt.exact.model.builder import objective_parts
from sensaopt.exact.model.data import CHANGES, JobData, ModelData, placements_of
from sensaopt.instance import Change


@dataclass(frozen=True)
class Column:
    """One job's whole schedule: the (slot, index into ``jd.pairs``) it runs, the slot
    at whose end it is complete, and its objective contribution in scaled model units
    (:func:`job_cost`, integral)."""

    k: int
    runs: tuple[tuple[int, int], ...]
    done: int
    cost: int


def job_cost(data: ModelData, jd: JobData, done: int) -> int:
    """Scaled objective contribution of job ``jd`` complete at the end of slot ``done``:
    ``R·Q`` per unfinished slot (``done`` of them, from slot 0) plus the weighted value
    of each deadline it misses (the builder's objective, :func:`builder.add_objective`,
    for one job; summed over jobs it is the model objective)."""
    slot_coef, met_coef = objective_parts(data)
    return slot_coef * done + sum(met_coef[jd.k, d] for d, (last, _) in enumerate(jd.deadlines) if done > last)


def change_kinds(data: ModelData, jd: JobData) -> list[list[Change]]:
    """``kinds[a][b]``: the change a slot running pair ``b`` starts with after a slot
    running pair ``a`` (indices into ``jd.pairs``)."""
    pls = [placements_of(data, jd, p) for p in jd.pairs]
    return [[data.change(jd, True, pa, pb) for pb in jd.pairs] for pa in pls]


def grouped_ok(jd: JobData, kinds: list[list[Change]]) -> bool:
    """True when pair ``b``'s predecessors can be grouped: same pair = no change, same
    pattern = resize, other pattern = migration, and for every option the migration
    keeps no more units than the resize (so the all-running group never over-credits)."""
    for a, (pa, _) in enumerate(jd.pairs):
        for b, (pb, _) in enumerate(jd.pairs):
            want = Change.NONE if a == b else Change.RESIZE if pa == pb else Change.MIGRATION
            if kinds[a][b] is not want:
                return False
    return all(m <= z for m, z in zip(jd.kept[Change.MIGRATION], jd.kept[Change.RESIZE]))


@dataclass(frozen=True)
class JobRule:
    """Branching decisions on one job (:mod:`sensaopt.exact.decompositions.branch_price`): complete
    in slot ``lo``..``hi``; never run pair ``b`` in slot ``t`` for ``(t, b)`` in
    ``banned``; run exactly pair ``b`` in slot ``t`` for ``(t, b)`` in ``forced``."""

    lo: int = 0
    hi: int = 1 << 30
    banned: frozenset[tuple[int, int]] = frozenset()
    forced: tuple[tuple[int, int], ...] = ()

    def allows(self, col: Column) -> bool:
        """Whether a column obeys every decision."""
        if not self.lo <= col.done <= self.hi:
            return False
        runs = set(col.runs)
        return not (runs & self.banned) and all(f in runs for f in self.forced)


NO_RULE = JobRule()


@dataclass
class JobPricer:
    """The per-job data pricing needs, computed once per job: change kinds, the units
    a slot of each pair adds after each kind of change, the cost of each completion slot
    (scaled units), as the arrays the compiled search takes
    (:func:`~sensaopt.exact.decompositions.label_search.search`)."""

    data: ModelData
    jd: JobData
    kinds: list[list[Change]]
    grouped: bool
    cost_at: dict[int, int]
    most: int  # the most units any slot adds (≥ 1)
    cost_arr: np.ndarray  # [t - first slot]: cost_at[t], float
    low_arr: np.ndarray  # [t - first slot]: the least completion cost at slot t or later, float
    pattern_ids: np.ndarray  # by pair: its pattern, numbered 0.. n_patterns - 1
    n_patterns: int
    gains: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # by pair: its slot's units after no change, restart, resize, migration
    pair_gain: np.ndarray  # [a, b]: the units of a slot of pair b after a slot of pair a

    @classmethod
    def of(cls, data: ModelData, jd: JobData) -> JobPricer:
        kinds = change_kinds(data, jd)
        slots = data.slots(jd)
        cost_at = {t: job_cost(data, jd, t) for t in slots}
        units = {c: [jd.units(c, o) for _, o in jd.pairs] for c in (Change.NONE, *CHANGES)}
        most = max([1, *(u for per_pair in units.values() for u in per_pair)])
        cost_arr = np.array([cost_at[t] for t in slots], dtype=np.float64)
        low_arr = np.minimum.accumulate(cost_arr[::-1])[::-1].copy() if len(cost_arr) else cost_arr
        numbers: dict[int, int] = {}
        pattern_ids = np.array([numbers.setdefault(p, len(numbers)) for p, _ in jd.pairs], dtype=np.int64)
        gains = tuple(np.array(units[c], dtype=np.int64).reshape(len(jd.pairs))
                      for c in (Change.NONE, Change.RESTART, Change.RESIZE, Change.MIGRATION))
        pair_gain = np.array([[units[kinds[a][b]][b] for b in range(len(jd.pairs))] for a in range(len(jd.pairs))],
                             dtype=np.int64).reshape(len(jd.pairs), len(jd.pairs))
        return cls(data, jd, kinds, grouped_ok(jd, kinds), cost_at, most, cost_arr, low_arr, pattern_ids, len(numbers),
                   gains, pair_gain)  # type: ignore[arg-type]

    def price(self, slot_price: Sequence[Sequence[float]] | np.ndarray, rule: JobRule = NO_RULE,
              cutoff: float = float("inf"), banned: np.ndarray | None = None) -> tuple[float, Column | None]:
        """The cheapest complete schedule obeying ``rule``: (its objective contribution
        + the prices of its slots, the column), or (inf, None) if there is none.
        ``slot_price[i][b]``: price of running pair ``b`` in the ``i``-th slot of
        ``data.slots(jd)`` (≥ 0). With a finite ``cutoff`` only schedules cheaper than it
        are sought: if there is none, (a lower bound ≥ ``cutoff`` − 1e-9 of every
        schedule's total, None), or (inf, None) when no schedule was seen at all.
        ``banned`` (bool, same shape as ``slot_price``): more (slot, pair) cells never to run,
        given as an array (the rule's ``banned`` are in slots, this one's in slot indices)."""
        slots = self.data.slots(self.jd)
        first, n_slots, n_pairs = slots.start, len(slots), len(self.jd.pairs)
        table = np.ascontiguousarray(slot_price, dtype=np.float64).reshape(n_slots, n_pairs)
        if banned is None:
            ban = np.zeros((n_slots, n_pairs), dtype=np.bool_)
        else:  # the caller's array, copied only when the rule adds cells to it
            ban = np.asarray(banned, dtype=np.bool_).reshape(n_slots, n_pairs)
            ban = ban.copy() if rule.banned else np.ascontiguousarray(ban)
        for t, b in rule.banned:
            if first <= t < slots.stop:
                ban[t - first, b] = True
        must = np.full(n_slots, -1, dtype=np.int64)
        for t, b in rule.forced:
            if first <= t < slots.stop:
                must[t - first] = b
        last = min(slots.stop - 1, rule.hi)
        n_iter = max(0, min(n_slots, rule.hi - first + 1))
        best, runs, pairs, done, cut = label_search.search(
            self.jd.work_units, self.most, first, last, n_iter, rule.lo, max((t for t, _ in rule.forced), default=-1),
            self.cost_arr, self.low_arr, table, ban, must, self.grouped, self.pattern_ids, self.n_patterns,
            *self.gains, self.pair_gain, float(cutoff))
        if done < 0:
            return (float(cutoff) - 1e-9 if cut else float("inf")), None
        return float(best), Column(self.jd.k, tuple(zip(runs.tolist(), pairs.tolist())), int(done), self.cost_at[int(done)])
