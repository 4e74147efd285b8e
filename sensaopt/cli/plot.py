"""``sensaopt plot SCHEDULE.json -o gantt.png``: draw a schedule (or a solve result)."""

from __future__ import annotations

from pathlib import Path

import typer

from sensaopt.cli.app import app
from sensaopt.cli.options import in_range

KINDS = ("gantt", "utilization", "both")


def _find_instance(schedule_path: Path, raw: dict, instance: Path | None) -> Path:
    """The instance file: ``--instance``, else the ``instance`` path a ``solve -o``
    result records (as given, relative to the schedule file's folder, or the name of a
    packaged instance)."""
    from sensaopt.datasets import packaged_instance
    from sensaopt.errors import InputError

    if instance is not None:
        return instance
    rec = raw.get("instance") if isinstance(raw, dict) else None
    if isinstance(rec, str) and rec:
        for cand in (Path(rec), schedule_path.parent / rec):
            if cand.is_file():
                return cand
        # a result file (`solve tiny-8gpu -o r.json`) records the argument as given, maybe a
        # packaged instance's name; a bare schedule records only the instance's own name
        packaged = packaged_instance(rec) if "solver" in raw else None
        if packaged is not None:
            return Path(str(packaged))
    raise InputError(str(schedule_path), "instance",
                     "cannot tell which instance this schedule belongs to; pass --instance INSTANCE.json")


@app.command()
def plot(
    schedule: Path = typer.Argument(..., help="Schedule JSON, or a result file written by `sensaopt solve -o`."),
    output: Path = typer.Option(..., "-o", "--output", help="Image file to write (.png, .pdf, .svg)."),
    instance: Path | None = typer.Option(None, "--instance", "-i", help="Instance JSON (default: the path a result file records)."),
    kind: str = typer.Option("gantt", help="gantt | utilization | both"),
    max_nodes: int = typer.Option(16, callback=in_range("max_nodes"),
                                  help="Draw at most this many nodes in the Gantt chart (the first ones)."),
    bin_minutes: float | None = typer.Option(None, callback=in_range("bin_minutes"),
                                             help="Utilization: average over bins of this many minutes."),
    dpi: int = typer.Option(120, callback=in_range("dpi"), help="Resolution of raster images."),
) -> None:
    """Draw a schedule as a Gantt chart per node (GPU lanes) and/or its utilization over time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from sensaopt import plot as splot
    from sensaopt.errors import InputError
    from sensaopt.io import load_instance, parse_schedule_dict, read_json
    from sensaopt.outputs import check_output, staged
    from sensaopt.validator import check_schedule

    if kind not in KINDS:
        raise InputError("(command line)", "--kind", f"unknown plot kind {kind!r}; known: {', '.join(KINDS)}")
    raw = read_json(schedule)
    inst_path = _find_instance(schedule, raw, instance)
    check_output(output, inputs=[schedule, inst_path], field="-o")  # before anything is drawn
    inst = load_instance(inst_path)
    sched = parse_schedule_dict(raw, inst, str(schedule))
    n_nodes = inst.cluster.num_nodes
    nodes = list(range(min(n_nodes, max_nodes)))
    title = f"{inst.name}: {raw.get('solver', schedule.name) if isinstance(raw, dict) else schedule.name}"
    if kind == "both":
        lanes = sum(inst.cluster.nodes[n].gpus for n in nodes)
        top = splot.gantt_height(lanes)  # the ratio uses the capped height too: the utilization keeps its 3.5 inches
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, top + 3.5), height_ratios=[top, 3.5], layout="constrained")
        ev = check_schedule(inst, sched, require_complete=False)  # validated once for both panels
        splot.gantt(inst, sched, a1, nodes=nodes, title=title, evaluation=ev)
        splot.utilization(inst, ev, a2, bin_minutes=bin_minutes)
    else:
        ax = (splot.gantt(inst, sched, nodes=nodes, title=title) if kind == "gantt"
              else splot.utilization(inst, sched, bin_minutes=bin_minutes, title=title))
        root = ax.figure
        fig = root if isinstance(root, Figure) else root.figure  # a SubFigure's root Figure
    try:  # the format from the suffix (no suffix: matplotlib's default, PNG), written atomically to exactly `output`
        with staged(output, inputs=[schedule, inst_path], field="-o") as tmp:
            fig.savefig(tmp, dpi=dpi, format=output.suffix[1:].lower() or plt.rcParams["savefig.format"])
    except ValueError as e:  # unknown image format
        raise InputError(str(output), "-o", str(e)) from None
    finally:
        plt.close(fig)
    note = f" (first {len(nodes)} of {n_nodes} nodes)" if len(nodes) < n_nodes and kind != "utilization" else ""
    typer.echo(f"wrote {output}: {kind} of {len(sched.segments)} segments, {len({s.job for s in sched.segments})} jobs{note}")

