"""Fidelity check of the ``chronus`` baseline against the Chronus artifact's
measurements on the Philly traces (../shared/anchors/chronus-artifact.md).

Runs ``chronus`` (the artifact's behaviour) or ``chronus-clean`` (``--policy``) on a
window of a Chronus-Philly trace (first ``--days`` days of submissions; all days
with ``--days 0``) on the artifact's cluster: 120 nodes ×
8 GPUs, 128 cores, 256 GB, 5-minute rounds, 20-minute leases. Every job gets the
flat profile "bert" (speed 1.0 at any allocation) so a job runs exactly its trace
``duration`` in minutes, like the artifact (whose ``compute_progress`` is always 1.0
and whose model name is ignored). A tiny private CSV reader is used on purpose (no
dependency on the traces package): times in minutes on the trace's own clock (as
the artifact: lease boundaries at multiples of 20 trace minutes, no shift to the
first submission), absolute deadline = submit_time + expect_time, ``num_gpu = 0``
rows skipped.

    python benchmarks/chronus_fidelity.py --trace SLO --days 3 --out /tmp/chronus_slo_3d.json
    python benchmarks/chronus_fidelity.py --table /tmp/slo.json /tmp/mix1.json   # markdown table of runs

Prints and writes: deadline-miss rate of SLO jobs (weighted as the artifact for
soft deadlines: 1 - value/10 of the first deadline met), avg JCT, avg queueing both
ways (first start - arrival; the artifact's total pending time), preemptions per
job, GPU utilisation, admitted / unadmitted / hopeless counts, lease-MILP statistics (solves, fallbacks, solve times) and wall time.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

from sensaopt.instance import Cluster, Instance, Job, NodeType, SoftDeadline
from sensaopt.policies import make_policy
from sensaopt.policies.chronus import ChronusPolicy
from sensaopt.profiles import get_profile
from sensaopt.simulator import simulate

ANCHORS = {  # artifact on the whole traces (anchors file), CBC instead of Gurobi; avg_queueing = its total pending time
    "SLO": {"miss_rate": 0.1330, "avg_jct": 953.1, "avg_queueing": 684.9, "preemptions_per_job": 8.59, "gpu_util": 0.85,
            "hopeless": 3865, "unadmitted": 4574, "jobs": 30735, "wall_min": 31},
    "MIX1": {"miss_rate": 0.0513, "avg_jct": 398.9, "avg_jct_best_effort": 385.5, "avg_queueing": 130.4, "preemptions_per_job": 7.80,
             "gpu_util": 0.86, "jobs": 30756},
    "MIX2": {"miss_rate_weighted": 0.0556, "miss_rate_any": 0.0747, "avg_jct": 715.9, "avg_jct_best_effort": 392.4, "avg_queueing": 444.3,
             "gpu_util": 0.89, "jobs": 30746},
}


def traces_dir() -> Path:
    env = os.environ.get("SENSAOPT_TRACES")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "traces"


def read_trace(name: str, days: float, profile: str = "bert", start_day: float = 0.0) -> list[Job]:
    """Private reader of trace_job_Philly_<name>.csv: ``days`` days of submissions
    from ``start_day`` (days on the trace clock; times shifted by ``start_day`` days
    only, a multiple of the lease length, so the window keeps the artifact's lease
    phase)."""
    path = traces_dir() / "chronus-philly" / f"trace_job_Philly_{name}.csv"
    prof = get_profile(profile)
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            g = int(row["num_gpu"])
            if g <= 0:
                continue
            rows.append(row)
    t0 = 0.0  # the trace clock (first submission at minute 1), as in the artifact
    jobs = []
    for r in rows:
        sub = float(r["submit_time"]) - t0 - start_day * 1440
        if sub < 0 or (days > 0 and sub >= days * 1440):
            continue
        be = r["best_effort"].strip() == "1" or r["job_type"].strip().startswith("best")
        deadline, value, soft = None, 1.0, ()
        if not be:
            times = [float(x) for x in r["expect_time_list"].split("-")]
            vals = [float(x) for x in r["expect_value_list"].split("-")]
            deadline, value = sub + times[0], vals[0]
            soft = tuple(SoftDeadline(sub + t, v) for t, v in zip(times[1:], vals[1:]))
        jobs.append(Job(f"j{r['job_id']}", sub, int(r["num_gpu"]), float(r["duration"]), prof, deadline, value, soft))
    jobs.sort(key=lambda j: (j.arrival, j.id))
    return jobs


def _rel(ours: float | None, theirs: float | None) -> float | None:
    """Relative difference (ours - artifact) / artifact; None when either is missing."""
    if ours is None or theirs is None or theirs == 0:
        return None
    return (ours - theirs) / theirs


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.0f} %"


def fidelity_table(runs: list[dict]) -> str:
    """Markdown table of whole-trace runs written by this script (``--out``): each figure
    next to the artifact's, with the relative difference."""
    head = ("| trace | policy | miss rate (artifact) | avg JCT, min (artifact) | avg pending (artifact's queueing) | "
            "avg first start − arrival | hopeless: jobs, avg JCT | unadmitted | wall |")
    lines = [head, "| " + " | ".join(["---"] * 9) + " |"]
    for d in runs:
        an = d["anchor_whole_trace"]
        mix2 = d["trace"] == "MIX2"
        miss = d["weighted_miss_rate"] if mix2 else d["miss_rate"]
        am = an.get("miss_rate_weighted", an.get("miss_rate"))
        v = d["vs_artifact"]
        hop = d["miss_by_final_class"]["hopeless"]
        lines.append(
            f"| {d['trace']}{' (weighted)' if mix2 else ''} | `{d['policy']}` "
            f"| {100 * miss:.2f} % ({100 * am:.2f} %) {_pct(v['miss'])} "
            f"| {d['avg_jct']:,.0f} ({an['avg_jct']:,.0f}) {_pct(v['avg_jct'])} "
            f"| {d['avg_pending_time']:,.0f} ({an['avg_queueing']:,.0f}) {_pct(v['avg_pending_time'])} "
            f"| {d['avg_queueing_first_start']:,.0f} {_pct(v['avg_queueing_first_start'])} "
            f"| {hop['jobs']:,}, {hop['avg_jct'] or 0:,.0f} | {d['classes']['unadmitted']:,} | {d['wall_s'] / 60:.0f} min |")
    return "\n".join(lines)


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--table":  # render the table of earlier --out files
        print(fidelity_table([json.loads(Path(f).read_text()) for f in argv[1:]]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default="SLO", choices=["SLO", "MIX1", "MIX2"])
    ap.add_argument("--policy", default="chronus", choices=["chronus", "chronus-clean"])
    ap.add_argument("--days", type=float, default=3.0, help="first N days of submissions (0 = whole trace)")
    ap.add_argument("--start-day", type=float, default=0.0, help="window start, days on the trace clock")
    ap.add_argument("--nodes", type=int, default=120)
    ap.add_argument("--round", type=float, default=5.0, help="round length, minutes")
    ap.add_argument("--solver", default="highs", choices=["highs", "highspy", "cpsat", "greedy"])
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)

    jobs = read_trace(a.trace, a.days, start_day=a.start_day)
    cluster = Cluster((NodeType("philly", 8, 128, 256.0, a.nodes),))
    inst = Instance(f"chronus-philly-{a.trace}-from{a.start_day:g}-{a.days:g}d", cluster, a.round, tuple(jobs))
    pol = make_policy(a.policy, solver=a.solver, time_limit_s=a.time_limit)
    assert isinstance(pol, ChronusPolicy)
    t0 = time.perf_counter()
    last = [t0]

    def progress(r, done, total):
        if time.perf_counter() - last[0] > 60:
            last[0] = time.perf_counter()
            print(f"  round {r} (t={r * a.round:.0f} min): {done}/{total} done, {time.perf_counter() - t0:.0f} s, "
                  f"solves {pol.stats.lease_solves} fallbacks {pol.stats.fallbacks}", file=sys.stderr, flush=True)

    res = simulate(inst, pol, progress=progress)
    wall = time.perf_counter() - t0
    m = res.metrics
    ev = res.evaluation
    assert ev is not None
    slo = [j for j in jobs if j.deadline is not None]
    cls = pol.classes
    counts = {c: sum(1 for j in jobs if cls.get(j.id) == c) for c in ("admitted", "unadmitted", "hopeless", "best_effort")}
    fin = {j.id: ev.outcomes[j.id].finish for j in jobs}
    miss_by_class = {}
    for c in ("admitted", "unadmitted", "hopeless", "best_effort"):
        js = [j for j in jobs if cls.get(j.id) == c]
        miss_by_class[c] = {
            "jobs": len(js),
            "missed": sum(1 for j in js if j.deadline is not None and (fin[j.id] is None or fin[j.id] > j.deadline + 1e-9)),
            "avg_jct": (sum(fin[j.id] - j.arrival for j in js) / len(js)) if js else None,
        }
    be = [j for j in jobs if j.deadline is None]
    be_jct = sum(fin[j.id] - j.arrival for j in be) / len(be) if be else None
    gpu_min = sum(j.gpus * j.work for j in jobs)
    anchor = ANCHORS[a.trace]
    miss = m.weighted_violation_rate if a.trace == "MIX2" else m.slo_violation_rate
    anchor_miss = anchor.get("miss_rate_weighted", anchor.get("miss_rate"))
    out = {
        "trace": a.trace, "policy": a.policy, "start_day": a.start_day, "days": a.days, "jobs": len(jobs), "slo_jobs": len(slo),
        "nodes": a.nodes, "round_minutes": a.round, "offered_gpu_minutes": gpu_min,
        "miss_rate": m.slo_violation_rate, "weighted_miss_rate": m.weighted_violation_rate,
        "avg_jct": m.avg_jct, "avg_jct_best_effort": be_jct,
        "avg_queueing_first_start": m.avg_queueing_time, "avg_pending_time": m.avg_pending_time,
        "preemptions_per_job": m.preemptions / len(jobs), "migrations": m.migrations, "gpu_util": m.gpu_utilization,
        "makespan": m.makespan, "classes": counts, "miss_by_final_class": miss_by_class,
        "chronus_stats": res.params["policy_stats"], "wall_s": wall, "anchor_whole_trace": anchor,
        "vs_artifact": {  # relative difference to the artifact's whole-trace figure (meaningful for --days 0)
            "miss": _rel(miss, anchor_miss),
            "avg_jct": _rel(m.avg_jct, anchor["avg_jct"]),
            "avg_pending_time": _rel(m.avg_pending_time, anchor["avg_queueing"]),
            "avg_queueing_first_start": _rel(m.avg_queueing_time, anchor["avg_queueing"]),
        },
        "load": Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None,
    }
    print(json.dumps(out, indent=1, default=str))
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
