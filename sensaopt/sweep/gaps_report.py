"""Tables of ``sensaopt experiment gaps`` from its window records (:mod:`sensaopt.sweep.gaps`).

* :func:`window_rows`: one row per window and policy (``windows.csv``);
* :func:`summary_rows`: per window size and policy (``gaps.csv``): windows proven, windows
  with extra misses and their count, the avg-JCT gap to the exact incumbent (only among
  equal misses and lost value; the gap to the optimum where the window is proven) and the
  certified gap to the bound (only on the exact schedule's level), mean and max, and the
  windows where the policy's avg JCT equals the incumbent's;
* :func:`scaling_rows`: per window size (``scaling.csv``; in ``gaps.md`` for every run): the
  fraction proven, the fraction proven or certified within 1 %, the exact incumbent's certified
  gap to the JCT bound, the solve time, each policy's mean certified gap.

Means are over windows. A *replicate* is one (seed, solver seed) pair: the windows the seed
cuts, each solved with that solver seed (``--seeds``, ``--solver-seeds``). With several
replicates a mean is the mean of the per-replicate means with its two-sided 95 % Student-t
interval over replicates (``*_lo``, ``*_hi``; :func:`sensaopt.sweep.stats.mean_interval`; NaN
with one). Units: percent (``*_pct``, gaps), seconds, minutes (JCT).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from sensaopt.sweep.stats import mean_interval

Record = dict[str, Any]

WITHIN_PCT = 1.0  # percent: a window "certified within 1 %" has its exact incumbent at most this far above the JCT bound

WINDOW_COLUMNS = ("jobs", "seed", "solver_seed", "index", "window", "first_job", "nodes", "gpus", "exact", "status", "seconds",
                  "exact_misses", "exact_avg_jct", "jct_bound", "exact_gap_to_bound_pct", "exact_objective", "grid_bound",
                  "certified_bound", "policy", "misses", "extra_misses", "avg_jct", "jct_gap_pct", "jct_gap_to_bound_pct")
"""Columns of :func:`window_rows` (minutes, seconds, percent; ``exact_objective``, ``grid_bound`` and
``certified_bound`` in objective units: see :func:`gap_parts`)."""


def gap_parts(r: Record) -> tuple[float | None, float | None, float | None]:
    """Where a window's certified gap lives (objective units): the exact incumbent, the
    exact model's own bound over its allocation grid (what its solver proved; above the
    certified bound by what the allocation relaxation loses, ``models/formulation.md``),
    and the certified bound over every valid allocation.

    Args:
        r: the window record.

    Returns:
        ``(incumbent, grid bound, certified bound)``; the grid bound is the certified one
        where the grid needed no relaxation (dominated) or the record has no report."""
    alloc = (r.get("exact_params") or {}).get("allocations") or {}
    grid = alloc.get("grid_bound")
    return r.get("objective"), r.get("bound") if grid is None else grid, r.get("bound")


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def solver_seed(r: Record) -> int:
    """The exact solver's seed of a window record (0 in records that do not say).

    Args:
        r: the window record.

    Returns:
        The seed."""
    return int(((r.get("config") or {}).get("exact") or {}).get("seed", 0))


def replicate(r: Record) -> tuple[int, int]:
    """A record's replicate: the windows of one seed, each solved with one solver seed.

    Args:
        r: the window record.

    Returns:
        (its seed, its solver seed)."""
    return r["seed"], solver_seed(r)


def _stat(records: Sequence[Record], fn: Callable[[Sequence[Record]], float | None]) -> tuple[float, float, float]:
    """(mean, lo, hi) of ``fn`` over ``records``: with one replicate its value (lo, hi NaN),
    else the mean of its per-replicate values with their 95 % interval."""
    reps = sorted({replicate(r) for r in records})
    return mean_interval(fn([r for r in records if replicate(r) == k]) for k in reps)


def within(r: Record, pct: float = WITHIN_PCT) -> bool:
    """Whether a window is proven, or its exact incumbent certified within ``pct`` percent of
    the JCT bound (``jct_gap_to_bound_pct``).

    Args:
        r: the window record.
        pct: the margin, percent.

    Returns:
        True or False."""
    gap = r.get("jct_gap_to_bound_pct")
    return r.get("status") == "OPTIMAL" or (gap is not None and gap <= pct + 1e-9)


def solved_records(records: Sequence[Record]) -> list[Record]:
    """The windows whose model the exact solver did not refuse.

    Args:
        records: the window records.

    Returns:
        Those with a status other than REFUSED."""
    return [r for r in records if r.get("status") != "REFUSED"]


def policy_values(records: Sequence[Record], policy: str, name: str) -> list[float]:
    """Policy ``policy``'s comparison field ``name`` over the windows where it is defined.

    Args:
        records: the window records.
        policy: the policy.
        name: a :class:`sensaopt.compare.Comparison` field (e.g. ``jct_gap_pct``).

    Returns:
        The values, in record order."""
    return [c[name] for r in records if (c := r["policies"].get(policy)) and c.get(name) is not None]


def window_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """One row per window and policy (:data:`WINDOW_COLUMNS`), in window order.

    Args:
        records: the window records.

    Returns:
        The rows (a refused window: one row per planned policy, its values empty)."""
    rows = []
    for r in sorted(records, key=_order):
        base = {"jobs": r["jobs"], "seed": r["seed"], "solver_seed": solver_seed(r), "index": r["index"], "window": r["window"],
                "first_job": r.get("first_job"), "nodes": r["nodes"], "gpus": r["gpus"], "exact": r["exact"], "status": r["status"],
                "seconds": r.get("seconds"), "exact_misses": r.get("misses"), "exact_avg_jct": r.get("avg_jct"),
                "jct_bound": r.get("jct_bound"), "exact_gap_to_bound_pct": r.get("jct_gap_to_bound_pct")}
        base.update(zip(("exact_objective", "grid_bound", "certified_bound"), gap_parts(r)))
        alone = (r.get("bounds_only") or {}).get("policies") or {}  # a refused window: the policy's own figures
        for p in r["config"]["policies"]:
            c = r["policies"].get(p) or alone.get(p) or {}
            rows.append({**base, "policy": p, "misses": c.get("misses"), "extra_misses": c.get("extra_misses"), "avg_jct": c.get("avg_jct"),
                         "jct_gap_pct": c.get("jct_gap_pct"),
                         "jct_gap_to_bound_pct": None if p in alone else c.get("jct_gap_to_bound_pct")})
    return rows


def _exact_gaps(records: Sequence[Record]) -> list[float]:
    """The exact incumbents' avg JCT above their JCT bound (percent), where there is one."""
    return [r["jct_gap_to_bound_pct"] for r in solved_records(records) if r.get("jct_gap_to_bound_pct") is not None]


