"""Exact-model commands: ``sensaopt gap`` (heuristic vs exact optimum, one row per
instance), ``sensaopt export`` (the MILP as MPS or LP, with its sidecar) and
``sensaopt import-solution`` (an external solver's solution back as a validated schedule)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from sensaopt.cli.app import app
from sensaopt.cli.options import budget_option, in_range, move_cost_option, policy_option, set_option
from sensaopt.compare import ROUND_COMPARISON_COLUMNS
from sensaopt.instance import Instance
from sensaopt.outputs import Kept
from sensaopt.result import Result
from sensaopt.tables import GAP_COLUMNS as FRAME_GAP_COLUMNS

# the instance's own lower bounds (sensaopt.bounds, best speed: valid for every schedule) and the policy's distance to them
BOUND_COLUMNS = ["forced", "above_forced", "instance_jct_bound", "jct_above_instance_bound_pct"]
# the exact solve's budget ("work:N" or "time") and whether a work budget's wall-clock safety net fired (None: no work budget)
BUDGET_COLUMNS = ["budget", "safety_net"]
# `sensaopt gap` rows: CSV/JSON and --wide (gap_frame's columns, then the bounds, then the budget)
GAP_COLUMNS = list(FRAME_GAP_COLUMNS) + BOUND_COLUMNS + BUDGET_COLUMNS
TABLE_WIDTH = 100  # characters: the default tables fit a terminal this wide (--wide: every column)
# the default `sensaopt gap` table: lexicographic parts, the objective is in --wide / CSV / JSON
GAP_TABLE_COLUMNS = ["instance", "policy", "exact_status", "misses", "extra_misses", "forced", "avg_jct", "jct_gap_pct",
                     "jct_bound"]
# `sensaopt round-gap` rows: per_round_gaps' fields, then the comparison of each round
ROUND_GAP_COLUMNS = ["round", "jobs", "optimum_proven", "window_bound", "window_optimum", "policy_value", "policy_proven", "objective_diff",
                     "window_misses", "window_lost_value", "window_jct", "policy_misses", "policy_lost_value", "policy_jct",
                     *ROUND_COMPARISON_COLUMNS, "safety_net"]
ROUND_GAP_TABLE_COLUMNS = ["round", "jobs", "optimum_proven", "extra_misses", "extra_lost_value", "window_jct", "policy_jct",
                           "jct_gap_pct"]


def exact_solve(inst: Instance, exact: str, time_limit: float, workers: int, seed: int = 0, lexicographic: bool = True,
                cooperate: bool = False, budget: str | None = None) -> Result:
    """Run an exact solver of :data:`sensaopt.solve.SOLVERS` by name: cpsat, milp (= highs), highs, cbc;
    ``cooperate``: the other backend continues its deadline-hard phase (``solve_cpsat``/``solve_milp``);
    ``budget``: "work:N" (N work units, ``time_limit`` the safety net) or None / "time"."""
    from sensaopt.errors import InputError
    from sensaopt.solve import SOLVERS, exact_solver_names

    if exact not in exact_solver_names():
        raise InputError("(command line)", "--exact", f"unknown exact solver {exact!r}; use {', '.join(exact_solver_names())}")
    extra: dict[str, Any] = {"cooperate": True} if cooperate else {}
    if budget is not None:
        extra["budget"] = budget
    return SOLVERS.get(exact)(inst, time_limit=time_limit, workers=workers, seed=seed, lexicographic=lexicographic, **extra)


def gap_row(name: str, inst: Instance, policy: str, exact: str, time_limit: float, workers: int, seed: int = 0,
            lexicographic: bool = True, policy_config: dict[str, Any] | None = None, cooperate: bool = False,
            budget: str | None = None) -> dict[str, Any]:
    """One row of ``sensaopt gap``: ``policy`` simulated on ``inst`` against the ``exact``
    solver (``time_limit`` seconds, ``budget`` as :func:`exact_solve`'s, ``workers`` threads, ``seed``), compared part by part
    by :func:`sensaopt.compare.compare` (:func:`sensaopt.tables.gap_record`: gap_frame's columns;
    ``name`` fills the instance column): extra misses and lost value, the avg JCT gap in
    percent only among equal misses and lost value, the bound of each part, and the
    weighted objective (``objective_gap_pct`` in percent); then :data:`BOUND_COLUMNS` (:func:`bound_values`)
    and :data:`BUDGET_COLUMNS`.
    Minutes, deadline value, seconds."""
    from sensaopt.compare import compare
    from sensaopt.simulator import simulate
    from sensaopt.tables import gap_record

    # first: a model it refuses is refused at once
    e = exact_solve(inst, exact, time_limit, workers, seed, lexicographic, cooperate, budget)
    h = simulate(inst, policy, policy_config=policy_config)
    row = gap_record(compare(h, e, inst, label=policy, instance_label=name))
    return {**row, **bound_values(inst, h), "budget": e.params.get("budget"), "safety_net": e.params.get("safety_net_fired")}


def bound_values(inst: Instance, res: Result) -> dict[str, Any]:
    """:data:`BOUND_COLUMNS` of ``res`` on ``inst``: ``forced``, the misses no schedule
    avoids, and ``instance_jct_bound``, the average-JCT lower bound (minutes), both at best
    speed from the instance alone (:func:`sensaopt.bounds.compute_bounds`); the run's misses
    beyond the first (``above_forced``) and its avg JCT above the second in percent (None
    without metrics)."""
    from sensaopt.bounds import compute_bounds

    b = compute_bounds(inst, regimes=("best",))
    forced, jb = b.forced_misses("best"), b.jct_bound("best")
    m = res.metrics
    above = None if m is None or m.avg_jct is None or jb <= 0 else 100.0 * (m.avg_jct - jb) / jb
    return {"forced": forced, "above_forced": None if m is None else m.slo_violations - forced,
            "instance_jct_bound": jb, "jct_above_instance_bound_pct": above}


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.6g}"
    return str(v)


def format_table(rows: list[dict], cols: list[str], width: int | None = None, shrink: str | None = None) -> str:
    """Right-aligned text table of ``rows``' ``cols`` ("-": no value). With ``width``,
    the cells of column ``shrink`` lose their start ("…tail") until every line fits."""
    cells = [cols] + [[_fmt(r.get(c)) for c in cols] for r in rows]
    w = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    if width is not None and shrink in cols:
        i = cols.index(shrink)
        over = sum(w) + 2 * (len(cols) - 1) - width
        if over > 0:
            w[i] = max(len(shrink), w[i] - over)
            for row in cells[1:]:
                if len(row[i]) > w[i]:
                    row[i] = "…" + row[i][len(row[i]) - w[i] + 1:]
    return "\n".join("  ".join(x.rjust(w[i]) for i, x in enumerate(row)) for row in cells)


TABLE_OUTPUT_HELP = ("Write the rows, every column, as .csv, .json or .parquet (Parquet: the [parquet] extra) "
                     "(default: not written; the table on stdout only).")


def check_table_output(path: Path, inputs: list[Path]) -> None:
    """Refuse a ``-o`` that is not a .csv, .json or .parquet file (or an unsafe path; or
    .parquet without pyarrow) before any work."""
    from sensaopt.errors import InputError
    from sensaopt.outputs import check_output
    from sensaopt.tables import check_format, format_of

    check_output(path, inputs=inputs, field="-o")  # an unsafe target (symlink, FIFO, an input) is named as such first
    fmt = format_of(path)
    if fmt is None:
        got = path.suffix or "a name without a suffix"
        raise InputError("(command line)", "-o", f"{path.name}: rows are written as .csv, .json or .parquet, not {got}")
    check_format(fmt, "-o")


def write_rows(rows: list[dict], path: Path, cols: list[str], inputs: Sequence[Path | str] = ()) -> None:
    """The whole table of ``rows`` so far in the format of ``path``'s suffix
    (:func:`sensaopt.tables.table_bytes`), atomically (rewritten after each finished row)."""
    from sensaopt.outputs import write_bytes
    from sensaopt.tables import format_of, table_bytes

    write_bytes(path, table_bytes(rows, cols, format_of(path) or "csv", where=str(path)), inputs=inputs, field="-o")


@app.command()
def gap(
    instances: list[Path] = typer.Argument(..., help="Instance JSON files."),
    exact: str = typer.Option("cpsat", help="cpsat | milp (HiGHS) | highs | cbc"),
    policy: str = policy_option("Heuristic policy to compare."),
    settings: list[str] = set_option(),
    time_limit: float = typer.Option(60.0, callback=in_range("time_limit"), metavar="SECONDS", help="Seconds per exact solve (> 0)."),
    budget: str = budget_option("time", "exact solve"),
    workers: int = typer.Option(2, callback=in_range("workers"), metavar="N", help="Exact solver threads (>= 1)."),
    seed: int = typer.Option(0, callback=in_range("seed"), help="Exact solver random seed."),
    weighted: bool = typer.Option(False, "--weighted",
                                  help="One weighted exact solve instead of deadline loss first, then the whole objective."),
    cooperate: bool = typer.Option(False, "--cooperate",
                                   help="The other backend (HiGHS or CP-SAT) continues the deadline-hard phase."),
    move_cost_scale: float = move_cost_option(),
    output: Path | None = typer.Option(None, "-o", "--output", help=TABLE_OUTPUT_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    wide: bool = typer.Option(False, "--wide", help="Show every column (the default table fits 100 characters)."),
) -> None:
    """Heuristic vs exact optimum, one row per instance: misses and lost deadline value
    beyond the exact schedule's, then the avg JCT gap (%) among equal misses, and the
    bound of each part (sensaopt.compare); -o keeps every column."""
    from sensaopt.cli.app import progress_bar
    from sensaopt.config import policy_settings
    from sensaopt.io import load_instance

    knobs = policy_settings([policy], settings)[policy]
    if output is not None:
        check_table_output(output, instances)
    loaded = [(p, load_instance(p).with_move_cost_scale(move_cost_scale)) for p in instances]  # every file checked before any solve
    rows: list[dict] = []
    bar, _ = progress_bar(len(loaded), "gap", quiet, unit="instance")
    kept = Kept()
    try:
        with kept.guard():  # each finished row is written at once: Ctrl-C or an error keeps the rows done (and says so)
            for p, inst in loaded:
                bar.set_postfix_str(p.name, refresh=False)
                rows.append(gap_row(str(p), inst, policy, exact, time_limit, workers, seed, not weighted, knobs, cooperate, budget))
                if output is not None:
                    write_rows(rows, output, GAP_COLUMNS, inputs=instances)
                    kept.note(output, f"{len(rows)} of {len(loaded)} rows")
                bar.update(1)
    finally:
        bar.close()
    typer.echo(format_table(rows, GAP_COLUMNS) if wide else format_table(rows, GAP_TABLE_COLUMNS, TABLE_WIDTH, shrink="instance"))


@app.command()
def export(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    format: str = typer.Option("mps", "--format", help="mps | lp"),
    output: Path = typer.Option(..., "-o", "--output", help="Model file to write (and OUTPUT.json, its sidecar for import-solution)."),
    horizon: int | None = typer.Option(None, callback=in_range("horizon"), metavar="N", help="Rounds (default: SensaScale makespan + 2)."),
    move_cost_scale: float = move_cost_option(),
) -> None:
    """Write the offline MILP (scaled integer objective; scale and offset as comments and in the sidecar) for other solvers."""
    from sensaopt.errors import InputError
    from sensaopt.io import json_text, load_instance
    from sensaopt.outputs import check_output, staged
    from sensaopt.roundtrip import export_files, sidecar_path

    if format not in ("mps", "lp"):
        raise InputError("(command line)", "--format", f"unknown export format {format!r}; use mps or lp")
    side = sidecar_path(output)
    check_output(output, inputs=[instance], field="-o")
    check_output(side, inputs=[instance], field="-o")
    inst = load_instance(instance).with_move_cost_scale(move_cost_scale)
    with staged(side, inputs=[instance], field="-o") as side_tmp, staged(output, inputs=[instance], field="-o") as tmp:
        info, record = export_files(inst, tmp, format, horizon, str(output))  # both whole or neither
        side_tmp.write_text(json_text(record, where=str(side)) + "\n")
    typer.echo(f"wrote {output} (sidecar {side}): {info['variables']} variables, {info['constraints']} constraints, "
               f"horizon {info['horizon']} rounds; objective = file objective / {info['objective_scale']} + "
               f"{info['objective_offset_minutes']!r}")


@app.command("import-solution")
def import_solution(
    model: Path = typer.Argument(..., help="Model file written by `sensaopt export` (its sidecar MODEL.json beside it)."),
    solution: Path = typer.Argument(..., help="The solver's solution file (HiGHS .sol, CBC, SCIP or Gurobi .sol)."),
    output: Path = typer.Option(..., "-o", "--output", help="Schedule JSON to write (for `sensaopt validate`, `plot`)."),
    sidecar: Path | None = typer.Option(None, "--sidecar", metavar="FILE", help="The export's sidecar JSON (default: MODEL.json)."),
    solution_format: str | None = typer.Option(None, "--solution-format", help="highs | cbc | scip | gurobi (default: detected)."),
) -> None:
    """Rebuild the schedule an external solver's solution of an exported model stands for, validate it and write it."""
    from sensaopt.io import save_schedule
    from sensaopt.metrics import compute_metrics
    from sensaopt.outputs import check_output, staged
    from sensaopt.roundtrip import import_solution as read_back
    from sensaopt.roundtrip import sidecar_path

    inputs = [model, solution, sidecar if sidecar is not None else sidecar_path(model)]
    check_output(output, inputs=inputs, field="-o")
    got = read_back(model, solution, sidecar, solution_format)
    ev = got.evaluation
    for e in ev.errors:
        typer.echo(str(e), err=True)
    if not ev.ok:
        typer.echo(f"{solution}: the schedule is not valid ({len(ev.errors)} errors); nothing written", err=True)
        raise typer.Exit(1)
    m = compute_metrics(got.instance, ev)
    with staged(output, inputs=inputs, field="-o") as tmp:
        save_schedule(got.schedule, got.instance, tmp)
    reported = "" if got.file_objective_minutes is None else f" (the solution file reports {got.file_objective_minutes:.4f})"
    typer.echo(f"{output}: valid ({got.solution.format} solution{', ' + got.solution.status if got.solution.status else ''}): "
               f"{m.finished} jobs finished, {m.slo_violations} SLO violations, avg JCT {m.avg_jct:.1f} min, "
               f"objective {m.objective:.4f}{reported}")


@app.command("round-gap")
def round_gap(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    policy: str = policy_option("Policy whose round decisions are scored."),
    window: int = typer.Option(4, callback=in_range("window"), metavar="N", help="Window length, rounds."),
    time_limit: float = typer.Option(2.0, callback=in_range("time_limit"), metavar="SECONDS", help="Seconds per window solve (> 0)."),
    budget: str = budget_option("time", "window solve"),
    move_cost_scale: float = move_cost_option(),
    output: Path | None = typer.Option(None, "-o", "--output", help=TABLE_OUTPUT_HELP),
    wide: bool = typer.Option(False, "--wide", help="Show every column (the default table fits 100 characters)."),
) -> None:
    """Per-round gap: each round decision of a policy vs the window model's optimum,
    lost deadline value first, then the window-estimated avg JCT (gap in % among equal
    lost value); -o keeps every column."""
    from sensaopt.compare import RoundGapSummary, compare_round
    from sensaopt.io import load_instance
    from sensaopt.policies import make_policy
    from sensaopt.rolling import RollingConfig, RoundGapRecorder
    from sensaopt.simulator import simulate

    if output is not None:
        check_table_output(output, [instance])
    inst = load_instance(instance).with_move_cost_scale(move_cost_scale)
    # sensaopt.rolling.per_round_gaps, with each finished round's row written as it completes
    rec = RoundGapRecorder(make_policy(policy), RollingConfig(window=window, time_limit=time_limit, workers=1, seed=0,
                                                                             budget=budget))
    kept = Kept()

    def rows_so_far() -> list[dict]:
        return [{**row, **compare_round(row)} for row in rec.rows]

    def save(*_: object) -> None:
        if output is not None and rec.rows and kept.parts.get(str(output)) != f"{len(rec.rows)} rounds":
            write_rows(rows_so_far(), output, ROUND_GAP_COLUMNS, inputs=[instance])
            kept.note(output, f"{len(rec.rows)} rounds")

    with kept.guard():
        try:
            simulate(inst, rec, progress=save)
        except BaseException:
            save()  # the rounds decided before the error or Ctrl-C
            raise
        save()
    rows = rows_so_far()
    typer.echo(format_table(rows, ROUND_GAP_COLUMNS if wide else ROUND_GAP_TABLE_COLUMNS))
    if rows:
        typer.echo("\n".join(RoundGapSummary.of(rows).lines()))
    if output is not None and not rows:
        write_rows(rows, output, ROUND_GAP_COLUMNS, inputs=[instance])
