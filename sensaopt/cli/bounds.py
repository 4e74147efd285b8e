"""``sensaopt bound``: lower bounds on deadline misses and average JCT of an instance
file or a trace workload, valid for every schedule (:mod:`sensaopt.bounds`)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from sensaopt.cli.app import app
from sensaopt.cli.options import in_range, with_workload
from sensaopt.config import WorkloadConfig


def _trace_given(ctx: typer.Context) -> bool:
    """Whether a workload option (``--trace``, ``--preset``, ...; not ``--move-cost-scale``,
    which applies to an instance file too) was given on the command line."""
    return any(getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"  # typer may bring its own click
               for name in WorkloadConfig.__dataclass_fields__ if name != "move_cost_scale")


@app.command()
@with_workload()
def bound(
    ctx: typer.Context,
    workload: WorkloadConfig,
    instance: Path | None = typer.Argument(None, help="Instance JSON file or packaged instance name; or --trace NAME instead."),
    step_minutes: float = typer.Option(0.0, callback=in_range("step_minutes"),
                                       help="Miss bound: at most one block start per this many minutes (0: every release round)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the bounds as JSON (default: not written)."),
) -> None:
    """Lower bounds no schedule beats: deadline misses (trivial + capacity over time blocks)
    and average JCT (per job + pooled capacity), at best speed and at the proportional
    share, with each part's reasoning (models/bounds.md). Change costs only lose progress:
    the bounds ignore them and hold at any --move-cost-scale."""
    from sensaopt.bounds import bounds_lines, compute_bounds
    from sensaopt.errors import InputError
    from sensaopt.io import json_text, load_instance
    from sensaopt.outputs import check_output, write_text

    traced = _trace_given(ctx)
    if (instance is None) == (not traced):
        raise InputError("(command line)", "INSTANCE", "give an instance file or --trace NAME (with its workload options), one of them")
    inputs = [instance] if instance is not None else [workload.trace]
    if output is not None:
        check_output(output, inputs=inputs, field="-o")
    if instance is not None:
        inst = load_instance(instance).with_move_cost_scale(workload.move_cost_scale)
    else:
        from sensaopt.datasets import require
        from sensaopt.traces.sources import data_needed, workload_instance

        require(data_needed(workload.trace, workload.guided))
        inst, _ = workload_instance(workload)
    b = compute_bounds(inst, step_minutes=step_minutes)
    d = {"source": str(instance) if instance is not None else workload.trace, **b.to_dict()}
    if output is not None:
        write_text(output, json_text(d, indent=1, where=str(output)), inputs=inputs, field="-o")
    if as_json:
        sys.stdout.write(json_text(d, where="--json") + "\n")
    else:
        typer.echo("\n".join(bounds_lines(b)))
