"""``sensaopt experiment gaps``: certified gaps of the policies on trace windows, one exact
solve per window on Dask (:mod:`sensaopt.sweep.gaps`), resumable, with tables, figures and
provenance."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from sensaopt.cli.options import OUT_DIR, in_range, out_dir_option, retired_folder_option
from sensaopt.cli.traces import _progress_every_option, _resume_summary, experiment_app
from sensaopt.config import WorkloadConfig, field_help
from sensaopt.sweep.gaps import POLICIES, TRACE, ExactSettings, GapSettings, WindowCut
from sensaopt.sweep.provenance import usable_cores

_CUT = WindowCut()
_EXACT = ExactSettings()
_OUT_HELP = ("Output folder: runs/ is the resumable store (rerun to resume), instances/ the windows, plus gaps.md/csv, windows.csv, "
             "gaps.png (and scaling.csv/png with several --jobs) and provenance.json.")


def _sizes(text: str) -> tuple[int, ...]:
    """``--jobs``: one size or several, comma-separated, each checked (one line, exit 2)."""
    from sensaopt.errors import InputError
    from sensaopt.limits import OPTIONS

    sizes = []
    for part in text.split(","):
        try:
            n = int(part.strip())
        except ValueError:
            raise InputError("--jobs", "jobs", f"{part.strip()!r} is not a whole number of jobs (give N or N,N,...)") from None
        problem = OPTIONS["jobs"].problem(n)
        if problem is not None:
            raise InputError("--jobs", "jobs", problem)
        sizes.append(n)
    if len(set(sizes)) != len(sizes):
        raise InputError("--jobs", "jobs", f"a size is given twice in {text!r}")
    return tuple(sizes)


def _policies(given: list[str]) -> tuple[str, ...]:
    """``--policies`` (comma-separated or repeated; default :data:`POLICIES`), each checked."""
    from sensaopt.policies import check_policies

    names = tuple(p.strip() for g in given for p in g.split(",") if p.strip()) or POLICIES
    check_policies(names, field="--policies")
    return names


def _check_exact(name: str) -> None:
    from sensaopt.errors import InputError
    from sensaopt.solve import exact_solver_names

    if name not in exact_solver_names():
        raise InputError("(command line)", "--exact", f"unknown exact solver {name!r}; use {', '.join(exact_solver_names())}")


def _exact_options(given: list[str]) -> tuple[tuple[str, Any], ...]:
    """``--exact-option KEY=VALUE`` (repeatable): options of the exact solve beyond the
    command's own, each a field of :class:`sensaopt.exact.settings.SolveSettings` parsed
    by its type (:func:`sensaopt.config.parse_settings`) and checked (one line, exit 2);
    ``start_policy`` is :data:`sensaopt.warm_start.BEST` (the best registered policy's schedule) unless given: the exact incumbent is then
    never worse than any compared policy, and the policy under test does not seed the
    search it is measured against."""
    from sensaopt.config import parse_settings
    from sensaopt.errors import InputError
    from sensaopt.exact.settings import SolveSettings
    from sensaopt.sweep.gaps import OWN_OPTIONS
    from sensaopt.warm_start import BEST, FIRST_POLICY

    for item in given:
        key = item.partition("=")[0].strip()
        if key in OWN_OPTIONS:
            raise InputError("--exact-option", key, f"set it with --{key.replace('_', '-')}" if key != "lexicographic"
                             else "always true here (deadline loss first)")
    start = [x for x in given if x.partition("=")[0].strip() == "start_policy"]
    out = parse_settings([x for x in given if x not in start], SolveSettings, "the exact solve", field="--exact-option")
    SolveSettings.of("--exact-option", out)  # types and ranges: one line naming the option
    policy = _start_policy(start[-1].partition("=")[2].strip()) if start else BEST
    if policy != FIRST_POLICY:  # SensaScale's is the exact solve's own default: left out, so earlier runs keep their keys
        out["start_policy"] = policy
    return tuple(sorted(out.items()))


def _start_policy(name: str) -> str:
    """``start_policy=NAME``: the warm start of each exact solve, ``best`` (the best
    registered heuristic policy's schedule, :mod:`sensaopt.warm_start`) or a heuristic
    policy's name; anything else is one line naming it (exit 2)."""
    from sensaopt.errors import InputError
    from sensaopt.warm_start import BEST, heuristic_policies

    known = [BEST, *heuristic_policies()]
    if name not in known:
        raise InputError("--exact-option", "start_policy", f"must be one of {', '.join(known)}, got {name!r}")
    return name


def _check_seeds(first: int, count: int, first_opt: str, count_opt: str) -> None:
    """InputError when seeds ``first`` .. ``first + count - 1`` pass the largest seed."""
    from sensaopt.errors import InputError
    from sensaopt.limits import MAX_SEED

    if first + count - 1 > MAX_SEED:
        raise InputError(count_opt, count_opt.lstrip("-").replace("-", "_"),
                         f"{first_opt} {first} + {count_opt} {count} - 1 passes the largest seed {MAX_SEED}")


def _check_outputs(folders: list[tuple[Path, str]], names: tuple[str, ...]) -> None:
    """Every output of ``names`` and provenance.json in each (folder, option named in errors)."""
    from sensaopt.outputs import check_output, check_output_dir

    for where, opt in folders:
        check_output_dir(where, field=opt)
        for n in (*names, "provenance.json"):
            check_output(where / n, field=opt)


def _run(tasks: list[Any], output: Path, quiet: bool, report_only: bool, serial: bool, scheduler: str | None, processes: int,
         every_s: float, commit: str | None) -> tuple[Any, dict[str, dict]]:
    """Run the windows not yet stored under ``output`` (or only count them): the sweep report
    and key -> record of every stored window (each computed one with ``commit``, the code's
    git commit). A line per finished window unless ``quiet``."""
    from tqdm import tqdm

    from sensaopt.cli.batch import ResumeNotes
    from sensaopt.cli.traces import _run_grid
    from sensaopt.sweep.gaps import record_problem, solve_window, task_cost
    from sensaopt.sweep.gaps_report import window_line
    from sensaopt.sweep.store import ResultStore

    class Store(ResultStore):
        def put(self, record: dict) -> None:
            super().put({**record, "commit": commit})  # the code that computed this window (a rerun may run newer code)
            if not quiet:
                tqdm.write(window_line(record), file=sys.stderr)

    notes = ResumeNotes()
    store = Store(output, warn=notes, verify=record_problem)
    try:
        return _run_grid(tasks, store, "gaps", quiet, report_only, serial, scheduler, processes, every_s,
                         task={"run": solve_window, "cost": task_cost})
    finally:
        _resume_summary(notes)


def _title(s: GapSettings, planned: int) -> str:
    c, e = s.cut, s.exact
    seeds = f"seed {s.seeds[0]}" if len(s.seeds) == 1 else f"seeds {s.seeds[0]}–{s.seeds[-1]}"
    solver = f"solver seed {e.seed}" if s.solver_seeds == 1 else f"solver seeds {e.seed}–{e.seed + s.solver_seeds - 1}"
    return (f"# Certified gaps on {c.trace} windows\n\n{planned} windows of {', '.join(map(str, s.sizes))} consecutive jobs "
            f"(first job {c.first}; nodes of {c.node_gpus} GPUs, at most {c.max_nodes}, load {c.load:g}, {c.round_minutes:g}-minute "
            f"rounds, {seeds}). Exact: {e.label}, {e.time_limit:g} s and {e.workers} thread(s) per window, {solver}"
            f"{''.join(f', {k}={v}' for k, v in e.settings)}; policies: {', '.join(s.policies)}.")


def _write(s: GapSettings, md: str, folders: list[tuple[Path, str]], args: list[str], tasks: list[Any], rep: Any,
           records: dict[str, dict], start: tuple[float, dict, dict], execution: dict[str, Any]) -> list[Path]:
    """The report (:func:`sensaopt.sweep.gaps_report.write_report`) and provenance.json into
    each (folder, option) of ``folders``; ``start``: the command's start time, git state and
    machine. Returns the files written."""
    import json
    import time

    from sensaopt.outputs import write_text
    from sensaopt.sweep import gaps
    from sensaopt.sweep.gaps_report import write_report

    t0, git, host = start
    status = dict.fromkeys(rep.computed, "computed") | dict.fromkeys(rep.failed, "failed")
    written = []
    for folder, field in folders:
        prov = gaps.provenance(s, args, tasks, records, status, git=git, machine=host, wall_s=time.perf_counter() - t0, execution=execution)
        written += write_report(folder, md, list(records.values()), s.policies, len(s.sizes), s.exact.time_limit, field=field)
        write_text(folder / "provenance.json", json.dumps(prov, indent=1) + "\n", field=field)
        written.append(folder / "provenance.json")
    return written


@experiment_app.command("gaps")
def experiment_gaps(
    output: Path = out_dir_option(_OUT_HELP),
    _retired: str | None = retired_folder_option("-o", "--output", "--out"),
    trace: str = typer.Option(TRACE, "--trace", callback=in_range("trace"), help=field_help(WorkloadConfig, "trace")),
    jobs: str = typer.Option(str(_CUT.jobs), "--jobs", "-n", metavar="N[,N...]",
                             help="Jobs per window (consecutive by arrival); several sizes, comma-separated, add the scaling table "
                                  "and figure (e.g. 10,20,40,80)."),
    windows: int = typer.Option(20, "--windows", callback=in_range("windows"), metavar="N", help="Windows per size and seed."),
    first: int = typer.Option(_CUT.first, callback=in_range("first"), metavar="N", help="Trace index of the first window's first job."),
    stride: int | None = typer.Option(None, callback=in_range("stride"), metavar="N", help="Jobs between window starts (default: --jobs)."),
    node_gpus: int = typer.Option(_CUT.node_gpus, callback=in_range("node_gpus"), help="GPUs per node (3 cores, 62.5 GB per GPU)."),
    max_nodes: int = typer.Option(_CUT.max_nodes, callback=in_range("max_nodes"), metavar="N", help="At most this many nodes per window."),
    load: float = typer.Option(_CUT.load, callback=in_range("load"), help="Target offered load of each window's cluster."),
    round_minutes: float = typer.Option(_CUT.round_minutes, callback=in_range("round_minutes"), help="Round length, minutes."),
    sensitive_fraction: float = typer.Option(_CUT.sensitive_fraction, callback=in_range("sensitive_fraction"),
                                             help="Fraction of sensitive model types."),
    seed: int = typer.Option(0, callback=in_range("seed"), help="First seed (window k of seed s draws its model types with s + k)."),
    seeds: int = typer.Option(1, "--seeds", callback=in_range("seeds"), metavar="N",
                              help="Seeds: --seed .. --seed + N - 1 (each cuts every window)."),
    exact: str = typer.Option(_EXACT.exact, help="Exact solver: cpsat | milp (HiGHS) | highs | cbc"),
    time_limit: float = typer.Option(_EXACT.time_limit, callback=in_range("time_limit"), metavar="SECONDS",
                                     help="Seconds per exact solve (> 0)."),
    workers: int = typer.Option(_EXACT.workers, callback=in_range("workers"), metavar="N", help="Exact solver threads per window."),
    solver_seed: int = typer.Option(_EXACT.seed, callback=in_range("solver_seed"), help="Exact solver random seed (the first)."),
    solver_seeds: int = typer.Option(1, "--solver-seeds", callback=in_range("solver_seeds"), metavar="N",
                                     help="Solves per window: seeds --solver-seed .. --solver-seed + N - 1 (an interval over them)."),
    cooperate: bool = typer.Option(False, "--cooperate", help="The other backend (HiGHS or CP-SAT) continues the deadline-hard phase."),
    exact_option: list[str] = typer.Option([], "--exact-option", metavar="KEY=VALUE",
                                           help="A further exact-solve option, repeat: a SolveSettings field (e.g. lns_share=0.3) "
                                                "or start_policy=best|POLICY (default: best: the best registered policy's schedule)."),
    policies: list[str] = typer.Option([], "--policies", metavar="NAME[,NAME...]",
                                       help="Policies compared with each exact solve, comma-separated or repeated "
                                            f"(default: {','.join(POLICIES)})."),
    results: Path | None = typer.Option(None, "--results", metavar="DIR",
                                        help="Also write the tables, figures and provenance.json into DIR (default: not written)."),
    scheduler: str | None = typer.Option(None, help="tcp://HOST:PORT of an existing Dask scheduler (default: a LocalCluster)."),
    processes: int | None = typer.Option(None, callback=in_range("processes"), metavar="N",
                                         help="LocalCluster worker processes (default: the usable cores // --workers, at least 1)."),
    serial: bool = typer.Option(False, help="Run in this process, without Dask."),
    report_only: bool = typer.Option(False, help="Run nothing: tabulate the windows already stored (a partial table if some are missing)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, no line per window."),
    progress_every: float = _progress_every_option(),
) -> None:
    """Certified gaps of the policies on trace windows: one exact solve per window (on Dask, resumable), each policy compared with
    it; per policy windows proven, extra misses, gap to the exact incumbent and to the bound (gaps.md/csv, windows.csv, gaps.png)."""
    import time

    from sensaopt.cli.traces import _echo_runs
    from sensaopt.datasets import require
    from sensaopt.errors import InputError
    from sensaopt.sweep import gaps
    from sensaopt.sweep.gaps_report import output_names, report_markdown
    from sensaopt.sweep.provenance import git_state, machine
    from sensaopt.traces.sources import data_needed

    t0, git, host = time.perf_counter(), git_state(), machine()
    sizes, pols = _sizes(jobs), _policies(policies)
    _check_exact(exact)
    _check_seeds(seed, seeds, "--seed", "--seeds")
    _check_seeds(solver_seed, solver_seeds, "--solver-seed", "--solver-seeds")
    folders = [(output, OUT_DIR)] + ([(results, "--results")] if results is not None else [])
    _check_outputs(folders, output_names(len(sizes)))  # every output checked before the trace is read
    require(data_needed(trace))
    cut = WindowCut(trace, sizes[0], first, stride, node_gpus, max_nodes, load, round_minutes, sensitive_fraction)
    solve = ExactSettings(exact, time_limit, workers, solver_seed, cooperate, _exact_options(exact_option))
    s = GapSettings(sizes, windows, cut, tuple(range(seed, seed + seeds)), solve, pols, solver_seeds)
    planned = gaps.plan(s)
    if not planned:
        raise InputError(trace, "windows", "no window could be cut (trace too short from --first, or jobs too large for --max-nodes)")
    gaps.save_instances(output / "instances", planned, field=OUT_DIR)
    tasks = [t for t, _ in planned]
    n_proc = processes or max(1, usable_cores() // workers)  # pinned to one core (taskset): one process, not two at half speed
    rep, records = _run(tasks, output, quiet, report_only, serial, scheduler, n_proc, progress_every, git["commit"])
    md = report_markdown(_title(s, len(tasks) // s.solver_seeds), len(tasks), list(records.values()), pols)
    execution = {"serial": serial, "processes": None if serial or scheduler else n_proc, "scheduler": scheduler, "report_only": report_only}
    written = _write(s, md, folders, gaps.command_args(s, output, results), tasks, rep, records, (t0, git, host), execution)
    typer.echo(md)
    _echo_runs(rep, records, written)