def _order(r: Record) -> tuple[int, int, int, int]:
    return r["jobs"], r["seed"], r["index"], solver_seed(r)


def _mean_stat(policy: str, name: str) -> Callable[[Sequence[Record]], float | None]:
    return lambda rs: _mean(policy_values(rs, policy, name))


def summary_rows(records: Sequence[Record], policies: Sequence[str]) -> list[dict[str, Any]]:
    """Per window size and policy: see the module doc (percent; ``*_windows``: how many
    windows the mean is over).

    Args:
        records: the window records.
        policies: the policies, in column order.

    Returns:
        The rows, by size then policy."""
    rows = []
    for n in sorted({r["jobs"] for r in records}):
        rs = [r for r in records if r["jobs"] == n]
        solved = solved_records(rs)
        for p in policies:
            extra = [c["extra_misses"] for r in solved if (c := r["policies"].get(p)) and c.get("extra_misses") is not None]
            jct, bound = policy_values(solved, p, "jct_gap_pct"), policy_values(solved, p, "jct_gap_to_bound_pct")
            row: dict[str, Any] = {"jobs": n, "policy": p, "seeds": len({r["seed"] for r in rs}),
                                   "solver_seeds": len({solver_seed(r) for r in rs}), "windows": len(rs),
                                   "proven": sum(r["status"] == "OPTIMAL" for r in rs), "refused": len(rs) - len(solved),
                                   "windows_with_extra_misses": sum(1 for x in extra if x > 0), "extra_misses": sum(extra)}
            for name, vals, field in (("jct_gap", jct, "jct_gap_pct"), ("bound_gap", bound, "jct_gap_to_bound_pct")):
                mean, lo, hi = _stat(solved, _mean_stat(p, field))
                row |= {f"{name}_mean_pct": mean, f"{name}_lo_pct": lo, f"{name}_hi_pct": hi,
                        f"{name}_max_pct": max(vals, default=math.nan), f"{name}_windows": len(vals)}
            row["windows_at_incumbent"] = sum(1 for g in jct if g <= 1e-9)
            rows.append(row)
    return rows


