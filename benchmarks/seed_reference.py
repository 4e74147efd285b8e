"""Where the gap of each window lives, read across solver seeds (issue 33 item 1).

An ``sensaopt experiment gaps`` out-dir run with ``--solver-seeds N`` solves every window
once per solver seed, with the same time limit and the same certified bound (the bound
does not use the solver seed). Per window this prints, from its ``windows.csv`` alone
(no solve is run):

* ``proven``: the solver seeds whose solve proved the window (k of N);
* ``best``: the best exact objective any seed reached (metrics units: 1e5 × lost deadline
  value + average JCT in minutes), and on how many seeds;
* ``bound``: the highest certified bound of the window's solves (valid over every
  schedule the validator accepts);
* ``granules``: best − bound in steps of one job finishing one round earlier
  (round minutes ÷ jobs of average JCT); only when best and bound lose the same deadline
  value (``exact_objective − exact_avg_jct`` against ``certified_bound − jct_bound``);
* the reading: ``proven`` on every seed; ``primal`` when the worst seed's incumbent is
  above the best one (a seed's incumbent was not optimal: some solves missed a schedule
  another found), ``closed`` when some seed's schedule meets the bound (the optimum is
  known); ``open`` when every seed ends at the same incumbent above the bound (primal or
  dual, undecided).

    python benchmarks/seed_reference.py results/gaps-philly-slo-20 [--markdown]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def granule(out: Path, jobs: int) -> float | None:
    """Minutes of average JCT for one job one round earlier: the cut's round minutes ÷
    ``jobs`` (None when the provenance does not give the round)."""
    try:
        cut = json.loads((out / "provenance.json").read_text())["settings"]["cut"]
        return float(cut["round_minutes"]) / jobs
    except (OSError, KeyError, TypeError, ValueError):
        return None


def _number(text: str | None) -> float | None:
    """A CSV cell as a float (None: empty or nan)."""
    try:
        v = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if v != v else v


def _granules(best: dict, bound: dict, g: float | None) -> float | None:
    """(best's average JCT − the bound's JCT part) ÷ ``g`` when both lose the same deadline
    value (the objective less its average JCT: best's ``exact_objective − exact_avg_jct``, the
    bound's ``certified_bound − jct_bound``); None when either part is unknown or they differ."""
    obj, avg = _number(best.get("exact_objective")), _number(best.get("exact_avg_jct"))
    cb, jb = _number(bound.get("certified_bound")), _number(bound.get("jct_bound"))
    if g is None or None in (obj, avg, cb, jb) or abs((obj - avg) - (cb - jb)) > 1e-6:  # type: ignore[operator]
        return None
    return round((avg - jb) / g, 2)  # type: ignore[operator]


def table(out: Path) -> tuple[list[dict], list[str]]:
    """One row per window (see the module docstring) and the solver seeds seen."""
    rows = list(csv.DictReader((out / "windows.csv").open()))
    if not rows:
        raise ValueError(f"{out / 'windows.csv'}: no rows")
    first = rows[0]["policy"]
    by: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        if r["policy"] == first:
            by[(int(r["jobs"]), r["seed"], int(r["index"]), r["window"])][r["solver_seed"]] = r
    seeds = sorted({s for d in by.values() for s in d}, key=int)
    out_rows = []
    for (jobs, seed, _index, window), d in sorted(by.items()):
        solved = [r for r in d.values() if _number(r["exact_objective"]) is not None]
        if not solved:
            out_rows.append({"window": window, "jobs": jobs, "seed": seed, "solves": len(d), "proven": 0, "reading": "refused"})
            continue
        objs = {s: float(r["exact_objective"]) for s, r in d.items() if r in solved}
        best = min(objs.values())
        bound_row = max((r for r in solved if _number(r["certified_bound"]) is not None), key=lambda r: float(r["certified_bound"]))
        bound = float(bound_row["certified_bound"])
        proven = sorted((s for s, r in d.items() if r["status"] == "OPTIMAL"), key=int)
        at_best = sorted((s for s, v in objs.items() if v <= best + 1e-6), key=int)
        best_row = d[at_best[0]]
        steps = _granules(best_row, bound_row, granule(out, jobs))
        if len(proven) == len(d):
            reading = "proven"
        elif best <= bound + 1e-6:
            reading = "closed (primal: a seed's schedule meets the bound)"
        elif max(objs.values()) > best + 1e-6:
            reading = "primal on some seeds; open at the best"
        else:
            reading = "open (every seed the same incumbent)"
        out_rows.append({"window": window, "jobs": jobs, "seed": seed, "solves": len(d), "proven": len(proven),
                         "proven_seeds": ",".join(proven), "best": best, "best_seeds": ",".join(at_best),
                         "worst": max(objs.values()), "bound": bound, "granules": steps, "reading": reading})
    return out_rows, seeds


def summary(rows: list[dict], seeds: list[str]) -> list[str]:
    """Per-seed proven counts, the windows proven by some seed and those whose best meets the bound
    (from :func:`table`'s rows)."""
    per = [sum(1 for r in rows if s in r.get("proven_seeds", "").split(",")) for s in seeds]
    some = sum(1 for r in rows if r.get("proven", 0) > 0)
    closed = sum(1 for r in rows if r["reading"].startswith(("proven", "closed")))
    return [f"solver seeds {', '.join(seeds)}: proven per seed {', '.join(map(str, per))}",
            f"windows proven by some seed: {some} of {len(rows)}; optimum known (proven, or a seed's schedule at the bound): {closed}"]


def _cell(v: object) -> str:
    """A table cell: floats to at most 4 decimals (Helios windows' JCTs are not multiples of a
    round), None and empty as ``–``."""
    if v is None or v == "":
        return "–"
    if isinstance(v, float):
        text = f"{v:.4f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    return str(v)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="an experiment gaps out-dir (its windows.csv and provenance.json)")
    ap.add_argument("--all", action="store_true", help="every window, not only those some seed left unproven")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    a = ap.parse_args(argv)
    try:
        rows, seeds = table(a.out)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {a.out}: {e}", file=sys.stderr)
        return 2
    shown = rows if a.all else [r for r in rows if r["reading"] != "proven"]
    keys = [k for k in ("jobs", "seed") if len({r[k] for r in rows}) > 1]  # a scaling set repeats window names per size
    cols = ["window", *keys, "solves", "proven", "proven_seeds", "best", "best_seeds", "worst", "bound", "granules", "reading"]
    if a.markdown:
        print("| " + " | ".join(cols) + " |")
        print("| " + " | ".join("---" for _ in cols) + " |")
        for r in shown:
            print("| " + " | ".join(_cell(r.get(c)) for c in cols) + " |")
    else:
        for r in shown:
            print("  ".join(f"{c}={_cell(r.get(c))}" for c in cols if r.get(c) not in (None, "")))
    for line in summary(rows, seeds):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
