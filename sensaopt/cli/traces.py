"""Trace commands: ``simulate``, ``instances from-trace``, ``sweep``, ``experiment paper | ablation | robustness``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import typer

from sensaopt.cli.app import app, command_line, progress_bar
from sensaopt.cli.batch import dask_ready
from sensaopt.cli.options import (
    OUT_DIR,
    budget_option,
    check_table_format,
    dataclass_options,
    in_range,
    out_dir_option,
    policy_option,
    retired_folder_option,
    set_option,
    table_format_option,
    with_workload,
)
from sensaopt.config import WorkloadConfig, field_help
from sensaopt.sweep.experiments import ROBUSTNESS_POLICIES as _ROBUSTNESS_POLICIES
from sensaopt.sweep.paper import WORKLOADS as PAPER_WORKLOADS
from sensaopt.sweep.paper import PaperSettings

instances_app = typer.Typer(no_args_is_help=True, help="Make instance files.")
app.add_typer(instances_app, name="instances")

_TRACE_HELP = field_help(WorkloadConfig, "trace")
_PAPER = PaperSettings()  # experiment paper's defaults, shown in its help
_DEFAULT_WORKLOADS = ",".join(source for label, source, _ in PAPER_WORKLOADS if label in _PAPER.workloads)


PROGRESS_EVERY_S = 60.0  # seconds between progress lines while runs go on (output not a terminal)


def _run_bar(total: int, desc: str, quiet: bool, every_s: float = PROGRESS_EVERY_S) -> tuple[Any, Callable[[int, int], None]]:
    """Progress over runs (sweep, experiment commands) and its callback(done, total): a
    bar on a terminal, else lines (:class:`sensaopt.cli.batch.RunLines`: one per finished
    run and one every ``every_s`` seconds), nothing with ``quiet``."""
    import sys

    if not quiet and not sys.stderr.isatty():
        from sensaopt.cli.batch import RunLines

        lines = RunLines(total, desc, every_s)
        return lines, lines.update
    bar, _ = progress_bar(total, desc, quiet, unit="run")

    def cb(n: int, total: int) -> None:
        bar.total = total
        bar.update(n - bar.n)

    return bar, cb


def _progress_every_option() -> Any:
    return typer.Option(PROGRESS_EVERY_S, "--progress-every", metavar="SECONDS", callback=in_range("progress_every"),
                        help="Output not a terminal: a progress line per finished run and one every SECONDS (0: only per run).")


def _store(root: Path) -> tuple[Any, Any]:
    """The result store under ``root`` with its warnings collected (:class:`sensaopt.cli.batch.ResumeNotes`), and them."""
    from sensaopt.cli.batch import ResumeNotes
    from sensaopt.sweep import ResultStore

    notes = ResumeNotes()
    return ResultStore(root, warn=notes), notes


def _resume_summary(notes: Any) -> None:
    line = notes.summary()
    if line:
        typer.echo(line, err=True)


def schedule_files(path: Path, policies: list[str]) -> dict[str, Path]:
    """Files of ``simulate --save-schedule PATH``: policy -> result JSON (PATH itself
    for one policy, else PATH's stem + ``.POLICY`` + its suffix), and ``""`` -> the
    instance file beside them (stem + ``.instance.json``)."""
    from sensaopt.policies import file_stem

    suffix = path.suffix or ".json"
    files = {pol: path if len(policies) == 1 else path.with_name(f"{path.stem}.{file_stem(pol)}{suffix}") for pol in policies}
    files[""] = path.with_name(f"{path.stem}.instance.json")
    return files


@app.command()
@with_workload(required=("trace",))
def simulate(
    workload: WorkloadConfig,
    policy: list[str] = policy_option("Policy; repeat for several.", repeat=True),
    settings: list[str] = set_option(),
    skip_malformed: bool = typer.Option(False, help="Skip (and count) malformed trace rows instead of stopping."),
    output: Path = out_dir_option("Output folder: per policy its per-job table and summary JSON."),
    _retired: str | None = retired_folder_option("-o", "--output"),
    table_format: str = table_format_option("the per-job tables (POLICY.jobs.csv or .parquet)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    save_schedule: Path | None = typer.Option(
        None, "--save-schedule", metavar="FILE",
        help="Also write the result with its schedule as JSON for `sensaopt plot FILE` (several policies: FILE's stem + "
             ".POLICY.json each), and the instance beside it (STEM.instance.json) (default: not written)."),
) -> None:
    """Simulate policies on a trace or generator; write per-job CSV (or Parquet) and summary JSON per policy."""
    from sensaopt.cli.core import summary_line
    from sensaopt.config import policy_settings
    from sensaopt.datasets import require
    from sensaopt.io import instance_to_dict, json_text
    from sensaopt.outputs import Kept, check_distinct, check_output, check_output_dir, write_text
    from sensaopt.simulator import simulate as run
    from sensaopt.traces.run import output_paths, write_outputs
    from sensaopt.traces.sources import data_needed, workload_instance

    knobs = policy_settings(policy, settings)  # every --policy and --set checked before the trace is read
    fmt = check_table_format(table_format)
    require(data_needed(workload.trace, workload.guided))  # a missing data file: one line naming `sensaopt data fetch`
    inputs = (workload.trace,)  # a trace file (a generator's name is no file and never matches)
    check_output_dir(output, field=OUT_DIR)
    saved = schedule_files(save_schedule, policy) if save_schedule is not None else {}
    files = [(p, OUT_DIR) for pol in policy for p in output_paths(output, pol, fmt)] + [(p, "--save-schedule") for p in saved.values()]
    for p, opt in files:  # every output file checked before the first policy runs
        check_output(p, inputs=inputs, field=opt)
    check_distinct(files)
    inst, data = workload_instance(workload, on_error="skip" if skip_malformed else "raise")
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(data.skipped.items())) or "none"
    size = f"{len(inst.jobs)} jobs on {inst.cluster.num_nodes} nodes / {inst.cluster.total_gpus} GPUs"
    typer.echo(f"{inst.name}: {size} (skipped: {skipped})", err=True)
    described = {**asdict(workload), "skipped": data.skipped}
    if saved:
        write_text(saved[""], json_text(instance_to_dict(inst, {"workload": described}), indent=1, where=str(saved[""])),
                   inputs=inputs, field="--save-schedule")
    kept = Kept()
    if saved:
        kept.note(saved[""], "")
    with kept.guard():  # each policy's files are written when it finishes: an error or Ctrl-C keeps the finished ones
        for pol in policy:
            bar, cb = progress_bar(len(inst.jobs), pol, quiet)
            try:
                res = run(inst, pol, seed=workload.seed, profile_error=workload.profile_error, progress=cb, policy_config=knobs[pol])
            finally:
                bar.close()
            assert res.evaluation is not None  # the simulator always evaluates its schedule
            text = None
            if saved:  # a `solve -o` result file naming its instance file (relative: found beside it); made before any write
                text = json_text({**res.to_dict(inst), "instance": saved[""].name}, indent=1, where=str(saved[pol]))
            for p in write_outputs(output, pol, inst, res, res.evaluation, {**described, "policy_config": knobs[pol]}, inputs, fmt):
                kept.note(p, "")
            if text is not None:
                write_text(saved[pol], text, inputs=inputs, field="--save-schedule")
                kept.note(saved[pol], "")
            typer.echo(summary_line(res))


@instances_app.command("from-trace")
def instances_from_trace(
    trace: str = typer.Option(..., "--trace", callback=in_range("trace"), help=_TRACE_HELP),
    jobs: int = typer.Option(8, "--jobs", "-n", callback=in_range("jobs"), metavar="N", help="Jobs per window (consecutive by arrival)."),
    count: int = typer.Option(20, callback=in_range("count"), metavar="N", help="Number of windows."),
    stride: int | None = typer.Option(None, callback=in_range("stride"), metavar="N", help="Jobs between window starts (default: --jobs)."),
    first: int = typer.Option(0, callback=in_range("first"), metavar="N", help="Index of the first window's first job."),
    start: float = typer.Option(0.0, callback=in_range("start"), help="Trace window start, minutes."),
    days: float | None = typer.Option(None, callback=in_range("days"), help="Trace window, days."),
    node_gpus: int = typer.Option(8, callback=in_range("node_gpus"), help="GPUs per node of the scaled-down cluster."),
    cpu_per_gpu: float = typer.Option(3.0, callback=in_range("cpu_per_gpu"), help="Cores per GPU."),
    mem_per_gpu: float = typer.Option(62.5, callback=in_range("mem_per_gpu"), help="GB per GPU."),
    load: float = typer.Option(1.15, callback=in_range("load"), help="Target offered load of each window's cluster."),
    max_nodes: int = typer.Option(4, callback=in_range("max_nodes"), metavar="N", help="At most this many nodes per window."),
    round_minutes: float = typer.Option(10.0, callback=in_range("round_minutes"), help="Round length, minutes."),
    deadlines: str | None = typer.Option(None, help="keep (the trace's) | rule (SPEC rule) (default: keep when the trace has them, "
                                                     "else rule)."),
    seed: int = typer.Option(0, callback=in_range("seed"), help="Seed (model types, rule deadlines, generators)."),
    sensitive_fraction: float = typer.Option(0.5, callback=in_range("sensitive_fraction"), help="Fraction of sensitive model types."),
    mix: str = typer.Option("fraction", help="fraction | synergy"),
    output: Path = out_dir_option("Folder for the instance files."),
    _retired: str | None = retired_folder_option("-o", "--output"),
    columns: str | None = typer.Option(None, "--columns", help=field_help(WorkloadConfig, "columns")),
) -> None:
    """Cut windows of N consecutive trace jobs into instance files (cluster scaled to their load)."""
    from sensaopt.datasets import require
    from sensaopt.errors import InputError
    from sensaopt.io import save_instance
    from sensaopt.outputs import check_output, check_output_dir
    from sensaopt.traces.sensitivity import SensitivityMix
    from sensaopt.traces.sources import data_needed, make_trace
    from sensaopt.traces.windows import WindowConfig, cut_windows

    check_output_dir(output, field=OUT_DIR)
    require(data_needed(trace))
    data = make_trace(trace, start=start, days=days, seed=seed, columns=columns)
    cfg = WindowConfig(n_jobs=jobs, count=count, stride=stride, first=first, node_gpus=node_gpus, cpu_per_gpu=cpu_per_gpu,
                       mem_per_gpu=mem_per_gpu, load=load, max_nodes=max_nodes, round_minutes=round_minutes, deadlines=deadlines, seed=seed)
    try:
        wins = cut_windows(data, cfg, SensitivityMix(mode=mix, sensitive_fraction=sensitive_fraction))
    except ValueError as e:
        raise InputError("--deadlines", "options", str(e)) from None
    opts = {"trace": trace, "jobs": jobs, "count": count, "stride": stride, "first": first, "start": start, "days": days,
            "node_gpus": node_gpus, "cpu_per_gpu": cpu_per_gpu, "mem_per_gpu": mem_per_gpu, "load": load, "max_nodes": max_nodes,
            "round_minutes": round_minutes, "deadlines": deadlines, "seed": seed, "sensitive_fraction": sensitive_fraction, "mix": mix}
    if columns is not None:
        opts["columns"] = columns
    cmd = command_line("instances from-trace", opts)
    for inst, _ in wins:  # every window's file checked before the first is written
        check_output(Path(output) / f"{inst.name}.json", inputs=[trace], field=OUT_DIR)
    for inst, prov in wins:
        prov["command"] = cmd
        p = Path(output) / f"{inst.name}.json"
        save_instance(inst, p, prov)
        typer.echo(f"{p}: {len(inst.jobs)} jobs, {inst.cluster.num_nodes} x {node_gpus} GPUs")
    if not wins:
        raise InputError(trace, "windows", "no window could be cut (trace too short or jobs too large for --max-nodes)")


@app.command()
@with_workload(grid=True)
def sweep(
    workload: list[WorkloadConfig],
    policy: list[str] = policy_option("Policy; repeat for several (each runs every workload of the grid).", repeat=True),
    settings: list[str] = set_option(),
    store: Path = out_dir_option("Result folder: runs/KEY.json per run, summary.csv; rerun to resume."),
    _retired: str | None = retired_folder_option("--store", "-o", "--output"),
    table_format: str = table_format_option("the summary table (summary.csv or .parquet)"),
    scheduler: str | None = typer.Option(None, help="tcp://HOST:PORT of an existing Dask scheduler (default: a LocalCluster)."),
    workers: int = typer.Option(2, callback=in_range("workers"), metavar="N", help="LocalCluster worker processes."),
    serial: bool = typer.Option(False, help="Run in this process, without Dask."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    progress_every: float = _progress_every_option(),
) -> None:
    """Run the cartesian product of the options (repeat any workload option) on Dask; finished runs are kept by config hash."""
    from sensaopt.config import as_pairs, policy_settings
    from sensaopt.datasets import require
    from sensaopt.outputs import check_output, check_output_dir, write_bytes
    from sensaopt.sweep import RunConfig, run_serial, run_sweep
    from sensaopt.sweep.report import summary_table
    from sensaopt.sweep.runner import check_configs
    from sensaopt.traces.sources import data_needed

    knobs = policy_settings(policy, settings)
    fmt = check_table_format(table_format)
    table = Path(store) / f"summary.{fmt}"
    require(name for w in workload for name in data_needed(w.trace, w.guided))  # every file checked before any run starts
    traces = [w.trace for w in workload]
    check_output_dir(store, field=OUT_DIR)
    check_output(table, inputs=traces, field=OUT_DIR)
    cfgs = [RunConfig(**asdict(w), policy=p, policy_config=as_pairs(knobs[p])) for w in workload for p in policy]
    cfgs = list({c.key(): c for c in cfgs}.values())  # a value repeated in a grid (--load 1 --load 1) is one run, one row
    check_configs(cfgs, trace_files=scheduler is None)  # a bad trace or preset: one line before any run, not N failed runs
    st, notes = _store(store)
    bar, cb = _run_bar(len(cfgs), "sweep", quiet, progress_every)
    if not serial:
        dask_ready()
    try:
        with _stored_runs(cfgs, st, st.root / "runs").guard():
            rep = run_serial(cfgs, st, cb) if serial else run_sweep(cfgs, st, scheduler=scheduler, n_workers=workers, progress=cb)
    finally:
        bar.close()
        _resume_summary(notes)
    records = [st.get(c.key()) for c in cfgs]
    write_bytes(table, summary_table([r for r in records if r is not None], fmt), inputs=traces, field=OUT_DIR)
    typer.echo(f"{rep.total} runs: {rep.reused} reused, {len(rep.computed)} computed, {len(rep.failed)} failed; table: {table}")
    for k, err in rep.failed.items():
        typer.echo(f"failed {k}: {err}", err=True)
    if rep.failed:
        raise typer.Exit(1)


experiment_app = typer.Typer(no_args_is_help=True, help="The paper's experiments.")
app.add_typer(experiment_app, name="experiment")


@experiment_app.command("paper")
def experiment_paper(
    output: Path = out_dir_option("Output folder: runs/ is the resumable store (rerun to resume), plus the tables and figures."),
    _retired: str | None = retired_folder_option("-o", "--output"),
    table_format: str = table_format_option("runs and table: parquet also writes runs.parquet and table.parquet beside the CSVs"),
    scale: float = typer.Option(1.0, callback=in_range("scale"),
                               help="1 = the full traces and clusters; < 1: that fraction of jobs (seeded) on that fraction of GPUs."),
    policy: list[str] = typer.Option([], "--policy", metavar="NAME",
                                     help="Policies, repeat (default: the second edition's, those registered: sensascale "
                                          "sensascale-paper chronus synergy-tune edf edf-demote edf-tune edf-tune-demote lst fifo)."),
    seeds: int = typer.Option(3, "--seeds", callback=in_range("seeds"), metavar="N",
                              help="Number of seeds: --seed, --seed + 1, ... (each a run of every cell)."),
    seed: int = typer.Option(0, callback=in_range("seed"), help="First seed (model types, generator, Helios deadlines, thinning)."),
    round_minutes: float = typer.Option(5.0, callback=in_range("round_minutes"), help="Round length, minutes."),
    sensitive_fraction: float = typer.Option(0.5, callback=in_range("sensitive_fraction"), help="Fraction of sensitive model types."),
    node: str = typer.Option("synergy", help="Node shape of the 8 main cells: synergy (3 cores, 62.5 GB per GPU) | chronus "
                                             "(16 cores, 32 GB) | alibaba (12 cores, 48 GB)."),
    helios_days: float = typer.Option(14.0, callback=in_range("helios_days"), help="Days of Helios-calibrated arrivals."),
    shape: list[str] = typer.Option([], "--shape", help="Further node shapes running Philly SLO (repeat; 'none': no further cells) "
                                                         f"(default: {' '.join(_PAPER.shapes)})."),
    shape_gpus: list[int] = typer.Option([], "--shape-gpus", metavar="N",
                                         help=f"GPUs per node of those cells (repeat) (default: {' '.join(map(str, _PAPER.shape_gpus))})."),
    duration_at: str = typer.Option("none", "--duration-at", help=field_help(WorkloadConfig, "duration_at")),
    decomposition: bool = typer.Option(False, "--decomposition",
                                       help="Add the speed-up decomposition rows (SensaScale with no job above speed 1; "
                                            "ordering only) on the Philly SLO 8-GPU cell."),
    results: Path | None = typer.Option(
        None, "--results", metavar="DIR",
        help="Also write the tables, figures and provenance.json (commit, command, versions, machine, config keys) into DIR "
             "(default: not written)."),
    scheduler: str | None = typer.Option(None, help="tcp://HOST:PORT of an existing Dask scheduler (default: a LocalCluster)."),
    workers: int = typer.Option(2, callback=in_range("workers"), metavar="N", help="LocalCluster worker processes."),
    serial: bool = typer.Option(False, help="Run in this process, without Dask."),
    report_only: bool = typer.Option(False, help="Run nothing: tabulate the runs already stored (a partial table if some are missing)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    progress_every: float = _progress_every_option(),
    budget: str = budget_option(_PAPER.budget, "lease MILP of Chronus (its time_limit_s then the safety net)"),
    workloads: list[str] = typer.Option(
        [], "--workloads", metavar="NAME[,NAME...]",
        help="Workloads (trace sources or labels, comma-separated or repeated; also helios-venus, the real Venus job log). Cells "
             f"whose data is absent are skipped and named (default: {_DEFAULT_WORKLOADS})."),
) -> None:
    """{Philly SLO, MIX1, MIX2, Helios} x {8, 16-GPU nodes} x policies x seeds: mean and 95 % interval per cell
    (table.md/csv, runs.csv), change vs Chronus, figures."""
    import json
    import time

    from sensaopt.outputs import write_text
    from sensaopt.sweep import paper
    from sensaopt.sweep.paper import paper_configs
    from sensaopt.sweep.provenance import git_state, machine
    from sensaopt.sweep.runner import check_configs

    t0, git, host = time.perf_counter(), git_state(), machine()  # the code and machine as the command starts
    s, extra = _paper_settings(output, results, table_format, policy, seed, seeds, scale, round_minutes, sensitive_fraction, node,
                               helios_days, shape, shape_gpus, duration_at, decomposition, workloads, budget)
    runs = paper_configs(s)
    check_configs([c for _, _, c in runs])  # e.g. --node bogus: one line before any run
    if not report_only:  # every trace file checked before any run starts (not a table of n/a and a "not found" per run)
        s, runs = _present_workloads(s, runs)
    store, notes = _store(output)  # runs in output/runs/<key>.json
    cfgs = [c for _, _, c in runs]
    try:
        rep, records = _run_grid(cfgs, store, "paper", quiet, report_only, serial, scheduler, workers, progress_every)
    finally:
        _resume_summary(notes)
    rows, cells, md = paper.build_report(s, runs, records, bounds=paper.missing_bounds(runs, records))
    written = paper.write_report(output, cells, rows, md, runs, records, parquet=bool(extra))
    if results is not None:
        status = dict.fromkeys(rep.computed, "computed") | dict.fromkeys(rep.failed, "failed")
        status |= {k: "reused" for k in records if k not in status}
        prov = paper.provenance(s, paper.paper_args(s, output, results), runs, records, status, git=git, machine=host,
                                wall_s=time.perf_counter() - t0,
                                execution={"serial": serial, "workers": workers, "scheduler": scheduler, "report_only": report_only})
        written += paper.write_report(results, cells, rows, md, runs, records, field="--results", parquet=bool(extra))
        write_text(results / "provenance.json", json.dumps(prov, indent=1) + "\n", field="--results")
    typer.echo(md)
    _echo_runs(rep, records, written)


def _paper_settings(output: Path, results: Path | None, table_format: str, policy: list[str], seed: int, seeds: int, scale: float,
                    round_minutes: float, sensitive_fraction: float, node: str, helios_days: float, shape: list[str],
                    shape_gpus: list[int], duration_at: str, decomposition: bool, workloads: list[str],
                    budget: str) -> tuple[Any, tuple[str, ...]]:
    """The settings of ``sensaopt experiment paper`` from its options (named as the command
    names them), each checked before any run (one line naming the option), and the parquet
    files written beside the CSVs (none for ``--format csv``)."""
    from sensaopt.errors import InputError
    from sensaopt.limits import MAX_SEED
    from sensaopt.outputs import check_output, check_output_dir
    from sensaopt.policies import check_policies, policy_names
    from sensaopt.solvers.budget import budget_spec, parse_budget
    from sensaopt.sweep import paper
    from sensaopt.sweep.paper import POLICIES, PaperSettings

    known = set(policy_names())
    pols = tuple(policy) if policy else tuple(p for p in POLICIES if p in known)
    check_policies(pols)
    if seed + seeds - 1 > MAX_SEED:
        raise InputError("--seeds", "seeds", f"--seed {seed} + --seeds {seeds} - 1 passes the largest seed {MAX_SEED}")
    fmt = check_table_format(table_format)
    extra = paper.PARQUET_FILES if fmt == "parquet" else ()
    if not (0 < scale <= 1):
        raise InputError("--scale", "scale", "must be within (0, 1]")
    check_output_dir(output, field=OUT_DIR)
    for name in paper.REPORT_FILES + extra:  # every output checked before any run
        check_output(output / name, field=OUT_DIR)
    if results is not None:
        check_output_dir(results, field="--results")
        for name in paper.RESULT_FILES + extra:
            check_output(results / name, field="--results")
    shapes = tuple(x for x in shape if x.lower() != "none") if shape else paper.SHAPES
    try:
        chosen = paper.workload_choice(workloads) if workloads else paper.DEFAULT_WORKLOADS
    except ValueError as e:
        raise InputError("--workloads", "workload", str(e)) from None
    s = PaperSettings(scale=scale, policies=pols, seeds=tuple(range(seed, seed + seeds)), round_minutes=round_minutes,
                      sensitive_fraction=sensitive_fraction, node=node, helios_days=helios_days, shapes=shapes,
                      shape_gpus=tuple(shape_gpus) or PaperSettings.shape_gpus, decomposition=decomposition,
                      duration_at=None if duration_at.lower() == "none" else duration_at, workloads=chosen,
                      budget=budget_spec(parse_budget(budget)))
    if decomposition:
        try:
            paper.check_decomposition()
        except ValueError as e:
            raise InputError("--decomposition", "knobs", str(e)) from None
    return s, extra


def _present_workloads(s: Any, runs: list[Any]) -> tuple[Any, list[Any]]:
    """The settings and runs of the workloads whose data files are all present; the others
    named on stderr (with the fetch command); :class:`MissingDataError` when none is."""
    from sensaopt.datasets import MissingDataError, require
    from sensaopt.sweep.paper import paper_configs
    from sensaopt.traces.sources import data_needed

    missing: dict[str, list[str]] = {}  # workload label -> its missing files
    for label, _, c in runs:
        try:
            require(data_needed(c.trace, c.guided))
        except MissingDataError as e:
            missing.setdefault(label, e.names)
    if not missing:
        return s, runs
    present = tuple(w for w in s.workloads if w not in missing)
    if not present:
        require(n for names in missing.values() for n in names)  # raises: every missing file, one line
    names = list(dict.fromkeys(n for ns in missing.values() for n in ns))
    cells = "; ".join(f"{label} ({', '.join(ns)})" for label, ns in missing.items())
    typer.echo(f"skipped (data not found): {cells}; fetch with `sensaopt data fetch {' '.join(names)}`", err=True)
    s = replace(s, workloads=present)
    return s, paper_configs(s)


def _stored_runs(cfgs: list[Any], store: Any, where: Any) -> Any:
    """A :class:`sensaopt.outputs.Kept` counting, when the command ends early, the runs of
    ``cfgs`` the store holds (an interrupt says ``kept: 3 of 8 runs in STORE``)."""
    from sensaopt.outputs import Kept

    def count() -> str | None:
        done = sum(store.has(c.key()) for c in cfgs)
        return f"{done} of {len(cfgs)} runs" if done else None

    kept = Kept()
    kept.note(where, count)
    return kept


def _run_grid(cfgs: list[Any], store: Any, desc: str, quiet: bool, report_only: bool, serial: bool, scheduler: str | None,
              workers: int, every_s: float = PROGRESS_EVERY_S, task: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """Run the configurations ``cfgs`` not yet in ``store`` (serially or on Dask) with a
    progress bar, or only count them (``report_only``); return the sweep report and the
    stored record of every configuration that has one. Shared by the experiment commands;
    ``task``: the runner's ``run`` and ``cost`` for runs that are not sweep configurations."""
    from sensaopt.sweep import SweepReport, run_serial, run_sweep

    own = task or {}  # run_serial takes the run, run_sweep the run and its cost

    keys = {c.key() for c in cfgs}
    bar, cb = _run_bar(len(keys), desc, quiet if not report_only else True, every_s)
    try:
        if report_only:
            rep = SweepReport(len(keys), sum(store.has(k) for k in keys))
        else:
            if not serial:
                dask_ready()
            with _stored_runs(cfgs, store, store.root / "runs").guard():
                rep = (run_serial(cfgs, store, cb, **{k: own[k] for k in own if k == "run"}) if serial else
                       run_sweep(cfgs, store, scheduler=scheduler, n_workers=workers, progress=cb, **own))
    finally:
        bar.close()
    return rep, {c.key(): r for c in cfgs if (r := store.get(c.key())) is not None}


def _echo_runs(rep: Any, records: dict[str, Any], written: Sequence[Path]) -> None:
    """The run count line (reused / computed / failed / missing) and the files written;
    exit 1 after listing the failed runs, if any."""
    missing = rep.total - len(records)
    typer.echo(f"{rep.total} runs: {rep.reused} reused, {len(rep.computed)} computed, {len(rep.failed)} failed, {missing} missing; "
               f"{', '.join(str(f) for f in written)}")
    for k, err in rep.failed.items():
        typer.echo(f"failed {k}: {err}", err=True)
    if rep.failed:
        raise typer.Exit(1)


@dataclass(frozen=True)
class ExperimentWorkload(WorkloadConfig):
    """The ablation and robustness experiments' workload defaults: the loaded two-day window
    (days 4-6) of the Philly SLO trace on ``philly-8``. The seed is per run (``--seeds``)."""

    trace: str = field(default="chronus-slo", metadata={"help": _TRACE_HELP})
    start: float = field(default=5760.0, metadata={"help": field_help(WorkloadConfig, "start")})
    days: float | None = field(default=2.0, metadata={"help": field_help(WorkloadConfig, "days")})


_EXPERIMENT_FIELDS = tuple(f.name for f in fields(WorkloadConfig) if f.name not in ("seed", "days"))  # --days: own option, below


def _experiment(name: str, workload: WorkloadConfig, output: Path, seeds: int, policies: list[str], scheduler: str | None,
                workers: int, serial: bool, report_only: bool, quiet: bool) -> None:
    """Shared body of ``experiment ablation`` / ``experiment robustness``: check every option
    and output, run the grid through the resumable store, write table (md, csv) and figure."""
    from sensaopt.datasets import require
    from sensaopt.outputs import check_output, check_output_dir, write_text
    from sensaopt.policies import check_policies
    from sensaopt.sweep import experiment_plot as plot
    from sensaopt.sweep import experiments as ex
    from sensaopt.sweep.runner import check_configs
    from sensaopt.traces.sources import data_needed

    check_policies(policies)
    check_output_dir(output, field=OUT_DIR)
    md_path, csv_path, png_path = (check_output(output / n, inputs=(workload.trace,), field=OUT_DIR) for n in ex.output_names(name))
    if name == "ablation":
        runs = ex.ablation_runs(workload, seeds)
    else:
        runs = ex.robustness_runs(workload, seeds, tuple(policies) or ex.ROBUSTNESS_POLICIES)
    cfgs = [c for _, c in runs]
    check_configs(cfgs)  # an unknown policy, preset or trace: one line before any run
    if not report_only:
        require(n for trace, guided in {(c.trace, c.guided) for c in cfgs} for n in data_needed(trace, guided))
    store, notes = _store(output)  # runs in output/runs/<key>.json
    try:
        rep, records = _run_grid(cfgs, store, name, quiet, report_only, serial, scheduler, workers)
    finally:
        _resume_summary(notes)
    md, csv_text, rows = ex.report(name, runs, records)
    write_text(md_path, md, inputs=(workload.trace,), field=OUT_DIR)
    write_text(csv_path, csv_text, inputs=(workload.trace,), field=OUT_DIR)
    fig = plot.ablation_figure(rows) if name == "ablation" else plot.robustness_figure(rows)
    plot.save_figure(fig, png_path)
    typer.echo(md)
    _echo_runs(rep, records, [md_path, csv_path, png_path])


def _days(text: str) -> float | None:
    """``--days`` of the experiments: a number of days, or ``none`` (the whole trace; a
    generator's default). Their default is 2, so ``none`` must be sayable."""
    from sensaopt.cli.options import check_option
    from sensaopt.config import parse_value
    from sensaopt.errors import InputError

    try:
        return check_option("days", parse_value(float | None, text))
    except ValueError as e:
        raise InputError("--days", "days", str(e)) from None


def _experiment_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    return dataclass_options(ExperimentWorkload, "workload", names=_EXPERIMENT_FIELDS)(fn)


_DAYS_HELP = field_help(WorkloadConfig, "days") + " 'none': the whole trace."
_OUT_HELP = "Output folder: runs/ is the resumable store (rerun to resume), plus the table (.md, .csv) and figure (.png)."
_SEEDS_HELP = "Seeds per cell: 0 .. N-1 (model types, thinning, profile error)."


@experiment_app.command("ablation")
@_experiment_options
def experiment_ablation(
    workload: WorkloadConfig,
    output: Path = out_dir_option(_OUT_HELP),
    _retired: str | None = retired_folder_option("-o", "--out", "--output"),
    seeds: int = typer.Option(3, "--seeds", callback=in_range("seeds"), metavar="N", help=_SEEDS_HELP),
    days: str = typer.Option("2", "--days", help=_DAYS_HELP),
    scheduler: str | None = typer.Option(None, help="tcp://HOST:PORT of an existing Dask scheduler (default: a LocalCluster)."),
    workers: int = typer.Option(2, callback=in_range("workers"), metavar="N", help="LocalCluster worker processes."),
    serial: bool = typer.Option(False, help="Run in this process, without Dask."),
    report_only: bool = typer.Option(False, help="Run nothing: tabulate the runs already stored."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """SensaScale with its defaults and with each knob off (one at a time), mean and 95 % interval over seeds."""
    _experiment("ablation", replace(workload, days=_days(days)), output, seeds, [], scheduler, workers, serial, report_only, quiet)


@experiment_app.command("robustness")
@_experiment_options
def experiment_robustness(
    workload: WorkloadConfig,
    output: Path = out_dir_option(_OUT_HELP),
    _retired: str | None = retired_folder_option("-o", "--out", "--output"),
    seeds: int = typer.Option(3, "--seeds", callback=in_range("seeds"), metavar="N", help=_SEEDS_HELP),
    days: str = typer.Option("2", "--days", help=_DAYS_HELP),
    policy: list[str] = typer.Option([], "--policy", metavar="NAME",
                                     help=f"Policies, repeat (default: {' '.join(_ROBUSTNESS_POLICIES)})."),
    scheduler: str | None = typer.Option(None, help="tcp://HOST:PORT of an existing Dask scheduler (default: a LocalCluster)."),
    workers: int = typer.Option(2, callback=in_range("workers"), metavar="N", help="LocalCluster worker processes."),
    serial: bool = typer.Option(False, help="Run in this process, without Dask."),
    report_only: bool = typer.Option(False, help="Run nothing: tabulate the runs already stored."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Move-cost scale, sensitive fraction, model mix, profile error (one at a time) x policies, mean and 95 % interval over seeds."""
    _experiment("robustness", replace(workload, days=_days(days)), output, seeds, policy, scheduler, workers, serial, report_only, quiet)
