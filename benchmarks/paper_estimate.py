"""How long the full ``experiment paper`` table takes: time one cell per policy at two scales
and extrapolate.

For each workload family (Philly SLO as the Philly representative, Helios) and policy, one
run of the paper's configuration (``paper_configs``: 8-GPU nodes, seed 0) at each ``--scale``,
timed in CPU seconds of this process (the machine is shared: wall time varies with the load,
CPU time much less) and wall seconds. A power law ``cpu = a * scale**b`` through the two
scales gives the full-scale (scale 1) figure per run; the table is 3 Philly workloads x 2 node
sizes + 1 Helios workload x 2 node sizes, per policy and per seed.

Usage: ``python benchmarks/paper_estimate.py --scale 0.05 --scale 0.2 [--seeds 3]``.

``--store DIR --store DIR2`` instead reads two ``experiment paper`` result folders (runs at two
scales, e.g. ``--scale 0.02`` and ``--scale 0.05``), takes every run's stored wall time
(``wall_s``, seconds: the load of the machine then is in them), averages it per (workload,
node size, policy) over the seeds, and extrapolates each of those to scale 1 the same way:
all four workloads, not only Philly SLO (Chronus on MIX2 is much slower than on SLO).
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


def stored_walls(store: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(trace, GPUs per node, policy) -> (scale = the run's GPUs / the full cluster's, mean wall
    seconds over the seeds) of the runs of an ``experiment paper`` output folder."""
    import json

    from sensaopt.sweep.paper import FULL_GPUS

    walls: dict[tuple[str, str, str], list[float]] = {}
    scales: dict[tuple[str, str, str], float] = {}
    for f in sorted(Path(store, "runs").glob("*.json")):
        r = json.loads(f.read_text())
        c = r["config"]
        k = (c["trace"], c["preset"].split("x")[-1], c["policy"])
        scales[k] = r["instance"]["gpus"] / FULL_GPUS["helios" if c["trace"] == "helios-gen" else "philly"]
        walls.setdefault(k, []).append(r["wall_s"])
    return {k: (scales[k], sum(v) / len(v)) for k, v in walls.items()}


def from_stores(stores: list[str], seeds: int) -> int:
    w0, w1 = (stored_walls(d) for d in stores)
    print("wall seconds per run (mean over the stored seeds) at two scales, extrapolated to scale 1:")
    est = []
    for k in sorted(set(w0) & set(w1)):
        (s0, t0), (s1, t1) = sorted((w0[k], w1[k]))
        full = extrapolate({"scale": s0, "cpu_s": t0}, {"scale": s1, "cpu_s": t1})
        est.append({"trace": k[0], "node_gpus": k[1], "policy": k[2], "scales": [s0, s1], "walls_s": [t0, t1], "full_s": full})
        print(f"  {k[0]} {k[1]}-GPU {k[2]}: {t0:.1f} s at {s0:.3f} -> {t1:.1f} s at {s1:.3f} -> scale 1: {full:.0f} s")
    total = sum(e["full_s"] for e in est) * seeds
    print(f"full table ({seeds} seeds): {total / 3600:.1f} wall hours on one worker at the stores' load; load now {load_average()}")
    write_record("paper_estimate_stores", {"estimate": est, "table_hours": total / 3600}, {"stores": stores, "seeds": seeds})
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", action="append", help="two experiment paper output folders (see the module doc)")
    ap.add_argument("--scale", type=float, action="append", help="exactly two; default 0.05 and 0.2")
    ap.add_argument("--policy", action="append", help="repeat; default all five")
    ap.add_argument("--seeds", type=int, default=3, help="seeds in the estimated table")
    a = ap.parse_args(argv)
    if a.store:
        if len(a.store) != 2:
            ap.error("give exactly two --store folders")
        return from_stores(a.store, a.seeds)
    scales = sorted(a.scale or [0.05, 0.2])
    if len(scales) != 2:
        ap.error("give exactly two --scale values")
    from sensaopt.policies import policy_names

    pols = a.policy or [p for p in POLICIES if p in policy_names()]  # the second edition's, those registered
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
