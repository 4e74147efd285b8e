"""``sensaopt plot SCHEDULE.json -o gantt.png``: draw a schedule (or a solve result)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer

from sensaopt.cli.app import app
from sensaopt.cli.options import in_range
from sensaopt.plot import GPU_LANES_MAX, LANE_MODES

KINDS = ("gantt", "utilization", "both")


def _window(start: float | None, end: float | None, last: float) -> tuple[float, float] | None:
    """The ``--from`` / ``--to`` window in minutes (a missing end: 0 or the schedule's last
    minute ``last``), None when neither is given; ``--to`` before ``--from`` is a usage error."""
    if start is None and end is None:
        return None
    lo = 0.0 if start is None else start
    hi = max(last, lo + 1.0) if end is None else end
    if not lo < hi:
        raise typer.BadParameter(f"must be after --from ({lo:g} minutes{'' if start is not None else ', the default'}), got {hi:g}",
                                 param_hint="'--to'")
    return lo, hi


def _minutes(flag: str) -> Callable[[float | None], float | None]:
    """typer callback: a time in minutes within the range of start times (:data:`sensaopt.limits.OPTIONS` ``start``)."""
    from sensaopt.limits import OPTIONS

    def cb(value: float | None) -> float | None:
        msg = None if value is None else OPTIONS["start"].problem(value)
        if msg is not None:
            raise typer.BadParameter(msg, param_hint=f"'{flag}'")
        return value

    return cb


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
                                  help="Draw at most this many nodes in the Gantt chart (the first with placements in the drawn window)."),
    bin_minutes: float | None = typer.Option(None, callback=in_range("bin_minutes"),
                                             help="Utilization: average over bins of this many minutes."),
    dpi: int = typer.Option(120, callback=in_range("dpi"), help="Resolution of raster images."),
    start: float | None = typer.Option(None, "--from", metavar="MIN", callback=_minutes("--from"),
                                       help="Draw from this minute on (default: the first start; utilization: 0)."),
    end: float | None = typer.Option(None, "--to", metavar="MIN", callback=_minutes("--to"),
                                     help="Draw up to this minute (default: the last end)."),
    lanes: str = typer.Option("auto", metavar="auto|gpu|node",
                              help="Gantt rows: a lane per GPU, a row per node (bar height = share of its GPUs), "
                                   f"or auto (per GPU up to {GPU_LANES_MAX} GPUs drawn, else per node)."),
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
    if lanes not in LANE_MODES:
        raise InputError("(command line)", "--lanes", f"unknown lanes {lanes!r}; known: {', '.join(LANE_MODES)}")
    raw = read_json(schedule)
    inst_path = _find_instance(schedule, raw, instance)
    check_output(output, inputs=[schedule, inst_path], field="-o")  # before anything is drawn
    inst = load_instance(inst_path)
    sched = parse_schedule_dict(raw, inst, str(schedule))
    n_nodes = inst.cluster.num_nodes
    R = inst.round_minutes
    window = _window(start, end, max((s.end for s in sched.segments), default=1) * R)
    lo, hi = window if window is not None else (-1.0, float("inf"))
    active = sorted({p.node for s in sched.segments if s.end * R > lo and s.start * R < hi for p in s.placements})
    nodes = (active or list(range(n_nodes)))[:max_nodes]  # the first nodes with activity (in the window)
    title = f"{inst.name}: {raw.get('solver', schedule.name) if isinstance(raw, dict) else schedule.name}"
    if kind == "both":
        top = splot.gantt_figure_height(inst, nodes, lanes)  # capped: the utilization keeps its 3.5 inches
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, top + 3.5), height_ratios=[top, 3.5], layout="constrained")
        ev = check_schedule(inst, sched, require_complete=False)  # validated once for both panels
        splot.gantt(inst, sched, a1, nodes=nodes, title=title, evaluation=ev, window=window, lanes=lanes)
        splot.utilization(inst, ev, a2, bin_minutes=bin_minutes, window=a1.get_xlim())  # the panels share their x range
    else:
        ax = (splot.gantt(inst, sched, nodes=nodes, title=title, window=window, lanes=lanes) if kind == "gantt"
              else splot.utilization(inst, sched, bin_minutes=bin_minutes, title=title, window=window))
        root = ax.figure
        fig = root if isinstance(root, Figure) else root.figure  # a SubFigure's root Figure
    try:  # the format from the suffix (no suffix: matplotlib's default, PNG), written atomically to exactly `output`
        with staged(output, inputs=[schedule, inst_path], field="-o") as tmp:
            fig.savefig(tmp, dpi=dpi, format=output.suffix[1:].lower() or plt.rcParams["savefig.format"])
    except ValueError as e:  # unknown image format
        raise InputError(str(output), "-o", str(e)) from None
    finally:
        plt.close(fig)
    where = "in the window" if window else "in the schedule"
    note = ("" if len(nodes) == n_nodes or kind == "utilization" else
            f" ({'first ' if len(active) > len(nodes) else ''}{len(nodes)} of the {len(active)} nodes with placements {where}, "
            f"{n_nodes} in all)")
    if kind != "utilization":
        note += f", one row per {'GPU' if splot.gantt_lanes(inst, nodes, lanes) == 'gpu' else 'node'}"
    if window is not None:
        note += f", minutes {window[0]:g}–{window[1]:g}"
    typer.echo(f"wrote {output}: {kind} of {len(sched.segments)} segments, {len({s.job for s in sched.segments})} jobs{note}")