def scaling_rows(records: Sequence[Record], policies: Sequence[str]) -> list[dict[str, Any]]:
    """Per window size: windows, proven (count, and percent with its interval over
    replicates), proven or certified within 1 % (:func:`within`; ``within_1pct``, count and
    percent), the exact incumbent's certified gap to the JCT bound (percent), the exact
    solve's seconds, and each policy's mean certified gap (``<policy>_bound_gap_mean_pct``).

    Args:
        records: the window records.
        policies: the policies.

    Returns:
        The rows, smallest windows first."""
    rows = []
    for n in sorted({r["jobs"] for r in records}):
        rs = [r for r in records if r["jobs"] == n]
        solved = solved_records(rs)
        exact_gaps = _exact_gaps(rs)
        row: dict[str, Any] = {"jobs": n, "seeds": len({r["seed"] for r in rs}), "solver_seeds": len({solver_seed(r) for r in rs}),
                               "windows": len(rs), "proven": sum(r["status"] == "OPTIMAL" for r in rs), "refused": len(rs) - len(solved),
                               "within_1pct": sum(within(r) for r in rs)}
        stats: dict[str, Callable[[Sequence[Record]], float | None]] = {
            "proven": lambda g: 100.0 * sum(r["status"] == "OPTIMAL" for r in g) / len(g),
            "within_1pct": lambda g: 100.0 * sum(within(r) for r in g) / len(g),
            "exact_gap": lambda g: _mean(_exact_gaps(g)),
            "seconds": lambda g: _mean([r["seconds"] for r in g if r.get("seconds") is not None])}
        for name, fn in stats.items():
            mean, lo, hi = _stat(rs, fn)
            if name in ("proven", "within_1pct"):  # shares of the windows: the interval within [0, 100] %
                lo, hi = max(lo, 0.0), min(hi, 100.0)
            unit = "pct" if name != "seconds" else "s"
            row |= {f"{name}_mean_{unit}": mean, f"{name}_lo_{unit}": lo, f"{name}_hi_{unit}": hi}
        row["exact_gap_max_pct"] = max(exact_gaps, default=math.nan)
        row["exact_gap_windows"] = len(exact_gaps)
        row["seconds_max_s"] = max((r["seconds"] for r in rs if r.get("seconds") is not None), default=math.nan)
        for p in policies:
            row[f"{p}_bound_gap_mean_pct"] = _stat(solved, _mean_stat(p, "jct_gap_to_bound_pct"))[0]
        rows.append(row)
    return rows


# ---- Markdown ---------------------------------------------------------------------------------------
def _num(x: float | None, nd: int = 1, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{nd}f}{unit}"


def _mean_text(row: dict[str, Any], name: str, unit: str = "pct", nd: int = 2) -> str:
    """``mean [lo, hi]`` (the interval only with several seeds)."""
    mean, lo, hi = (row[f"{name}_{k}_{unit}"] for k in ("mean", "lo", "hi"))
    sign = " %" if unit == "pct" else " s"
    if math.isnan(lo):
        return _num(mean, nd, sign)
    return f"{_num(mean, nd, sign)} [{_num(lo, nd)}, {_num(hi, nd)}]"


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


SUMMARY_HEAD = ("jobs", "policy", "windows", "proven", "windows with extra misses", "extra misses",
                "JCT gap to the exact incumbent (equal misses): mean / max", "certified gap to the bound (≤): mean / max",
                "windows at the exact incumbent's JCT")


def summary_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """:func:`summary_rows` as a Markdown table (means with their interval over seeds).

    Args:
        rows: the summary rows.

    Returns:
        The table."""
    def gap(r: dict[str, Any], name: str) -> str:
        return f"{_mean_text(r, name)} / {_num(r[f'{name}_max_pct'], 2, ' %')} ({r[f'{name}_windows']} windows)"

    return _table(SUMMARY_HEAD, [(r["jobs"], r["policy"], r["windows"], r["proven"], r["windows_with_extra_misses"], r["extra_misses"],
                                  gap(r, "jct_gap"), gap(r, "bound_gap"), r["windows_at_incumbent"]) for r in rows])


