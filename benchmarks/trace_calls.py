"""Follow ``sensaopt.solve(inst, solver=...)`` call by call and count what it touches.

Counts, over the calls of sensaopt functions made on the calling thread (``sys.setprofile``;
after one untraced warm-up solve, so that imports are not counted): the modules touched,
the functions called, the distinct caller-module -> callee-module edges, and
*re-entries*: calls into a module that is already on the call stack below the caller's
module (A -> B -> A: control climbing back into a module it had handed over, such as
a solver entry point called back through a closure), counted per call and per distinct
(module, function) entered that way.

    PYTHONPATH=. python benchmarks/trace_calls.py tiny-8gpu --solver cpsat --workers 1 --time-limit 30
"""

from __future__ import annotations

import argparse
import collections
import sys


def trace(instance: str, solver: str, **params) -> dict:
    import sensaopt

    inst = sensaopt.load_instance(instance)
    sensaopt.solve(inst, solver=solver, **params)  # warm-up: imports and caches
    calls: collections.Counter = collections.Counter()
    edges: set[tuple[str, str]] = set()
    back: collections.Counter = collections.Counter()

    def prof(frame, event, arg):  # noqa: ARG001
        if event != "call":
            return
        mod = frame.f_globals.get("__name__", "")
        if not mod.startswith("sensaopt"):
            return
        calls[mod, frame.f_code.co_name] += 1
        chain = []
        f = frame.f_back
        while f is not None:
            m = f.f_globals.get("__name__", "")
            if m.startswith("sensaopt") and (not chain or chain[-1] != m):
                chain.append(m)
            f = f.f_back
        if chain and chain[0] != mod:
            edges.add((chain[0], mod))
            if mod in chain[1:]:
                back[mod, frame.f_code.co_name, chain[0]] += 1

    sys.setprofile(prof)
    try:
        res = sensaopt.solve(inst, solver=solver, **params)
    finally:
        sys.setprofile(None)
    mods = collections.Counter()
    for (m, _f), n in calls.items():
        mods[m] += n
    return {"status": res.status.value, "objective": res.objective, "bound": res.bound,
            "modules": len(mods), "functions": len(calls), "calls": sum(calls.values()), "edges": len(edges),
            "re_entries": sum(back.values()), "re_entry_sites": len(back),
            "calls_per_module": dict(mods.most_common()), "re_entry_list": {" <- ".join((f"{m}.{fn}", c)): n for (m, fn, c), n in back.most_common()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("instance", nargs="?", default="tiny-8gpu")
    ap.add_argument("--solver", default="cpsat")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--verbose", action="store_true", help="every module and how often it was entered")
    a = ap.parse_args(argv)
    out = trace(a.instance, a.solver, workers=a.workers, seed=a.seed, time_limit=a.time_limit)
    print(f"{a.instance} {a.solver}: {out['status']} objective {out['objective']} bound {out['bound']}")
    print(f"modules touched {out['modules']}, functions {out['functions']}, calls {out['calls']}, "
          f"module edges {out['edges']}, re-entries {out['re_entries']} (at {out['re_entry_sites']} functions)")
    if a.verbose:
        for m, n in out["calls_per_module"].items():
            print(f"  {n:6d}  {m}")
        print("re-entries (module.function <- calling module):")
        for k, n in out["re_entry_list"].items():
            print(f"  {n:6d}  {k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
