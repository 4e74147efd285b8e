"""Same decisions check of the Chronus lease solve: every lease problem of a run,
solved by the current path and by the lease model of a baseline commit.

Runs ``chronus`` on a window of a Chronus-Philly trace (the fidelity setup of
``chronus_fidelity.py``) and records every lease MILP the policy solves (its jobs,
capacity and sign, and the plans the current code chose). Then each recorded problem
is solved again by the baseline's ``lease_model.py`` (``git show COMMIT:...``, the
model written through the backend interface, HiGHS via ``run_highs``) and the two
answers are compared:

* ``same``: identical plans (option and slots of every job);
* ``tie``: other plans, equal objective (within 1e-9) and both valid;
* ``differ``: anything else (exit status 1).

The CPU seconds of build + solve + read of both paths are summed (the solver runs in a
thread of this process, so process time counts it; robust to a loaded machine).

    python benchmarks/check_chronus_lease.py --trace SLO --days 3
    python benchmarks/check_chronus_lease.py --trace MIX2 --days 3 --save /tmp/mix2.pkl
    python benchmarks/check_chronus_lease.py --load /tmp/mix2.pkl      # re-check, no simulation
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from chronus_fidelity import read_trace

from sensaopt.instance import Cluster, Instance, NodeType
from sensaopt.policies.chronus import ChronusConfig, ChronusPolicy, lease_step
from sensaopt.policies.chronus import lease_model as lm
from sensaopt.policies.chronus.selection import check_plans, objective_value
from sensaopt.simulator import simulate
from sensaopt.solvers import TimeBudget

REPO = Path(__file__).resolve().parents[1]
BASELINE = "e64bef0"  # the last commit with the lease model written per variable through the backend interface
Problem = dict[str, Any]  # jobs (key, r, l, options), capacity, sign, plans, objective


def record(trace: str, days: float, start_day: float = 0.0) -> tuple[list[Problem], dict]:
    """Every lease problem of one chronus run (and the run's figures)."""
    jobs = read_trace(trace, days, start_day=start_day)
    inst = Instance(f"chronus-philly-{trace}-{days:g}d", Cluster((NodeType("philly", 8, 128, 256.0, 120),)), 5.0, tuple(jobs))
    pol = ChronusPolicy(ChronusConfig())
    problems: list[Problem] = []
    inner = lease_step.solve_selection

    def recording(ljobs, capacity, sign=1.0, **kw):
        sel = inner(ljobs, capacity, sign, **kw)
        problems.append({"jobs": [(j.key, j.r, j.l, j.options) for j in ljobs], "capacity": list(capacity), "sign": sign,
                         "plans": dict(sel.plans), "objective": sel.objective, "fallback": sel.fallback})
        return sel

    lease_step.solve_selection = recording  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        res = simulate(inst, pol)
        wall = time.perf_counter() - t0
    finally:
        lease_step.solve_selection = inner  # type: ignore[assignment]
    return problems, {"jobs": len(jobs), "wall_s": round(wall, 1), "slo_violations": res.metrics.slo_violations,
                      "lease_solves": pol.stats.lease_solves}


def baseline_module(commit: str) -> ModuleType:
    """``lease_model.py`` of ``commit`` as a module (it imports today's ``sensaopt.exact``)."""
    src = subprocess.run(["git", "show", f"{commit}:sensaopt/policies/chronus/lease_model.py"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_lease_model.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("baseline_lease_model", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["baseline_lease_model"] = mod
    spec.loader.exec_module(mod)
    return mod


def _horizon_cap(jobs: list, capacity: list[int]) -> list[int]:
    horizon = max(m for j in jobs for m, _ in j.options)
    return list(capacity[:horizon]) + [0] * max(0, horizon - len(capacity))


def solve_with(mod: ModuleType, jobs: list, capacity: list[int], sign: float) -> tuple[dict, float, str]:
    """Plans, CPU seconds and status of ``mod``'s lease path (HiGHS, 5 s, seed 0)."""
    c0 = time.process_time()
    cap = _horizon_cap(jobs, capacity)
    model = mod.build_lease_model(mod.new_backend("highs"), jobs, cap, sign)
    out = mod.run_lease_model(model, "highs", TimeBudget.start(5.0), 1, 0)
    plans = mod.plans_of(model, out) if out.value is not None else {}
    return plans, time.process_time() - c0, out.status.name


def compare(problems: list[Problem], commit: str) -> dict:
    base = baseline_module(commit)
    counts = {"same": 0, "tie": 0, "differ": 0, "fallback_skipped": 0}
    cpu = {"baseline": 0.0, "current": 0.0}
    repeats = 0  # the re-solve repeats the run's own plans (not when the run's solve hit its time limit)
    examples = []
    for i, p in enumerate(problems):
        if p["fallback"]:
            counts["fallback_skipped"] += 1
            continue
        cur_jobs = [lm.LeaseJob(*j) for j in p["jobs"]]
        cap = _horizon_cap(cur_jobs, p["capacity"])
        b_plans, b_cpu, b_st = solve_with(base, [base.LeaseJob(*j) for j in p["jobs"]], p["capacity"], p["sign"])
        c_plans, c_cpu, _ = solve_with(lm, cur_jobs, p["capacity"], p["sign"])
        cpu["baseline"] += b_cpu
        cpu["current"] += c_cpu
        repeats += c_plans == p["plans"]
        b_obj = objective_value(cur_jobs, b_plans, cap, p["sign"])
        verdict = _verdict(cur_jobs, cap, p["sign"], b_plans, b_obj, c_plans)
        counts[verdict] += 1
        if verdict == "differ" and len(examples) < 5:
            examples.append({"problem": i, "baseline_status": b_st, "baseline_objective": b_obj,
                             "current_objective": objective_value(cur_jobs, c_plans, cap, p["sign"])})
    return {"baseline_commit": commit, "problems": len(problems), "baseline_vs_current": counts,
            "current_repeats_run": repeats,
            "cpu_s": {k: round(x, 2) for k, x in cpu.items()}, "examples": examples}


def _verdict(jobs: list, cap: list[int], sign: float, plans: dict, obj: float, recorded: dict) -> str:
    if plans == recorded:
        return "same"
    try:
        check_plans(jobs, plans, cap)
    except AssertionError:
        return "differ"
    if len(plans) != len(jobs) or abs(obj - objective_value(jobs, recorded, cap, sign)) > 1e-9:
        return "differ"
    return "tie"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default="SLO", choices=["SLO", "MIX1", "MIX2"])
    ap.add_argument("--days", type=float, default=3.0)
    ap.add_argument("--start-day", type=float, default=0.0)
    ap.add_argument("--baseline", default=BASELINE, help="commit whose lease_model.py is the reference")
    ap.add_argument("--save", default=None, help="pickle the recorded problems here")
    ap.add_argument("--load", default=None, help="use recorded problems from this pickle instead of simulating")
    a = ap.parse_args(argv)
    if a.load:
        with open(a.load, "rb") as f:
            problems, run = pickle.load(f)
    else:
        problems, run = record(a.trace, a.days, a.start_day)
        if a.save:
            with open(a.save, "wb") as f:
                pickle.dump((problems, run), f)
    out = {"run": run, **compare(problems, a.baseline)}
    print(json.dumps(out, indent=1, default=str))
    return 1 if out["baseline_vs_current"]["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
