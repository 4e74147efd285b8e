"""A complete schedule from the shortfall run's partial one: every job it lacks, and
every job it leaves unfinished, list-scheduled greedily into the capacity left
(earliest deadline, then release first; each slot the fastest (pattern, option) pair
that fits; an unfinished job continues after its last slot). Checked by the
validator; None when it fails. With a zero-miss partial schedule this is the start of
the deadline-hard model; otherwise a start for the loss phase."""

from __future__ import annotations

from sensaopt.exact.data import JobData, ModelData, pair_of, placements_of
from sensaopt.exact.values import finish_minutes
from sensaopt.schedule import Placement, Schedule
from sensaopt.validator import check_schedule

MEM_TOL = 1e-6  # GB


def _fits(data: ModelData, jd: JobData, pair: tuple[int, int], free: dict[int, list[float]]) -> bool:
    opt = jd.options[pair[1]]
    return all(free[n][0] >= g and free[n][1] >= g * opt.cpu and free[n][2] >= g * opt.mem - MEM_TOL
               for n, g in jd.patterns[pair[0]].parts)


def _progress(jd: JobData, rounds: dict[int, dict[str, tuple[Placement, ...]]]) -> tuple[int, int, frozenset[int] | None] | None:
    """Model units done by the job in ``rounds``, its last slot and node set there
    (None: not representable)."""
    cum, last, prev, prev_t = 0, -1, None, None
    for t in sorted(r for r, alloc in rounds.items() if jd.id in alloc):
        pair = pair_of(jd, rounds[t][jd.id])
        if pair is None:
            return None
        nodes_now = jd.patterns[pair[0]].nodes
        restart = last >= 0 and (prev_t != t - 1 or prev != nodes_now)
        cum += jd.restart[pair[1]] if restart else jd.full[pair[1]]
        last, prev, prev_t = t, nodes_now, t
    return cum, last, prev


def _greedy(data: ModelData, jd: JobData, rounds: dict[int, dict[str, tuple[Placement, ...]]]) -> bool:
    """Add job ``jd`` (or the rest of it) to ``rounds`` in the earliest free capacity;
    False if it does not finish within the horizon (model units: progress rounded up,
    as the model does)."""
    nodes = data.instance.cluster.nodes
    got = _progress(jd, rounds)
    if got is None:
        return False
    cum, last, prev = got
    ran = last >= 0
    if cum >= jd.work_units:
        return True
    by_speed = sorted(jd.pairs, key=lambda p: -jd.full[p[1]])
    for t in range(max(jd.release, last + 1), data.H):
        free = {n.index: [float(n.gpus), float(n.cpus), n.mem_gb] for n in nodes}
        for pls in rounds.get(t, {}).values():
            for p in pls:
                f = free[p.node]
                f[0] -= p.gpus
                f[1] -= p.cpus
                f[2] -= p.mem_gb
        pair = next((p for p in by_speed if _fits(data, jd, p, free)), None)
        if pair is None:
            prev = None
            continue
        nodes_now = jd.patterns[pair[0]].nodes
        cum += jd.restart[pair[1]] if ran and prev != nodes_now else jd.full[pair[1]]
        rounds.setdefault(t, {})[jd.id] = placements_of(data, jd, pair)
        ran, prev = True, nodes_now
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
