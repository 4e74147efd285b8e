"""Why SensaScale loses to Chronus on the scaled Helios cells of ``experiment paper``.

One line per (scale, node size, seed, policy) on the Helios-calibrated workload, with what
could limit a policy there:

* cluster scale: the same arrivals thinned to ``scale`` on ``scale`` x 768 GPUs;
* job sizes: jobs wider than a node (gpus > GPUs per node), jobs taking half the cluster or
  more (``half``), and their misses;
* load: offered GPU-minutes / (cluster GPUs x window minutes), per day of the window;
* impossible deadlines: jobs that miss even when started in the first round after their
  arrival at their profile's peak speed, never interrupted (finishes fall on round ends:
  ``ceil(arrival / R)·R + ceil(work / peak / R)·R > deadline``); no policy can meet them.
  The SPEC deadline rule rounds ``arrival + λ·work`` *up to the hour*, so most Helios jobs
  (median run time 3.4 min) get ample slack, but one arriving a few minutes before the hour
  gets a deadline minutes away, shorter than the wait for the next 5-minute round.

Usage: ``python benchmarks/helios_diagnosis.py --scale 0.05 --scale 0.2 --days 2 --seeds 3``.
Prints a Markdown table and writes the JSON record (``_common.write_record``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load_average, write_record  # noqa: E402

from sensaopt.metrics import job_metrics  # noqa: E402
from sensaopt.sweep.config import RunConfig  # noqa: E402
from sensaopt.sweep.paper import PaperSettings, cluster_for  # noqa: E402
from sensaopt.traces.run import run_policy  # noqa: E402
from sensaopt.traces.sources import workload_instance  # noqa: E402


def load_per_day(inst, days: float) -> list[float]:
    """Offered GPU-minutes (gpus x work at speed 1) of the jobs arriving each day / (GPUs x 1440)."""
    cap = inst.cluster.total_gpus * 1440.0
    out = [0.0] * max(1, math.ceil(days))
    for j in inst.jobs:
        d = min(len(out) - 1, int(j.arrival // 1440))
        out[d] += j.gpus * j.work / cap
    return out


def run_cell(scale: float, node_gpus: int, seed: int, days: float, policies: list[str]) -> list[dict]:
    s = PaperSettings(scale=scale, helios_days=days)
    preset, frac = cluster_for("helios", node_gpus, s)
    cfg = RunConfig(trace="helios-gen", preset=preset, seed=seed, sample=frac, days=days)
    inst, data = workload_instance(cfg)
    R = inst.round_minutes
    wide = {j.id for j in inst.jobs if j.gpus > node_gpus}
    half = {j.id for j in inst.jobs if 2 * j.gpus >= inst.cluster.total_gpus}
    tight = {j.id for j in inst.jobs if j.deadline is not None
             and math.ceil(j.arrival / R - 1e-9) * R + math.ceil(j.work / j.profile.peak / R - 1e-9) * R > j.deadline + 1e-9}
    per_day = load_per_day(inst, days)
    rows = []
    for pol in policies:
        t0 = time.perf_counter()
        res, ev = run_policy(inst, pol, seed=seed)
        wall = time.perf_counter() - t0
        jm = job_metrics(inst, ev)
        miss = {m.job for m in jm if m.met_deadline is False}
        q = {m.job: m.queueing for m in jm if m.queueing is not None}
        small = [k for k in q if k not in wide]
        rows.append({
            "scale": scale, "node_gpus": node_gpus, "seed": seed, "policy": pol, "gpus": inst.cluster.total_gpus,
            "jobs": len(inst.jobs), "too_big": data.skipped.get("too_big", 0),
            "wide": len(wide), "half": len(half), "impossible": len(tight),
            "load_mean": sum(per_day) / len(per_day), "load_max": max(per_day),
            "misses": len(miss), "miss_wide": len(miss & wide), "miss_half": len(miss & half), "miss_impossible": len(miss & tight),
            "miss_other": len(miss - wide - tight),
            "q_wide": (sum(q[k] for k in q if k in wide) / max(1, sum(1 for k in q if k in wide))),
            "q_small": sum(q[k] for k in small) / max(1, len(small)),
            "util": res.metrics.gpu_utilization if res.metrics else None, "wall_s": wall,
        })
        print(_line(rows[-1]), flush=True)
    return rows


COLS = ("scale", "node_gpus", "seed", "policy", "gpus", "jobs", "too_big", "wide", "half", "impossible", "load_mean", "load_max", "misses",
        "miss_wide", "miss_half", "miss_impossible", "miss_other", "q_wide", "q_small", "util", "wall_s")


def _line(r: dict) -> str:
    return "| " + " | ".join(f"{r[c]:.2f}" if isinstance(r[c], float) else str(r[c]) for c in COLS) + " |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, action="append", help="repeat; default 0.05 and 0.2")
    ap.add_argument("--nodes", type=int, action="append", help="GPUs per node; repeat; default 8 and 16")
    ap.add_argument("--days", type=float, default=2.0, help="window of Venus arrivals, days")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--policy", action="append", help="repeat; default sensascale chronus edf")
    a = ap.parse_args(argv)
    scales, nodes, pols = a.scale or [0.05, 0.2], a.nodes or [8, 16], a.policy or ["sensascale", "chronus", "edf"]
    print(f"load average at start: {load_average()}")
    print("| " + " | ".join(COLS) + " |")
    print("|" + " --- |" * len(COLS))
    rows = []
    for sc in scales:
        for g in nodes:
            for seed in range(a.seeds):
                rows += run_cell(sc, g, seed, a.days, pols)
    print(f"load average at end: {load_average()}")
    write_record("helios_diagnosis", {"rows": rows}, {"scales": scales, "nodes": nodes, "days": a.days, "seeds": a.seeds,
                                                      "policies": pols})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
