"""Ruin and recreate with and without its cost cut, on the same windows, from the same start
(``sensaopt/exact/decompositions/recreate.py``, ``_recreate``'s ``room``; ``models/measurements.md``,
session 35).

For each instance file it captures price and branch's input in the gap command's solve (as
``recreate_probe.py`` does; ``--time-limit`` seconds, long enough for the solve to reach it),
runs column generation and the restricted master once, then ruin and recreate for
``--moves`` moves (no stall) with the cut and without it (every re-inserted job priced to the
end, the search before session 35), ``--repeats`` times each, alternating. Prints, per window,
whether the two searches ended identical (cost, counts, every column: they must) and the CPU
seconds of each (min over repeats) with their ratio. CPU seconds: run it alone all the same,
and give the load (recorded).

    python benchmarks/recreate_cut.py RUN/instances/40-jobs/seed-0/chronus-slo-w3.json --moves 1000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _common import load_average, write_record
from recreate_probe import capture

from sensaopt.exact.decompositions import recreate
from sensaopt.exact.phases import price_branch
from sensaopt.solvers import TimeBudget


def _search(master, chosen, prices, moves: int, seed: int, cut: bool) -> tuple[float, tuple]:
    """One search of ``moves`` moves, with the cut or without it: CPU seconds and its outcome."""
    real = recreate._recreate

    def full(master, cells, order, left, prices, room=None, floor=None):
        return real(master, cells, order, left, prices)

    if not cut:
        recreate._recreate = full
    try:
        t0 = time.process_time()
        out = recreate.ruin_and_recreate(master, list(chosen), time.monotonic() + 86_400, seed, prices, max_moves=moves, stall=0)
        seconds = time.process_time() - t0
    finally:
        recreate._recreate = real
    return seconds, (out.cost, out.moves, out.improving, out.last_improving, tuple(out.columns))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("instances", nargs="+", type=Path, help="instance JSON files (one window each)")
    ap.add_argument("--moves", type=int, default=1000, help="moves per search (default 1000)")
    ap.add_argument("--repeats", type=int, default=2, help="searches per variant, alternating (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="ruin and recreate's seed (default 0)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="the solve's time limit while capturing, s (default 120)")
    a = ap.parse_args()
    rows = []
    for path in a.instances:
        got = capture(path, a.time_limit, 0)
        if got is None:
            print(f"{path.stem}: the solve did not reach price and branch")
            continue
        first = price_branch.master_and_columns(got.data, got.start, TimeBudget(got.seconds, time.perf_counter()))
        if len(first.chosen) != got.data.n:
            print(f"{path.stem}: no column per job to start from")
            continue
        seconds: dict[bool, list[float]] = {True: [], False: []}
        outcomes = set()
        for _ in range(a.repeats):
            for cut in (True, False):
                s, out = _search(first.master, first.chosen, first.prices, a.moves, a.seed, cut)
                seconds[cut].append(s)
                outcomes.add(out)
        identical = len(outcomes) == 1
        with_cut, without = min(seconds[True]), min(seconds[False])
        row = {"window": path.stem, "moves": a.moves, "identical": identical, "cut_cpu_s": round(with_cut, 3),
               "full_cpu_s": round(without, 3), "ratio": round(without / with_cut, 3), "load": load_average()}
        rows.append(row)
        print(f"{path.stem}: {a.moves} moves, identical {identical}; CPU s with the cut {with_cut:.2f}, without "
              f"{without:.2f}: {without / with_cut:.2f}x; load {row['load']}", flush=True)
    write_record("recreate_cut", {"searches": rows},
                 {"moves": a.moves, "repeats": a.repeats, "seed": a.seed, "time_limit": a.time_limit,
                  "instances": [str(p) for p in a.instances]})


if __name__ == "__main__":
    main()
