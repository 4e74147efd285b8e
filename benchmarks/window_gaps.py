"""Certified heuristic gaps on Philly SLO trace windows (issue 15, item 5).

Windows of ``--jobs`` consecutive jobs are cut by ``sensaopt instances from-trace``
(the command is run once; its files are kept in ``OUT/w<jobs>/``). Each window gets
ONE exact solve (``--exact``, ``--budget`` work units, ``--workers`` threads, seed 0)
and every ``--policies`` heuristic is compared with it part by part by
:func:`sensaopt.compare.compare` (the machinery of ``sensaopt gap``): proven or not,
extra misses, average-JCT gap in percent (only among equal misses and lost value) and
the bounds (lost deadline value, average JCT at the exact schedule's loss level).

The default budget is deterministic (``--budget work:N``, :mod:`sensaopt.solvers.budget`):
the same windows give the same table on a quiet and on a loaded machine; ``--time-limit``
is then only the safety net (default :data:`SAFETY_NET_S`), and a window it stops is
marked in the table ("safety net": not deterministic). ``--budget time`` restores the
wall-clock limit (``--time-limit``, default 30 s) of the earlier tables.

Resumable: each finished window is written at once as ``OUT/w<jobs>/results/<window>.json``
(atomic); a rerun skips those, so Ctrl-C keeps every finished window. ``--table`` (also
done after every run) writes ``OUT/window_gaps.md`` from all result files.

    nice -n 5 python benchmarks/window_gaps.py --jobs 20 --out benchmarks/results/window_gaps
    nice -n 5 python benchmarks/window_gaps.py --jobs 20 --budget time --time-limit 30 --out benchmarks/results/window_gaps
    python benchmarks/window_gaps.py --table --out benchmarks/results/window_gaps
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TRACE = "chronus-slo"  # the Philly SLO trace (Chronus artifact)
POLICIES = ("sensascale", "edf", "chronus")
DEFAULT_BUDGET = "work:10"  # work units per window (CP-SAT deterministic seconds; docs/reliability.md: wall time here)
SAFETY_NET_S = 600.0  # seconds: the wall-clock safety net under a work budget
WALL_CLOCK_S = 30.0  # seconds per window under --budget time


def window_dir(out: Path, jobs: int) -> Path:
    return out / f"w{jobs}"


def cut_command(jobs: int, count: int, first: int, folder: Path) -> list[str]:
    """The ``sensaopt instances from-trace`` call cutting the windows (default round
    length 10 min, load 1.15, at most 4 nodes of 8 GPUs: the command's defaults)."""
    return [sys.executable, "-m", "sensaopt", "instances", "from-trace", "--trace", TRACE, "-n", str(jobs), "--count", str(count),
            "--first", str(first), "--out-dir", str(folder)]


def window_files(folder: Path) -> list[Path]:
    """Window files in window order (``...-w<i>.json``)."""
    def index(p: Path) -> int:
        m = re.search(r"-w(\d+)$", p.stem)
        return int(m.group(1)) if m else 1 << 30
    return sorted(folder.glob("*.json"), key=lambda p: (index(p), p.name))


def ensure_windows(out: Path, jobs: int, count: int, first: int) -> list[Path]:
    folder = window_dir(out, jobs) / "instances"
    files = window_files(folder) if folder.is_dir() else []
    if len(files) < count:
        folder.mkdir(parents=True, exist_ok=True)
        cmd = cut_command(jobs, count, first, folder)
        print("cutting windows:", " ".join(cmd[1:]), flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)
        files = window_files(folder)
    return files[:count]


def _atomic_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    os.replace(tmp, path)


def _exact(inst: Any, exact: str, time_limit: float, workers: int, cooperate: bool, budget: str = DEFAULT_BUDGET) -> Any:
    """The exact solve: ``sensaopt gap``'s (:func:`sensaopt.cli.exact.exact_solve`;
    ``cooperate`` = its ``--cooperate``: the other backend continues the deadline-hard phase;
    ``budget``: its ``--budget``)."""
    from sensaopt.cli.exact import exact_solve

    return exact_solve(inst, exact, time_limit, workers, 0, True, cooperate, budget)


def solve_window(path: Path, exact: str, time_limit: float, workers: int, policies: tuple[str, ...], cooperate: bool = False,
                 budget: str = DEFAULT_BUDGET) -> dict:
    """One exact solve (``budget``: "work:N" or "time"; ``time_limit`` seconds: the limit,
    or the safety net under a work budget) and every policy's comparison with it (JSON-ready)."""
    from sensaopt.compare import compare
    from sensaopt.errors import SensaoptError
    from sensaopt.io import load_instance
    from sensaopt.simulator import simulate

    inst = load_instance(path)
    row: dict[str, Any] = {"window": path.stem, "jobs": len(inst.jobs), "nodes": inst.cluster.num_nodes, "gpus": inst.cluster.total_gpus,
                           "exact": exact + (("+highs" if exact == "cpsat" else "+cpsat") if cooperate else ""), "time_limit": time_limit, "workers": workers,
                           "budget": budget, "load_at_start": os.getloadavg()[0]}
    t0 = time.perf_counter()
    try:
        e = _exact(inst, exact, time_limit, workers, cooperate, budget)
    except SensaoptError as err:
        row.update(status="REFUSED", message=str(err), seconds=round(time.perf_counter() - t0, 2), policies={})
        return row
    lex = e.json_params().get("lexicographic")
    sf = lex.get("shortfall") if isinstance(lex, dict) else None
    row.update(status=e.status.value, seconds=round(e.runtime_s, 2), objective=e.objective, bound=e.bound,
               misses=e.metrics.slo_violations if e.metrics else None, avg_jct=e.metrics.avg_jct if e.metrics else None,
               horizon_proof=e.json_params().get("horizon_proof"), zero_miss=(sf or {}).get("zero_miss"),
               cover_cuts=e.json_params().get("model_size", {}).get("families", {}).get("completion_cover", 0), message=e.message,
               work_spent=e.params.get("work_spent"), safety_net=e.params.get("safety_net_fired"))
    row["policies"] = {}
    for pol in policies:
        h = simulate(inst, pol)
        row["policies"][pol] = compare(h, e, inst, label=pol, instance_label=path.stem).to_dict()
    return row


def run(out: Path, jobs: int, count: int, first: int, exact: str, time_limit: float, workers: int, policies: tuple[str, ...],
        cooperate: bool = False, budget: str = DEFAULT_BUDGET) -> None:
    files = ensure_windows(out, jobs, count, first)
    res = window_dir(out, jobs) / "results"
    res.mkdir(parents=True, exist_ok=True)
    for p in files:
        target = res / f"{p.stem}.json"
        if target.exists():
            continue
        row = solve_window(p, exact, time_limit, workers, policies, cooperate, budget)
        _atomic_json(target, row)
        pol = " ".join(f"{k}:+{v['extra_misses']}/{_pct(v['jct_gap_pct'])}" for k, v in row["policies"].items())
        print(f"{p.stem} ({jobs} jobs): {row['status']} {row['seconds']} s {_effort(row)}  {pol}", flush=True)


def _effort(r: dict) -> str:
    """What the window's solve used: its work units under a work budget (deterministic;
    "safety net" when the wall clock stopped it: not deterministic), else its seconds."""
    if r.get("work_spent") is None:
        return _num(r["seconds"])
    return f"{r['work_spent']:.2f} wu" + (" (safety net)" if r.get("safety_net") else "")


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f} %"


