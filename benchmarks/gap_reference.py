"""Where the gap of a trace window lives: primal (incumbent not optimal) or dual (bound too weak)?

Issue 33 item 1. Per window of a committed set (``sensaopt instances from-trace``, as
``benchmarks/window_gaps.py`` cuts them), three figures, each in metrics units (the
objective: 1e5 × lost deadline value + average JCT in minutes):

* ``lp_inner`` / ``lp_relax``: the root LP bound (HiGHS, all integrality dropped) of the
  inner deadline-hard model and of the deadline-hard allocation relaxation — what
  every solver starts from;
* ``short``: one exact solve at ``--time-limit`` (``sensaopt gap``'s solve, CP-SAT then
  HiGHS with ``--cooperate``): status, objective, bound valid over every allocation;
* ``long``: the same solve at ``--long-limit`` seconds per seed in ``--seeds``: the best
  objective and the best bound any of them reaches.

The reading: a window whose long-run objective is below the short run's has a primal
gap (the short incumbent is not optimal); one whose long-run bound is above the short
run's has a dual gap; both can hold. Resumable: one JSON per window and part in
``OUT/<set>/<window>.json``; ``--table`` writes ``OUT/reference.md`` from them.

    nice python benchmarks/gap_reference.py --jobs 20 --time-limit 60 --long-limit 300 --seeds 0 --out /tmp/gapref
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from window_gaps import ensure_windows  # noqa: E402


def lp_bound(inst: Any, relaxed: bool, horizon: int) -> float:
    """The root LP bound (metrics units) of the deadline-hard model (inner grid, or the
    allocation relaxation's outer grid at refine 1) over ``horizon`` slots."""
    from sensaopt.exact.model.builder import Strength, build, to_objective
    from sensaopt.exact.model.data import build_data, hard_data
    from sensaopt.solvers import SolverParams, TimeBudget
    from sensaopt.solvers.highs import HighsBackend
    from sensaopt.solvers.highs import lp_bound as highs_lp

    data = hard_data(build_data(inst, horizon, relaxed=relaxed, refine=1, inner_refine=0 if relaxed else 1), grow=True)
    be = HighsBackend()
    build(data, be, Strength())
    lp = highs_lp(be, TimeBudget(600.0, time.perf_counter()), SolverParams(workers=1))
    return float("nan") if lp is None else to_objective(data, lp)


def solve(inst: Any, time_limit: float, seed: int, cooperate: bool, cpsat_workers: int = 1) -> dict:
    """One exact solve (``sensaopt gap``'s: CP-SAT, 1 thread, HiGHS cooperating); ``cpsat_workers`` > 1
    gives CP-SAT that many search workers (its LNS and LP subsolvers; raw ``num_workers``): run the
    script under ``taskset -c K`` to keep them on one core."""
    from sensaopt.solve import solve as exact

    t0, c0 = time.perf_counter(), time.process_time()
    opts = {"solver_options": {"num_workers": cpsat_workers}} if cpsat_workers > 1 else {}
    r = exact(inst, "cpsat", time_limit=time_limit, workers=1, seed=seed, lexicographic=True, cooperate=cooperate, **opts)
    return {"status": r.status.value, "objective": r.objective, "bound": r.bound, "seconds": round(time.perf_counter() - t0, 2),
            "cpu_s": round(time.process_time() - c0, 2), "seed": seed, "time_limit": time_limit, "cpsat_workers": cpsat_workers,
            "cores": len(os.sched_getaffinity(0)), "load": os.getloadavg()[0]}


def reference(path: Path, time_limit: float, long_limit: float, seeds: list[int], cooperate: bool, out: Path,
              cpsat_workers: int = 1, lp: bool = True) -> dict:
    from sensaopt.io import load_instance
    from sensaopt.simulator import simulate

    inst = load_instance(path)
    target = out / f"{path.stem}.json"
    row: dict[str, Any] = json.loads(target.read_text()) if target.exists() else {"window": path.stem, "jobs": len(inst.jobs)}

    def keep() -> None:
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(row, indent=1))
        os.replace(tmp, target)

    if "short" not in row:
        row["short"] = solve(inst, time_limit, 0, cooperate)
        keep()
    horizon = simulate(inst, "sensascale").schedule.num_rounds + 2
    for key, relaxed in (("lp_inner", False), ("lp_relax", True)):
        if lp and key not in row:
            row[key] = lp_bound(inst, relaxed, horizon)
            keep()
    if row["short"]["status"] != "OPTIMAL":
        for seed in seeds:
            name = f"long_s{seed}"
            if name not in row:
                row[name] = solve(inst, long_limit, seed, cooperate, cpsat_workers)
                keep()
    return row


