"""Why the deadline-loss bound stays at zero on the small rung: probes of phase 1.

Phase 1 of the lexicographic solve minimizes the lost deadline value. On the small
instances no backend proves a single miss necessary. These probes locate the
difficulty with CP-SAT (``--workers`` threads, ``--time-limit`` s per probe):

* ``prefix``: keep only the jobs whose (first) deadline is at most slot ``L`` (for each
  ``L`` given), require every deadline met, horizon ``L + 1``: feasible / infeasible /
  undecided. A proven infeasible prefix would be a proof that a miss is necessary.
* ``pooled``: the whole instance on one node with the cluster's total GPUs, cores and
  memory (a relaxation: any schedule maps to it with no more restarts), minimizing the
  number of missed deadlines.
* ``no-overhead``: the real cluster without restart overheads, minimizing misses.

    python benchmarks/deadline_probe.py instances/small-8gpu.json --prefix 11,17,23 --pooled --no-overhead
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ortools.sat.python import cp_model  # noqa: E402

from sensaopt.exact.common import prepare  # noqa: E402
from sensaopt.exact.cpsat import build_cpsat  # noqa: E402
from sensaopt.exact.model.builder import Strength  # noqa: E402
from sensaopt.exact.model.data import build_data  # noqa: E402
from sensaopt.instance import Cluster, NodeType, Overheads  # noqa: E402
from sensaopt.io import load_instance  # noqa: E402
from sensaopt.warm_start import policy_warm_start  # noqa: E402


def solve(model, time_limit, workers, seed=0):
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = time_limit
    s.parameters.num_workers = workers
    s.parameters.random_seed = seed
    t0 = time.perf_counter()
    st = s.solve(model)
    return s, s.status_name(st), time.perf_counter() - t0


def min_misses(data, time_limit, workers):
    mb = build_cpsat(data, Strength())
    be, v = mb.backend, mb.vars
    met = [m for _, m in v.met.decisions()]
    be.model.minimize(sum(1 - m for m in met))
    s, name, wall = solve(be.model, time_limit, workers)
    fixed = sum(1 for key in v.met if v.met.fixed(key) == 0)
    ok = name in ("OPTIMAL", "FEASIBLE")
    return f"{name}: misses {fixed + s.objective_value if ok else '-'} (bound {fixed + s.best_objective_bound if ok else '-'}), {wall:.1f} s, x vars {len(v.x)}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("instance")
    ap.add_argument("--prefix", default="", help="comma-separated deadline slots L")
    ap.add_argument("--pooled", action="store_true")
    ap.add_argument("--no-overhead", action="store_true")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    inst = load_instance(a.instance)
    data0 = prepare(inst, None, 2, False, 10_000, 10**7, policy_warm_start(inst)).data
    print(f"{inst.name}: {len(inst.jobs)} jobs, horizon {data0.H} slots")
    for L in [int(x) for x in a.prefix.split(",") if x]:
        data = build_data(inst, L + 1)
        keep = [jd for jd in data.jobs if jd.deadlines and jd.deadlines[0][0] <= L]
        for k, jd in enumerate(keep):
            jd.k = k
        data.jobs = keep
        mb = build_cpsat(data, Strength())
        be, v = mb.backend, mb.vars
        be.model.clear_objective()  # a pure feasibility question
        for _, m in v.met.decisions():
            be.model.add(m == 1)
        _s, name, wall = solve(be.model, a.time_limit, a.workers)
        verdict = {"OPTIMAL": "all met: feasible", "FEASIBLE": "all met: feasible", "INFEASIBLE": "a miss is necessary"}.get(name, "undecided")
        print(f"prefix L={L}: {len(keep)} jobs ({', '.join(jd.id for jd in keep)}): {verdict} ({name}, {wall:.1f} s)", flush=True)
    if a.pooled:
        cl = inst.cluster
        pool = NodeType("pool", cl.total_gpus, cl.total_cpus, sum(n.mem_gb for n in cl.nodes), 1)
        pinst = replace(inst, cluster=Cluster((pool,)))
        print("pooled relaxation:", min_misses(build_data(pinst, data0.H), a.time_limit, a.workers), flush=True)
    if a.no_overhead:
        ninst = replace(inst, overheads=Overheads().scaled(0.0))
        print("no change costs (restart, migration, resize):", min_misses(build_data(ninst, data0.H), a.time_limit, a.workers), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
