"""The road from the paper's SensaScale to the default, one knob at a time, both ways (issue 34 item 3).

The knobs are the fields whose defaults differ between ``SensaScalePaperConfig``
(``sensascale-paper``: what the paper describes) and ``SensaScaleConfig`` (the project
default), read from the two dataclasses, in :data:`ORDER`. Two tables on one trace cell
(default: the full Philly SLO trace on 120 x 8-GPU Synergy nodes, half the jobs
sensitive, seeds 0-2):

* **forward**: row 0 is ``sensascale-paper``; row k turns the k-th knob to the default's
  value on top of rows 1..k-1; the last row is the default's configuration;
* **reverse**: from the default, each knob set back to the paper's value alone.

Each row: violations, avg JCT, avg queueing (minutes), migrations / restarts / resizes
per job, means over the seeds (and each seed's violations), plus the step of the paper
the knob replaces or adds (:data:`STEP`). Every run is a plain simulation
(``benchmarks/compare_policies.py``'s ``one``: the simulator charges every change cost).

Resumable: one JSON row per (configuration, seed) in ``OUT/rows.jsonl``; a rerun skips
the rows it has. ``OUT/road.md`` and ``OUT/provenance.json`` (commit, arguments,
versions, machine, load, wall time) are rewritten at the end.

    nice python benchmarks/road.py --out results/road-philly-slo-8 [--seeds 0 1 2] [-j 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import run_rows, stored_rows, write_provenance  # noqa: E402
from compare_policies import one  # noqa: E402

from sensaopt.policies.sensascale.config import SensaScaleConfig, SensaScalePaperConfig  # noqa: E402

ORDER = ("deadline_order", "lst_allocation", "urgent_first", "adjust", "stay_put", "laxity_guard", "fill_spare",
         "repack_limit", "pair_hysteresis", "pairing_window")
"""The forward road's order: the ordering first (the issue's list), then the additions."""

STEP = {
    "deadline_order": "step 2 (order): the paper's strict least laxity -> EDF order of the deadline tier",
    "lst_allocation": "step 2 (order): the LST at the optimal demand -> at the allocation the job will likely get",
    "urgent_first": "step 2 (order): the urgent group (LST within a round) first -> no urgent group",
    "adjust": "step 5 (deadline-aware adjustment) -> off",
    "stay_put": "added (step 4, placement): running jobs keep their node and allocation unless a change pays",
    "laxity_guard": "step 2 (order) repaired: least laxity kept where the EDF order would preempt a running job",
    "fill_spare": "added (after step 5): free CPU / memory given to the node's jobs up to their optimal demand",
    "repack_limit": "added (step 4, placement): defragmentation moves for a unit that fits nowhere",
    "pair_hysteresis": "added (step 3, pairing): re-pairing pays the move it causes",
    "pairing_window": "step 3 (pairing) narrowed: candidates up to 1.0 x the cluster's GPUs, not 1.5 x",
}
METRICS = ("violations", "avg_jct", "avg_queueing", "migrations_per_job", "restarts_per_job", "resizes_per_job")


def knobs() -> dict[str, tuple[object, object]]:
    """Every field whose default differs: name -> (paper's value, default's value), in :data:`ORDER`."""
    paper, default = SensaScalePaperConfig(), SensaScaleConfig()
    diff = {f.name: (getattr(paper, f.name), getattr(default, f.name)) for f in dataclasses.fields(SensaScaleConfig)
            if getattr(paper, f.name) != getattr(default, f.name)}
    unknown = set(diff) - set(ORDER)
    if unknown:
        raise SystemExit(f"road.py: knobs {sorted(unknown)} differ between the paper and the default but are not in ORDER")
    return {k: diff[k] for k in ORDER if k in diff}


def _text(knob: dict[str, object]) -> str:
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in knob.items())


def roads() -> list[tuple[str, str, str, dict]]:
    """(table, row label, knob, policy config) of every row: forward on ``sensascale-paper``, reverse on ``sensascale``."""
    diff = knobs()
    rows: list[tuple[str, str, str, dict]] = [("forward", "sensascale-paper", "", {})]
    on: dict[str, object] = {}
    for k, (_, new) in diff.items():
        on[k] = new
        rows.append(("forward", f"+ {k}={new}", k, dict(on)))
    rows.append(("reverse", "sensascale (default)", "", {}))
    for k, (old, _) in diff.items():
        rows.append(("reverse", f"- {k}={old}", k, {k: old}))
    return rows


def _policy(table: str) -> str:
    return "sensascale-paper" if table == "forward" else "sensascale"


def table(rows: list[dict], seeds: list[int]) -> str:
    out = []
    for name, title in (("forward", "From the paper's SensaScale to the default, one knob at a time (cumulative)"),
                        ("reverse", "From the default, each knob set back to the paper's value alone")):
        out += [f"### {title}", "", "| row | violations (per seed) | avg JCT (min) | queueing (min) | migrations / job | "
                "restarts / job | resizes / job | paper step |", "|" + " --- |" * 8]
        for tab, label, knob, _ in roads():
            if tab != name:
                continue
            sel = sorted((r for r in rows if r["road"] == tab and r["label"] == label), key=lambda r: r["seed"])
            if not sel:
                continue
            m = {k: statistics.fmean(r[k] for r in sel) for k in METRICS}
            per = ", ".join(str(r["violations"]) for r in sel)
            partial = "" if len(sel) == len(seeds) else f" ({len(sel)} of {len(seeds)} seeds)"
            out.append(f"| `{label}`{partial} | {m['violations']:.1f} ({per}) | {m['avg_jct']:.1f} | {m['avg_queueing']:.1f} | "
                       f"{m['migrations_per_job']:.2f} | {m['restarts_per_job']:.2f} | {m['resizes_per_job']:.2f} | "
                       f"{STEP.get(knob, '')} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from sensaopt.sweep.provenance import git_state, machine

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default="chronus-slo")
    ap.add_argument("--preset", default="philly-8")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("-j", "--jobs", type=int, default=1, help="processes")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    store = a.out / "rows.jsonl"
    have = stored_rows(store)
    done = {(r["road"], r["label"], r["seed"]) for r in have}
    start, git, mach = time.time(), git_state(), machine()
    tasks, meta = [], []
    for seed in a.seeds:
        for tab, label, knob, cfg in roads():
            if (tab, label, seed) in done:
                continue
            w = {"trace": a.trace, "preset": a.preset, "seed": seed, "start": 0.0, "days": None, "sample": 1.0}
            tasks.append((f"{_policy(tab)}:{_text(cfg)}", w, _policy(tab), cfg))
            meta.append({"road": tab, "label": label, "knob": knob, "policy": _policy(tab), "config": cfg, "commit": git.get("commit")})
    print(f"road: {len(tasks)} runs to do, {len(done)} stored", flush=True)
    new = run_rows(one, tasks, meta, store, a.jobs, lambda i, n, row: print(
        f"[{i}/{n}] {row['road']} {row['label']} seed {row['seed']}: {row['violations']} violations, "
        f"{row['avg_jct']:.1f} min, {row['simulate_s']:.0f} s", flush=True))
    if new is None:
        return 130
    (a.out / "road.md").write_text(table(have + new, a.seeds))
    write_provenance(a.out, "road.py", argv, {"trace": a.trace, "preset": a.preset, "seeds": a.seeds,
                                              "knobs": {k: list(map(str, v)) for k, v in knobs().items()}, "git": git,
                                              "machine": mach}, start, len(tasks), len(done))
    print(f"road: {a.out / 'road.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
