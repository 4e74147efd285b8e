"""Benchmark: the deadline-hard allocation relaxation of a window solved as a MIP (issue 33).

Does a search lift the relaxation's bound above its root LP? For each window file given
(``W.json:H``, an ``experiment gaps`` out-dir's ``instances/<K>-jobs/seed-0`` file and the
horizon of that run's relaxation stage, ``exact_params.allocations.stages[0].horizon``),
the deadline-hard relaxation at ``--refine`` is built on the relaxation grid (``exact``:
CPU-exact for one-node jobs, the default since session 22; ``coarse``: the earlier grids,
any real CPU or whole-core boxes, the smaller) and solved by HiGHS (1 thread, seed 0):
``--lp`` its root LP only, else the MIP for ``--limit`` seconds, with ``--cutoff V`` only
below V (HiGHS ``objective_bound``, as the pipeline's search). Printed per window: options,
placement variables, status, objective and bound (metrics units), seconds, load average;
``--option KEY=VALUE`` passes a raw HiGHS option to the MIP, ``--log`` shows HiGHS's log.
When the MIP has a solution, whether it lifts to a valid schedule (``lift``) and its objective.
``--cpsat N``: the MIP on CP-SAT with N workers instead (``--cutoff`` as a constraint on
the objective; more workers than cores time-share them).
``--dw``: the Dantzig-Wolfe bound (column generation over per-job schedules, the product's
``relax_colgen`` stage) instead of the MIP; ``--drop F1,F2``: the model without those
constraint families (a diagnosis of where the gap lives, session 24: without
``capacity_cpu,aggregate_cpu`` w2's relaxation is proven at its root LP in seconds).

    taskset -c 1 python benchmarks/relaxation_mip.py OUT/instances/20-jobs/seed-0/chronus-slo-w4.json:24 --grid coarse
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from _common import load_average

from sensaopt import allocations as al
from sensaopt.config import parse_value
from sensaopt.exact.decompositions.colgen import column_generation
from sensaopt.exact.model.builder import ModelSpec, Strength, build, objective_step, to_objective, to_scaled
from sensaopt.exact.model.data import build_data, hard_data
from sensaopt.exact.model.objective import objective_expr
from sensaopt.exact.outcome import EXACT_OPTIONS
from sensaopt.exact.phases.lift import lift
from sensaopt.io import load_instance
from sensaopt.solvers import SolverParams, TimeBudget, new_backend
from sensaopt.solvers.highs import HighsBackend, lp_bound


class _Without(HighsBackend):
    """The model without the constraint families ``drop`` (a diagnosis: fewer rows, so
    still a relaxation, of another problem)."""

    def __init__(self, drop: frozenset[str]) -> None:
        super().__init__()
        self.drop = drop

    def add(self, constraint, family: str) -> None:
        if family not in self.drop:
            super().add(constraint, family)


def one(path: Path, horizon: int, grid: str, refine: int, limit: float, lp: bool, cutoff: float | None,
        log: bool = False, options: dict | None = None, drop: frozenset[str] = frozenset(), dw: bool = False,
        cpsat: int = 0) -> dict:
    inst = load_instance(path)
    grids = (al.model_grids(inst, inst.jobs, relaxed=True, refine=refine, inner_refine=0, extra={}, exact_cpu=False)
             if grid == "coarse" else None)  # the grids before session 22
    data = hard_data(build_data(inst, horizon, relaxed=True, refine=refine, grids=grids), grow=True)
    if dw:  # column generation prices the data directly: no compact model to build
        t = time.perf_counter()
        cg = column_generation(data, limit)
        return {"window": path.stem, "grid": grid, "refine": refine, "dantzig_wolfe":
                None if cg.bound is None else round(to_objective(data, cg.bound), 4),
                "stop": cg.stop, "iterations": cg.iterations, "columns": cg.columns, "s": round(time.perf_counter() - t, 1)}
    if cpsat:
        return _on_cpsat(path, data, grid, refine, limit, cutoff, cpsat, log)
    be = _Without(drop)
    v = build(data, be, ModelSpec(strength=Strength(run_count=lp)))
    unknown = sorted(drop - set(v.families))
    if unknown:
        raise ValueError(f"--drop {','.join(unknown)}: no such constraint family in this model ({', '.join(sorted(v.families))})")
    row = {"window": path.stem, "grid": grid, "refine": refine, "options": sum(len(jd.options) for jd in data.jobs),
           "x": len(v.x)} | ({"without": "+".join(sorted(drop))} if drop else {})
    t = time.perf_counter()
    if lp:
        b = lp_bound(be, TimeBudget(limit, time.perf_counter()), SolverParams(workers=1, extra={"solver": "ipm", "run_crossover": "off"}))
        return row | {"root_lp": None if b is None else round(to_objective(data, b), 4), "s": round(time.perf_counter() - t, 1)}
    extra = dict(options or {})
    if cutoff is not None:
        extra["objective_bound"] = to_scaled(data, cutoff) - objective_step(data) / 2 - be.objective.const
    extra = {**EXACT_OPTIONS["highs"], **extra}  # the product's gaps: HiGHS's default relative gap (1e-4) hides minutes beside a miss's 1e5
    out = be.solve(TimeBudget(limit, time.perf_counter()), SolverParams(workers=1, seed=0, extra=extra, log=log))
    return _answer(row, data, v, out, t)


def _answer(row: dict, data, v, out, t: float) -> dict:
    """``row`` with the MIP's status, objective and bound (metrics units), the seconds since
    ``t`` and, when it has a schedule, whether that lifts to a valid one (``lifted``)."""
    row |= {"status": out.status.value, "objective": None if out.objective is None else round(to_objective(data, out.objective), 4),
            "bound": None if out.bound is None else round(to_objective(data, out.bound), 4), "s": round(time.perf_counter() - t, 1)}
    if out.value is not None:
        got = lift(data, v, out.value)
        row["lifted"] = None if got is None else round(got.objective, 4)
    return row


def _on_cpsat(path: Path, data, grid: str, refine: int, limit: float, cutoff: float | None, workers: int, log: bool) -> dict:
    """The relaxation's MIP on CP-SAT (``workers`` workers, seed 0, the product's exact
    options: linearization level 2 since session 41); ``cutoff``: the
    objective at most one granule below it, as a constraint (CP-SAT takes no objective cutoff)."""
    be = new_backend("cpsat")
    v = build(data, be, ModelSpec(strength=Strength()))
    if cutoff is not None:
        be.add(objective_expr(be, v) <= math.floor(to_scaled(data, cutoff) - objective_step(data) / 2), "cutoff")
    row = {"window": path.stem, "grid": grid, "refine": refine, "options": sum(len(jd.options) for jd in data.jobs),
           "x": len(v.x), "backend": f"cpsat×{workers}"}
    t = time.perf_counter()
    params = SolverParams(workers=workers, seed=0, log=log, extra=dict(EXACT_OPTIONS["cpsat"]))
    out = be.solve(TimeBudget(limit, time.perf_counter()), params)
    return _answer(row, data, v, out, t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("windows", nargs="+", help="WINDOW.json:HORIZON")
    ap.add_argument("--grid", choices=["exact", "coarse"], default="exact")
    ap.add_argument("--refine", type=int, default=1)
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per solve")
    ap.add_argument("--lp", action="store_true", help="the root LP only")
    ap.add_argument("--dw", action="store_true", help="the Dantzig-Wolfe bound (column generation, at most --limit s) instead")
    ap.add_argument("--drop", default="", metavar="FAMILY[,FAMILY]",
                    help="leave these constraint families out (a diagnosis), e.g. capacity_cpu,aggregate_cpu")
    ap.add_argument("--cpsat", type=int, default=0, metavar="N", help="the MIP on CP-SAT with N workers instead of HiGHS")
    ap.add_argument("--cutoff", type=float, default=None, help="search only below this objective (metrics units)")
    ap.add_argument("--log", action="store_true", help="print HiGHS's log of the MIP")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a raw HiGHS option for the MIP (repeat), e.g. mip_heuristic_effort=0.3")
    a = ap.parse_args(argv)
    jobs = [w.rpartition(":") for w in a.windows]
    for w, (path, _, h) in zip(a.windows, jobs):
        if not path or not h.isdigit() or not Path(path).is_file():
            print(f"error: {w!r}: give WINDOW.json:HORIZON (an existing file, a whole number of rounds)", file=sys.stderr)
            return 2
    options = {}
    for kv in a.option:
        key, eq, val = kv.partition("=")
        if not eq or not key:
            print(f"error: --option {kv!r}: give KEY=VALUE", file=sys.stderr)
            return 2
        options[key] = parse_value(int | float | str, val)  # the --set parser; HiGHS reads "on", "true" itself
    drop = frozenset(f for f in a.drop.split(",") if f)
    if drop and a.dw:
        print("error: --drop applies to the compact model; --dw prices the data directly: give one of them", file=sys.stderr)
        return 2
    if a.refine < 1 or a.limit <= 0 or a.cpsat < 0:
        print("error: --refine must be at least 1, --limit positive and --cpsat at least 0", file=sys.stderr)
        return 2
    if a.cpsat and (a.lp or a.dw or drop or options):
        print("error: --cpsat solves the MIP: not with --lp, --dw, --drop or --option (HiGHS's)", file=sys.stderr)
        return 2
    print(f"load average {load_average()}")
    for path, _, h in jobs:
        try:
            row = one(Path(path), int(h), a.grid, a.refine, a.limit, a.lp, a.cutoff, a.log, options, drop, a.dw, a.cpsat)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print(f"load average {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
