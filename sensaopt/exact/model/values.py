"""Between schedules and model values: the warm start's variable values
(:func:`hint_values`), a solution's schedule (:func:`extract_schedule`), the
validator's completion arithmetic (:func:`finish_minutes`), and the node relabelling
the symmetry breaking needs (:func:`relabel_identical_nodes`)."""

from __future__ import annotations

import math

from sensaopt.changes import ChangeCosts, classify
from sensaopt.exact.model.builder import Vars
from sensaopt.exact.model.data import JobData, ModelData, pair_of, placements_of
from sensaopt.instance import Change, Instance
from sensaopt.progress import segment_progress
from sensaopt.schedule import Placement, Schedule, Segment
from sensaopt.solvers import ValueFn
from sensaopt.validator import segment_speed


def relabel_identical_nodes(instance: Instance, schedule: Schedule) -> Schedule:
    """The same schedule with identical nodes renamed so that they are first used in
    index order (what the symmetry-breaking constraints require). Node permutations
    within a node type change neither feasibility nor any metric."""
    nodes = instance.cluster.nodes
    first: dict[int, int] = {}
    for seg in schedule.segments:
        for p in seg.placements:
            first[p.node] = min(first.get(p.node, seg.start), seg.start)
    mapping: dict[int, int] = {}
    groups: dict[int, list[int]] = {}
    gid = 0
    for n in nodes:  # runs of consecutive identical nodes, as in builder._sym_pairs
        if n.index > 0 and nodes[n.index - 1].type is n.type:
            groups[gid].append(n.index)
        else:
            gid = n.index
            groups[gid] = [n.index]
    for idx in groups.values():
        order = sorted(idx, key=lambda i: (first.get(i, math.inf), i))
        for new, old in zip(idx, order):
            mapping[old] = new
    segs = tuple(
        type(s)(s.job, s.start, s.rounds, tuple(Placement(mapping[p.node], p.gpus, p.cpus, p.mem_gb) for p in s.placements))
        for s in schedule.segments
    )
    return Schedule(segs, schedule.round_minutes, schedule.meta)


def finish_minutes(instance: Instance, schedule: Schedule) -> dict[str, float | None]:
    """Completion minute of every job of ``schedule`` (None: unfinished), by the
    validator's own arithmetic (:func:`sensaopt.progress.segment_progress`: slowest
    node's speed, the cost of the change a segment starts with —
    :func:`~sensaopt.changes.classify`, :class:`~sensaopt.changes.ChangeCosts` —
    in its first round, completion at the end of the round the work is done) —
    without its checks."""
    R = instance.round_minutes
    by_job: dict[str, list[Segment]] = {}
    for s in schedule.segments:
        by_job.setdefault(s.job, []).append(s)
    out: dict[str, float | None] = {}
    for job in instance.jobs:
        done, finish, prev = 0.0, None, None
        costs = ChangeCosts.of(instance.overheads, job.gpus)
        for seg in sorted(by_job.get(job.id, ()), key=lambda s: s.start):
            kind = Change.NONE if prev is None else classify(prev.placements, prev.end, seg.placements, seg.start)
            p = segment_progress(job.work - done, segment_speed(job, seg), R, costs.minutes(kind), seg.rounds)
            if p.rounds_to_done is not None:
                finish = (seg.start + p.rounds_to_done) * R
                break
            done += p.work(seg.rounds)
            prev = seg
        out[job.id] = finish
    return out


def hint_values(data: ModelData, v: Vars, schedule: Schedule) -> dict:
    """Values of every model variable for a validator-feasible schedule (the warm start);
    empty if the schedule is not representable in the model."""
    finish = finish_minutes(data.instance, schedule)
    out: dict = {}
    by_slot: dict[int, dict[str, tuple[Placement, ...]]] = {}
    for seg in schedule.segments:
        for r in range(seg.start, seg.end):
            by_slot.setdefault(r - data.start_round, {})[seg.job] = seg.placements
    for jd in data.jobs:
        fin = finish[jd.id]
        fin_slot = int(round(fin / data.R)) - 1 - data.start_round if fin is not None else data.H
        if not _job_hint(data, v, jd, by_slot, fin_slot, out):
            return {}  # not representable: no hint
    used = {(p.node, r - data.start_round) for s in schedule.segments for r in range(s.start, s.end) for p in s.placements}
    for (n, t) in sorted(v.ever, key=lambda a: (a[0], a[1])):
        out[v.ever[n, t]] = int(any((n, u) in used for u in range(0, t + 1)))
    return out


