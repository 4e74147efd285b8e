"""Exact results at a fixed seed and worker count, for behaviour checks of a refactoring.

Every tiny instance and a few seeded 6-job instances, solved by CP-SAT, HiGHS and CBC
(1 worker, seed 0), lexicographic (default) and weighted: status, objective, bound.
Proven solves only are reproducible bit for bit (a time limit stops a search anywhere),
so the instances are small enough to be proven well within the limit.

``--data``: no solve, the models themselves (deterministic, whatever the load): for the
same instances and the medium ones, the model data of six grids — the inner grid at
refine 0, 1 and 2 (with the SensaScale warm start's points), the outer grid at refine 1,
2 and 4 — hashed (every job's options, patterns, pairs, progress units per change kind,
the data's scales), and the dominance check at refine 1, 2 and 4.

    PYTHONPATH=. python benchmarks/exact_fixed.py -o /tmp/exact_fixed.json
    python benchmarks/exact_fixed.py --against /tmp/exact_fixed.json   # exit 1 on any difference
    python benchmarks/exact_fixed.py --data -o /tmp/model_data.json    # then --data --against it
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def cases():
    from sensaopt.generate import GeneratorConfig, generate
    from sensaopt.io import load_instance

    out = [(n, load_instance(n)) for n in ("tiny-8gpu", "tiny-16gpu")]
    for seed in (1, 2, 3):
        out.append((f"gen-6j-s{seed}", generate(GeneratorConfig(jobs=6, nodes=1, load=2.0, seed=seed, work_max=120))))
    return out


GRIDS = {"inner0": {"inner_refine": 0}, "inner1": {"inner_refine": 1}, "inner2": {"inner_refine": 2},
         "outer1": {"relaxed": True, "refine": 1}, "outer2": {"relaxed": True, "refine": 2}, "outer4": {"relaxed": True, "refine": 4}}
SKIP = {"tiny-8gpu/cbc/lex", "tiny-8gpu/cbc/weighted"}  # CBC needs about the whole minute there: not reproducible


def run() -> dict:
    import sensaopt

    res = {}
    for name, inst in cases():
        for solver in ("cpsat", "highs", "cbc"):
            for mode in ("lex", "weighted"):
                key = f"{name}/{solver}/{mode}"
                if key in SKIP:
                    continue
                r = sensaopt.solve(inst, solver=solver, workers=1, seed=0, time_limit=60, lexicographic=(mode == "lex"))
                res[key] = {"status": r.status.value, "objective": r.objective, "bound": r.bound}
                print(f"{key:32s} {r.status.value:10s} {r.objective} {r.bound}  ({r.runtime_s:.1f} s)", file=sys.stderr, flush=True)
    return res


def run_data() -> dict:
    import hashlib

    from sensaopt.exact.model.data import build_data
    from sensaopt.io import load_instance
    from sensaopt.simulator import simulate

    try:
        from sensaopt.allocations import grids_dominate, schedule_points
    except ImportError:  # a tree before sensaopt.allocations (issue 36)
        from sensaopt.exact.model.data import extra_options_from as schedule_points
        from sensaopt.exact.phases.allocation import grid_dominates as grids_dominate
    out: dict = {}
    for name, inst in cases() + [(n, load_instance(n)) for n in ("medium-8gpu", "medium-16gpu")]:
        extra = schedule_points(simulate(inst, "sensascale").schedule)
        for key, kw in GRIDS.items():
            d = build_data(inst, 40, **kw, **({} if kw.get("relaxed") else {"extra_options": extra}))
            rec = [(jd.id, [(o.cpu, o.mem, o.speed) for o in jd.options], [p.parts for p in jd.patterns], jd.pairs, jd.full,
                    sorted((c.value, v) for c, v in jd.kept.items())) for jd in d.jobs] + [(d.mem_scale, d.cpu_scale, d.obj_scale)]
            out[f"{name}/{key}"] = (f"{hashlib.sha256(repr(rec).encode()).hexdigest()[:16]} options "
                                    f"{sum(len(j.options) for j in d.jobs)} pairs {sum(len(j.pairs) for j in d.jobs)}")
        out[f"{name}/dominates"] = [grids_dominate(inst, r, 1) for r in (1, 2, 4)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output")
    ap.add_argument("--against")
    ap.add_argument("--data", action="store_true", help="the models' data instead of solves (module doc)")
    a = ap.parse_args(argv)
    now = run_data() if a.data else run()
    if a.output:
        Path(a.output).write_text(json.dumps(now, indent=1))
    if a.against:
        before = json.loads(Path(a.against).read_text())
        bad = [k for k in before if before[k] != now.get(k)]
        for k in bad:
            print(f"DIFFERENT {k}: {before[k]} -> {now.get(k)}")
        print(f"{len(before) - len(bad)}/{len(before)} identical")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
