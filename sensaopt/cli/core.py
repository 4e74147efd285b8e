"""Core commands: solve, validate, generate, schema, show-versions."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from sensaopt.cli.app import app, command_line
from sensaopt.cli.options import TextCodec, budget_option, dataclass_options, in_range, move_cost_option, policy_option, set_option
from sensaopt.generate import GeneratorConfig
from sensaopt.result import Result


def _version_cb(value: bool) -> None:
    if value:
        from sensaopt import __version__

        typer.echo(f"sensaopt {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_cb, is_eager=True, help="Print the version and exit."),
    log_level: str = typer.Option("warning", "--log-level", metavar="LEVEL",
                                  help="debug | info | warning | error: sensaopt's and Dask's log on stderr (Dask below "
                                       "error only from info on; resume notes one by one from info on)."),
    data_dir: Path | None = typer.Option(None, "--data-dir", metavar="DIR",
                                         help="Read (and fetch) the trace data in DIR only: the same as SENSAOPT_TRACES=DIR "
                                              "(default: SENSAOPT_TRACES if set, else the user cache)."),
    mirror: str | None = typer.Option(None, "--mirror", metavar="URL",
                                      help="Download the data from a copy of the data folder at URL: the same as "
                                           "SENSAOPT_DATA_MIRROR=URL (default: SENSAOPT_DATA_MIRROR if set, else each "
                                           "file's own source)."),
) -> None:
    import os

    from sensaopt.cli.batch import LOG_LEVELS, configure_logging
    from sensaopt.datasets import MIRROR_ENV, TRACES_ENV
    from sensaopt.errors import InputError

    if log_level.lower() not in LOG_LEVELS:
        raise InputError("(command line)", "--log-level", f"unknown level {log_level!r} (use {', '.join(LOG_LEVELS)})")
    configure_logging(log_level.lower())
    if data_dir is not None:  # this process and the workers it starts read the environment
        if data_dir.exists() and not data_dir.is_dir():
            raise InputError(str(data_dir), "--data-dir", "is not a directory (a data folder is needed here)")
        os.environ[TRACES_ENV] = str(data_dir.resolve())
    if mirror is not None:
        if not mirror.startswith(("http://", "https://", "file://")):
            raise InputError("(command line)", "--mirror", f"not a URL: {mirror!r} (http://, https:// or file://)")
        os.environ[MIRROR_ENV] = mirror


def _exact_params(time_limit: float | None, workers: int | None, weighted: bool, cooperate: bool, branch_price: bool,
                  solver_log: bool, budget: str | None = None) -> dict[str, Any]:
    """The exact solvers' keyword arguments of ``solve``'s options (only those given)."""
    given = {"time_limit": time_limit, "budget": budget, "workers": workers, "lexicographic": False if weighted else None,
             "cooperate": cooperate or None, "branch_price": branch_price or None, "log": solver_log or None}
    return {k: v for k, v in given.items() if v is not None}


def summary_line(res: Result) -> str:
    """One line, lexicographic parts first: status, SLO violations, lost deadline value,
    avg JCT and queueing (minutes), makespan, then the scalar objective and its bound,
    runtime (seconds). An exact solver's bound of each part follows it in parentheses
    (:class:`sensaopt.compare.PartBounds`)."""
    from sensaopt.compare import PartBounds

    m = res.metrics
    b = PartBounds.of(res)
    parts = [f"{res.solver}: {res.status.value}"]
    if res.objective is None and res.schedule is None and res.status.value in ("TIME_LIMIT", "FEASIBLE", "ERROR"):
        parts.append("no solution found")
    if m is not None:
        parts.append(f"SLO violations {m.slo_violations}/{m.slo_jobs} ({100 * m.slo_violation_rate:.1f}%)")
        parts.append(f"lost value {m.weighted_violations:g}" + ("" if b.lost_value is None else f" (bound {b.lost_value:g})"))
        if m.avg_jct is not None:
            parts.append(f"avg JCT {m.avg_jct:.1f} min" + ("" if b.avg_jct is None else f" (bound {b.avg_jct:.1f})"))
        if m.avg_queueing_time is not None:
            parts.append(f"avg queueing {m.avg_queueing_time:.1f} min")
        parts.append(f"makespan {m.makespan:g} min")
    if res.objective is not None:
        parts.append(f"objective {res.objective:.4f}")
    if res.bound is not None:
        parts.append(f"bound {res.bound:.4f}")
    parts.append(f"{res.runtime_s:.2f} s")
    return ", ".join(parts)


@app.command()
def solve(
    instance: Path = typer.Argument(..., help="Instance JSON file, or the name of a packaged instance (sensaopt data list)."),
    solver: str = typer.Option("heuristic", help="heuristic | cpsat | highs | cbc | milp (= highs): a name of sensaopt.solve.SOLVERS."),
    policy: str = policy_option("Policy for --solver heuristic."),
    settings: list[str] = set_option(),
    time_limit: float | None = typer.Option(None, callback=in_range("time_limit"), metavar="SECONDS",
                                            help="Exact solvers: seconds (> 0)."),
    budget: str | None = budget_option(None, "exact solve (exact solvers)"),
    workers: int | None = typer.Option(None, callback=in_range("workers"), metavar="N",
                                       help="Exact solvers: solver threads (>= 1)."),
    weighted: bool = typer.Option(False, "--weighted",
                                  help="Exact solvers: one weighted solve instead of deadline loss first, then the whole objective."),
    cooperate: bool = typer.Option(False, "--cooperate",
                                   help="Exact solvers: the other backend (HiGHS or CP-SAT) continues the deadline-hard phase."),
    branch_price: bool = typer.Option(False, "--branch-price",
                                      help="Exact solvers: branch and price for the second half of the deadline-hard phase."),
    seed: int = typer.Option(0, callback=in_range("seed"), help="Random seed (solver seed; profile-error draw for heuristics)."),
    profile_error: float = typer.Option(0.0, callback=in_range("profile_error"),
                                         help="Heuristics: sigma of the hidden log-normal true-speed factor."),
    move_cost_scale: float = move_cost_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the result (with schedule) as JSON (default: not written)."),
    solver_log: bool = typer.Option(False, "--solver-log", help="Exact solvers: show the solver's own log (on stderr)."),
) -> None:
    """Solve an instance and report the common metrics."""
    from sensaopt.config import policy_settings
    from sensaopt.errors import InputError
    from sensaopt.io import json_text, load_instance
    from sensaopt.outputs import check_output, write_text
    from sensaopt.solve import HEURISTIC, SOLVERS
    from sensaopt.solve import solve as do_solve

    SOLVERS.get(solver)  # an unknown name fails before the instance is read
    params: dict[str, Any] = {"seed": seed}
    if solver == HEURISTIC:
        exact_only = [name for name, given in (("--time-limit", time_limit is not None), ("--budget", budget is not None),
                                               ("--workers", workers is not None),
                                               ("--weighted", weighted), ("--cooperate", cooperate),
                                               ("--branch-price", branch_price), ("--solver-log", solver_log)) if given]
        if exact_only:  # silently ignoring them would report a run that did not use them
            raise InputError("(command line)", exact_only[0],
                             "applies to the exact solvers (--solver cpsat|highs|cbc|milp), not to a policy (its knobs: --set key=value)")
        params.update(policy=policy, profile_error=profile_error, policy_config=policy_settings([policy], settings)[policy])
    else:
        if settings:
            raise InputError("--set", settings[0].partition("=")[0], "policy knobs apply to --solver heuristic only")
        params.update(_exact_params(time_limit, workers, weighted, cooperate, branch_price, solver_log, budget))
    if output is not None:  # never the instance itself, a symlink, FIFO or device; checked before the solve
        check_output(output, inputs=[instance], field="-o")
    inst = load_instance(instance).with_move_cost_scale(move_cost_scale)
    from sensaopt.quiet import stdout_to_stderr

    with stdout_to_stderr(solver_log):  # a solver's log is printed from C++ on fd 1: keep stdout for the result
        res = do_solve(inst, solver=solver, **params)
    d = res.to_dict(inst)
    d["instance"] = str(instance)
    if output is not None:
        write_text(output, json_text(d, indent=1, where=str(output)), inputs=[instance], field="-o")
    if as_json:
        sys.stdout.write(json_text(d, where="--json") + "\n")
    else:
        typer.echo(summary_line(res))


@app.command()
def validate(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    schedule: Path = typer.Argument(..., help="Schedule JSON file (or a `solve -o` result)."),
    move_cost_scale: float = move_cost_option(),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Check a schedule against an instance with the independent validator."""
    from sensaopt.io import json_text, load_instance, load_schedule
    from sensaopt.metrics import compute_metrics
    from sensaopt.validator import check_schedule

    inst = load_instance(instance).with_move_cost_scale(move_cost_scale)
    sched = load_schedule(schedule, inst)
    ev = check_schedule(inst, sched)
    if as_json:
        out = {"valid": ev.ok, "errors": [str(e) for e in ev.errors]}
        if ev.ok:
            out["metrics"] = compute_metrics(inst, ev).to_dict()
        sys.stdout.write(json_text(out, where="--json") + "\n")
    else:
        for e in ev.errors:
            typer.echo(str(e))
        if ev.ok:
            m = compute_metrics(inst, ev)
            typer.echo(f"valid: {m.finished} jobs finished, {m.slo_violations} SLO violations, avg JCT {m.avg_jct:.1f} min, "
                       f"objective {m.objective:.4f}")
    if not ev.ok:
        raise typer.Exit(1)


