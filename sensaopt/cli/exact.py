"""Exact-model commands: ``sensaopt gap`` (heuristic vs exact optimum, one row per
instance) and ``sensaopt export`` (the MILP as MPS or LP)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import typer

from sensaopt.cli.app import app
from sensaopt.cli.options import at_least_one, positive, set_option
from sensaopt.instance import Instance
from sensaopt.result import Result

GAP_COLUMNS = [
    "instance", "policy", "heuristic_objective", "heuristic_runtime_s", "exact", "status", "exact_objective",
    "bound", "abs_gap", "rel_gap", "heuristic_gap_to_bound", "solver_gap", "exact_runtime_s", "horizon",
]


def exact_solve(inst: Instance, exact: str, time_limit: float, workers: int, seed: int = 0, lexicographic: bool = True) -> Result:
    """Run an exact solver of :data:`sensaopt.solve.SOLVERS` by name: cpsat, milp (= highs), highs, cbc."""
    from sensaopt.errors import InputError
    from sensaopt.solve import SOLVERS, exact_solver_names

    if exact not in exact_solver_names():
        raise InputError("(command line)", "--exact", f"unknown exact solver {exact!r}; use {', '.join(exact_solver_names())}")
    return SOLVERS.get(exact)(inst, time_limit=time_limit, workers=workers, seed=seed, lexicographic=lexicographic)


def gap_row(name: str, inst: Instance, policy: str, exact: str, time_limit: float, workers: int, seed: int = 0,
            lexicographic: bool = True, policy_config: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row: heuristic and exact objective (minutes-based objective of the metrics
    module), the exact solver's bound and status, the gaps and both runtimes.

    abs_gap = heuristic − exact objective; rel_gap = abs_gap / |exact objective|;
    heuristic_gap_to_bound = (heuristic − bound) / |bound| (a proven upper bound on the
    heuristic's relative gap); solver_gap = (exact − bound) / |exact|."""
    from sensaopt.simulator import simulate

    h = simulate(inst, policy, policy_config=policy_config)
    e = exact_solve(inst, exact, time_limit, workers, seed, lexicographic)

    def rel(a: float | None, b: float | None) -> float | None:
        return (a / abs(b)) if (a is not None and b not in (None, 0)) else None

    hobj = h.objective  # a policy finishes every job: never None
    ab = hobj - e.objective if (hobj is not None and e.objective is not None) else None
    return {
        "instance": name,
        "policy": policy,
        "heuristic_objective": h.objective,
        "heuristic_runtime_s": round(h.runtime_s, 3),
        "exact": e.solver,
        "status": e.status.value,
        "exact_objective": e.objective,
        "bound": e.bound,
        "abs_gap": ab,
        "rel_gap": rel(ab, e.objective),
        "heuristic_gap_to_bound": rel(hobj - e.bound, e.bound) if (hobj is not None and e.bound is not None) else None,
        "solver_gap": rel(e.objective - e.bound, e.objective) if (e.objective is not None and e.bound is not None) else None,
        "exact_runtime_s": round(e.runtime_s, 3),
        "horizon": e.params.get("horizon"),
    }


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.6g}"
    return str(v)


def format_table(rows: list[dict], cols: list[str]) -> str:
    cells = [cols] + [[_fmt(r.get(c)) for c in cols] for r in rows]
    w = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    return "\n".join("  ".join(x.rjust(w[i]) for i, x in enumerate(row)) for row in cells)


def write_rows(rows: list[dict], path: Path, cols: list[str]) -> None:
    from sensaopt.io import atomic_write_text

    if path.suffix.lower() == ".json":
        atomic_write_text(path, json.dumps(rows, indent=1))
    else:
        buf = io.StringIO()
        wr = csv.DictWriter(buf, fieldnames=cols)
        wr.writeheader()
        wr.writerows(rows)
        atomic_write_text(path, buf.getvalue())


