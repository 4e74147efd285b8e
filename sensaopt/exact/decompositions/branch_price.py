"""Branch and price over per-job schedules (issue 15, item 4): column generation
(:class:`~sensaopt.exact.decompositions.colgen.Master`) at every node of a best-first search tree.

**Branching** (on the master LP's solution at a node whose bound is below the
incumbent), as rules on single jobs (:class:`~sensaopt.exact.decompositions.pricing.JobRule`, obeyed
by pricing and by the master's column bounds):

1. *completion*: a job whose columns in the LP complete in different slots is split at
   the slot ``s`` that best halves their weight: complete by ``s`` / after ``s``;
2. otherwise *placement*: the most fractional ``x[j, t, pair]`` (the LP's weight of
   columns running the pair in slot ``t``): banned / forced.

Every schedule obeys exactly one child's rules, so the children partition the node.
A node whose LP is integral (one column per job, weight 1) is a schedule; it closes the
node only when the validator values it within the node's bound (otherwise another
schedule of the node might validate better, and the node's bound stays open). A node is
pruned when its bound, rounded up to the objective's granularity
(:func:`~sensaopt.exact.model.builder.round_bound`), is not below the
incumbent. The bound of the whole search is the smallest bound of the open nodes, so
it is valid when time runs out; with no open node left the incumbent is **optimal**
for the model.

Incumbents are schedules the validator accepts, valued by the validator's metrics
(converted to scaled model units): the model's progress is rounded up, so a column can
complete earlier in the model than in truth, and only the validated value may be
compared with the bound.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from sensaopt.exact.decompositions.colgen import MIN_MIP_S, Master, schedule_of_columns
from sensaopt.exact.decompositions.pricing import NO_RULE, Column, JobRule
from sensaopt.exact.model.builder import round_bound, to_scaled
from sensaopt.exact.model.data import ModelData
from sensaopt.metrics import compute_metrics
from sensaopt.result import BranchPriceReport
from sensaopt.schedule import Schedule
from sensaopt.validator import check_schedule

FRACTIONAL = 1e-6  # an LP value farther than this from 0 and 1 is fractional
ROOT_MIP_SHARE = 0.15  # of the time: the restricted-master MIP after the root node
Rules = dict[int, JobRule]


@dataclass(frozen=True)
class BranchOutcome:
    """What branch and price did (scaled model units): ``bound`` valid lower bound
    (rounded up), ``incumbent``/``schedule`` the best validated schedule and its value
    (None: none known), ``proven`` the incumbent is optimal for the model, ``root`` the
    root node's bound (the Dantzig–Wolfe bound if it converged), ``nodes`` solved,
    ``open`` left, ``columns`` generated, ``seconds``."""

    bound: float | None
    incumbent: float | None
    schedule: Schedule | None
    proven: bool
    root: float | None
    nodes: int
    open: int
    columns: int
    seconds: float

    def report(self) -> BranchPriceReport:
        """What the Result records (:class:`~sensaopt.result.BranchPriceReport`: all but the schedule)."""
        return BranchPriceReport(self.bound, self.incumbent, self.proven, self.root, self.nodes, self.open, self.columns,
                                 self.seconds)


def scaled_value(data: ModelData, schedule: Schedule) -> float | None:
    """The validator's objective of ``schedule`` in scaled model units (the inverse of
    :func:`~sensaopt.exact.model.builder.to_objective`), None when it is invalid or incomplete."""
    ev = check_schedule(data.instance, schedule)
    if ev.errors:
        return None
    obj = compute_metrics(data.instance, ev).objective
    if obj is None:
        return None
    return round(to_scaled(data, obj), 6)


def _integral(master: Master, values: np.ndarray) -> list[Column] | None:
    """The LP's schedule when every job has one real column at weight 1, else None."""
    chosen: dict[int, Column] = {}
    for i, x in enumerate(values):
        if x <= FRACTIONAL:
            continue
        col = master.columns[i]
        if col is None or x < 1 - FRACTIONAL:
            return None
        chosen[col.k] = col
    return list(chosen.values()) if len(chosen) == master.data.n else None


def _weights(master: Master, values: np.ndarray) -> tuple[dict[int, dict[int, float]], dict[tuple[int, int, int], float]]:
    """The LP's weight per job and completion slot, and per ``(job, slot, pair)`` run."""
    by_job: dict[int, dict[int, float]] = {}
    x: dict[tuple[int, int, int], float] = {}
    for i, v in enumerate(values):
        col = master.columns[i]
        if v <= FRACTIONAL or col is None:
            continue
        w = by_job.setdefault(col.k, {})
        w[col.done] = w.get(col.done, 0.0) + v
        for t, b in col.runs:
            x[col.k, t, b] = x.get((col.k, t, b), 0.0) + v
    return by_job, x


def _completion_split(by_job: dict[int, dict[int, float]]) -> tuple[int, int] | None:
    """(job, slot ``s``) whose split "complete by ``s``" / "after ``s``" best halves the
    job's LP weight, over jobs completing in more than one slot."""
    best: tuple[float, int, int] | None = None
    for k, w in by_job.items():
        total, cum = sum(w.values()), 0.0
        for s in sorted(w)[:-1]:
            cum += w[s]
            if best is None or min(cum, total - cum) > best[0]:
                best = (min(cum, total - cum), k, s)
    return None if best is None else (best[1], best[2])