def best(row: dict) -> tuple[float | None, float | None]:
    runs = [row["short"]] + [v for k, v in row.items() if k.startswith("long_s")]
    objs = [r["objective"] for r in runs if r["objective"] is not None]
    bounds = [r["bound"] for r in runs if r["bound"] is not None]
    return (min(objs) if objs else None), (max(bounds) if bounds else None)


def _f(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def table(rows: list[dict]) -> str:
    head = ["window", "jobs", "LP inner", "LP relax", "short status", "short objective", "short bound", "best objective",
            "best bound", "long runs", "gap lives"]
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        s = r["short"]
        bo, bb = best(r)
        longs = [k for k in r if k.startswith("long_s")]
        where = []
        if s["objective"] is not None and bo is not None and bo < s["objective"] - 1e-9:
            where.append("primal")
        if s["bound"] is not None and bb is not None and bb > s["bound"] + 1e-9:
            where.append("dual")
        if s["status"] == "OPTIMAL":
            where = ["closed"]
        out.append("| " + " | ".join([r["window"], str(r["jobs"]), _f(r.get("lp_inner")), _f(r.get("lp_relax")), s["status"],
                                      _f(s["objective"]), _f(s["bound"]), _f(bo), _f(bb), str(len(longs)),
                                      ", ".join(where) or "open (no run moved it)"]) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--first", type=int, default=3000)
    ap.add_argument("--windows", default="", help="comma-separated window indices (default: all)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--long-limit", type=float, default=300.0)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--no-cooperate", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gap_reference")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--instances", type=Path, default=None,
                    help="windows already cut (an `experiment gaps` out-dir's instances/<K>-jobs/seed-0 folder) instead of cutting them")
    ap.add_argument("--no-lp", action="store_true", help="skip the root LPs (up to 600 s each on a long-horizon window)")
    ap.add_argument("--cpsat-workers", type=int, default=1, help="CP-SAT search workers of the long runs (keep them on one core with taskset)")
    a = ap.parse_args(argv)
    folder = a.out / f"w{a.jobs}"
    folder.mkdir(parents=True, exist_ok=True)
    if not a.table:
        files = (sorted(a.instances.glob("*.json"), key=lambda p: int(p.stem.rsplit("-w", 1)[1])) if a.instances
                 else ensure_windows(a.out, a.jobs, a.count, a.first))
        pick = {int(x) for x in a.windows.split(",") if x}
        seeds = [int(x) for x in a.seeds.split(",") if x]
        try:
            for p in files:
                if pick and int(p.stem.rsplit("-w", 1)[1]) not in pick:
                    continue
                row = reference(p, a.time_limit, a.long_limit, seeds, not a.no_cooperate, folder, a.cpsat_workers, not a.no_lp)
                print(p.stem, row["short"]["status"], _f(row["short"]["objective"]), _f(row["short"]["bound"]), "best", *map(_f, best(row)),
                      flush=True)
        except KeyboardInterrupt:
            print("interrupted: finished parts are kept", file=sys.stderr)
    rows = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"), key=lambda p: int(p.stem.rsplit("-w", 1)[1]))]
    (a.out / f"reference-w{a.jobs}.md").write_text(table(rows))
    print(f"table: {a.out / f'reference-w{a.jobs}.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
