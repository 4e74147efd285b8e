"""Trace commands: ``simulate``, ``instances from-trace``, ``sweep``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from sensaopt.cli.app import app

instances_app = typer.Typer(no_args_is_help=True, help="Make instance files.")
app.add_typer(instances_app, name="instances")

_TRACE_HELP = "chronus-slo | chronus-mix1 | chronus-mix2 | helios-gen | philly-gen | synthetic | FILE (Chronus/Helios CSV, Philly JSON)"


def _progress(total: int, desc: str, quiet: bool):
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="job", disable=quiet or not sys.stderr.isatty(), file=sys.stderr, leave=False)

    def cb(r: int, done: int, tot: int) -> None:
        bar.set_postfix_str(f"round {r}", refresh=False)
        bar.update(done - bar.n)

    return bar, cb


@app.command()
def simulate(
    trace: str = typer.Option(..., "--trace", help=_TRACE_HELP),
    preset: str = typer.Option("philly-8", help="Cluster preset: philly-8, philly-16, helios-8, helios-16 (suffix -chronus: Chronus nodes)."),
    policy: List[str] = typer.Option(["sensascale"], "--policy", help="Policy name; repeat for several."),
    start: float = typer.Option(0.0, help="Window start, minutes from the trace origin."),
    days: Optional[float] = typer.Option(None, help="Window length, days (generators: days generated)."),
    limit: Optional[int] = typer.Option(None, help="Keep the first N jobs of the window."),
    jobs: Optional[int] = typer.Option(None, help="Job count for philly-gen / synthetic."),
    round_minutes: float = typer.Option(5.0, help="Round length, minutes."),
    seed: int = typer.Option(0, help="Seed: generators, model-type and deadline draws, profile error."),
    sensitive_fraction: float = typer.Option(0.5, help="Fraction of jobs given sensitive model types (mode fraction)."),
    mix: str = typer.Option("fraction", help="Model-type mix: fraction | synergy (image/language/speech 20/70/10)."),
    guided: bool = typer.Option(False, help="Give sensitive/image models to jobs drawing high Alibaba CPU-per-GPU asks."),
    cpu_per_gpu: Optional[float] = typer.Option(None, help="Cores per GPU (default: the preset's node variant)."),
    mem_per_gpu: Optional[float] = typer.Option(None, help="GB per GPU (default: the preset's node variant)."),
    load: float = typer.Option(1.0, help="Arrival-rate multiplier."),
    best_effort_fraction: float = typer.Option(0.0, help="Traces without deadlines: fraction made best effort."),
    profile_error: float = typer.Option(0.0, help="Sigma of the hidden log-normal true-speed factor."),
    skip_malformed: bool = typer.Option(False, help="Skip (and count) malformed trace rows instead of stopping."),
    output: Path = typer.Option(..., "-o", "--output", help="Output folder."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
):
    """Simulate policies on a trace or generator; write per-job CSV and summary JSON per policy."""
    from sensaopt.cli.core import summary_line
    from sensaopt.traces.run import run_policy, write_outputs
    from sensaopt.traces.sources import make_instance

    inst, data = make_instance(
        trace, preset, start=start, days=days, limit=limit, jobs=jobs, seed=seed, round_minutes=round_minutes, load=load,
        sensitive_fraction=sensitive_fraction, mix_mode=mix, guided=guided, cpu_per_gpu=cpu_per_gpu, mem_per_gpu=mem_per_gpu,
        best_effort_fraction=best_effort_fraction, on_error="skip" if skip_malformed else "raise",
    )
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(data.skipped.items())) or "none"
    typer.echo(f"{inst.name}: {len(inst.jobs)} jobs on {inst.cluster.num_nodes} nodes / {inst.cluster.total_gpus} GPUs (skipped: {skipped})", err=True)
    workload = {"trace": trace, "preset": preset, "start": start, "days": days, "limit": limit, "jobs": jobs, "seed": seed,
                "round_minutes": round_minutes, "sensitive_fraction": sensitive_fraction, "mix": mix, "guided": guided,
                "cpu_per_gpu": cpu_per_gpu, "mem_per_gpu": mem_per_gpu, "load": load, "best_effort_fraction": best_effort_fraction,
                "profile_error": profile_error, "skipped": data.skipped}
    for pol in policy:
        bar, cb = _progress(len(inst.jobs), pol, quiet)
        try:
            res, ev = run_policy(inst, pol, seed=seed, profile_error=profile_error, progress=cb)
        finally:
            bar.close()
        write_outputs(output, pol, inst, res, ev, workload)
        typer.echo(summary_line(res))
