"""Ruin and recreate's ruins compared on the same windows, from the same start
(``sensaopt/exact/decompositions/recreate.py``; ``models/measurements.md``, session 34).

For each instance file (e.g. an ``experiment gaps`` out-dir's
``instances/40-jobs/seed-0/*.json``) it runs the committed gap command's exact solve
(cpsat+highs, ``colgen_share=0.8``, ``lp_first``, ``start_policy=best``; ``--time-limit``
seconds, one thread) until price and branch starts, and keeps price and branch's input:
the deadline-hard model and the start schedule, with the seconds left to it. Then, once per
window, column generation and the restricted master as price and branch runs them
(``price_branch.master_and_columns`` with those seconds), and from that master's columns, for every ``--shares`` value of
``time_share`` (the share of moves that ruin by time, the solve's ``recreate_time_share``,
0.5 by default; 0: the related-jobs ruin alone, the default until session 34) and every
``--seeds`` seed: ruin and recreate for ``--seconds`` wall-clock seconds, with the default
stall (``--stall``: another), stopping at the master LP's bound. So every search of a window
starts from the same columns and the same prices; only the ruin and the seed differ.

Prints one line per search: the objective (minutes of average JCT), the model's bound
(the master LP's, rounded up to the objective's step, when column generation converged),
the moves, the lowering moves and the last one. Time-limited: the machine's load moves
the figures, so run it alone, one search at a time, and give the load (recorded).

    python benchmarks/recreate_probe.py RUN/instances/40-jobs/seed-0/chronus-slo-w3.json --seconds 18 --seeds 0,1
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from _common import load_average, write_record

import sensaopt.exact.phases.deadline_hard as deadline_hard
from sensaopt.exact.decompositions import recreate
from sensaopt.exact.decompositions.colgen import schedule_of_columns
from sensaopt.exact.model.objective import to_objective
from sensaopt.exact.phases import price_branch
from sensaopt.exact.phases.lns import score
from sensaopt.io import load_instance
from sensaopt.solve import solve
from sensaopt.solvers import TimeBudget

GAP_OPTIONS = {"colgen_share": 0.8, "lp_first": True, "start_policy": "best", "cooperate": True, "lexicographic": True}


class _Captured(Exception):
    """Raised by the capture hook to end the solve once price and branch's input is kept."""

    def __init__(self, data, start, seconds: float) -> None:
        super().__init__("captured")
        self.data, self.start, self.seconds = data, start, seconds


def capture(path: Path, time_limit: float, seed: int) -> _Captured | None:
    """Price and branch's input (model data, start schedule, seconds left) in the gap
    command's solve of ``path``; None when the solve never reaches price and branch."""
    real = deadline_hard.price_and_branch

    def hook(data, start, budget, *args, **kwargs):
        raise _Captured(data, start, budget.left())

    deadline_hard.price_and_branch = hook
    try:
        solve(load_instance(path), "cpsat", time_limit=time_limit, workers=1, seed=seed, **GAP_OPTIONS)
    except _Captured as got:
        return got
    finally:
        deadline_hard.price_and_branch = real
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("instances", nargs="+", type=Path, help="instance JSON files (one window each)")
    ap.add_argument("--seconds", type=float, default=18.0, help="wall-clock seconds per search (default 18)")
    ap.add_argument("--seeds", default="0,1", help="ruin and recreate seeds, comma-separated (default 0,1)")
    ap.add_argument("--shares", default="0,0.5", help="time_share values, comma-separated (default 0,0.5)")
    ap.add_argument("--stall", type=int, default=None, help="idle moves that stop a search (0: never; default: 10 per pair of jobs)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="the gap command's time limit per window, s (default 60)")
    ap.add_argument("--solver-seed", type=int, default=0, help="the solve's seed up to price and branch (default 0)")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    shares = [float(s) for s in a.shares.split(",")]
    rows = []
    for path in a.instances:
        got = capture(path, a.time_limit, a.solver_seed)
        if got is None:
            print(f"{path.stem}: the solve did not reach price and branch")
            continue
        first = price_branch.master_and_columns(got.data, got.start, TimeBudget(got.seconds, time.perf_counter()),
                                                seed=a.solver_seed)
        master, prices, chosen, floor = first.master, first.prices, first.chosen, first.floor
        start_cost = sum(c.cost for c in chosen)
        for share in shares:
            for seed in seeds:
                out = recreate.ruin_and_recreate(master, list(chosen), time.monotonic() + a.seconds, seed, prices,
                                                 enough=lambda cost, floor=floor: cost <= floor, time_share=share,
                                                 stall=a.stall)
                obj = score(got.data, schedule_of_columns(got.data, out.columns))
                row = {"window": path.stem, "share": share, "seed": seed, "start_cost": start_cost, "cost": out.cost,
                       "bound": None if floor == -math.inf else to_objective(got.data, floor), "objective": obj, "moves": out.moves,
                       "improving": out.improving, "last_improving": out.last_improving, "seconds": round(out.seconds, 2),
                       "load": load_average()}
                rows.append(row)
                print(f"{path.stem} share {share} seed {seed}: objective {obj:.3f} (cost {start_cost} -> {out.cost}, "
                      f"bound {row['bound']}), moves {out.moves}, lower {out.improving}, last {out.last_improving}, "
                      f"{out.seconds:.1f} s, load {row['load']}", flush=True)
    write_record("recreate_probe", {"searches": rows},
                 {"seconds": a.seconds, "stall": a.stall, "seeds": seeds, "shares": shares, "time_limit": a.time_limit,
                  "solver_seed": a.solver_seed, "instances": [str(p) for p in a.instances]})


if __name__ == "__main__":
    main()
