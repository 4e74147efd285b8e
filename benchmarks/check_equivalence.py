"""Behaviour check of the performance work: schedules before == after.

Extracts ``sensaopt/`` of a baseline commit (default: 49d3a04, the last commit
before the optimisation) with ``git archive`` into a temporary folder, runs the
same simulations there (in a child process) and here, and compares the schedules
segment by segment. Instances: several seeded ``sensaopt.generate`` instances of
different sizes and loads, with and without profile error, and (when the traces
are available) the first ``--trace-jobs`` jobs of the Philly SLO trace.
Exit status 1 when any schedule differs.

    python benchmarks/check_equivalence.py [--baseline COMMIT] [--policy sensascale]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import io
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = "49d3a04"

CASES = [  # (jobs, nodes, load, seed, profile_error, round_minutes)
    (60, 2, 1.3, 1, 0.0, 10.0),
    (150, 4, 1.5, 2, 0.0, 10.0),
    (300, 6, 1.2, 3, 0.2, 10.0),
    (400, 8, 2.0, 4, 0.0, 5.0),
    (800, 16, 1.0, 5, 0.1, 10.0),
    (1500, 24, 1.4, 6, 0.0, 10.0),
]


def run_cases(policy: str, trace_jobs: int, pairing_method: str | None) -> dict:
    """Schedules (as lists) of every case, keyed by case name. Runs with whatever
    ``sensaopt`` is first on ``sys.path``."""
    from sensaopt.generate import GeneratorConfig, generate
    from sensaopt.simulator import simulate

    cfg = {"pairing_method": pairing_method} if (pairing_method and policy == "sensascale") else None
    out = {}
    insts = [(f"gen-{j}j-{n}n-l{l}-s{s}-e{e}", generate(GeneratorConfig(jobs=j, nodes=n, load=l, seed=s, round_minutes=r)), e) for j, n, l, s, e, r in CASES]
    if trace_jobs:
        try:
            from sensaopt.traces.chronus import load_chronus
            from sensaopt.traces.paths import CHRONUS_TRACES, data_file
            from sensaopt.traces.presets import preset_cluster

            insts.append((f"philly-slo-first{trace_jobs}", load_chronus(data_file(CHRONUS_TRACES["chronus-slo"]), preset_cluster("philly-8"), limit=trace_jobs), 0.0))
        except Exception as e:  # traces absent or loader missing in this checkout
            print(f"trace case skipped: {e}", file=sys.stderr)
    for name, inst, err in insts:
        res = simulate(inst, policy, profile_error=err, seed=7, policy_config=cfg)
        out[name] = {
            "objective": res.objective,
            "segments": [[s.job, s.start, s.rounds, [[p.node, p.gpus, p.cpus, p.mem_gb] for p in s.placements]] for s in res.schedule.segments],
        }
    return out


def baseline_tree(commit: str, dest: Path) -> Path:
    data = subprocess.run(["git", "archive", commit, "sensaopt"], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest)
    return dest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--policy", default="sensascale")
    ap.add_argument("--trace-jobs", type=int, default=3000)
    ap.add_argument("--pairing-method", default=None, help="pairing method for the current code (default: the config default)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        import sensaopt

        print(f"baseline sensaopt from {sensaopt.__file__}", file=sys.stderr)
        print(json.dumps(run_cases(a.policy, a.trace_jobs, None)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        baseline_tree(a.baseline, Path(tmp))
        from sensaopt.traces.paths import traces_dir

        env = dict(os.environ, PYTHONPATH=tmp, SENSAOPT_TRACES=str(traces_dir()))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--policy", a.policy, "--trace-jobs", str(a.trace_jobs)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 2
        print(proc.stderr.strip(), file=sys.stderr)
        before = json.loads(proc.stdout.strip().splitlines()[-1])
    after = run_cases(a.policy, a.trace_jobs, a.pairing_method)
    bad = 0
    for name in before:
        b, c = before[name], after.get(name)
        same = c is not None and b["segments"] == c["segments"] and b["objective"] == c["objective"]
        bad += not same
        print(f"{name:36s} segments {len(b['segments']):6d}  {'identical' if same else 'DIFFERENT'}  objective {b['objective']:.4f} -> {c['objective'] if c else None}")
    print(f"{len(before) - bad}/{len(before)} schedules identical to {a.baseline}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
