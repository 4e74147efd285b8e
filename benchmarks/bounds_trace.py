"""Benchmark: both lower bounds (``sensaopt.bounds``) on a full Philly trace, beside one EDF
simulation of the same trace in the same process.

Per trace: build the instance (``philly-8``: 120 × 8-GPU Synergy nodes, 5-minute rounds,
seeded 50 % sensitive mix, as ``sensaopt simulate --trace``), compute the miss and JCT
bounds at best speed and at the proportional share (wall and CPU seconds, peak RSS of the
process after them, MiB), then simulate EDF (wall and CPU seconds, its misses and average
JCT, peak RSS after it). Prints the bounds' time as a fraction of EDF's, and the load
average (the machine is shared). Target on the SLO trace: bounds in <= 60 s and <= 2 GiB.

    nice python benchmarks/bounds_trace.py                         # SLO, with EDF
    nice python benchmarks/bounds_trace.py --trace chronus-mix1 --trace chronus-mix2 --no-edf
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from _common import cpu_seconds, load_average, write_record


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(trace: str, seed: int, edf: bool) -> dict:
    from sensaopt.bounds import compute_bounds
    from sensaopt.config import WorkloadConfig
    from sensaopt.simulator import simulate
    from sensaopt.traces.sources import workload_instance

    t0 = time.perf_counter()
    inst, _ = workload_instance(WorkloadConfig(trace=trace, preset="philly-8", seed=seed))
    t_load = time.perf_counter() - t0
    rss_load = peak_mib()
    t1, c1 = time.perf_counter(), cpu_seconds()
    b = compute_bounds(inst)
    t_b, c_b = time.perf_counter() - t1, cpu_seconds() - c1
    out = {"trace": trace, "seed": seed, "jobs": len(inst.jobs), "slo_jobs": b.slo_jobs, "load_s": round(t_load, 2),
           "bounds_s": round(t_b, 2), "bounds_cpu_s": round(c_b, 2), "rss_after_load_mib": round(rss_load),
           "rss_after_bounds_mib": round(peak_mib()), "loadavg_bounds": load_average(),
           **{f"{k}": v for k, v in b.record().items()},
           "misses_best_parts": {"trivial": b.misses["best"].trivial, "interval": b.misses["best"].interval,
                                 "resource": b.misses["best"].resource},
           "misses_unit_parts": {"trivial": b.misses["unit"].trivial, "interval": b.misses["unit"].interval,
                                 "blocks": [(x.start, x.end, x.jobs, x.forced) for x in b.misses["unit"].blocks]},
           "jct_parts": {r: {"per_job": j.per_job, "pooled": j.pooled, "resource": j.resource} for r, j in b.jct.items()}}
    print(f"{trace} seed {seed}: {len(inst.jobs)} jobs; bounds {t_b:.2f} s wall ({c_b:.2f} s CPU), peak RSS "
          f"{out['rss_after_bounds_mib']} MiB (after loading: {rss_load:.0f}); load average {load_average()}")
    print(f"  forced misses: best speed {out['forced_misses']} ({b.misses['best'].trivial} trivial), proportional share "
          f"{out['forced_misses_share']} ({b.misses['unit'].trivial} trivial); JCT bound: best {out['jct_bound']:.1f} min, "
          f"share {out['jct_bound_share']:.1f} min")
    if edf:
        t2, c2 = time.perf_counter(), cpu_seconds()
        res = simulate(inst, "edf")
        t_e, c_e = time.perf_counter() - t2, cpu_seconds() - c2
        m = res.metrics
        out.update(edf_s=round(t_e, 2), edf_cpu_s=round(c_e, 2), edf_misses=m.slo_violations, edf_avg_jct=m.avg_jct,
                   rss_after_edf_mib=round(peak_mib()), ratio=round(t_b / t_e, 4), cpu_ratio=round(c_b / c_e, 4),
                   loadavg_edf=load_average())
        print(f"  EDF: {t_e:.2f} s wall ({c_e:.2f} s CPU), {m.slo_violations} misses, avg JCT {m.avg_jct:.1f} min; "
              f"bounds / EDF = {t_b / t_e:.3f} wall, {c_b / c_e:.3f} CPU; load average {load_average()}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", action="append", help="chronus-slo (default) | chronus-mix1 | chronus-mix2; repeat")
    ap.add_argument("--seed", type=int, action="append", help="workload seed (model-type draw); repeat (default 0)")
    ap.add_argument("--no-edf", action="store_true", help="bounds only")
    a = ap.parse_args()
    rows = [one(t, s, not a.no_edf) for t in (a.trace or ["chronus-slo"]) for s in (a.seed or [0])]
    write_record("bounds_trace", {"rows": rows}, {"traces": a.trace or ["chronus-slo"], "seeds": a.seed or [0],
                                                   "edf": not a.no_edf, "pid": os.getpid()})


if __name__ == "__main__":
    main()
