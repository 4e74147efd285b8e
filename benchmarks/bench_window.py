"""CPU seconds of one policy on a Philly SLO window, this code beside earlier commits,
in alternating runs (the machine is shared: each line carries the load average).

Each commit's ``sensaopt/`` is extracted with ``git archive`` and every run is a fresh
process (``PYTHONPATH`` = that tree), so the rounds interleave the trees in the same
minutes. The figure is ``time.process_time()`` around ``simulate`` (validation and
metrics included), ``--reps`` times per process.

    python benchmarks/bench_window.py --policy edf --days 3 --commit c011dd0 --commit 008aa5c --rounds 3
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(policy: str, days: float, reps: int) -> dict:
    from sensaopt.config import WorkloadConfig
    from sensaopt.simulator import simulate
    from sensaopt.traces.sources import workload_instance

    inst, _ = workload_instance(WorkloadConfig(trace="chronus-slo", preset="philly-8", seed=0, start=0.0, days=days))
    cpu = []
    for _ in range(reps):
        t = time.process_time()
        res = simulate(inst, policy)
        cpu.append(round(time.process_time() - t, 3))
    return {"jobs": len(inst.jobs), "cpu_s": cpu, "slo_violations": res.metrics.slo_violations}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policy", default="edf")
    ap.add_argument("--days", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3, help="runs per process")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds over the trees")
    ap.add_argument("--commit", action="append", default=[], help="an earlier commit to run beside this code (repeatable)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.policy, a.days, a.reps)))
        return 0
    from sensaopt.traces.paths import traces_dir

    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for c in a.commit:
            data = subprocess.run(["git", "archive", c, "sensaopt"], cwd=REPO, capture_output=True, check=True).stdout
            with tarfile.open(fileobj=io.BytesIO(data)) as tf:
                tf.extractall(Path(tmp) / c)
            trees[c] = str(Path(tmp) / c)
        trees["this"] = str(REPO)
        best: dict[str, float] = {}
        for rnd in range(a.rounds):
            for name, path in trees.items():
                load = os.getloadavg()
                env = dict(os.environ, PYTHONPATH=path, SENSAOPT_TRACES=str(traces_dir()))
                out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--policy", a.policy,
                                      "--days", str(a.days), "--reps", str(a.reps)], env=env, cwd=tmp,
                                     capture_output=True, text=True, check=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
                best[name] = min([best.get(name, float("inf"))] + row["cpu_s"])
                print(f"round {rnd} {name:10s} load {load[0]:.2f} {load[1]:.2f}  cpu_s {row['cpu_s']}  "
                      f"({row['jobs']} jobs, {row['slo_violations']} violations)", flush=True)
        print("min CPU s: " + ", ".join(f"{k} {v:.2f}" for k, v in best.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