def _mix_text(mix: tuple[tuple[int, float], ...]) -> str:
    return ",".join(f"{g}:{w:g}" for g, w in mix)


def _mix_parse(text: str) -> tuple[tuple[int, float], ...]:
    try:
        return tuple((int(g), float(w)) for g, w in (item.split(":") for item in text.split(",")))
    except ValueError:
        raise ValueError(f"expected 'g:w,g:w' (GPUs per job and their weights), got {text!r}") from None


# the GeneratorConfig fields `generate` exposes, with their help (defaults come from GeneratorConfig)
GENERATE_HELP = {
    "jobs": "Number of jobs.",
    "nodes": "Number of nodes.",
    "node_gpus": "GPUs per node.",
    "node_cpus": "CPU cores per node.",
    "node_mem_gb": "Memory GB per node.",
    "round_minutes": "Round length, minutes.",
    "load": "Offered GPU work / capacity over the arrival window.",
    "gpu_mix": "GPUs per job and their weights, as 'g:w,g:w'.",
    "work_median": "Median work, minutes at speed 1.0.",
    "work_max": "Largest work, minutes.",
    "deadline_lo": "Deadline factor λ lower end (deadline = arrival + λ·work).",
    "deadline_hi": "Deadline factor λ upper end (tightness).",
    "deadline_round": "Round deadlines up to a multiple of this many minutes.",
    "best_effort_fraction": "Fraction of jobs without a deadline.",
    "sensitive_fraction": "Fraction of jobs with a sensitive model.",
    "seed": "Random seed.",
    "name": "Instance name (default: gen-JOBSj-NODESxNODE_GPUS-sSEED).",
}


