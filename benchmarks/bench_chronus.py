"""Benchmark: the ``chronus`` baseline on one full Philly trace, timed against ``edf``
in the same process (the ratio chronus / edf is the figure; both see the same load).

The instance is the fidelity setup of ``chronus_fidelity.py`` (the Chronus artifact's
cluster: 120 × 8 GPUs, 128 cores, 256 GB per node; 5-minute rounds; flat profile, so a
job runs exactly its trace duration): ``--trace SLO`` (default), MIX1 or MIX2, the whole
trace by default (``--days N``: the first N days of submissions). ``edf`` runs first,
then ``chronus``; each timed around ``simulate`` (incl. the simulator's validation).

Figures: wall and CPU seconds per policy, the ratio, chronus's lease solves, their
mean / max solve time (seconds, from the policy's counters: build + solve + read-back
of each lease MILP), fallbacks, peak RSS (MiB, the process's high-water mark after
each policy), load average before and after, git commit.

    nice -n 5 python benchmarks/bench_chronus.py                 # full SLO trace
    python benchmarks/bench_chronus.py --trace MIX2 --days 3
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from _common import cpu_seconds, git_commit, load_average, write_record
from chronus_fidelity import read_trace

from sensaopt.instance import Cluster, Instance, NodeType
from sensaopt.policies import make_policy
from sensaopt.simulator import simulate


def peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_policy(inst: Instance, name: str) -> dict:
    """Simulate ``name`` on ``inst``; wall/CPU seconds, results and (chronus) lease counters."""
    pol = make_policy(name)
    t0, c0 = time.perf_counter(), cpu_seconds()
    res = simulate(inst, pol)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    m = res.metrics
    fig = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mib_after": peak_rss_mib(),
           "slo_violations": m.slo_violations, "avg_jct_min": None if m.avg_jct is None else round(m.avg_jct, 2)}
    st = res.params.get("policy_stats")
    if name == "chronus" and st:
        n = st["lease_solves"]
        fig.update({"lease_solves": n, "solve_s_total": round(st["solve_s_total"], 2),
                    "solve_s_mean": round(st["solve_s_total"] / n, 4) if n else None,
                    "solve_s_max": round(st["solve_s_max"], 3), "fallbacks": st["fallbacks"],
                    "milp_time_limit": st["milp_time_limit"], "max_variables": st["max_variables"]})
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default="SLO", choices=["SLO", "MIX1", "MIX2"])
    ap.add_argument("--days", type=float, default=0.0, help="first N days of submissions (0 = the whole trace)")
    ap.add_argument("--policies", default="edf,chronus", help="comma-separated, run in this order")
    a = ap.parse_args(argv)

    load0 = load_average()
    jobs = read_trace(a.trace, a.days)
    cluster = Cluster((NodeType("philly", 8, 128, 256.0, 120),))
    inst = Instance(f"chronus-philly-{a.trace}-{a.days:g}d", cluster, 5.0, tuple(jobs))
    figs: dict = {"jobs": len(jobs), "load_before": load0}
    for name in a.policies.split(","):
        figs[name] = run_policy(inst, name)
        print(f"{name}: {figs[name]}", file=sys.stderr, flush=True)
    if "edf" in figs and "chronus" in figs:
        figs["ratio_chronus_over_edf"] = round(figs["chronus"]["wall_s"] / figs["edf"]["wall_s"], 2)
    figs["load_after"] = load_average()
    figs["git"] = git_commit()
    for k, v in figs.items():
        print(f"{k}: {v}")
    write_record("chronus", figs, {"trace": a.trace, "days": a.days, "policies": a.policies})
    return 0


if __name__ == "__main__":
    sys.exit(main())
