"""Benchmark 1: the full Philly SLO trace (Chronus artifact) on 120 × 8-GPU nodes.

Each policy runs in its own child process (so peak memory is per policy): load the
trace (``sensaopt.traces.chronus.load_chronus``, 5-minute rounds, 24 cores and
500 GB per node, seeded 50 % sensitive mix), simulate, then validate the schedule
once more on its own to time the validator. Figures per policy: wall time of the
simulation (incl. the simulator's own validation), per-round decision time p50/p99,
rounds decided, validator time, peak RSS (MiB, ``ru_maxrss`` of the child).
Targets for ``sensascale``: < 60 s, < 1 GiB, < 3 × the ``edf`` time. Every policy
after ``edf`` gets its time ÷ EDF's (wall and CPU): ``--policies edf,sensascale,chronus``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from _common import TimedPolicy, cpu_seconds, ms_stats, write_record


def load(limit: int | None = None, seed: int = 0):
    from sensaopt.traces.chronus import load_chronus
    from sensaopt.traces.paths import CHRONUS_TRACES, data_file
    from sensaopt.traces.presets import preset_cluster

    return load_chronus(data_file(CHRONUS_TRACES["chronus-slo"]), preset_cluster("philly-8"), round_minutes=5.0, seed=seed, limit=limit)


def child(policy: str, limit: int | None) -> dict:
    """Run one policy on the trace in this process; figures as a dict."""
    from sensaopt.policies import make_policy
    from sensaopt.simulator import simulate
    from sensaopt.validator import check_schedule

    t0 = time.perf_counter()
    inst = load(limit)
    t_load = time.perf_counter() - t0
    pol = TimedPolicy(make_policy(policy))
    t1, c1 = time.perf_counter(), cpu_seconds()
    res = simulate(inst, pol, validate=True)
    t_sim, c_sim = time.perf_counter() - t1, cpu_seconds() - c1
    t2, c2 = time.perf_counter(), cpu_seconds()
    ev = check_schedule(inst, res.schedule)
    t_val, c_val = time.perf_counter() - t2, cpu_seconds() - c2
    return {
        "policy": policy,
        "jobs": len(inst.jobs),
        "load_s": round(t_load, 3),
        "simulate_s": round(t_sim, 3),
        "simulate_cpu_s": round(c_sim, 3),
        "decide_total_s": round(sum(pol.times), 3),
        "decide_cpu_s": round(sum(pol.cpu_times), 3),
        "validate_s": round(t_val, 3),
        "validate_cpu_s": round(c_val, 3),
        "rounds_decided": len(pol.times),
        "round": ms_stats(pol.times),
        "round_cpu": ms_stats(pol.cpu_times),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "segments": len(res.schedule.segments),
        "valid": not ev.errors,
        "objective": res.objective,
        "slo_violations": getattr(res.metrics, "slo_violations", None),
        "avg_jct_min": getattr(res.metrics, "avg_jct", None),
    }


def run(policies: list[str], limit: int | None = None) -> dict:
    figs = {}
    for p in policies:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", p] + (["--limit", str(limit)] if limit else [])
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=Path(__file__).resolve().parent)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            raise SystemExit(f"policy {p} failed")
        f = json.loads(out.stdout.strip().splitlines()[-1])
        figs[p] = f
        r = f["round"]
        print(f"[trace] {p:10s} jobs {f['jobs']} rounds {f['rounds_decided']} simulate {f['simulate_s']:.1f} s (cpu {f['simulate_cpu_s']:.1f} s) "
              f"(decide {f['decide_total_s']:.1f} s, round p50 {r['p50_ms']:.2f} ms p99 {r['p99_ms']:.2f} ms) "
              f"validate {f['validate_s']:.2f} s load {f['load_s']:.1f} s peak {f['peak_rss_mib']:.0f} MiB")
    for p in policies:
        if p != "edf" and "edf" in figs:
            figs[f"{p}_over_edf"] = round(figs[p]["simulate_s"] / figs["edf"]["simulate_s"], 2)
            figs[f"{p}_over_edf_cpu"] = round(figs[p]["simulate_cpu_s"] / figs["edf"]["simulate_cpu_s"], 2)
            print(f"[trace] {p} / edf simulate time: {figs[f'{p}_over_edf']}x wall, {figs[f'{p}_over_edf_cpu']}x cpu")
    return figs


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--policies", default="edf,sensascale")
    ap.add_argument("--limit", type=int, default=None, help="first N jobs only (smoke runs)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child, a.limit)))
        return {}
    figs = run(a.policies.split(","), a.limit)
    write_record("trace" if not a.limit else f"trace-limit{a.limit}", figs, {"policies": a.policies, "limit": a.limit})
    return figs


if __name__ == "__main__":
    main()
