"""A complete schedule from the shortfall run's partial one: every job it lacks, and
every job it leaves unfinished, list-scheduled greedily into the capacity left
(earliest deadline, then release first; each slot the fastest (pattern, option) pair
that fits; an unfinished job continues after its last slot). Checked by the
validator; None when it fails. With a zero-miss partial schedule this is the start of
the deadline-hard model; otherwise a start for the loss phase."""

from __future__ import annotations

from sensaopt.exact.model.data import JobData, ModelData, pair_of, placements_of
from sensaopt.exact.model.values import finish_minutes
from sensaopt.schedule import Placement, Schedule
from sensaopt.validator import check_schedule

MEM_TOL = 1e-6  # GB


def _fits(data: ModelData, jd: JobData, pair: tuple[int, int], free: dict[int, list[float]]) -> bool:
    opt = jd.options[pair[1]]
    return all(free[n][0] >= g and free[n][1] >= g * opt.cpu and free[n][2] >= g * opt.mem - MEM_TOL
               for n, g in jd.patterns[pair[0]].parts)


def _progress(data: ModelData, jd: JobData, rounds: dict[int, dict[str, tuple[Placement, ...]]]
              ) -> tuple[int, int, tuple[Placement, ...] | None] | None:
    """Model units done by the job in ``rounds`` (each slot less its change's loss),
    its last slot and its placements there (None: not representable)."""
    cum, last, prev = 0, -1, None
    for t in sorted(r for r, alloc in rounds.items() if jd.id in alloc):
        pair = pair_of(jd, rounds[t][jd.id])
        if pair is None:
            return None
        cum += data.slot_change(jd, last >= 0, prev if last == t - 1 else None, pair)[1]
        last, prev = t, placements_of(data, jd, pair)
    return cum, last, prev


def _greedy(data: ModelData, jd: JobData, rounds: dict[int, dict[str, tuple[Placement, ...]]]) -> bool:
    """Add job ``jd`` (or the rest of it) to ``rounds`` in the earliest free capacity,
    each slot the pair that fits with the most progress after its change's loss;
    False if it does not finish within the horizon (model units: progress rounded up,
    as the model does)."""
    nodes = data.instance.cluster.nodes
    got = _progress(data, jd, rounds)
    if got is None:
        return False
    cum, last, prev = got
    ran = last >= 0
    if cum >= jd.work_units:
        return True
    for t in range(max(jd.release, last + 1), data.H):
        free = {n.index: [float(n.gpus), float(n.cpus), n.mem_gb] for n in nodes}
        for pls in rounds.get(t, {}).values():
            for p in pls:
                f = free[p.node]
                f[0] -= p.gpus
                f[1] -= p.cpus
                f[2] -= p.mem_gb
        if t != last + 1:
            prev = None  # paused in between
        gain = {p: data.slot_change(jd, ran, prev, p)[1] for p in jd.pairs if _fits(data, jd, p, free)}
        if not gain:
            prev = None
            continue
        pair = max(gain, key=gain.__getitem__)  # the first of the best, in pair order
        cum += gain[pair]
        prev = rounds.setdefault(t, {})[jd.id] = placements_of(data, jd, pair)
        ran, last = True, t
        if cum >= jd.work_units:
            return True
    return False


def complete_schedule(data: ModelData, partial: Schedule) -> Schedule | None:
    """``partial`` (offline rounds) with every job it lacks or leaves unfinished
    completed greedily; None if some job does not fit the horizon (``partial``
    included) or the result is not valid."""
    rounds: dict[int, dict[str, tuple[Placement, ...]]] = {}
    for seg in partial.segments:
        for r in range(seg.start, seg.end):
            rounds.setdefault(r, {})[seg.job] = seg.placements
    fin = finish_minutes(data.instance, partial)
    rest = sorted((jd for jd in data.jobs if fin.get(jd.id) is None),
                  key=lambda jd: (jd.deadlines[0][0] if jd.deadlines else data.H, jd.release, jd.k))
    for jd in rest:
        if not _greedy(data, jd, rounds):
            return None
    if any(r >= data.H for r in rounds):  # the partial schedule runs past this model's horizon
        return None
    sched = Schedule.from_rounds(sorted(rounds.items()), data.R)
    return sched if check_schedule(data.instance, sched).ok else None
