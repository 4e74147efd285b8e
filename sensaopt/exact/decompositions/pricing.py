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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from sensaopt.exact.model.builder import objective_parts
from sensaopt.exact.model.data import CHANGES, JobData, ModelData, placements_of
from sensaopt.instance import Change

NEVER = -1  # state: the job has not run yet
PAUSED = -2  # state: it ran, but not in the slot before


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

Label = tuple  # (progress units, price, parent label or None, pair index or None, slot or None)


_progress, _price = itemgetter(0), itemgetter(1)


def _pareto(labels: list[Label]) -> list[Label]:
    """Labels not dominated (more progress at no more price), most progress first."""
    labels.sort(key=_price)  # then by progress, descending: stable, so (-progress, price) order
    labels.sort(key=_progress, reverse=True)
    out: list[Label] = []
    best = float("inf")
    for lb in labels:
        if lb[1] < best - 1e-9:
            out.append(lb)
            best = lb[1]
    return out


@dataclass
class _Labels:
    """The search's open labels after a slot, by state."""

    never: list[Label]
    paused: list[Label]
    running: list[list[Label]]  # by pair index


@dataclass
class JobPricer:
    """The per-job data pricing needs, computed once per job: change kinds, the units
    a slot of each pair adds after each kind of change, the cost of each completion slot."""

    data: ModelData
    jd: JobData
    kinds: list[list[Change]]
    grouped: bool
    cost_at: dict[int, int]
    pattern: list[int]  # by pair: pattern index
    units: dict[Change, list[int]]  # by kind, by pair: units of the slot
    most: int  # the most units any slot adds (≥ 1)
    cheapest_from: list[float]  # [t - first slot]: the least completion cost at slot t or later
    by_pair: list[tuple[int, int, int, int]]  # per pair: its slot's units after no change, a restart, a resize, a migration

    @classmethod
    def of(cls, data: ModelData, jd: JobData) -> JobPricer:
        kinds = change_kinds(data, jd)
        slots = data.slots(jd)
        cost_at = {t: job_cost(data, jd, t) for t in slots}
        units = {c: [jd.units(c, o) for _, o in jd.pairs] for c in (Change.NONE, *CHANGES)}
        most = max([1, *(u for per_pair in units.values() for u in per_pair)])
        cheapest_from: list[float] = []
        low = float("inf")
        for t in reversed(slots):
            low = min(low, cost_at[t])
            cheapest_from.append(low)
        cheapest_from.reverse()
        by_pair = list(zip(units[Change.NONE], units[Change.RESTART], units[Change.RESIZE], units[Change.MIGRATION]))
        return cls(data, jd, kinds, grouped_ok(jd, kinds), cost_at, [p for p, _ in jd.pairs], units, most, cheapest_from, by_pair)

    def price(self, slot_price: Sequence[Sequence[float]], rule: JobRule = NO_RULE,
              cutoff: float = float("inf")) -> tuple[float, Column | None]:
        """The cheapest complete schedule obeying ``rule``: (its objective contribution
        + the prices of its slots, the column), or (inf, None) if there is none.
        ``slot_price[i][b]``: price of running pair ``b`` in the ``i``-th slot of
        ``data.slots(jd)`` (≥ 0). With a finite ``cutoff`` only schedules cheaper than it
        are sought: if there is none, (a lower bound ≥ ``cutoff`` − 1e-9 of every
        schedule's total, None), or (inf, None) when no schedule was seen at all."""
        forced = dict(rule.forced)
        last_forced = max(forced, default=-1)
        slots = self.data.slots(self.jd)
        self._first, self._last = slots.start, min(slots.stop - 1, rule.hi)
        self._cut = False  # a label or a completion was left out for its cost (not for its slots)
        labels = _Labels([(0, 0.0, None, None, None)], [], [[] for _ in self.jd.pairs])
        best: list = [cutoff, None, -1]  # total, label, completion slot
        for i, t in enumerate(slots):
            if t > rule.hi:
                break
            labels = self._slot(labels, t, slot_price[i], rule, forced.get(t), rule.lo <= t and t >= last_forced, best)
        if best[1] is None:
            return (cutoff - 1e-9 if self._cut else float("inf")), None
        return best[0], self._column(best[1], best[2])

    def _open(self, labs: list[Label], t: int, best: list) -> list[Label]:
        """The labels (not complete after slot ``t``) through which a schedule could
        still cost less than ``best[0]`` − 1e-9: the missing units take at least
        ⌈missing / most⌉ more slots, and prices are ≥ 0."""
        W, most, last, first, low = self.jd.work_units, self.most, self._last, self._first, self.cheapest_from
        limit = best[0] - 1e-9
        out = []
        for lb in labs:
            done = t + (W - lb[0] + most - 1) // most
            if done > last:
                continue  # cannot complete in its slots
            if lb[1] + low[done - first] >= limit:
                self._cut = True
                continue
            out.append(lb)
        return out

    def _slot(self, labels: _Labels, t: int, prices: Sequence[float], rule: JobRule, must: int | None, done_ok: bool,
              best: list) -> _Labels:
        """One slot of the search: every pair's new labels (those reaching ``W`` complete
        here, if ``done_ok``, and are offered to ``best``; the others kept when
        :meth:`_open`), then the idle transitions."""
        groups = self._groups(labels.running) if self.grouped else None
        running: list[list[Label]] = []
        W, most, last, first, low, cost_t = self.jd.work_units, self.most, self._last, self._first, self.cheapest_from, self.cost_at[t]
        for b in range(len(self.jd.pairs)):
            if (must is not None and b != must) or (t, b) in rule.banned:
                running.append([])
                continue
            keep: list[Label] = []
            price = prices[b]
            for gain, labs in self._sources(labels, groups, b):
                for lb in labs:
                    p, c = lb[0] + gain, lb[1] + price
                    if p >= W:
                        if done_ok:  # complete at the end of t: it runs no more
                            if c + cost_t < best[0] - 1e-9:
                                best[:] = [c + cost_t, (p, c, lb, b, t), t]
                            else:
                                self._cut = True
                        continue
                    done = t + (W - p + most - 1) // most  # :meth:`_open`'s test, inline (the search's innermost loop)
                    if done > last:
                        continue
                    if c + low[done - first] >= best[0] - 1e-9:
                        self._cut = True
                        continue
                    keep.append((p, c, lb, b, t))
            running.append(_pareto(keep))
        if must is not None:  # no idle slot here
            return _Labels([], [], running)
        idle = list(labels.paused)
        for labs in labels.running:
            idle.extend(labs)
        return _Labels(labels.never, _pareto(self._open(idle, t, best)), running)

    def _groups(self, running: list[list[Label]]) -> tuple[dict[int, list[Label]], list[Label]]:
        """The running labels' Pareto fronts by pattern and over all pairs."""
        by_pat: dict[int, list[Label]] = {}
        every: list[Label] = []
        for b, labs in enumerate(running):
            by_pat.setdefault(self.pattern[b], []).extend(labs)
            every.extend(labs)
        return {p: _pareto(labs) for p, labs in by_pat.items()}, _pareto(every)

    def _sources(self, labels: _Labels, groups: tuple[dict[int, list[Label]], list[Label]] | None, b: int
                 ) -> list[tuple[int, list[Label]]]:
        """The predecessors of a slot running pair ``b``, grouped, each group with the
        units the slot adds after its change."""
        none, restart, resize, migration = self.by_pair[b]
        src: list[tuple[int, list[Label]]] = [(none, labels.never), (restart, labels.paused), (none, labels.running[b])]
        if groups is not None:
            by_pat, every = groups
            src += [(resize, by_pat.get(self.pattern[b], [])), (migration, every)]
        else:
            u = self.units
            src += [(u[self.kinds[a][b]][b], labs) for a, labs in enumerate(labels.running) if a != b]
        return src

    def _column(self, label: Label, done: int) -> Column:
        runs: list[tuple[int, int]] = []
        lb: Label | None = label
        while lb is not None and lb[3] is not None:  # one label per running slot; idle slots keep their parent
            runs.append((lb[4], lb[3]))
            lb = lb[2]
        return Column(self.jd.k, tuple(reversed(runs)), done, self.cost_at[done])
