"""Policies (and knob variants) side by side on one trace workload, several seeds.

    python benchmarks/compare_policies.py --trace chronus-slo --preset philly-8 --seeds 0 1 2 \\
        --run sensascale --run edf-tune-demote --run "sensascale:fill_spare=false,pairing=false" [-j 2] [-o rows.jsonl]

A run is ``policy`` or ``policy:knob=value,knob=value``. One JSON row per (run, seed)
on stdout, appended to ``-o``: violations, violation rate, avg JCT, queueing and
pending (minutes), restarts / migrations / resizes per job, simulate seconds, load
average. Ends with a table of means over the seeds. The investigation tool behind
``models/sensascale.md`` (the paper experiment is ``sensaopt experiment paper``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sensaopt.config import WorkloadConfig, field_types, parse_value
from sensaopt.policies import policy_config_class
from sensaopt.simulator import simulate
from sensaopt.traces.sources import workload_instance


def parse_run(text: str) -> tuple[str, dict]:
    name, _, rest = text.partition(":")
    types = field_types(policy_config_class(name))
    knobs = {}
    for kv in filter(None, rest.split(",")):
        k, _, v = kv.partition("=")
        knobs[k] = parse_value(types[k], v)
    return name, knobs


def one(args: tuple[str, dict, str, dict]) -> dict:
    label, workload, run, knobs = args
    name, cfg = run, knobs
    inst, _ = workload_instance(WorkloadConfig(**workload))
    t = time.perf_counter()
    # the profile error is the simulator's (WorkloadConfig carries it; the instance does not): drawn with the run's seed
    res = simulate(inst, name, policy_config=cfg or None, profile_error=workload.get("profile_error", 0.0), seed=workload["seed"])
    dt = time.perf_counter() - t
    m, n = res.metrics, max(1, len(inst.jobs))
    return {"run": label, "seed": workload["seed"], "trace": workload["trace"], "preset": workload["preset"],
            "violations": m.slo_violations, "violation_rate": m.slo_violation_rate, "weighted_rate": m.weighted_violation_rate,
            "avg_jct": m.avg_jct, "avg_queueing": m.avg_queueing_time, "avg_pending": m.avg_pending_time,
            "restarts_per_job": m.preemptions / n, "migrations_per_job": m.migrations / n, "resizes_per_job": m.resizes / n,
            "simulate_s": round(dt, 2), "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default="chronus-slo")
    ap.add_argument("--preset", default="philly-8")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--start", type=float, default=0.0)
    ap.add_argument("--days", type=float, default=None)
    ap.add_argument("--sample", type=float, default=1.0)
    ap.add_argument("--extra", action="append", default=[], help="workload option key=value (sensaopt.config.WorkloadConfig)")
    ap.add_argument("--run", action="append", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-o", "--out", type=Path)
    a = ap.parse_args(argv)
    wtypes = field_types(WorkloadConfig)
    extra = {k: parse_value(wtypes[k], v) for k, _, v in (e.partition("=") for e in a.extra)}
    tasks = []
    for seed in a.seeds:
        w = {"trace": a.trace, "preset": a.preset, "seed": seed, "start": a.start, "days": a.days, "sample": a.sample, **extra}
        for r in a.run:
            name, knobs = parse_run(r)
            tasks.append((r, w, name, knobs))
    rows = []
    with ProcessPoolExecutor(a.jobs) as ex:
        for row in ex.map(one, tasks):
            row.update(extra)
            print(json.dumps(row), flush=True)
            rows.append(row)
            if a.out:
                with a.out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    print(f"\n{'run':60s} {'viol':>8s} {'jct':>8s} {'queue':>7s} {'migr/j':>7s}")
    for r in a.run:
        sel = [x for x in rows if x["run"] == r]
        mean = {k: statistics.fmean(x[k] for x in sel) for k in ("violations", "avg_jct", "avg_queueing", "migrations_per_job")}
        print(f"{r:60s} {mean['violations']:8.1f} {mean['avg_jct']:8.1f} {mean['avg_queueing']:7.1f} {mean['migrations_per_job']:7.2f}")
    return rows


if __name__ == "__main__":
    main()
