"""Exact results at a fixed seed and worker count, for behaviour checks of a refactoring.

Every tiny instance and a few seeded 6-job instances, solved by CP-SAT, HiGHS and CBC
(1 worker, seed 0), lexicographic (default) and weighted: status, objective, bound.
Proven solves only are reproducible bit for bit (a time limit stops a search anywhere),
so the instances are small enough to be proven well within the limit.

    PYTHONPATH=. python benchmarks/exact_fixed.py -o /tmp/exact_fixed.json
    python benchmarks/exact_fixed.py --against /tmp/exact_fixed.json   # exit 1 on any difference
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output")
    ap.add_argument("--against")
    a = ap.parse_args(argv)
    now = run()
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
