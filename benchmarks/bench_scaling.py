"""Benchmark 4: scaling of a whole simulation with the number of jobs.

Synthetic traces of 10k, 30k and 100k jobs (``sensaopt.generate``, seed 0, half
sensitive, 10-minute rounds) replayed on a cluster sized to the load: 120 × 8-GPU
nodes (24 cores, 500 GB) at offered load 1.0, so the arrival window (and the
number of rounds) grows with the job count while the queue per round stays alike.
Figures per size: wall and CPU seconds of ``simulate`` (including the validator),
per job (µs) and the ratio of the per-job time to the smallest size's.
Target: per-job time within 1.3x from 10k to 100k.
"""

from __future__ import annotations

import argparse
import time

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies import make_policy
from sensaopt.simulator import simulate

from _common import TimedPolicy, cpu_seconds, ms_stats, write_record


def run(sizes=(10_000, 30_000, 100_000), policy: str = "sensascale", nodes: int = 120) -> dict:
    figs = {}
    base = None
    for n in sizes:
        inst = generate(GeneratorConfig(jobs=n, nodes=nodes, load=1.0, seed=0))
        pol = TimedPolicy(make_policy(policy))
        t, c = time.perf_counter(), cpu_seconds()
        res = simulate(inst, pol)
        wall, cpu = time.perf_counter() - t, cpu_seconds() - c
        f = {
            "jobs": n,
            "rounds_decided": len(pol.times),
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "per_job_us": round(wall / n * 1e6, 1),
            "per_job_cpu_us": round(cpu / n * 1e6, 1),
            "round": ms_stats(pol.times),
            "round_cpu": ms_stats(pol.cpu_times),
        }
        if base is None:
            base = f
        f["per_job_ratio"] = round(f["per_job_us"] / base["per_job_us"], 2)
        f["per_job_cpu_ratio"] = round(f["per_job_cpu_us"] / base["per_job_cpu_us"], 2)
        figs[str(n)] = f
        print(f"[scaling] {policy} {n:6d} jobs: {f['rounds_decided']} rounds, {wall:.1f} s wall ({cpu:.1f} s cpu), "
              f"{f['per_job_us']:.0f} us/job wall ({f['per_job_ratio']}x), {f['per_job_cpu_us']:.0f} us/job cpu ({f['per_job_cpu_ratio']}x); "
              f"round p50 {f['round']['p50_ms']:.1f} ms p99 {f['round']['p99_ms']:.1f} ms")
    return figs


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="10000,30000,100000")
    ap.add_argument("--policy", default="sensascale")
    ap.add_argument("--nodes", type=int, default=120)
    a = ap.parse_args(argv)
    figs = run(tuple(int(x) for x in a.sizes.split(",")), a.policy, a.nodes)
    write_record(f"scaling-{a.policy}", figs, vars(a))
    return figs


if __name__ == "__main__":
    main()