def _branch(master: Master, values: np.ndarray, rules: Rules) -> list[Rules]:
    """The children's rules (see the module docstring); [] when nothing is fractional."""
    by_job, x = _weights(master, values)
    split = _completion_split(by_job)
    if split is not None:
        k, s = split
        r = rules.get(k, NO_RULE)
        return [{**rules, k: replace(r, hi=min(r.hi, s))}, {**rules, k: replace(r, lo=max(r.lo, s + 1))}]
    free = [(min(v, 1 - v), key) for key, v in x.items() if (key[1], key[2]) not in rules.get(key[0], NO_RULE).forced]
    score, (k, t, b) = max(free, default=(0.0, (0, 0, 0)))
    if score <= FRACTIONAL:
        return []
    r = rules.get(k, NO_RULE)
    return [{**rules, k: replace(r, banned=r.banned | {(t, b)})}, {**rules, k: replace(r, forced=(*r.forced, (t, b)))}]


@dataclass
class _Search:
    """The search's state: the master, the incumbent (validated, scaled) and its schedule."""

    data: ModelData
    master: Master
    inc: float | None
    schedule: Schedule | None
    unclosed: float = math.inf  # least bound of integral nodes whose schedule the validator values above it

    def offer(self, cols: list[Column]) -> float | None:
        """A schedule of one column per job: the incumbent if the validator accepts it
        and it is better. Returns its validated value (None: rejected)."""
        sched = schedule_of_columns(self.data, cols)
        val = scaled_value(self.data, sched)
        if val is not None and (self.inc is None or val < self.inc):
            self.inc, self.schedule = val, sched
        return val

    def pruned(self, b: float) -> bool:
        """No schedule under a node with bound ``b`` beats the incumbent (or none obeys its rules)."""
        return b == math.inf or (self.inc is not None and b > -math.inf and round_bound(self.data, b, self.master.step) >= self.inc - 0.5)


def branch_and_price(data: ModelData, time_limit: float, start: Schedule | None = None) -> BranchOutcome:
    """Branch and price on ``data`` for at most ``time_limit`` seconds, from ``start``
    (a valid schedule of the model: its columns seed the master and it is the first
    incumbent)."""
    t0 = time.monotonic()
    stop_at = t0 + time_limit
    inc = scaled_value(data, start) if start is not None else None
    sr = _Search(data, Master(data, start), inc, start if inc is not None else None)
    tie = itertools.count()
    heap: list[tuple[float, int, Rules]] = [(-math.inf, next(tie), {})]
    nodes, root = 0, None
    while heap and time.monotonic() < stop_at:
        parent_bound, _, rules = heapq.heappop(heap)
        if sr.pruned(parent_bound):
            heap.clear()  # best first: every open node is at least as bad
            break
        node = sr.master.solve(stop_at, rules, cutoff=sr.inc)
        bound = max(parent_bound, node.bound)
        nodes += 1
        if root is None:
            root = bound
            _root_mip(sr, node.stop, stop_at)
        if node.stop == "time" or node.stop.startswith("master LP"):
            heapq.heappush(heap, (bound, next(tie), rules))  # unresolved: it stays open with what is known
            break
        if sr.pruned(bound) or node.values is None:
            continue
        cols = _integral(sr.master, node.values)
        if cols is not None:  # the node's best schedule in the model's units: it is closed if the validator agrees
            val = sr.offer(cols)
            if (val is None or val > round_bound(data, bound, sr.master.step) + 0.5) and not sr.pruned(bound):
                sr.unclosed = min(sr.unclosed, bound)  # another schedule of the node might validate better: it stays a bound
            continue
        for child in _branch(sr.master, node.values, rules):
            heapq.heappush(heap, (bound, next(tie), child))
    return _outcome(sr, heap, root, nodes, time.monotonic() - t0)


def _root_mip(sr: _Search, stop: str, stop_at: float) -> None:
    """After the root: the restricted-master MIP for ``ROOT_MIP_SHARE`` of the time left."""
    left = stop_at - time.monotonic()
    if stop == "converged" and left > 0:
        found = sr.master.restricted_mip(max(left * ROOT_MIP_SHARE, min(MIN_MIP_S, left)))
        if found is not None:
            sr.offer(found)


def _outcome(sr: _Search, heap: list[tuple[float, int, Rules]], root: float | None, nodes: int, seconds: float) -> BranchOutcome:
    """The search's result: proven when no node is left open (every one pruned, solved or infeasible)."""
    data, inc = sr.data, sr.inc
    open_bounds = [b for b, _, _ in heap]
    open_bounds += [sr.unclosed] if sr.unclosed < math.inf else []
    proven = inc is not None and not open_bounds
    lower: float | None
    if proven:
        lower = inc
    elif open_bounds and min(open_bounds) > -math.inf:
        lower = round_bound(data, min(open_bounds))
    else:
        lower = None  # the root is unresolved, or every node is infeasible and no incumbent is known
    if lower is not None and inc is not None:
        lower = min(lower, inc)
    rb = None if root is None or root in (-math.inf, math.inf) else round_bound(data, root)
    return BranchOutcome(lower, inc, sr.schedule, proven, rb, nodes, len(heap), len(sr.master.columns), seconds)
