"""Benchmark: the allocation relaxation's root LP, by model form and LP method (issue 33).

For each window file given (an ``experiment gaps`` out-dir's ``instances/<K>-jobs/seed-0``
files) and a horizon in rounds (``W.json:H``; the horizon of the solve's relaxation stage,
``exact_params.allocations.stages[0].horizon`` in that run's record), the deadline-hard
relaxation at refine 1 is built once per form and its LP solved by HiGHS (1 thread):

* ``prefix``: min_run_slots as prefix sums (the MIP models' form), ``simplex``: HiGHS's choice;
* ``count``: min_run_slots as a running count (``Strength(run_count=True)``), ``ipm``:
  interior point without crossover (``allocation.LP_OPTIONS``) — what ``root_lp`` solves.

Figures per window and case: build and LP CPU seconds, columns, the bound (metrics units;
``solvers.highs.safe_dual_bound`` of the duals), load average. Time it pinned to one quiet
core (``taskset -c 1``); the cases of one window run in the same process, so their ratio
is the figure.

    taskset -c 1 python benchmarks/root_lp.py OUT/instances/40-jobs/seed-0/chronus-slo-w2.json:186 \\
        --case prefix:simplex --case count:ipm
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from _common import load_average

from sensaopt.exact.model.builder import ModelSpec, Strength, build, to_objective
from sensaopt.exact.model.data import build_data, hard_data
from sensaopt.exact.phases.allocation import LP_OPTIONS
from sensaopt.io import load_instance
from sensaopt.solvers import SolverParams, TimeBudget
from sensaopt.solvers.highs import HighsBackend, lp_bound

METHODS = {"simplex": {}, "ipm": LP_OPTIONS}
FORMS = {"prefix": False, "count": True}


def one(path: Path, horizon: int, form: str, method: str, limit: float) -> dict:
    """Build the window's relaxation in ``form`` and solve its LP by ``method``."""
    inst = load_instance(path)
    t = time.process_time()
    data = hard_data(build_data(inst, horizon, relaxed=True, refine=1), grow=True)
    be = HighsBackend()
    build(data, be, ModelSpec(strength=Strength(run_count=FORMS[form])))
    built = time.process_time() - t
    t = time.process_time()
    lp = lp_bound(be, TimeBudget(limit, time.perf_counter()), SolverParams(workers=1, extra=METHODS[method]))
    return {"window": path.stem, "rounds": horizon, "case": f"{form}:{method}", "columns": len(be.columns()),
            "build_cpu_s": round(built, 2), "lp_cpu_s": round(time.process_time() - t, 2),
            "bound": None if lp is None else round(to_objective(data, lp), 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("windows", nargs="+", help="WINDOW.json:HORIZON")
    ap.add_argument("--case", action="append", default=None, help="FORM:METHOD, repeat (default: prefix:simplex, count:ipm)")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds per LP")
    a = ap.parse_args(argv)
    cases = a.case or ["prefix:simplex", "count:ipm"]
    for c in cases:
        form, _, method = c.partition(":")
        if form not in FORMS or method not in METHODS:
            print(f"error: --case {c!r}: FORM in {sorted(FORMS)}, METHOD in {sorted(METHODS)}", file=sys.stderr)
            return 2
    jobs = [w.rpartition(":") for w in a.windows]
    for w, (path, _, h) in zip(a.windows, jobs):
        if not path or not h.isdigit() or not Path(path).is_file():
            print(f"error: {w!r}: give WINDOW.json:HORIZON (an existing file, a whole number of rounds)", file=sys.stderr)
            return 2
    print(f"load average {load_average()}")
    for path, _, h in jobs:
        for c in cases:
            row = one(Path(path), int(h), *c.split(":"), a.limit)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print(f"load average {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
