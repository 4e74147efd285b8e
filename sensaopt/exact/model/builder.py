"""The one model builder: the time-indexed formulation of ``models/formulation.md``,
written once against the backend interface of the solvers layer
(:class:`sensaopt.solvers.Backend`), which CP-SAT, HiGHS and CBC implement.

All coefficients are integers in the scaled units of :mod:`sensaopt.exact.model.data`.
The builder is split into :func:`add_variables`, the constraint families
(``c_*`` functions, one per named family of the formulation) and
:func:`add_objective`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sensaopt.exact.model.data import CHANGES, JobData, ModelData
from sensaopt.exact.model.objective import (
    add_objective,
    floor_loss,
    loss_expr,
    model_variables,
    objective_expr,
    objective_offset,
    objective_parts,
    objective_step,
    round_bound,
    shortfall_expr,
    to_objective,
    to_scaled,
)
from sensaopt.exact.model.variables import (
    BUILD_CHECK_EVERY,
    BuildTimeout,
    Decisions,
    HorizonTooShort,
    Indicators,
    JobDeadline,
    JobSlot,
    JobSlotPair,
    NodeSlot,
    Pair,
    Vars,
    add_constraint,
    check_deadline,
    check_start,
)
from sensaopt.instance import Change
from sensaopt.solvers import Backend, TimeBudget, gc_paused


@dataclass(frozen=True)
class Strength:
    """Optional strengthening (all valid: they never cut off an optimal schedule)."""

    symmetry: bool = True  # identical nodes are first used in index order
    aggregate: bool = True  # cluster-wide GPU/CPU/memory capacity per slot
    trim: bool = True  # variables only in [release, horizon)
    prune: bool = True  # completion impossible before the earliest solo finish; hopeless deadlines fixed violated
    run_count: bool = False  # min_run_slots through a running count of run slots (sparse; the same constraints projected)

FamilyFn = Callable[[ModelData, Backend, "Vars", Strength], None]
"""Adds one family's constraints: ``(data, backend, variables, strength)``."""


@dataclass(frozen=True)
class Family:
    """A named constraint family: ``add`` adds its constraints (through
    :func:`add_constraint`, which counts them under the family's name);
    ``warm_start``: every validator-valid schedule satisfies it, so the SensaScale
    warm start stays feasible (False for a rule the validator does not know)."""

    name: str
    add: FamilyFn
    warm_start: bool = False


