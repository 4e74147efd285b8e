"""Instance-size ladder for the exact models, and the strength ablation.

Ladder (default): every ``instances/*.json`` (filtered by ``--rungs``, name prefixes),
each solved by CP-SAT, HiGHS and CBC (``--workers`` threads, ``--time-limit`` s; or
``--budget work:N``: N deterministic work units, the time limit then a safety net):
proven or not, wall time, final gap (objective − bound) / objective, and the SensaScale
heuristic's gap to the exact objective and to the bound. If ``instances/`` holds no
files, equivalent instances are generated (same generator settings as
instances/README.md).

Ablation (``--ablation``): on each selected instance, CP-SAT and HiGHS with all
strengthening on, then each one switched off alone (symmetry, aggregate, trim, prune)
without warm start, and weighted instead of lexicographic: status, time, bound, objective.

    python benchmarks/exact_ladder.py --rungs tiny,small -o benchmarks/results/exact_ladder.json
    python benchmarks/exact_ladder.py --ablation --rungs tiny -o benchmarks/results/exact_ablation.json
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensaopt.cli.exact import format_table  # noqa: E402
from sensaopt.errors import SensaoptError  # noqa: E402
from sensaopt.io import load_instance  # noqa: E402
from sensaopt.simulator import simulate  # noqa: E402
from sensaopt.solve import (
    solve_cpsat,  # noqa: E402
    solve_milp,  # noqa: E402
)

SOLVERS = {
    "cpsat": lambda inst, **kw: solve_cpsat(inst, **kw),
    "highs": lambda inst, **kw: solve_milp(inst, backend="highs", **kw),
    "cbc": lambda inst, **kw: solve_milp(inst, backend="cbc", **kw),
}


def generated_ladder():
    from sensaopt.generate import GeneratorConfig, generate

    mix = ((1, 0.4), (2, 0.2), (4, 0.2), (8, 0.2))
    cfgs = {
        "tiny-8gpu": GeneratorConfig(jobs=5, nodes=1, load=3.0, deadline_hi=1.4, deadline_round=30, work_max=240, gpu_mix=mix),
        "tiny-16gpu": GeneratorConfig(jobs=6, nodes=1, node_gpus=16, node_cpus=48, node_mem_gb=1000, load=3.0, deadline_hi=1.3, deadline_round=30, work_max=240, gpu_mix=mix),
        "small-8gpu": GeneratorConfig(jobs=20, nodes=2, load=2.2, deadline_hi=1.5, deadline_round=30, work_max=240),
        "small-16gpu": GeneratorConfig(jobs=20, nodes=2, node_gpus=16, node_cpus=48, node_mem_gb=1000, load=2.5, deadline_hi=1.4, deadline_round=30, work_max=240, gpu_mix=mix),
        "medium-8gpu": GeneratorConfig(jobs=60, nodes=4, load=2.0, deadline_hi=1.5, deadline_round=30, work_max=240),
        "medium-16gpu": GeneratorConfig(jobs=60, nodes=4, node_gpus=16, node_cpus=48, node_mem_gb=1000, load=2.2, deadline_hi=1.4, deadline_round=30, work_max=240, gpu_mix=mix),
    }
    from dataclasses import replace

    return {n: generate(replace(c, name=n)) for n, c in cfgs.items()}


def load_ladder(rungs: list[str]) -> dict:
    files = sorted(glob.glob(str(ROOT / "instances" / "*.json")))
    insts = {Path(f).stem: load_instance(f) for f in files} if files else generated_ladder()
    order = ["tiny", "small", "medium", "large"]
    keep = {n: i for n, i in insts.items() if any(n.startswith(r) for r in rungs)}
    return dict(sorted(keep.items(), key=lambda kv: (next((k for k, r in enumerate(order) if kv[0].startswith(r)), 9), kv[0])))


def rel(a, b):
    return None if a is None or b in (None, 0) else a / abs(b)


def _phase1(r) -> str | None:
    """Phase 1 of the lexicographic solve: status and proven loss bound (violation_weight × lost value)."""
    lex = r.json_params().get("lexicographic")
    if not isinstance(lex, dict) or not isinstance(lex.get("phase1"), dict):
        return None
    p = lex["phase1"]
    return f"{p['status']} {p['seconds']:.1f}s loss {p['loss_incumbent']:g}>={p['loss_bound']:g}" if p["loss_incumbent"] is not None else p["status"]


def _shortfall(r) -> str | None:
    """The shortfall run before phase 1: status, seconds, incumbent >= bound (work units), what it proved."""
    lex = r.json_params().get("lexicographic")
    sf = lex.get("shortfall") if isinstance(lex, dict) else None
    if not isinstance(sf, dict):
        return None
    proof = "zero misses" if sf["zero_miss"] else "a miss" if sf["proves_miss"] else "nothing"
    fmt = lambda x: "-" if x is None else f"{x:.6g}"  # noqa: E731
    return f"{sf['status']} {sf['seconds']:.1f}s {fmt(sf['incumbent'])}>={fmt(sf['bound'])}: {proof}"


def run_one(name, inst, solver, heur, time_limit, workers, budget="time", **kw) -> dict:
    t0 = time.perf_counter()
    try:
        r = SOLVERS[solver](inst, time_limit=time_limit, workers=workers, budget=budget, **kw)
    except SensaoptError as e:
        return {"instance": name, "solver": solver, "status": "REFUSED", "message": str(e), "time_s": round(time.perf_counter() - t0, 2)}
    return {
        "instance": name,
        "jobs": len(inst.jobs),
        "solver": r.solver,
        "status": r.status.value,
        "proven": r.status.value == "OPTIMAL",
        "time_s": round(r.runtime_s, 2),
        "objective": r.objective,
        "bound": r.bound,
        "final_gap": rel(None if r.objective is None or r.bound is None else r.objective - r.bound, r.objective),
        "heuristic": heur.objective,
        "heur_gap": rel(None if r.objective is None else heur.objective - r.objective, r.objective),
        "heur_gap_to_bound": rel(None if r.bound is None else heur.objective - r.bound, r.bound),
        "phase1": _phase1(r),
        "shortfall": _shortfall(r),
        "horizon": r.json_params().get("horizon"),
        "horizon_proven": (r.json_params().get("horizon_proof") or {}).get("contains_optimum"),
        "global_bound": (r.json_params().get("horizon_proof") or {}).get("global_bound"),
        "x_vars": r.json_params().get("model_size", {}).get("x_vars"),
        "budget": r.params.get("budget"),
        "work_spent": r.params.get("work_spent"),
        "safety_net": r.params.get("safety_net_fired"),
        "message": r.message,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rungs", default="tiny,small,medium")
    ap.add_argument("--solvers", default="cpsat,highs,cbc")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", default="time", help="work:N (deterministic work units per solve) or time (default)")
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--gen", default=None, help="JOBS,NODES,SEED[;JOBS,NODES,SEED...]: generated instances instead of instances/")
    ap.add_argument("-o", "--output", default=None)
    a = ap.parse_args(argv)
    if a.gen:
        from sensaopt.generate import GeneratorConfig, generate

        insts = {}
        for spec in a.gen.split(";"):
            jobs, nodes, seed = (int(x) for x in spec.split(","))
            inst = generate(GeneratorConfig(jobs=jobs, nodes=nodes, seed=seed))
            insts[inst.name] = inst
    else:
        insts = load_ladder(a.rungs.split(","))
    rows = []
    cols = ["instance", "solver", "status", "proven", "time_s", "objective", "bound", "final_gap", "heuristic", "heur_gap", "heur_gap_to_bound", "phase1",
            "shortfall", "horizon_proven"]
    for name, inst in insts.items():
        heur = simulate(inst, "sensascale")
        if a.ablation:
            variants = [("all", {}), ("no-symmetry", {"strength": {"symmetry": False}}), ("no-aggregate", {"strength": {"aggregate": False}}),
                        ("no-trim", {"strength": {"trim": False}}), ("no-prune", {"strength": {"prune": False}}),
                        ("no-warm-start", {"warm_start": False}), ("weighted (no lexicographic)", {"lexicographic": False}),
                        ("none", {"warm_start": False, "lexicographic": False,
                                  "strength": {"symmetry": False, "aggregate": False, "trim": False, "prune": False}})]
            for solver in a.solvers.split(","):
                for label, kw in variants:
                    row = run_one(name, inst, solver, heur, a.time_limit, a.workers, a.budget, **kw)
                    row["variant"] = label
                    rows.append(row)
                    print(format_table([row], ["instance", "solver", "variant", "status", "time_s", "objective", "bound", "x_vars"]).splitlines()[1], flush=True)
            cols = ["instance", "solver", "variant", "status", "time_s", "objective", "bound", "final_gap", "x_vars"]
        else:
            for solver in a.solvers.split(","):
                row = run_one(name, inst, solver, heur, a.time_limit, a.workers, a.budget)
                rows.append(row)
                print(format_table([row], cols).splitlines()[1], flush=True)
    print()
    print(format_table(rows, cols))
    if a.output:
        os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
        from sensaopt.result import package_versions

        with open(a.output, "w") as f:
            json.dump({"time_limit": a.time_limit, "budget": a.budget, "workers": a.workers, "versions": package_versions(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
