"""A complete zero-miss start for the deadline-hard model: the shortfall run's
schedule of the deadline jobs, plus every other job list-scheduled greedily into the
capacity left (earliest deadline, then release first; each slot the fastest
(pattern, option) pair that fits). Checked by the validator; None when it fails."""

from __future__ import annotations

from sensaopt.exact.data import JobData, ModelData, placements_of
from sensaopt.schedule import Placement, Schedule
from sensaopt.validator import check_schedule

MEM_TOL = 1e-6  # GB


def _fits(data: ModelData, jd: JobData, pair: tuple[int, int], free: dict[int, list[float]]) -> bool:
    opt = jd.options[pair[1]]
    return all(free[n][0] >= g and free[n][1] >= g * opt.cpu and free[n][2] >= g * opt.mem - MEM_TOL
               for n, g in jd.patterns[pair[0]].parts)


def _greedy(data: ModelData, jd: JobData, rounds: dict[int, dict[str, tuple[Placement, ...]]]) -> bool:
    """Add job ``jd`` to ``rounds`` in the earliest free capacity; False if it does not
    finish within the horizon (model units: progress rounded up, as the model does)."""
    nodes = data.instance.cluster.nodes
    cum, ran, prev = 0, False, None
    by_speed = sorted(jd.pairs, key=lambda p: -jd.full[p[1]])
    for t in data.slots(jd):
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
    """``partial`` (offline rounds) with every job it lacks added greedily; None if some
    job does not fit the horizon or the result is not valid."""
    rounds: dict[int, dict[str, tuple[Placement, ...]]] = {}
    for seg in partial.segments:
        for r in range(seg.start, seg.end):
            rounds.setdefault(r, {})[seg.job] = seg.placements
    have = {seg.job for seg in partial.segments}
    rest = sorted((jd for jd in data.jobs if jd.id not in have),
                  key=lambda jd: (jd.deadlines[0][0] if jd.deadlines else data.H, jd.release, jd.k))
    for jd in rest:
        if not _greedy(data, jd, rounds):
            return None
    sched = Schedule.from_rounds(sorted(rounds.items()), data.R)
    return sched if check_schedule(data.instance, sched).ok else None