def build(data: ModelData, be: Backend, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> Vars:
    """Variables, every family of ``spec`` (:class:`ModelSpec`; a :class:`Strength`: with
    the built-in families), objective. ``budget`` is checked after
    each step, every ``BUILD_CHECK_EVERY`` constraints and jobs (:class:`BuildTimeout`
    when spent): building a large model takes seconds, and a time limit is a limit on
    the whole call."""

    spec = spec_of(spec)
    strength = spec.strength
    started = time.perf_counter()
    v = Vars(deadline=budget.deadline if budget is not None else None)
    check_deadline(v)  # a budget already spent: no build at all
    with gc_paused():
        add_variables(data, be, v, strength)
        check_deadline(v)
        for fam in spec.families:
            fam.add(data, be, v, strength)
            check_deadline(v)
        add_objective(data, be, v)
        if data.shortfall:
            be.minimize(shortfall_expr(be, v))
    v.usage = None  # built: the families' shared pass is not kept with the model
    if budget is not None and budget.work is None:  # no solver run could start and stop in the time the call has left
        check_start(budget.outer_deadline, time.perf_counter() - started)  # (under a work limit the clock is only a safety net)
    v.deadline = None  # built: constraints added later (lexicographic phases) never raise BuildTimeout
    return v


# ---- variables ---------------------------------------------------------------------------
def add_variables(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """Every variable, job by job (creation order matters to CP-SAT's search), then
    the symmetry-breaking ``ever`` indicators."""
    for jd in data.jobs:
        _add_job_variables(data, be, v, s, jd)
        check_deadline(v)  # after every job: one job's variables can take milliseconds (thousands of pairs x slots)
    if s.symmetry and not data.window:
        for n, t in _sym_pairs(data):
            v.ever[n, t] = be.bool_var(f"ever_{n}_{t}")


def _clocked(slots: Iterable[int], v: Vars) -> Iterator[int]:
    """``slots``, the build's clock looked at every 8th slot (one job's variables over
    500 slots took up to 0.45 s)."""
    for t in slots:
        if t % 8 == 0:
            check_deadline(v)
        yield t


def _add_job_variables(data: ModelData, be: Backend, v: Vars, s: Strength, jd: JobData) -> None:
    H, k, first = data.H, jd.k, jd.release
    for t in _clocked(data.slots(jd, s.trim), v):
        for pair in jd.pairs:
            v.x[k, t, pair] = be.bool_var(f"x_{k}_{t}_{pair[0]}_{pair[1]}")
        v.run[k, t] = be.sum([v.x[k, t, p] for p in jd.pairs])
    dmax = max_loss(jd)
    for t in _clocked(data.slots(jd, s.trim), v):
        if t < first:
            v.rb.fix((k, t), 0)
        elif t == first:
            v.rb.fix((k, t), 1 if jd.init_ran else 0)
        else:
            v.rb.decide((k, t), be.bool_var(f"rb_{k}_{t}"))
        # a change (restart, migration, resize) is possible once the job ran
        if dmax > 0 and (v.rb.var((k, t)) is not None or (v.rb[k, t] == 1 and t >= first)):
            v.loss[k, t] = be.int_var(0, dmax, f"ls_{k}_{t}")
        v.cum[k, t] = be.int_var(0, jd.work_units + jd.best_full * H, f"cum_{k}_{t}")
        early = s.prune and t < jd.earliest_done
        if t < first or early:
            v.done.fix((k, t), 0)
        else:
            v.done.decide((k, t), be.bool_var(f"d_{k}_{t}"))
    for d, (last, _val) in enumerate(jd.deadlines):
        if last < first or (s.prune and last < jd.earliest_done):
            v.met.fix((k, d), 0)
        elif last >= data.end(jd) - 1 and not data.window:  # every schedule of the model finishes by then
            v.met.fix((k, d), 1)
        else:
            v.met.decide((k, d), be.bool_var(f"met_{k}_{d}"))
    if data.window:
        v.leftover[k] = be.int_var(0, -(-jd.work_units // jd.best_full), f"left_{k}")


def _sym_pairs(data: ModelData) -> Iterator[tuple[int, int]]:
    nodes = data.instance.cluster.nodes
    for n in range(len(nodes) - 1):
        if nodes[n].type is nodes[n + 1].type:
            for t in range(data.H):
                yield n, t


# ---- constraint families -------------------------------------------------------------------
def c_one_placement(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """one_placement: at most one (pattern, option) per job and slot."""
    for (k, _t), run in v.run.items():
        if len(data.jobs[k].pairs) > 1:
            add_constraint(be, v, run <= 1, "one_placement")


def c_release(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """release: no run before the release slot (only needed without trimming)."""
    for (k, t, _pair), x in v.x.items():
        if t < data.jobs[k].release:
            add_constraint(be, v, x == 0, "release")


def _node_usage(data: ModelData, v: Vars) -> dict[tuple[int, int], list[tuple[int, int, int, Any]]]:
    """(node, t) -> list of (gpus, cpu units, mem units, x) (:meth:`ModelData.charges`: in
    the relaxation a gang job's whole nodes are charged GPUs only). Kept in ``v.usage``
    for the rest of the build (capacity and aggregate both read it: one pass over the
    placement variables, 0.6 s on a 99 k-variable window model, not two), the clock
    looked at every :data:`USAGE_CHECK_EVERY` variables."""
    if v.usage is not None:
        return v.usage
    use: dict = {}
    for i, ((k, t, pair), x) in enumerate(v.x.items()):
        if i % USAGE_CHECK_EVERY == 0:
            check_deadline(v)
        jd = data.jobs[k]
        for nd, g, c, m in data.charges(jd.patterns[pair[0]], jd.options[pair[1]]):
            use.setdefault((nd, t), []).append((g, c, m, x))
    v.usage = use
    return use


USAGE_CHECK_EVERY = 4096  # placement variables between two looks at the clock in _node_usage


def c_capacity(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """capacity_gpu / capacity_cpu / capacity_mem: per node and slot."""
    nodes = data.instance.cluster.nodes
    for (nd, _t), items in _node_usage(data, v).items():
        node = nodes[nd]
        cap_m = data.mem_units(node.mem_gb, up=False)
        cap_c = data.cpu_units(node.cpus, up=False)
        if sum(g for g, _, _, _ in items) > node.gpus:
            add_constraint(be, v, be.sum([g * x for g, _, _, x in items]) <= node.gpus, "capacity_gpu")
        if sum(c for _, c, _, _ in items) > cap_c:
            add_constraint(be, v, be.sum([c * x for _, c, _, x in items]) <= cap_c, "capacity_cpu")
        if sum(m for _, _, m, _ in items) > cap_m:
            add_constraint(be, v, be.sum([m * x for _, _, m, x in items]) <= cap_m, "capacity_mem")


def c_aggregate(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """aggregate_capacity: cluster-wide GPU, CPU and memory per slot (valid cuts)."""
    if not s.aggregate:
        return
    cl = data.instance.cluster
    per_t: dict = {}
    for (_nd, t), items in _node_usage(data, v).items():
        per_t.setdefault(t, []).extend(items)
    cap_m = sum(data.mem_units(n.mem_gb, up=False) for n in cl.nodes)
    cap_c = sum(data.cpu_units(n.cpus, up=False) for n in cl.nodes)
    for items in per_t.values():
        # one term per x: a multi-node x appears once per node, so sum its parts
        agg: dict = {}
        for g, c, m, x in items:
            a = agg.setdefault(id(x), [0, 0, 0, x])
            a[0] += g
            a[1] += c
            a[2] += m
        vals = list(agg.values())
        if sum(a[0] for a in vals) > cl.total_gpus:
            add_constraint(be, v, be.sum([a[0] * a[3] for a in vals]) <= cl.total_gpus, "aggregate_gpu")
        if sum(a[1] for a in vals) > cap_c:
            add_constraint(be, v, be.sum([a[1] * a[3] for a in vals]) <= cap_c, "aggregate_cpu")
        if sum(a[2] for a in vals) > cap_m:
            add_constraint(be, v, be.sum([a[2] * a[3] for a in vals]) <= cap_m, "aggregate_mem")


def max_loss(jd: JobData) -> int:
    """The most progress units one slot of the job can lose to a change of any kind."""
    return max(jd.lost(c, o) for c in CHANGES for o in range(len(jd.options)))


def _pattern_use(jd: JobData, v: Vars, t: int) -> dict[int, list[tuple[int, Any]]]:
    """Pattern index -> [(option index, x)] of the job in slot ``t``."""
    out: dict[int, list[tuple[int, Any]]] = {}
    for p in jd.pairs:
        out.setdefault(p[0], []).append((p[1], v.x[jd.k, t, p]))
    return out


def c_ran_before(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """ran_before: rb[t] >= rb[t-1] and rb[t] >= run[t-1] (the solver never gains by raising rb)."""
    for (k, t), rb in v.rb.decisions():
        prev = v.rb.get((k, t - 1), 0)
        if v.rb.var((k, t - 1)) is not None:
            add_constraint(be, v, rb >= prev, "ran_before")
        elif prev == 1:
            add_constraint(be, v, rb >= 1, "ran_before")
        if (k, t - 1) in v.run:
            add_constraint(be, v, rb >= v.run[k, t - 1], "ran_before")


def c_change(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """The change a slot starts with costs its kind's progress units (the validator's
    :func:`~sensaopt.changes.classify`); ``loss[t]`` is at least each kind's loss when
    that kind applies (the solver never gains by raising it):

    * change_restart: ran before, not in slot t-1 — ``loss >= Σ Lr·x[t] − Mr·(1 − rb[t] + run[t-1])``;
    * change_migration, per pattern P: ran in t-1 on another pattern —
      ``loss >= Σ_o Lm_o·x[t,P,o] − Mm_P·(1 + use[t-1,P] − run[t-1])``;
    * change_resize: ran in t-1 on the same pattern with another option. Per option o
      when every option's migration loss is at least its resize loss (the defaults):
      ``loss >= Lz_o·(opt[t,o] + run[t-1] − opt[t-1,o] − 1)`` (it also fires on a
      migration that changes the option, where change_migration asks more); else per
      pair (P, o): ``loss >= Lz_o·(x[t,P,o] + use[t-1,P] − x[t-1,P,o] − 1)``;
    * change_first (the window's first slot): the kind of each pair is known from the
      placements of the round before, ``loss >= Σ lost(kind(pair))·x[0,pair]``.
    """
    for (k, t), loss in v.loss.items():
        jd = data.jobs[k]
        if (k, t - 1) not in v.run:  # the model's first slot of the job: the state before it is given
            prev = jd.init_placements
            lost = [(jd.lost(data.change(jd, True, prev, p), p[1]), v.x[k, t, p]) for p in jd.pairs]
            if any(c > 0 for c, _ in lost):
                add_constraint(be, v, loss >= be.sum([c * x for c, x in lost if c > 0]), "change_first")
            continue
        _restart_loss(jd, be, v, t, loss)
        run_prev = v.run[k, t - 1]
        now, before = _pattern_use(jd, v, t), _pattern_use(jd, v, t - 1)
        for P, xs in now.items():
            lm = [(jd.lost(Change.MIGRATION, o), x) for o, x in xs]
            mm = max(c for c, _ in lm)
            if mm > 0 and len(now) > 1:
                use_prev = be.sum([x for _, x in before[P]])
                add_constraint(be, v, loss >= be.sum([c * x for c, x in lm if c > 0]) - mm * (1 + use_prev - run_prev),
                               "change_migration")
        if _resize_by_option(jd):
            _resize_per_option(jd, be, v, t, loss)
            continue
        for P, xs in now.items():
            if len(xs) > 1:
                use_prev = be.sum([x for _, x in before[P]])
                prev_x = dict(before[P])
                for o, x in xs:
                    lz = jd.lost(Change.RESIZE, o)
                    if lz > 0:
                        add_constraint(be, v, loss >= lz * (x + use_prev - prev_x[o] - 1), "change_resize")


def _resize_by_option(jd: JobData) -> bool:
    """May change_resize be written per option? Yes when no option's resize loss exceeds its migration loss."""
    return all(jd.lost(Change.RESIZE, o) <= jd.lost(Change.MIGRATION, o) for o in range(len(jd.options)))


def _resize_per_option(jd: JobData, be: Backend, v: Vars, t: int, loss: Any) -> None:
    """change_resize per option (see :func:`c_change`)."""
    now: dict[int, list[Any]] = {}
    before: dict[int, list[Any]] = {}
    for p in jd.pairs:
        now.setdefault(p[1], []).append(v.x[jd.k, t, p])
        before.setdefault(p[1], []).append(v.x[jd.k, t - 1, p])
    if len(now) < 2:
        return
    run_prev = v.run[jd.k, t - 1]
    for o, xs in now.items():
        lz = jd.lost(Change.RESIZE, o)
        if lz > 0:
            add_constraint(be, v, loss >= lz * (be.sum(xs) + run_prev - be.sum(before[o]) - 1), "change_resize")


def _restart_loss(jd: JobData, be: Backend, v: Vars, t: int, loss: Any) -> None:
    """change_restart of slot ``t`` (see :func:`c_change`)."""
    lr = [(jd.lost(Change.RESTART, p[1]), v.x[jd.k, t, p]) for p in jd.pairs]
    mr = max(c for c, _ in lr)
    if mr > 0:
        rb = v.rb[jd.k, t]
        add_constraint(be, v, loss >= be.sum([c * x for c, x in lr if c > 0]) - mr * (1 - rb + v.run[jd.k, t - 1]), "change_restart")


def c_progress(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """work_progress: cum[t] = cum[t-1] + Σ full·x − loss[t]; completion: cum[t] >= W·done[t]."""
    for jd in data.jobs:
        k = jd.k
        prev = 0
        for t in data.slots(jd, s.trim):
            gain = be.sum([jd.full[p[1]] * v.x[k, t, p] for p in jd.pairs])
            lost = v.loss.get((k, t), 0)
            add_constraint(be, v, v.cum[k, t] == prev + gain - lost, "work_progress")
            prev = v.cum[k, t]
            d = v.done.var((k, t))
            if d is not None:
                add_constraint(be, v, v.cum[k, t] >= jd.work_units * d, "completion")


def c_min_run_slots(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """min_run_slots (``prune``): complete by t only after at least ceil(W / max F) run
    slots up to t (a rounded-up consequence of work_progress and completion).

    Written with prefix sums (O(pairs·H²) nonzeros per job), or with ``s.run_count``
    through a running count ``runs[t] = runs[t-1] + run[t]`` (one variable per slot,
    fixed by the equalities; each row ``runs[t] >= need·done[t]`` then has two terms):
    the same constraints, projected, with O(pairs·H) nonzeros (``models/formulation.md``)."""
    if not s.prune:
        return
    for jd in data.jobs:
        need = -(-jd.work_units // jd.best_full)
        if need > 1:
            (_run_count if s.run_count else _prefix_sums)(be, v, jd, list(data.slots(jd, s.trim)), need)


def _prefix_sums(be: Backend, v: Vars, jd: JobData, slots: list[int], need: int) -> None:
    """min_run_slots of one job, each row the prefix sum of its run slots."""
    runs = []
    for t in slots:
        runs.append(v.run[jd.k, t])
        d = v.done.var((jd.k, t))
        if d is not None:
            add_constraint(be, v, be.sum(runs) >= need * d, "min_run_slots")


def _run_count(be: Backend, v: Vars, jd: JobData, slots: list[int], need: int) -> None:
    """min_run_slots of one job through the running count ``v.runs`` (up to its last
    slot with a completion decision)."""
    k = jd.k
    last = max((t for t in slots if v.done.var((k, t)) is not None), default=-1)
    prev: Any = 0
    for t in slots:
        if t > last:
            break
        v.runs[k, t] = count = be.int_var(0, len(slots), f"runs_{k}_{t}")
        add_constraint(be, v, count == prev + v.run[k, t], "min_run_slots")
        prev = count
        d = v.done.var((k, t))
        if d is not None:
            add_constraint(be, v, count >= need * d, "min_run_slots")


def c_done(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """done_monotone, finish_in_horizon (offline), no_run_after_completion."""
    for jd in data.jobs:
        k = jd.k
        sl = list(data.slots(jd, s.trim))
        for a, b in zip(sl, sl[1:]):
            da, db = v.done.var((k, a)), v.done[k, b]
            if da is not None:
                add_constraint(be, v, db >= da, "done_monotone")
                add_constraint(be, v, v.run[k, b] <= 1 - da, "no_run_after_completion")
        if not data.window and not data.shortfall:
            last = v.done.var((k, sl[-1])) if sl else None
            if last is None:
                raise HorizonTooShort(f"job {jd.id} cannot finish within the horizon of {data.H} rounds")
            add_constraint(be, v, last == 1, "finish_in_horizon")


def c_deadline(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """deadline_met: met_d <= done[last slot meeting deadline d]; in a rolling window,
    a deadline after the window needs the leftover work to fit before it."""
    for jd in data.jobs:
        k = jd.k
        for d, (last, _val) in enumerate(jd.deadlines):
            m = v.met.var((k, d))
            if m is None:
                continue
            if last <= data.H - 1:
                add_constraint(be, v, m <= v.done[k, last], "deadline_met")
            else:  # window only
                end = v.cum[k, data.H - 1]
                add_constraint(be, v, end + jd.best_full * (last - data.H + 1) >= jd.work_units * m, "deadline_met")
        if data.window:
            end = v.cum.get((jd.k, data.H - 1), 0)
            add_constraint(be, v, jd.best_full * v.leftover[k] + end >= jd.work_units, "leftover")


def c_shortfall(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """shortfall (shortfall model only): ``cum[last slot of deadline d] + short_d >= W``
    for every priced deadline ``data.tiers``; ``short_d`` in [0, W] work units."""
    if not data.shortfall:
        return
    for k, d in data.tiers:
        jd = data.jobs[k]
        last = jd.deadlines[d][0]
        v.shortfall[k, d] = short = be.int_var(0, jd.work_units, f"short_{k}_{d}")
        add_constraint(be, v, v.cum[k, last] + short >= jd.work_units, "shortfall")


def c_symmetry(data: ModelData, be: Backend, v: Vars, s: Strength) -> None:
    """symmetry: identical node n+1 is used in slot t only if node n was used by then."""
    if not v.ever:
        return
    occ: dict = {}
    for (k, t, pair), x in v.x.items():
        for nd in data.jobs[k].patterns[pair[0]].nodes:
            occ.setdefault((nd, t), []).append(x)
    for (n, t), e in v.ever.items():
        prev = v.ever.get((n, t - 1), 0)
        add_constraint(be, v, e <= prev + be.sum(occ.get((n, t), [])), "symmetry")
        for x in occ.get((n + 1, t), []):
            add_constraint(be, v, x <= e, "symmetry")


_BUILTIN = {
    "one_placement": c_one_placement,
    "release": c_release,
    "capacity": c_capacity,
    "aggregate": c_aggregate,
    "ran_before": c_ran_before,
    "change": c_change,
    "progress": c_progress,
    "min_run_slots": c_min_run_slots,
    "done": c_done,
    "deadline": c_deadline,
    "symmetry": c_symmetry,
    "shortfall": c_shortfall,
}
BUILTIN_FAMILIES: tuple[Family, ...] = tuple(Family(name, add, warm_start=True) for name, add in _BUILTIN.items())
"""The formulation's families; every validator-valid schedule satisfies each (tested)."""


@dataclass(frozen=True)
class ModelSpec:
    """What :func:`build` builds: the strengthening and the constraint families, in order
    (default: the formulation's, :data:`BUILTIN_FAMILIES`; add your own with
    ``ModelSpec(families=BUILTIN_FAMILIES + (Family(...),))``)."""

    strength: Strength = field(default_factory=Strength)
    families: tuple[Family, ...] = BUILTIN_FAMILIES

    @property
    def warm_start_feasible(self) -> bool:
        """Every family holds for every validator-valid schedule: the SensaScale warm
        start is a feasible start and fallback incumbent, and the shortfall and
        deadline-hard phases (which rely on that) apply."""
        return all(f.warm_start for f in self.families)


def spec_of(spec: ModelSpec | Strength | None) -> ModelSpec:
    """``spec`` as a :class:`ModelSpec` (a bare :class:`Strength`: the built-in families)."""
    if isinstance(spec, ModelSpec):
        return spec
    return ModelSpec(strength=spec or Strength())


# ---- objective -----------------------------------------------------------------------------


# what this module offered before its variables and objective moved out (imported from here, documented here)
__all__ = [
    "BUILD_CHECK_EVERY", "BUILTIN_FAMILIES", "BuildTimeout", "Decisions", "Family", "FamilyFn", "HorizonTooShort", "Indicators",
    "JobDeadline", "JobSlot", "JobSlotPair", "ModelSpec", "NodeSlot", "Pair", "Strength", "Vars", "add_constraint",
    "add_objective", "add_variables", "build", "c_aggregate", "c_capacity", "c_change", "c_deadline", "c_done", "c_min_run_slots",
    "c_one_placement", "c_progress", "c_ran_before", "c_release", "c_shortfall", "c_symmetry", "check_deadline", "floor_loss",
    "loss_expr", "max_loss", "model_variables", "objective_expr", "objective_offset", "objective_parts", "objective_step",
    "round_bound", "shortfall_expr", "spec_of", "to_objective", "to_scaled"
]
