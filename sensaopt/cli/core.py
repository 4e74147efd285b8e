"""Core commands: solve, validate, generate, schema, show-versions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from sensaopt.cli.app import app, command_line


def _version_cb(value: bool):
    if value:
        from sensaopt import __version__

        typer.echo(f"sensaopt {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version_cb, is_eager=True, help="Print the version and exit.")):
    pass


def summary_line(res) -> str:
    m = res.metrics
    parts = [f"{res.solver}: {res.status.value}"]
    if res.objective is not None:
        parts.append(f"objective {res.objective:.4f}")
    elif res.schedule is None and res.status.value in ("TIME_LIMIT", "FEASIBLE", "ERROR"):
        parts.append("no solution found")
    if res.bound is not None:
        parts.append(f"bound {res.bound:.4f}")
    if m is not None:
        parts.append(f"SLO violations {m.slo_violations}/{m.slo_jobs} ({100 * m.slo_violation_rate:.1f}%)")
        if m.avg_jct is not None:
            parts.append(f"avg JCT {m.avg_jct:.1f} min")
        if m.avg_queueing_time is not None:
            parts.append(f"avg queueing {m.avg_queueing_time:.1f} min")
        parts.append(f"makespan {m.makespan:g} min")
    parts.append(f"{res.runtime_s:.2f} s")
    return ", ".join(parts)


@app.command()
def solve(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    solver: str = typer.Option("heuristic", help="heuristic | cpsat | milp"),
    policy: str = typer.Option("sensascale", help="Policy for --solver heuristic (sensascale, edf, fifo, ...)."),
    time_limit: Optional[float] = typer.Option(None, help="Seconds, exact solvers."),
    workers: Optional[int] = typer.Option(None, help="Solver threads, exact solvers."),
    weighted: bool = typer.Option(False, "--weighted", help="Exact solvers: one weighted solve instead of deadline loss first, then the whole objective."),
    seed: int = typer.Option(0, help="Random seed (solver seed; profile-error draw for heuristics)."),
    profile_error: float = typer.Option(0.0, help="Heuristics: sigma of the hidden log-normal true-speed factor."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the result (with schedule) as JSON."),
):
    """Solve an instance and report the common metrics."""
    from sensaopt.io import atomic_write_text, load_instance
    from sensaopt.solve import solve as do_solve

    inst = load_instance(instance)
    params: dict = {"seed": seed}
    if solver == "heuristic":
        params.update(policy=policy, profile_error=profile_error)
    else:
        if time_limit is not None:
            params["time_limit"] = time_limit
        if workers is not None:
            params["workers"] = workers
        if weighted:
            params["lexicographic"] = False
    res = do_solve(inst, solver=solver, **params)
    d = res.to_dict(inst)
    d["instance"] = str(instance)
    if output is not None:
        atomic_write_text(output, json.dumps(d, indent=1))
    if as_json:
        sys.stdout.write(json.dumps(d) + "\n")
    else:
        typer.echo(summary_line(res))


@app.command()
def validate(
    instance: Path = typer.Argument(..., help="Instance JSON file."),
    schedule: Path = typer.Argument(..., help="Schedule JSON file (or a `solve -o` result)."),
    as_json: bool = typer.Option(False, "--json"),
):
    """Check a schedule against an instance with the independent validator."""
    from sensaopt.io import load_instance, load_schedule
    from sensaopt.metrics import compute_metrics
    from sensaopt.validator import check_schedule

    inst = load_instance(instance)
    sched = load_schedule(schedule, inst)
    ev = check_schedule(inst, sched)
    if as_json:
        out = {"valid": ev.ok, "errors": [str(e) for e in ev.errors]}
        if ev.ok:
            out["metrics"] = compute_metrics(inst, ev).to_dict()
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        for e in ev.errors:
            typer.echo(str(e))
        if ev.ok:
            m = compute_metrics(inst, ev)
            typer.echo(f"valid: {m.finished} jobs finished, {m.slo_violations} SLO violations, avg JCT {m.avg_jct:.1f} min, objective {m.objective:.4f}")
    if not ev.ok:
        raise typer.Exit(1)


@app.command()
def generate(
    output: Path = typer.Option(..., "-o", "--output", help="Instance file to write."),
    jobs: int = typer.Option(20, help="Number of jobs."),
    nodes: int = typer.Option(2, help="Number of nodes."),
    node_gpus: int = typer.Option(8, help="GPUs per node."),
    node_cpus: int = typer.Option(24, help="CPU cores per node."),
    node_mem_gb: float = typer.Option(500.0, help="Memory GB per node."),
    round_minutes: float = typer.Option(10.0, help="Round length, minutes."),
    load: float = typer.Option(1.3, help="Offered GPU work / capacity over the arrival window."),
    deadline_lo: float = typer.Option(1.1, help="Deadline factor λ lower end (deadline = arrival + λ·work)."),
    deadline_hi: float = typer.Option(2.0, help="Deadline factor λ upper end (tightness)."),
    deadline_round: float = typer.Option(60.0, help="Round deadlines up to a multiple of this many minutes."),
    sensitive_fraction: float = typer.Option(0.5, help="Fraction of jobs with a sensitive model."),
    best_effort_fraction: float = typer.Option(0.0, help="Fraction of jobs without a deadline."),
    work_median: float = typer.Option(60.0, help="Median work, minutes at speed 1.0."),
    work_max: float = typer.Option(480.0, help="Largest work, minutes."),
    gpu_mix: str = typer.Option("1:0.6,2:0.2,4:0.15,8:0.05", help="GPUs per job and their weights, as 'g:w,g:w'."),
    seed: int = typer.Option(0, help="Random seed."),
    name: Optional[str] = typer.Option(None, help="Instance name."),
):
    """Write a seeded synthetic instance."""
    from sensaopt.errors import InputError
    from sensaopt.generate import GeneratorConfig, generate as gen, provenance
    from sensaopt.io import save_instance

    try:
        mix = tuple((int(g), float(w)) for g, w in (item.split(":") for item in gpu_mix.split(",")))
        cfg = GeneratorConfig(
            jobs=jobs, nodes=nodes, node_gpus=node_gpus, node_cpus=node_cpus, node_mem_gb=node_mem_gb,
            round_minutes=round_minutes, load=load, gpu_mix=mix, work_median=work_median, work_max=work_max,
            deadline_lo=deadline_lo, deadline_hi=deadline_hi, deadline_round=deadline_round,
            sensitive_fraction=sensitive_fraction, best_effort_fraction=best_effort_fraction, seed=seed, name=name,
        )
        inst = gen(cfg)
    except ValueError as e:
        raise InputError("(command line)", "generate", f"bad option: {e}") from None
    prov = provenance(cfg)
    prov["command"] = command_line("generate", {
        "output": output, "jobs": jobs, "nodes": nodes, "node_gpus": node_gpus, "node_cpus": node_cpus, "node_mem_gb": node_mem_gb,
        "round_minutes": round_minutes, "load": load, "deadline_lo": deadline_lo, "deadline_hi": deadline_hi,
        "deadline_round": deadline_round, "sensitive_fraction": sensitive_fraction, "best_effort_fraction": best_effort_fraction,
        "work_median": work_median, "work_max": work_max, "gpu_mix": gpu_mix, "seed": seed, "name": name})
    save_instance(inst, output, prov)
    typer.echo(f"wrote {output}: {len(inst.jobs)} jobs, {inst.cluster.num_nodes} nodes x {node_gpus} GPUs")


@app.command()
def schema(output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write to a file instead of stdout.")):
    """Print the JSON Schema of the instance format."""
    from sensaopt.io import atomic_write_text, instance_schema

    text = json.dumps(instance_schema(), indent=1)
    if output is None:
        sys.stdout.write(text + "\n")
    else:
        atomic_write_text(output, text)


@app.command("show-versions")
def show_versions():
    """List the versions of sensaopt, the solvers and the libraries."""
    from sensaopt.result import package_versions

    for k, v in package_versions().items():
        typer.echo(f"{k:12s} {v}")
