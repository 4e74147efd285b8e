"""Follow ``sensaopt.solve(inst, solver=...)`` call by call and count what it touches.

Counts, over the calls of sensaopt functions made on the calling thread (``sys.setprofile``;
after one untraced warm-up solve, so that imports are not counted): the modules touched,
the functions called, the distinct caller-module -> callee-module edges, and
*re-entries*: calls into a module that is already on the call stack below the caller's
module (A -> B -> A: control climbing back into a module it had handed over, such as
a solver entry point called back through a closure), counted per call and per distinct
(module, function) entered that way.

Following one function (``--follow``, default the exact pipeline's ``solve_exact``), it
also counts how often control *enters* a group of modules (``--modules``, default the
allocations package; a name stands for its submodules too, and counts as one module in
the flat sequence): a stretch begins at a call into the group from a frame with no
group frame below it, so the group's own calls to lower modules (a profile's speed)
stay inside the stretch. Over the first ``--first`` calls (400) of that function it
gives the flat sequence too: module stays (runs of calls in one module), returns to a
module already left, and the group's runs.

    PYTHONPATH=. python benchmarks/trace_calls.py tiny-8gpu --solver cpsat --workers 1 --time-limit 30
"""

from __future__ import annotations

import argparse
import collections
import sys

FOLLOW = "sensaopt.exact.pipeline.solve_exact"
GROUP = ("sensaopt.allocations",)


class Follower:
    """The calls made while ``follow`` (``module.function``) runs: the modules of its first
    ``first`` calls and the entries into ``group`` from outside it."""

    def __init__(self, follow: str, group: tuple[str, ...], first: int) -> None:
        self.follow, self.group, self.first = follow, group, first
        self.frame = None  # the followed function's frame while it runs
        self.seq: list[str] = []
        self.stretches: collections.Counter = collections.Counter()  # by entering caller and function entered

    def see(self, frame, event: str, mod: str) -> None:
        """One profiler event of a sensaopt frame (``mod`` its module)."""
        if event == "return" and frame is self.frame:
            self.frame = None
        if event != "call":
            return
        if self.frame is None and f"{mod}.{frame.f_code.co_name}" == self.follow:
            self.frame = frame
        if self.frame is None:
            return
        if len(self.seq) < self.first:
            self.seq.append(next((g for g in self.group if in_group(mod, (g,))), mod))
        if in_group(mod, self.group) and not any(in_group(m, self.group) for m in _modules_below(frame)):
            self.stretches[f"{frame.f_back.f_globals.get('__name__', '')} -> {mod}.{frame.f_code.co_name}"] += 1

    def report(self) -> dict:
        """Entries into the group, and the flat sequence: stays (runs of calls in one
        module), distinct modules, returns to a module already left, the group's stays."""
        seq = self.seq
        runs = [m for k, m in enumerate(seq) if k == 0 or seq[k - 1] != m]
        return {"stretches": sum(self.stretches.values()), "stretch_list": dict(self.stretches.most_common()),
                "first_calls": {"calls": len(seq), "stays": len(runs), "modules": len(set(seq)),
                                "returns": len(runs) - len(set(runs)), "group_runs": sum(1 for m in runs if m in self.group)}}


def in_group(mod: str, group: tuple[str, ...]) -> bool:
    """Whether module ``mod`` is one of ``group`` or below one of them (a package's submodule)."""
    return any(mod == g or mod.startswith(g + ".") for g in group)


def _modules_below(frame) -> list[str]:
    """The sensaopt modules on the stack below ``frame``, nearest first, each run once."""
    chain: list[str] = []
    f = frame.f_back
    while f is not None:
        m = f.f_globals.get("__name__", "")
        if m.startswith("sensaopt") and (not chain or chain[-1] != m):
            chain.append(m)
        f = f.f_back
    return chain


def trace(instance: str, solver: str, follow: str = FOLLOW, group: tuple[str, ...] = GROUP, first: int = 400,
          **params) -> dict:
    import sensaopt

    inst = sensaopt.load_instance(instance)
    sensaopt.solve(inst, solver=solver, **params)  # warm-up: imports and caches
    calls: collections.Counter = collections.Counter()
    edges: set[tuple[str, str]] = set()
    back: collections.Counter = collections.Counter()
    follower = Follower(follow, group, first)

    def prof(frame, event, arg):  # noqa: ARG001
        mod = frame.f_globals.get("__name__", "")
        if not mod.startswith("sensaopt"):
            return
        follower.see(frame, event, mod)
        if event != "call":
            return
        calls[mod, frame.f_code.co_name] += 1
        chain = _modules_below(frame)
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
            **follower.report(), "calls_per_module": dict(mods.most_common()),
            "re_entry_list": {" <- ".join((f"{m}.{fn}", c)): n for (m, fn, c), n in back.most_common()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("instance", nargs="?", default="tiny-8gpu")
    ap.add_argument("--solver", default="cpsat")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--verbose", action="store_true", help="every module and how often it was entered")
    ap.add_argument("--follow", default=FOLLOW, help="module.function whose entries into --modules are counted")
    ap.add_argument("--modules", default=",".join(GROUP), help="the group of modules (comma-separated)")
    ap.add_argument("--first", type=int, default=400, help="calls of --follow whose flat module sequence is counted")
    a = ap.parse_args(argv)
    group = tuple(a.modules.split(","))
    out = trace(a.instance, a.solver, a.follow, group, a.first, workers=a.workers, seed=a.seed, time_limit=a.time_limit)
    print(f"{a.instance} {a.solver}: {out['status']} objective {out['objective']} bound {out['bound']}")
    print(f"modules touched {out['modules']}, functions {out['functions']}, calls {out['calls']}, "
          f"module edges {out['edges']}, re-entries {out['re_entries']} (at {out['re_entry_sites']} functions)")
    fc = out["first_calls"]
    print(f"{a.follow}: entered {', '.join(group)} {out['stretches']} times; its first {fc['calls']} calls: "
          f"{fc['stays']} module stays in {fc['modules']} modules, {fc['returns']} returns to a module already left, "
          f"{fc['group_runs']} stays in the group")
    for k, n in out["stretch_list"].items():
        print(f"  {n:6d}  {k}")
    if a.verbose:
        for m, n in out["calls_per_module"].items():
            print(f"  {n:6d}  {m}")
        print("re-entries (module.function <- calling module):")
        for k, n in out["re_entry_list"].items():
            print(f"  {n:6d}  {k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
