"""Certified heuristic gaps on Philly SLO trace windows (issue 15 item 5): now a thin wrapper
over ``sensaopt experiment gaps`` (issue 33 item 5; :mod:`sensaopt.sweep.gaps`), kept so that
the commands quoted in ``models/measurements.md`` still run.

It maps this script's options onto the command's: ``--count`` is ``--windows``, ``--out OUT``
is ``--out-dir OUT/w<jobs>``, ``--table`` is ``--report-only``; its defaults stay (Philly SLO,
first job 3000, 20 windows of 20 jobs, 1 thread, sensascale/edf/chronus; the deterministic
budget ``--budget work:10`` with a 600 s safety net as ``--time-limit``, or ``--budget time`` and
30 s of wall clock: ``--budget`` becomes ``--exact-option budget=...``) and the windows
are solved one at a time in this process (``--serial``, as before) unless ``--scheduler`` or
``--processes`` is given. Every other option (``--exact``, ``--workers``, ``--cooperate``,
``--policies``, ...) goes to the command as it is. The store is the command's
(``OUT/w<jobs>/runs/``): result files of the former script (``OUT/w<jobs>/results/``) are not read.

    nice -n 5 python benchmarks/window_gaps.py --jobs 20 --time-limit 60 --cooperate --out benchmarks/results/window_gaps
    # the same as
    nice -n 5 sensaopt experiment gaps --trace chronus-slo --jobs 20 --windows 20 --first 3000 --time-limit 60 --cooperate \\
        --out-dir benchmarks/results/window_gaps/w20 --serial
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULTS = {"--trace": "chronus-slo", "--first": "3000", "--workers": "1", "--policies": "sensascale,edf,chronus"}
DEFAULT_BUDGET = "work:10"  # deterministic work units per window (sensaopt.solvers.budget)
SAFETY_NET_S = 600.0  # seconds: the wall-clock safety net under a work budget
WALL_CLOCK_S = 30.0  # seconds per window under --budget time


def command(argv: list[str]) -> list[str]:
    """The ``sensaopt`` arguments this script's ``argv`` stands for."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "window_gaps")
    ap.add_argument("--table", action="store_true", help="only tabulate the stored windows (--report-only)")
    ap.add_argument("--budget", default=DEFAULT_BUDGET, help="work:N (deterministic, the default) or time (wall clock)")
    a, rest = ap.parse_known_args(argv)
    given = {x.split("=", 1)[0] for x in rest if x.startswith("--")}
    args = ["experiment", "gaps", "--jobs", str(a.jobs), "--windows", str(a.count), "--out-dir", str(a.out / f"w{a.jobs}")]
    args += [x for k, v in DEFAULTS.items() if k not in given for x in (k, v)]
    args += ["--report-only"] if a.table else []
    args += [] if given & {"--scheduler", "--processes", "--serial"} else ["--serial"]
    if "--time-limit" not in given:
        args += ["--time-limit", f"{WALL_CLOCK_S if a.budget == 'time' else SAFETY_NET_S:g}"]
    if a.budget != "time":
        args += ["--exact-option", f"budget={a.budget}"]
    return args + rest


def ensure_windows(out: Path, jobs: int, count: int, first: int) -> list[Path]:
    """The instance files of ``count`` windows of ``jobs`` Philly SLO jobs from trace index
    ``first``, as this script's command keeps them (under ``out/w<jobs>/instances/``;
    written if missing): the windows of ``benchmarks/gap_reference.py``."""
    from sensaopt.sweep.gaps import GapSettings, WindowCut, plan, save_instances

    s = GapSettings(sizes=(jobs,), windows=count, cut=WindowCut(trace=DEFAULTS["--trace"], first=first))
    return save_instances(out / f"w{jobs}" / "instances", plan(s), field="--out")


def main(argv: list[str] | None = None) -> int:
    from sensaopt.cli import main as sensaopt

    return sensaopt(command(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    raise SystemExit(main())
