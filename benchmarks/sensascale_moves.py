"""The change-cost tables of models/sensascale.md: policies on a Philly SLO window, with
every change of a job's allocation counted from the schedule by
:func:`sensaopt.changes.classify` (the simulator's own rule) and priced by the
instance's ``Overheads`` (minutes lost = Σ min(cost, round length) over the changes).

    python benchmarks/sensascale_moves.py --start 5760 --days 2 --scale 4 \\
        --policy sensascale --policy edf --policy chronus [--set key=value ...] [-o rows.jsonl]

One JSON row per policy on stdout (and appended to ``-o``): violations, avg JCT and
queueing (minutes), migrations and preemptions (restarts) per job, resizes, minutes
lost per kind, wall seconds and the load average when it ran.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from sensaopt.changes import classify
from sensaopt.config import field_types, parse_value
from sensaopt.instance import Change, Instance
from sensaopt.policies.sensascale import SensaScaleConfig
from sensaopt.result import Result
from sensaopt.simulator import simulate
from sensaopt.traces.sources import make_instance


def change_counts(inst: Instance, res: Result) -> tuple[dict[Change, int], dict[Change, float]]:
    """(count, minutes lost) per kind of change over all jobs of ``res``'s schedule."""
    assert res.schedule is not None
    R, oh = inst.round_minutes, inst.overheads
    by = res.schedule.by_job()
    count = dict.fromkeys(Change, 0)
    lost = dict.fromkeys(Change, 0.0)
    for j in inst.jobs:
        segs = by.get(j.id, [])
        for a, b in zip(segs, segs[1:]):
            k = classify(a.placements, a.end, b.placements, b.start)
            count[k] += 1
            lost[k] += min(oh.minutes(k, j.gpus), R)
    return count, lost


def knob(text: str) -> tuple[str, object]:
    """``key=value`` as a SensaScale knob of the field's type."""
    key, _, value = text.partition("=")
    return key, parse_value(field_types(SensaScaleConfig)[key], value)


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start", type=float, default=5760.0, help="window start, minutes")
    ap.add_argument("--days", type=float, default=2.0)
    ap.add_argument("--scale", type=float, default=1.0, help="move-cost scale (every change cost multiplied)")
    ap.add_argument("--sensitive-fraction", type=float, default=0.5)
    ap.add_argument("--policy", action="append", default=None)
    ap.add_argument("--set", action="append", default=[], help="sensascale knob key=value")
    ap.add_argument("-o", "--output", type=Path, default=None)
    a = ap.parse_args(argv)
    inst, _ = make_instance("chronus-slo", "philly-8", start=a.start, days=a.days, sensitive_fraction=a.sensitive_fraction)
    if a.scale != 1.0:
        inst = replace(inst, overheads=inst.overheads.scaled(a.scale))
    knobs = dict(knob(s) for s in a.set)
    n = len(inst.jobs)
    rows = []
    for pol in a.policy or ["sensascale", "edf"]:
        t0 = time.perf_counter()
        res = simulate(inst, pol, policy_config=knobs if pol == "sensascale" else None)
        wall = time.perf_counter() - t0
        m = res.metrics
        assert m is not None
        count, lost = change_counts(inst, res)
        row = {"policy": pol, "start": a.start, "days": a.days, "scale": a.scale, "sensitive_fraction": a.sensitive_fraction,
               "knobs": knobs, "violations": m.slo_violations, "avg_jct": m.avg_jct, "avg_queueing": m.avg_queueing_time,
               "migrations_per_job": count[Change.MIGRATION] / n, "preemptions_per_job": count[Change.RESTART] / n,
               "resizes": count[Change.RESIZE], "minutes_lost": sum(lost.values()),
               **{f"{k.value}_minutes_lost": lost[k] for k in (Change.RESTART, Change.MIGRATION, Change.RESIZE)},
               "wall_s": wall, "loadavg": Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else None}
        print(json.dumps(row), flush=True)
        if a.output is not None:
            with a.output.open("a") as f:
                f.write(json.dumps(row) + "\n")
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