def scaling_markdown(rows: Sequence[dict[str, Any]], policies: Sequence[str]) -> str:
    """:func:`scaling_rows` as a Markdown table.

    Args:
        rows: the scaling rows.
        policies: the policies (one certified-gap column each).

    Returns:
        The table."""
    head = ["jobs", "windows", "proven", "proven (%)", "proven or within 1 %", "proven or within 1 % (%)",
            "exact incumbent's certified gap: mean / max", "exact solve: mean / max", *(f"{p} certified gap (mean)" for p in policies)]
    body = [(r["jobs"], r["windows"], r["proven"], _mean_text(r, "proven", nd=0), r["within_1pct"], _mean_text(r, "within_1pct", nd=0),
             f"{_mean_text(r, 'exact_gap')} / {_num(r['exact_gap_max_pct'], 2, ' %')}",
             f"{_mean_text(r, 'seconds', 's', 1)} / {_num(r['seconds_max_s'], 1, ' s')}",
             *(_num(r[f"{p}_bound_gap_mean_pct"], 2, " %") for p in policies)) for r in rows]
    return _table(head, body)


def _cell(c: dict[str, Any] | None) -> str:
    """``+extra misses / JCT gap (≤ certified gap)``."""
    if not c:
        return "–"
    to_b = c.get("jct_gap_to_bound_pct")
    extra = c["extra_misses"]
    bound = f" (≤ {to_b:.1f} %)" if to_b is not None else ""
    return f"{'–' if extra is None else f'{extra:+d}'} / {_num(c['jct_gap_pct'], 1, ' %')}{bound}"


def windows_markdown(records: Sequence[Record], policies: Sequence[str]) -> str:
    """One line per window: the exact solve, then per policy extra misses / JCT gap to the
    exact incumbent (≤ certified gap to the bound).

    Args:
        records: the window records.
        policies: the policies, in column order.

    Returns:
        The table."""
    head = ["window", "jobs", "seed", "solver seed", "nodes", "exact", "s", "exact misses", "exact JCT", "JCT bound",
            "objective / grid bound / certified bound", *policies]
    body = []
    for r in sorted(records, key=_order):
        status = "**OPTIMAL**" if r["status"] == "OPTIMAL" else r["status"]
        parts = " / ".join(_num(x, 2) for x in gap_parts(r))
        body.append((r["window"], r["jobs"], r["seed"], solver_seed(r), r["nodes"], status, _num(r.get("seconds")),
                     _num(r.get("misses"), 0), _num(r.get("avg_jct"), 2), _num(r.get("jct_bound"), 2), parts,
                     *(_cell(r["policies"].get(p)) for p in policies)))
    return _table(head, body)


REFUSED_NOTE = ("Windows whose exact model was refused (too large), not in any figure above: each policy against the "
                "instance's own bounds (`sensaopt bound`, every job at its best speed): the misses no schedule avoids and the "
                "average JCT no schedule beats, whatever it misses. A cell is misses / avg JCT (≤ its percent above that JCT "
                "bound, which is at least its JCT gap to the optimum); – where the record predates these figures.")


def refused_markdown(records: Sequence[Record], policies: Sequence[str]) -> str | None:
    """One line per refused window (``bounds_only`` of :func:`sensaopt.sweep.gaps.bounds_only`):
    the instance's bounds and each policy's misses / avg JCT (≤ percent above the JCT bound).

    Args:
        records: the window records.
        policies: the policies, in column order.

    Returns:
        :data:`REFUSED_NOTE` and the table, or None without refused windows."""
    refused = sorted((r for r in records if r.get("status") == "REFUSED"), key=_order)
    if not refused:
        return None
    body = []
    for r in refused:
        b = r.get("bounds_only") or {}
        cells = []
        for p in policies:
            c = (b.get("policies") or {}).get(p)
            gap = None if not c else c.get("jct_gap_to_bound_pct")
            cells.append("–" if not c else f"{_num(c.get('misses'), 0)} / {_num(c.get('avg_jct'), 2)}"
                                           + ("" if gap is None else f" (≤ {gap:.1f} %)"))
        body.append((r["window"], r["jobs"], r["nodes"], (r.get("message") or "").split(";")[0], _num(b.get("misses"), 0),
                     _num(b.get("avg_jct"), 2), *cells))
    head = ["window", "jobs", "nodes", "refused", "misses no schedule avoids", "JCT bound", *policies]
    return REFUSED_NOTE + "\n\n" + _table(head, body)


