"""Benchmark 2: one SensaScale round decision at scale.

1,000 queued jobs (half sensitive) on 120 × 8-GPU nodes (24 cores, 500 GB each),
nothing running; the same state decided ``--repeat`` times with a fresh policy
each time (no cross-round caches), then ``--repeat`` times with one warm policy.
Target: p50 ≤ 10 ms, p99 ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import time

from sensaopt.generate import GeneratorConfig, generate
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.sensascale import SensaScalePolicy

from _common import ms_stats, write_record


def round_state(jobs: int = 1000, nodes: int = 120, seed: int = 0) -> tuple[object, RoundState]:
    inst = generate(GeneratorConfig(jobs=jobs, nodes=nodes, seed=seed, load=1.0, sensitive_fraction=0.5))
    st = RoundState(0, 0.0, inst.round_minutes, inst.cluster, inst.overheads, [JobState(spec=j, remaining=j.work) for j in inst.jobs])
    return inst, st


def run(jobs: int = 1000, nodes: int = 120, repeat: int = 60, seed: int = 0) -> dict:
    inst, st = round_state(jobs, nodes, seed)
    warm = SensaScalePolicy()
    warm.reset(inst)
    warm.decide(st)
    warm_t, warm_c = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        warm.decide(st)
        warm_t.append(time.perf_counter() - t)
        warm_c.append(time.process_time() - c)
    cold_t = []
    for _ in range(max(5, repeat // 4)):
        pol = SensaScalePolicy()
        pol.reset(inst)
        t = time.perf_counter()
        pol.decide(st)
        cold_t.append(time.perf_counter() - t)
    figs = {"warm": ms_stats(warm_t), "warm_cpu": ms_stats(warm_c), "cold_first_round": ms_stats(cold_t), "stats": warm.last_stats}
    print(f"[round] {jobs} jobs, {nodes} nodes: warm p50 {figs['warm']['p50_ms']:.1f} ms p99 {figs['warm']['p99_ms']:.1f} ms "
          f"(cpu p50 {figs['warm_cpu']['p50_ms']:.1f} ms p99 {figs['warm_cpu']['p99_ms']:.1f} ms); "
          f"first round of a fresh policy p50 {figs['cold_first_round']['p50_ms']:.1f} ms; {warm.last_stats}")
    return figs


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=120)
    ap.add_argument("--repeat", type=int, default=60)
    a = ap.parse_args(argv)
    figs = run(a.jobs, a.nodes, a.repeat)
    write_record("round", figs, vars(a))
    return figs


if __name__ == "__main__":
    main()
