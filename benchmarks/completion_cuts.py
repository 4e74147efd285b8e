"""What the completion-time cuts (``sensaopt/exact/decompositions/cuts.py``) buy on the exact ladder.

Two measurements per instance (``instances/tiny-*``, ``instances/small-*``, and
generated 20 jobs × 2 nodes, seeds 1-5 = ``sensaopt generate --jobs 20 --nodes 2
--seed S``):

* ``--lp``: the LP relaxation bound (average-JCT objective, minutes) of the model
  within the SensaScale horizon ("full") and of the deadline-hard model ("hard"),
  before and after separating the cover cuts, with rounds, cuts and seconds.
* ``--hard``: the deadline-hard model alone (the phase-2 model once a zero-miss
  schedule is known; no start), HiGHS and CP-SAT, ``--time-limit`` s, ``--workers``,
  without and with the cuts (their separation counts in the time): status, bound and
  incumbent in minutes of average JCT, seconds.

    python benchmarks/completion_cuts.py --lp
    nice -n 5 python benchmarks/completion_cuts.py --hard --solvers highs,cpsat -o /tmp/cuts_hard.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sensaopt.exact.common import prepare  # noqa: E402
from sensaopt.exact.decompositions.cuts import separate, with_cuts  # noqa: E402
from sensaopt.exact.model.builder import Strength, to_objective  # noqa: E402
from sensaopt.exact.model.data import hard_data  # noqa: E402
from sensaopt.generate import GeneratorConfig, generate  # noqa: E402
from sensaopt.io import load_instance  # noqa: E402
from sensaopt.warm_start import policy_warm_start  # noqa: E402

LADDER = ("tiny-8gpu", "tiny-16gpu", "small-8gpu", "small-16gpu")
GEN_SEEDS = (1, 2, 3, 4, 5)


def instances(names: list[str]) -> dict:
    out = {}
    for name in names:
        if name.startswith("gen20x2-"):
            seed = int(name.split("-")[1])
            out[name] = generate(GeneratorConfig(jobs=20, nodes=2, seed=seed))
        else:
            out[name] = load_instance(ROOT / "instances" / f"{name}.json")
    return out


def _minutes(data, scaled: float | None) -> float | None:
    return None if scaled is None else round(to_objective(data, scaled), 3)


def lp_rows(name: str, inst, seconds: float) -> list[dict]:
    prep = prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst))
    rows = []
    for label, data in (("full", prep.data), ("hard", hard_data(prep.data))):
        sep = separate(data, Strength(), seconds)
        rows.append({"instance": name, "model": label, "lp_before": _minutes(data, sep.lp_before), "lp_after": _minutes(data, sep.lp_after),
                     "rounds": sep.rounds, "cuts": len(sep.cuts), "seconds": round(sep.seconds, 2), "stop": sep.stop})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def hard_rows(name: str, inst, solvers: list[str], time_limit: float, workers: int) -> list[dict]:
    from sensaopt.exact.cpsat import build_cpsat
    from sensaopt.exact.milp import build_highs
    from sensaopt.exact.outcome import exact_params
    from sensaopt.solvers import TimeBudget

    data = hard_data(prepare(inst, None, 2, True, 10_000, 300_000, policy_warm_start(inst)).data)
    rows = []
    for solver in solvers:
        for cuts in (False, True):
            budget = TimeBudget(time_limit, time.perf_counter())
            build_fn = build_cpsat if solver == "cpsat" else build_highs
            mb = (with_cuts(build_fn) if cuts else build_fn)(data, Strength(), budget)
            if solver == "cpsat":
                out = mb.backend.solve(budget, exact_params("cpsat", workers, 0))
            else:
                out = mb.backend.solve(budget, exact_params("highs", workers, 0))
            rows.append({"instance": name, "model": "hard", "solver": solver, "cuts": cuts, "status": out.status.value,
                         "bound": _minutes(data, out.bound), "incumbent": _minutes(data, out.objective),
                         "seconds": round(time.perf_counter() - budget.started, 1),
                         "cover_cuts": mb.vars.families.get("completion_cover", 0), "load": os.getloadavg()[0]})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lp", action="store_true")
    ap.add_argument("--hard", action="store_true")
    ap.add_argument("--instances", default=",".join([*LADDER, *(f"gen20x2-{s}" for s in GEN_SEEDS)]))
    ap.add_argument("--solvers", default="cpsat")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--lp-seconds", type=float, default=60.0)
    ap.add_argument("-o", "--output", default=None)
    a = ap.parse_args(argv)
    rows: list[dict] = []
    for name, inst in instances(a.instances.split(",")).items():
        if a.lp:
            rows += lp_rows(name, inst, a.lp_seconds)
        if a.hard:
            rows += hard_rows(name, inst, a.solvers.split(","), a.time_limit, a.workers)
    if a.output:
        Path(a.output).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
