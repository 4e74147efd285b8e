"""How long the full ``experiment paper`` table takes: time one cell per policy at two scales
and extrapolate.

For each workload family (Philly SLO as the Philly representative, Helios) and policy, one
run of the paper's configuration (``paper_configs``: 8-GPU nodes, seed 0) at each ``--scale``,
timed in CPU seconds of this process (the machine is shared: wall time varies with the load,
CPU time much less) and wall seconds. A power law ``cpu = a * scale**b`` through the two
scales gives the full-scale (scale 1) figure per run; the table is 3 Philly workloads x 2 node
sizes + 1 Helios workload x 2 node sizes, per policy and per seed.

Usage: ``python benchmarks/paper_estimate.py --scale 0.05 --scale 0.2 [--seeds 3]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load_average, write_record  # noqa: E402

from sensaopt.sweep.config import run_config  # noqa: E402
from sensaopt.sweep.paper import POLICIES, PaperSettings, paper_configs  # noqa: E402

CELLS = {"Philly SLO": 6, "Helios": 2}  # runs per policy per seed that each timed cell stands for (3 traces x 2 node sizes; 2)


def time_run(label: str, policy: str, scale: float, seed: int = 0) -> dict:
    runs = paper_configs(PaperSettings(scale=scale, policies=(policy,), seeds=(seed,)))
    cfg = next(c for w, g, c in runs if w == label and g == 8)
    t, c = time.perf_counter(), time.process_time()
    rec = run_config(cfg)
    return {"workload": label, "policy": policy, "scale": scale, "jobs": rec["instance"]["jobs"], "gpus": rec["instance"]["gpus"],
            "cpu_s": time.process_time() - c, "wall_s": time.perf_counter() - t, "simulate_s": rec["simulate_s"]}


def extrapolate(a: dict, b: dict, to: float = 1.0) -> float:
    """CPU seconds at scale ``to`` on the power law through two timed runs."""
    if a["cpu_s"] <= 0 or b["cpu_s"] <= 0 or a["scale"] == b["scale"]:
        return math.nan
    k = math.log(b["cpu_s"] / a["cpu_s"]) / math.log(b["scale"] / a["scale"])
    return b["cpu_s"] * (to / b["scale"]) ** k


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, action="append", help="exactly two; default 0.05 and 0.2")
    ap.add_argument("--policy", action="append", help="repeat; default all five")
    ap.add_argument("--seeds", type=int, default=3, help="seeds in the estimated table")
    a = ap.parse_args(argv)
    scales = sorted(a.scale or [0.05, 0.2])
    if len(scales) != 2:
        ap.error("give exactly two --scale values")
    pols = a.policy or list(POLICIES)
    print(f"load average at start: {load_average()}")
    rows, est = [], []
    for label in CELLS:
        for pol in pols:
            pair = [time_run(label, pol, s) for s in scales]
            rows += pair
            full = extrapolate(*pair)
            est.append({"workload": label, "policy": pol, "full_cpu_s": full, "table_cpu_s": full * CELLS[label] * a.seeds})
            print(" | ".join(f"{r['workload']} {pol} scale {r['scale']}: {r['jobs']} jobs, {r['cpu_s']:.1f} CPU s, "
                             f"{r['wall_s']:.1f} wall s" for r in pair) + f" -> scale 1: {full:.0f} CPU s per run", flush=True)
    total = sum(e["table_cpu_s"] for e in est)
    print(f"full table ({a.seeds} seeds, {len(pols)} policies): {total / 3600:.1f} CPU hours")
    for pol in pols:
        print(f"  {pol}: {sum(e['table_cpu_s'] for e in est if e['policy'] == pol) / 3600:.2f} CPU hours")
    print(f"load average at end: {load_average()}")
    write_record("paper_estimate", {"runs": rows, "estimate": est, "table_cpu_hours": total / 3600},
                 {"scales": scales, "policies": pols, "seeds": a.seeds})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