@app.command()
@dataclass_options(GeneratorConfig, "cfg", names=tuple(GENERATE_HELP), helps=GENERATE_HELP,
                   codecs={"gpu_mix": TextCodec(_mix_text, _mix_parse)})
def generate(
    cfg: GeneratorConfig,
    output: Path = typer.Option(..., "-o", "--output", help="Instance file to write."),
) -> None:
    """Write a seeded synthetic instance."""
    from sensaopt.errors import InputError
    from sensaopt.generate import generate as gen
    from sensaopt.generate import provenance
    from sensaopt.io import save_instance
    from sensaopt.outputs import check_output

    check_output(output, field="-o")
    try:
        inst = gen(cfg)
    except ValueError as e:
        raise InputError("(command line)", "generate", f"bad option: {e}") from None
    prov = provenance(cfg)
    shown = {k: _mix_text(v) if k == "gpu_mix" else v for k, v in asdict(cfg).items() if k in GENERATE_HELP}
    prov["command"] = command_line("generate", {"output": output, **shown})
    save_instance(inst, output, prov)
    typer.echo(f"wrote {output}: {len(inst.jobs)} jobs, {inst.cluster.num_nodes} nodes x {cfg.node_gpus} GPUs")


@app.command()
def schema(output: Path | None = typer.Option(None, "-o", "--output", help="Write to a file instead of stdout (default: stdout).")) -> None:
    """Print the JSON Schema of the instance format."""
    from sensaopt.io import instance_schema
    from sensaopt.outputs import write_text

    text = json.dumps(instance_schema(), indent=1)
    if output is None:
        sys.stdout.write(text + "\n")
    else:
        write_text(output, text, field="-o")


@app.command("show-versions")
def show_versions() -> None:
    """List the versions of sensaopt, the solvers and the libraries."""
    from sensaopt.result import package_versions

    for k, v in package_versions().items():
        typer.echo(f"{k:12s} {v}")