def _job_hint(data: ModelData, v: Vars, jd: JobData, by_slot: dict[int, dict[str, tuple[Placement, ...]]], fin_slot: int,
              out: dict) -> bool:
    """Add one job's variable values to ``out`` (its placements per slot in ``by_slot``,
    done from slot ``fin_slot`` on); False if a placement is not representable."""
    k = jd.k
    ran, prev, cum, runs = jd.init_ran, jd.init_placements, 0, 0
    for t in range(data.H):
        if (k, t) not in v.run:
            continue
        pls = by_slot.get(t, {}).get(jd.id)
        pair = pair_of(jd, pls) if pls else None
        if pls and pair is None:
            return False
        for p in jd.pairs:
            out[v.x[k, t, p]] = 1 if p == pair else 0
        if (rb := v.rb.var((k, t))) is not None:
            out[rb] = int(ran)
        lost = 0
        if pair is not None:
            kind, units = data.slot_change(jd, ran, prev, pair)
            lost = jd.lost(kind, pair[1])
            cum += units
        if (k, t) in v.loss:
            out[v.loss[k, t]] = lost
        out[v.cum[k, t]] = cum
        runs += pair is not None
        if (k, t) in v.runs:
            out[v.runs[k, t]] = runs
        if (done := v.done.var((k, t))) is not None:
            out[done] = int(t >= fin_slot)
        ran = ran or pair is not None
        prev = placements_of(data, jd, pair) if pair is not None else None
    _deadline_hint(data, v, jd, fin_slot, cum, out)
    return True


def _deadline_hint(data: ModelData, v: Vars, jd: JobData, fin_slot: int, cum: int, out: dict) -> None:
    """Deadline indicators (and leftover rounds in a window) of a job done from slot
    ``fin_slot`` on, with ``cum`` progress units at the end of the model."""
    k = jd.k
    for d, (last, _) in enumerate(jd.deadlines):
        m = v.met.var((k, d))
        if m is not None:
            out[m] = int(last >= fin_slot) if last < data.H else int(cum + jd.best_full * (last - data.H + 1) >= jd.work_units)
    if k in v.leftover:
        out[v.leftover[k]] = max(0, -(-(jd.work_units - cum) // jd.best_full))


def extract_schedule(data: ModelData, v: Vars, value: ValueFn) -> Schedule:
    """Turn solver values into a schedule: read the chosen (pattern, option) per job and
    slot, then cut every slot after the job's true completion (the validator's float
    arithmetic may finish a job earlier than the model's rounded-up units)."""
    rounds: dict[int, dict[str, tuple]] = {}
    for (k, t, pair), x in v.x.items():
        if value(x) > 0.5:
            jd = data.jobs[k]
            rounds.setdefault(t + data.start_round, {})[jd.id] = placements_of(data, jd, pair)
    return schedule_of_rounds(data, rounds)


def schedule_of_rounds(data: ModelData, rounds: dict[int, dict[str, tuple[Placement, ...]]]) -> Schedule:
    """The schedule of per-round placements ``{round: {job id: placements}}`` with
    every round after a job's true completion cut (the validator's float arithmetic
    may finish a job earlier than the model's rounded-up units). ``rounds`` is changed."""
    sched = Schedule.from_rounds(sorted(rounds.items()), data.R)
    cut = False
    for jid, fin in finish_minutes(data.instance, sched).items():
        if fin is None:
            continue
        last = int(round(fin / data.R)) - 1
        for r in list(rounds):
            if r > last and jid in rounds[r]:
                del rounds[r][jid]
                cut = True
    return Schedule.from_rounds(sorted(rounds.items()), data.R) if cut else sched