def report_markdown(title: str, planned: int, records: Sequence[Record], policies: Sequence[str]) -> str:
    """The whole ``gaps.md``: ``title`` (the settings), the summary per policy, the
    scaling table when there are several window sizes, and the windows.

    Args:
        title: the heading paragraph (what was run).
        planned: windows planned (the records may be fewer: failed or missing windows).
        records: the window records.
        policies: the policies, in column order.

    Returns:
        The Markdown text."""
    reps = len({replicate(r) for r in records})
    means = ("mean over windows" if reps <= 1 else
             f"mean of the {reps} replicates' means (a replicate: one seed's windows, each solved with one solver seed) "
             "[95 % Student-t interval over replicates]")
    solves = "windows" if len({solver_seed(r) for r in records}) <= 1 else "window solves (windows × solver seeds)"
    parts = [title, f"{len(records)} of {planned} {solves} done. Gaps in percent of the avg JCT; {means}.",
             summary_markdown(summary_rows(records, policies)),
             "The exact solve, by window size (proven or within 1 %: the exact incumbent at most 1 % above the JCT bound):",
             scaling_markdown(scaling_rows(records, policies), policies)]
    parts += ["Per window (+extra misses / JCT gap to the exact incumbent (≤ certified gap to the bound)). Where the exact "
              "solve's gap lives, in objective units: the incumbent above the grid bound (the exact model's own bound over its "
              "allocation grid) is the solver's gap, primal or dual; the grid bound above the certified bound is what the "
              "allocation relaxation loses (`models/formulation.md`, \"Exact over every valid allocation\"):",
              windows_markdown(records, policies)]
    refused = refused_markdown(records, policies)
    parts += [refused] if refused else []
    return "\n\n".join(parts) + "\n"


def window_line(r: Record) -> str:
    """One line for a finished window (progress output): its exact status and seconds, then
    per policy ``+extra misses / JCT gap``.

    Args:
        r: the window record.

    Returns:
        The line."""
    pols = ", ".join(f"{p} {_cell(c)}" for p, c in r["policies"].items())
    b = r.get("bounds_only")
    if b and not pols:  # a refused window: each policy against the instance's bounds
        pols = f"against the instance's bounds (forced misses: {_num(b.get('misses'), 0)}): " + ", ".join(
            f"{p} {_num(c.get('misses'), 0)} misses, JCT ≤ {_num(c.get('jct_gap_to_bound_pct'), 1, ' %')}"
            for p, c in (b.get("policies") or {}).items())
    k = solver_seed(r)
    seeds = f"seed {r['seed']}" + (f", solver seed {k}" if k else "")
    head = f"{r['window']} ({r['jobs']} jobs, {seeds}): {r['status']} in {_num(r.get('seconds'))} s"
    return head + (f"; {pols}" if pols else "")


REPORT_FILES = ("gaps.md", "gaps.csv", "windows.csv", "gaps.png")
"""What every ``experiment gaps`` folder gets: the Markdown report, the summary and per-window tables, the figure."""
SCALING_FILES = ("scaling.csv", "scaling.png")
"""Added with several window sizes: the scaling table and figure."""


def output_names(sizes: int) -> tuple[str, ...]:
    """The report files of a run with ``sizes`` window sizes.

    Args:
        sizes: how many window sizes.

    Returns:
        :data:`REPORT_FILES`, and :data:`SCALING_FILES` when there are several."""
    return REPORT_FILES + (SCALING_FILES if sizes > 1 else ())


def write_report(folder: Any, md: str, records: Sequence[Record], policies: Sequence[str], sizes: int, time_limit: float,
                 field: str = "--out-dir") -> list[Any]:
    """Write :func:`output_names` into ``folder`` (atomically; never onto a symlink or an input).

    Args:
        folder: the folder (a Path).
        md: the Markdown report (:func:`report_markdown`).
        records: the window records.
        policies: the policies, in column order.
        sizes: how many window sizes were planned.
        time_limit: the exact solve's limit, seconds (drawn on the scaling figure).
        field: the option named in errors.

    Returns:
        The paths written."""
    from sensaopt.outputs import write_bytes, write_text
    from sensaopt.sweep.experiment_plot import save_figure
    from sensaopt.sweep.gaps_plot import gaps_figure, scaling_figure
    from sensaopt.tables import table_bytes

    summary = summary_rows(records, policies)
    windows = window_rows(records)
    paths = [folder / n for n in output_names(sizes)]
    write_text(paths[0], md, field=field)
    write_bytes(paths[1], table_bytes(summary, list(summary[0]) if summary else ["jobs", "policy"], "csv"), field=field)
    write_bytes(paths[2], table_bytes(windows, WINDOW_COLUMNS, "csv"), field=field)
    save_figure(gaps_figure(records, summary, policies), paths[3], field=field)
    if sizes > 1:
        scaling = scaling_rows(records, policies)
        write_bytes(paths[4], table_bytes(scaling, list(scaling[0]) if scaling else ["jobs"], "csv"), field=field)
        save_figure(scaling_figure(scaling, policies, time_limit), paths[5], field=field)
    return paths