def _num(x: float | None, nd: int = 1) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def load_rows(out: Path) -> list[dict]:
    rows = []
    for folder in sorted(out.glob("w*/results")):
        rows += [json.loads(p.read_text()) for p in window_files(folder)]
    return rows


def _cell(c: dict | None) -> str:
    """extra misses / JCT gap % (to the bound)."""
    if not c:
        return "–"
    gap = _pct(c["jct_gap_pct"])
    to_b = c.get("jct_gap_to_bound_pct")
    return f"+{c['extra_misses']} / {gap}" + (f" (≤ {to_b:.1f} %)" if to_b is not None else "")


def table(rows: list[dict], policies: tuple[str, ...] = POLICIES) -> str:
    """Markdown: one line per window, then a summary per window size."""
    work = any(r.get("work_spent") is not None for r in rows)
    head = ["window", "jobs", "nodes", "exact", "s / work units" if work else "s", "exact misses", "exact JCT", "JCT bound", *policies]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        if r["status"] == "REFUSED":
            lines.append(f"| {r['window']} | {r['jobs']} | {r['nodes']} | refused (model too large) | {_effort(r)} | – | – | – |"
                         + " – |" * len(policies))
            continue
        first = next(iter(r["policies"].values()), {})
        proven = "**OPTIMAL**" if r["status"] == "OPTIMAL" else r["status"]
        cells = [r["window"], str(r["jobs"]), str(r["nodes"]), proven, _effort(r), str(r["misses"]), _num(r["avg_jct"], 2),
                 _num(first.get("jct_bound"), 2), *(_cell(r["policies"].get(p)) for p in policies)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", summary(rows, policies)]
    return "\n".join(lines) + "\n"


def _mean_max(xs: list[float]) -> str:
    return f"{sum(xs) / len(xs):.2f} % / {max(xs):.2f} % ({len(xs)} windows)" if xs else "–"


def summary(rows: list[dict], policies: tuple[str, ...]) -> str:
    head = ["jobs", "windows", "proven", "refused", "policy", "windows with extra misses", "extra misses",
            "mean / max JCT gap (equal misses)", "mean / max JCT gap to the bound (certified ≤)", "windows at the exact incumbent's JCT"]
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n in sorted({r["jobs"] for r in rows}):
        rs = [r for r in rows if r["jobs"] == n]
        solved = [r for r in rs if r["status"] != "REFUSED"]
        proven = sum(r["status"] == "OPTIMAL" for r in rs)
        for pol in policies:
            cs = [r["policies"][pol] for r in solved if pol in r["policies"]]
            extra = [c["extra_misses"] for c in cs if c["extra_misses"] is not None]
            gaps = [c["jct_gap_pct"] for c in cs if c["jct_gap_pct"] is not None]
            to_b = [c["jct_gap_to_bound_pct"] for c in cs if c.get("jct_gap_to_bound_pct") is not None]
            at = sum(1 for g in gaps if g <= 1e-9)
            cells = [n, len(rs), proven, len(rs) - len(solved), pol, sum(1 for x in extra if x > 0), sum(extra), _mean_max(gaps),
                     _mean_max(to_b), at]
            out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--first", type=int, default=3000, help="trace index of the first window's first job")
    ap.add_argument("--exact", default="cpsat")
    ap.add_argument("--budget", default=DEFAULT_BUDGET, help="work:N (deterministic, the default) or time (wall clock)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help=f"seconds: the safety net under a work budget (default {SAFETY_NET_S:g}), the limit under --budget time "
                         f"(default {WALL_CLOCK_S:g})")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--cooperate", action="store_true", help="CP-SAT, then HiGHS from its incumbent, in the deadline-hard phase")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "window_gaps")
    ap.add_argument("--table", action="store_true", help="only write the table from the result files")
    a = ap.parse_args(argv)
    from sensaopt.errors import SensaoptError
    from sensaopt.solvers.budget import parse_budget

    try:
        work = parse_budget(a.budget)
    except SensaoptError as e:
        ap.error(str(e))
    time_limit = a.time_limit if a.time_limit is not None else (WALL_CLOCK_S if work is None else SAFETY_NET_S)
    policies = tuple(a.policies.split(","))
    a.out.mkdir(parents=True, exist_ok=True)
    try:
        if not a.table:
            run(a.out, a.jobs, a.count, a.first, a.exact, time_limit, a.workers, policies, a.cooperate, a.budget)
    except KeyboardInterrupt:
        print("interrupted: finished windows are kept", file=sys.stderr)
    (a.out / "window_gaps.md").write_text(table(load_rows(a.out), policies))
    print(f"table: {a.out / 'window_gaps.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