@app.command()
def gap(
    instances: list[Path] = typer.Argument(..., help="Instance JSON files."),
    exact: str = typer.Option("cpsat", help="cpsat | milp (HiGHS) | highs | cbc"),
    policy: str = typer.Option("sensascale", help="Heuristic policy to compare."),
    settings: list[str] = set_option(),
    time_limit: float = typer.Option(60.0, callback=positive, help="Seconds per exact solve (> 0)."),
    workers: int = typer.Option(2, callback=at_least_one, help="Exact solver threads (>= 1)."),
    seed: int = typer.Option(0, help="Exact solver random seed."),
    weighted: bool = typer.Option(False, "--weighted",
                                  help="One weighted exact solve instead of deadline loss first, then the whole objective."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write rows as .csv or .json."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Heuristic vs exact optimum, one row per instance."""
    from sensaopt.cli.app import progress_bar
    from sensaopt.config import policy_settings
    from sensaopt.io import load_instance
    from sensaopt.outputs import check_output

    knobs = policy_settings([policy], settings)[policy]
    if output is not None:
        check_output(output, inputs=instances, field="-o")
    loaded = [(p, load_instance(p)) for p in instances]  # every file checked before any solve starts
    rows = []
    bar, _ = progress_bar(len(loaded), "gap", quiet, unit="instance")
    for p, inst in loaded:
        bar.set_postfix_str(p.name, refresh=False)
        rows.append(gap_row(str(p), inst, policy, exact, time_limit, workers, seed, not weighted, knobs))
        bar.update(1)
    bar.close()
    typer.echo(format_table(rows, GAP_COLUMNS))
    if output is not None:
        write_rows(rows, output, GAP_COLUMNS)


@app.command()
def export(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    format: str = typer.Option("mps", "--format", help="mps | lp"),
    output: Path = typer.Option(..., "-o", "--output", help="Model file to write."),
    horizon: int | None = typer.Option(None, help="Rounds (default: SensaScale makespan + 2)."),
) -> None:
    """Write the offline MILP (scaled integer objective) for other solvers (SCIP, Gurobi, ...)."""
    from sensaopt.errors import InputError
    from sensaopt.exact.milp import export_model
    from sensaopt.io import load_instance
    from sensaopt.outputs import check_output, staged

    if format not in ("mps", "lp"):
        raise InputError("(command line)", "--format", f"unknown export format {format!r}; use mps or lp")
    check_output(output, inputs=[instance], field="-o")
    inst = load_instance(instance)
    with staged(output, inputs=[instance], field="-o") as tmp:  # written whole or not at all
        info = export_model(inst, str(tmp), format, horizon=horizon)
    typer.echo(f"wrote {output}: {info['variables']} variables, {info['constraints']} constraints, horizon {info['horizon']} rounds; "
               f"objective = file objective / {info['objective_scale']} + {info['objective_offset_minutes']!r}")


@app.command("round-gap")
def round_gap(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    policy: str = typer.Option("sensascale", help="Policy whose round decisions are scored."),
    window: int = typer.Option(4, help="Window length, rounds."),
    time_limit: float = typer.Option(2.0, callback=positive, help="Seconds per window solve (> 0)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write rows as .csv or .json."),
) -> None:
    """Per-round gap: each round decision of a policy vs the window model's optimum."""
    from sensaopt.exact.rolling import per_round_gaps
    from sensaopt.io import load_instance
    from sensaopt.outputs import check_output

    if output is not None:
        check_output(output, inputs=[instance], field="-o")
    rows = per_round_gaps(load_instance(instance), policy, window, time_limit)
    cols = ["round", "jobs", "window_optimum", "optimum_proven", "window_bound", "policy_value", "policy_proven", "abs_gap"]
    typer.echo(format_table(rows, cols))
    gaps = [r["abs_gap"] for r in rows if r.get("abs_gap") is not None]
    if gaps:
        typer.echo(f"{len(rows)} rounds, {sum(g > 1e-9 for g in gaps)} with a positive gap, "
                   f"mean gap {sum(gaps) / len(gaps):.4g}, max {max(gaps):.4g}")
    if output is not None:
        write_rows(rows, output, cols)
