"""What column generation and branch and price (``sensaopt/exact/decompositions/colgen.py``,
``branch_price.py``) buy on the exact ladder.

Instances: ``instances/<name>.json`` or ``genJxN-S`` = ``sensaopt generate --jobs J
--nodes N --seed S``.

* ``--root``: on the deadline-hard model (every open deadline met; the model of phase 2
  once a zero-miss schedule is known), the compact LP bound and the LP with the
  completion cover cuts (``cuts.separate``), against the Dantzig–Wolfe bound (column
  generation at the root until no column prices out), rounded up to the objective's
  granularity, all in minutes of average JCT, with iterations, columns and seconds.
* ``--solve``: ``solve_cpsat(inst, time_limit, workers, seed)`` in each ``--variants``
  (``cpsat``; ``cpsat+bp``: branch and price for the second half of the deadline-hard
  phase; ``cpsat+highs``: HiGHS for it, ``cooperate=True``): status, objective, bound,
  seconds, the 1-minute load average, and branch and price's nodes.

    python benchmarks/branch_price.py --root
    python benchmarks/branch_price.py --solve --variants cpsat+bp --time-limit 60
"""

from __future__ import annotations

import argparse
import json
import os
import time

from _common import REPO, write_record

from sensaopt.exact.common import prepare
from sensaopt.exact.decompositions.colgen import column_generation
from sensaopt.exact.decompositions.cuts import separate
from sensaopt.exact.model.builder import Strength, round_bound, to_objective
from sensaopt.exact.model.data import hard_data
from sensaopt.generate import GeneratorConfig, generate
from sensaopt.io import load_instance
from sensaopt.solve import solve_cpsat
from sensaopt.warm_start import policy_warm_start

DEFAULT = ("small-8gpu", "small-16gpu", *(f"gen20x2-{s}" for s in range(1, 6)), *(f"gen40x4-{s}" for s in range(1, 6)))


def instance(name: str):
    if name.startswith("gen"):
        size, seed = name[3:].split("-")
        jobs, nodes = size.split("x")
        return generate(GeneratorConfig(jobs=int(jobs), nodes=int(nodes), seed=int(seed)))
    return load_instance(REPO / "instances" / f"{name}.json")


def _min(data, scaled: float | None) -> float | None:
    return None if scaled is None else round(to_objective(data, scaled), 3)


def root_row(name: str, lp_seconds: float, cg_seconds: float) -> dict:
    inst = instance(name)
    data = hard_data(prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst)).data)
    sep = separate(data, Strength(), lp_seconds)
    cg = column_generation(data, cg_seconds)
    return {"instance": name, "lp": _min(data, None if sep.lp_before is None else round_bound(data, sep.lp_before)),
            "lp_cuts": _min(data, None if sep.lp_after is None else round_bound(data, sep.lp_after)),
            "dantzig_wolfe": _min(data, cg.bound), "stop": cg.stop, "iterations": cg.iterations, "columns": cg.columns,
            "cg_seconds": round(cg.seconds, 2), "load": round(os.getloadavg()[0], 2)}


def solve_row(name: str, variant: str, time_limit: float, workers: int, seed: int) -> dict:
    t0 = time.perf_counter()
    res = solve_cpsat(instance(name), time_limit=time_limit, workers=workers, seed=seed, branch_price="bp" in variant,
                      cooperate="highs" in variant)
    lex = res.json_params().get("lexicographic") or {}
    return {"instance": name, "variant": variant, "status": res.status.value, "objective": res.objective, "bound": res.bound,
            "seconds": round(time.perf_counter() - t0, 1), "load": round(os.getloadavg()[0], 2),
            "shortfall_zero": (lex.get("shortfall") or {}).get("zero_miss"), "branch_price": lex.get("branch_price")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", action="store_true")
    ap.add_argument("--solve", action="store_true")
    ap.add_argument("--instances", default=",".join(DEFAULT))
    ap.add_argument("--variants", default="cpsat,cpsat+bp")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lp-seconds", type=float, default=60.0)
    ap.add_argument("--cg-seconds", type=float, default=120.0)
    a = ap.parse_args(argv)
    rows: list[dict] = []
    for name in a.instances.split(","):
        if a.root:
            rows.append(root_row(name, a.lp_seconds, a.cg_seconds))
            print(json.dumps(rows[-1]), flush=True)
        if a.solve:
            for variant in a.variants.split(","):
                rows.append(solve_row(name, variant, a.time_limit, a.workers, a.seed))
                print(json.dumps(rows[-1]), flush=True)
    write_record("branch_price", {"rows": rows}, vars(a))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
