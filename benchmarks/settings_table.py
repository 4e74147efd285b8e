"""Does SensaScale's lead hold beyond the paper's settings? (issue 34 item 4)

One cell (the full Philly SLO trace on 8-GPU Synergy nodes, ``philly-8``) changed one
setting at a time (:data:`SETTINGS`): sensitive fraction 0.3 and 0.7, every change cost
x 2, 1-minute rounds on the loaded 2-day window, profile error 0.2, and the 12-core /
48 GB-per-GPU Alibaba node (``philly-8-alibaba``; trace durations at the node's own
share, as in ``experiment paper``). Per setting: SensaScale's default configuration and
every baseline of :data:`BASELINES` (no per-setting tuning), seeds 0-2; the best baseline
per setting is the one with the fewest mean violations, then the lowest mean JCT (the
rule of ``experiment paper``'s "best baseline"). Each run is a plain simulation
(``benchmarks/compare_policies.py``'s ``one``: every change cost is charged by the
simulator, alike for every policy).

Resumable: one JSON row per (setting, policy, seed) in ``OUT/rows.jsonl``; a rerun
skips what it has. ``OUT/settings.md`` (per setting: SensaScale, the best baseline,
violations and avg JCT with each seed's value, the relative change) and
``OUT/provenance.json`` are rewritten at the end.

    nice python benchmarks/settings_table.py --out results/settings-philly-slo-8 [--with-chronus] [-j 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import run_rows, stored_rows, write_provenance  # noqa: E402
from compare_policies import one  # noqa: E402

BASE = {"trace": "chronus-slo", "preset": "philly-8", "start": 0.0, "days": None, "sample": 1.0}
SETTINGS: dict[str, dict] = {
    "paper's cell (sensitive 0.5)": {},
    "sensitive fraction 0.3": {"sensitive_fraction": 0.3},
    "sensitive fraction 0.7": {"sensitive_fraction": 0.7},
    "change costs x 2": {"move_cost_scale": 2.0},
    "1-minute rounds, 2-day window": {"round_minutes": 1.0, "start": 5760.0, "days": 2.0},
    "profile error 0.2": {"profile_error": 0.2},
    "Alibaba node (12 cores, 48 GB per GPU)": {"preset": "philly-8-alibaba"},
}
"""Setting -> the workload options it changes (``sensaopt.config.WorkloadConfig`` fields)."""
OURS = "sensascale"
BASELINES = ("edf-tune-demote", "edf-demote", "edf-tune", "synergy-tune", "lst", "edf", "fifo")
"""The baselines run everywhere; ``--with-chronus`` adds Chronus (minutes per run at full scale)."""


def best_baseline(rows: list[dict], setting: str, policies: list[str]) -> str | None:
    """The baseline with the fewest mean violations, then the lowest mean JCT, in ``setting``."""
    scored = []
    for p in policies:
        sel = [r for r in rows if r["setting"] == setting and r["policy"] == p]
        if sel:
            scored.append((statistics.fmean(r["violations"] for r in sel), statistics.fmean(r["avg_jct"] for r in sel), p))
    return min(scored)[2] if scored else None


def _cell(sel: list[dict], key: str, nd: int) -> str:
    per = ", ".join(f"{r[key]:.{nd}f}" for r in sorted(sel, key=lambda r: r["seed"]))
    return f"{statistics.fmean(r[key] for r in sel):.{nd}f} ({per})"


def table(rows: list[dict], baselines: list[str]) -> str:
    out = ["| setting | SensaScale violations | best baseline | its violations | change | SensaScale avg JCT (min) | "
           "baseline avg JCT (min) | change |", "|" + " --- |" * 8]
    for name in SETTINGS:
        ours = [r for r in rows if r["setting"] == name and r["policy"] == OURS]
        best = best_baseline(rows, name, baselines)
        theirs = [r for r in rows if r["setting"] == name and r["policy"] == best]
        if not ours or not theirs:
            continue
        mv, bv = (statistics.fmean(r["violations"] for r in s) for s in (ours, theirs))
        mj, bj = (statistics.fmean(r["avg_jct"] for r in s) for s in (ours, theirs))
        dv = f"{100 * (mv - bv) / bv:+.1f} %" if bv else "–"
        out.append(f"| {name} | {_cell(ours, 'violations', 0)} | `{best}` | {_cell(theirs, 'violations', 0)} | {dv} | "
                   f"{_cell(ours, 'avg_jct', 1)} | {_cell(theirs, 'avg_jct', 1)} | {100 * (mj - bj) / bj:+.1f} % |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    from sensaopt.sweep.provenance import git_state, machine

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--with-chronus", action="store_true")
    ap.add_argument("--only", action="append", default=[], help="run only this setting (repeatable; default: all)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="processes")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    unknown = [s for s in a.only if s not in SETTINGS]
    if unknown:
        ap.error(f"--only: unknown setting {unknown[0]!r}; settings: {', '.join(SETTINGS)}")
    baselines = [*BASELINES, *(["chronus"] if a.with_chronus else [])]
    a.out.mkdir(parents=True, exist_ok=True)
    store = a.out / "rows.jsonl"
    have = stored_rows(store)
    done = {(r["setting"], r["policy"], r["seed"]) for r in have}
    start, git, mach = time.time(), git_state(), machine()
    tasks, meta = [], []
    for seed in a.seeds:
        for name, change in SETTINGS.items():
            if a.only and name not in a.only:
                continue
            for pol in (OURS, *baselines):
                if (name, pol, seed) not in done:
                    tasks.append((pol, {**BASE, **change, "seed": seed}, pol, {}))
                    meta.append({"setting": name, "policy": pol, "change": change, "commit": git.get("commit")})
    print(f"settings: {len(tasks)} runs to do, {len(done)} stored", flush=True)
    new = run_rows(one, tasks, meta, store, a.jobs, lambda i, n, row: print(
        f"[{i}/{n}] {row['setting']} / {row['policy']} seed {row['seed']}: {row['violations']} violations, "
        f"{row['avg_jct']:.1f} min, {row['simulate_s']:.0f} s", flush=True))
    if new is None:
        return 130
    (a.out / "settings.md").write_text(table(have + new, baselines))
    write_provenance(a.out, "settings_table.py", argv, {"settings": SETTINGS, "base": BASE, "seeds": a.seeds,
                                                        "baselines": baselines, "git": git, "machine": mach},
                     start, len(tasks), len(done))
    print(f"settings: {a.out / 'settings.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
