"""Behaviour check of a refactoring: schedules and metrics before == after.

Extracts ``sensaopt/`` of a baseline commit with ``git archive`` into a temporary
folder, runs the same simulations there (in a child process) and here, and compares
every schedule segment by segment and every metric. Cases:

* every committed instance (``instances/*.json``) under every heuristic policy
  (``--policies``), with profile error 0 and 0.2;
* seeded ``sensaopt.generate`` instances of different sizes and loads;
* (when the traces are available) a 1-day window of the Philly SLO trace on
  ``philly-8`` with 5-minute rounds — the sweep path (``make_instance``).

``--save FILE`` keeps the baseline's output and ``--against FILE`` reuses it, so that
the baseline runs once per session. Exit status 1 when anything differs.

    python benchmarks/check_equivalence.py --baseline c7da510 --save /tmp/base.json
    python benchmarks/check_equivalence.py --against /tmp/base.json
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = "c7da510"  # the last commit before the contracts refactoring (issue 12)
POLICIES = ("sensascale", "edf", "fifo", "chronus", "synergy-tune")

GENERATED = [  # (jobs, nodes, load, seed, profile_error, round_minutes)
    (60, 2, 1.3, 1, 0.0, 10.0),
    (150, 4, 1.5, 2, 0.0, 10.0),
    (300, 6, 1.2, 3, 0.2, 10.0),
    (400, 8, 2.0, 4, 0.0, 5.0),
]


def _cases(trace_days: float):
    """(name, instance, profile error) of every case; runs with whatever ``sensaopt``
    is first on ``sys.path``."""
    from sensaopt.generate import GeneratorConfig, generate
    from sensaopt.io import load_instance

    out = []
    for p in sorted((REPO / "instances").glob("*.json")):
        inst = load_instance(str(p))
        out.append((p.stem, inst, 0.0))
        out.append((f"{p.stem}-err0.2", inst, 0.2))
    for j, n, ld, s, e, r in GENERATED:
        out.append((f"gen-{j}j-{n}n-l{ld}-s{s}-e{e}", generate(GeneratorConfig(jobs=j, nodes=n, load=ld, seed=s, round_minutes=r)), e))
    if trace_days > 0:
        try:
            from sensaopt.traces.sources import make_instance

            inst, _ = make_instance("chronus-slo", "philly-8", days=trace_days, seed=0, round_minutes=5.0)
            out.append((f"philly-slo-{trace_days:g}day", inst, 0.0))
        except Exception as e:  # traces absent
            print(f"trace case skipped: {e}", file=sys.stderr)
    return out


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def run_cases(policies, trace_days: float) -> dict:
    from sensaopt.simulator import simulate

    out = {}
    for name, inst, err in _cases(trace_days):
        for pol in policies:
            t0 = time.perf_counter()
            res = simulate(inst, pol, profile_error=err, seed=7)
            out[f"{name}/{pol}"] = {
                "objective": res.objective,
                "metrics": {k: _clean(v) for k, v in res.metrics.to_dict().items()},
                "segments": [[s.job, s.start, s.rounds, [[p.node, p.gpus, p.cpus, p.mem_gb] for p in s.placements]]
                             for s in res.schedule.segments],
                "seconds": time.perf_counter() - t0,
            }
            print(f"  {name}/{pol}: {out[f'{name}/{pol}']['seconds']:.1f} s", file=sys.stderr, flush=True)
    return out


def baseline_tree(commit: str, dest: Path) -> Path:
    data = subprocess.run(["git", "archive", commit, "sensaopt"], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest)
    return dest


def run_baseline(commit: str, policies, trace_days: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        baseline_tree(commit, Path(tmp))
        from sensaopt.traces.paths import traces_dir

        env = dict(os.environ, PYTHONPATH=tmp, SENSAOPT_TRACES=str(traces_dir()))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--policies", ",".join(policies),
               "--trace-days", str(trace_days)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=tmp)
        if proc.returncode != 0:
            raise SystemExit(2)
        return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(before: dict, after: dict) -> int:
    bad = 0
    for name, b in before.items():
        c = after.get(name)
        if c is None:
            print(f"{name:44s} MISSING after")
            bad += 1
            continue
        diffs = []
        if b["segments"] != c["segments"]:
            diffs.append("segments")
        common = set(b["metrics"]) & set(c["metrics"])
        diffs += [k for k in sorted(common) if b["metrics"][k] != c["metrics"][k]]
        extra = sorted(set(c["metrics"]) - set(b["metrics"]))
        bad += bool(diffs)
        verdict = "identical" if not diffs else "DIFFERENT: " + ", ".join(diffs)
        print(f"{name:44s} segments {len(b['segments']):6d}  {verdict}"
              f"{'  (new metrics: ' + ', '.join(extra) + ')' if extra else ''}  {b['seconds']:.1f} s -> {c['seconds']:.1f} s")
    print(f"{len(before) - bad}/{len(before)} runs identical (schedules and every shared metric)")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default=BASELINE, help="commit to compare against")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--trace-days", type=float, default=1.0, help="days of the Philly SLO trace (0: none)")
    ap.add_argument("--save", help="write the baseline's output to this JSON file")
    ap.add_argument("--against", help="compare against a saved baseline output instead of running it")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    policies = [p for p in a.policies.split(",") if p]
    if a.child:
        import sensaopt

        print(f"baseline sensaopt from {sensaopt.__file__}", file=sys.stderr)
        print(json.dumps(run_cases(policies, a.trace_days)))
        return 0
    if a.against:
        before = json.loads(Path(a.against).read_text())
    else:
        before = run_baseline(a.baseline, policies, a.trace_days)
        if a.save:
            Path(a.save).write_text(json.dumps(before))
            print(f"baseline output saved to {a.save}", file=sys.stderr)
    after = run_cases(policies, a.trace_days)
    return compare(before, after)


if __name__ == "__main__":
    raise SystemExit(main())
