"""Pricing's compiled label search against the pure-Python search it replaced, on every call of
real solves (``sensaopt/exact/decompositions/label_search.py``; ``models/measurements.md``,
session 36).

For each instance file it runs the gap command's exact solve (cpsat+highs, ``colgen_share=0.8``,
``lp_first``, ``start_policy=best``, cooperation; ``--time-limit`` seconds, one thread) with every
pricing call (column generation, price and branch, ruin and recreate) made twice: by the
compiled search, whose answer the solve uses, and by the pure-Python pricer of commit
``--reference`` (its ``pricing.py``, read with ``git show``), given the same prices, rules and
cutoff. Prints, per window, the calls, how many answers differ (total, column, completion slot
and cost: none may) and the CPU seconds of each side with their ratio. The solve itself is
time-limited and shares the CPU with the reference, so its own outcome is not a figure here;
run it alone all the same, and give the load (recorded).

    python benchmarks/pricing_kernel.py RUN/instances/40-jobs/seed-0/chronus-slo-w3.json --time-limit 60
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import REPO, load_average, write_record

from sensaopt.exact.decompositions import pricing
from sensaopt.io import load_instance
from sensaopt.solve import solve

GAP_OPTIONS = {"colgen_share": 0.8, "lp_first": True, "start_policy": "best", "cooperate": True, "lexicographic": True}
REFERENCE = "2cbb8f2"  # the last commit whose pricer searched in pure Python


def reference_module(commit: str):
    """The ``pricing`` module of ``commit``, imported under another name."""
    text = subprocess.run(["git", "show", f"{commit}:sensaopt/exact/decompositions/pricing.py"], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "reference_pricing.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("reference_pricing", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_pricing"] = module
    spec.loader.exec_module(module)
    return module


def _answer(got) -> tuple:
    total, col = got
    return float(total), None if col is None else (col.runs, col.done, col.cost)


def checked_solve(path: Path, ref, time_limit: float, seed: int) -> dict:
    """The solve of ``path`` with every pricing call checked against ``ref``: counts and CPU seconds."""
    tally = {"calls": 0, "differ": 0, "kernel_cpu_s": 0.0, "reference_cpu_s": 0.0}
    real = pricing.JobPricer.price
    pricers: dict[int, tuple] = {}  # id of a compiled pricer: (it, kept alive so that its id is not reused; its reference twin)

    def price(self, slot_price, rule=pricing.NO_RULE, cutoff=float("inf"), banned=None):
        t0 = time.process_time()
        got = real(self, slot_price, rule, cutoff, banned)
        tally["kernel_cpu_s"] += time.process_time() - t0
        if id(self) not in pricers:
            pricers[id(self)] = (self, ref.JobPricer.of(self.data, self.jd))
        other = pricers[id(self)][1]
        other.grouped = self.grouped
        first = self.data.slots(self.jd).start
        cells = set(rule.banned) | ({(first + int(i), int(b)) for i, b in zip(*np.nonzero(banned))} if banned is not None else set())
        table = np.asarray(slot_price, dtype=float).tolist()
        t0 = time.process_time()
        want = other.price(table, ref.JobRule(rule.lo, rule.hi, frozenset(cells), rule.forced), cutoff)
        tally["reference_cpu_s"] += time.process_time() - t0
        tally["calls"] += 1
        tally["differ"] += _answer(got) != _answer(want)
        return got

    pricing.JobPricer.price = price
    try:
        solve(load_instance(path), "cpsat", time_limit=time_limit, workers=1, seed=seed, **GAP_OPTIONS)
    finally:
        pricing.JobPricer.price = real
    return tally


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("instances", nargs="+", type=Path, help="instance JSON files (one window each)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="each solve's time limit, s (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="the solve's seed (default 0)")
    ap.add_argument("--reference", default=REFERENCE, help=f"the commit of the reference pricer (default {REFERENCE})")
    a = ap.parse_args()
    ref = reference_module(a.reference)
    rows = []
    for path in a.instances:
        tally = checked_solve(path, ref, a.time_limit, a.seed)
        ratio = tally["reference_cpu_s"] / max(tally["kernel_cpu_s"], 1e-9)
        row = {"window": path.stem, **{k: round(v, 3) if isinstance(v, float) else v for k, v in tally.items()},
               "ratio": round(ratio, 2), "load": load_average()}
        rows.append(row)
        print(f"{path.stem}: {tally['calls']} calls, {tally['differ']} differ; CPU s compiled {tally['kernel_cpu_s']:.2f}, "
              f"pure Python {tally['reference_cpu_s']:.2f}: {ratio:.2f}x; load {row['load']}", flush=True)
    write_record("pricing_kernel", {"solves": rows},
                 {"time_limit": a.time_limit, "seed": a.seed, "reference": a.reference, "instances": [str(p) for p in a.instances]})


if __name__ == "__main__":
    main()
