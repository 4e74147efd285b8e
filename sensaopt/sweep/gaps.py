"""Certified gaps of the policies on trace windows: ``sensaopt experiment gaps``.

Windows of ``jobs`` consecutive trace jobs are cut as ``sensaopt instances from-trace``
cuts them (:func:`sensaopt.traces.windows.cut_windows`: the cluster scaled to the
window's load; seed ``s + k`` for window ``k`` draws its model types). Each window is one
:class:`WindowTask`: ONE exact solve (:class:`ExactSettings`, through
:func:`sensaopt.solve.solve`, the solve of ``sensaopt gap``) and every policy simulated
and compared with it part by part (:func:`sensaopt.compare.compare`): proven or not,
extra misses, the avg-JCT gap to the exact incumbent (only among equal misses and lost
value) and to the bound. Tasks run through :func:`sensaopt.sweep.run_sweep` (Dask) or
:func:`~sensaopt.sweep.run_serial` into a :class:`~sensaopt.sweep.ResultStore` keyed by
:meth:`WindowTask.key`, so a rerun computes only the windows not stored yet.

Units: minutes (JCT and its bounds), seconds (solve times), percent (``*_pct``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

SCHEMA = 1  # bump when a window record's meaning changes: stored windows stop matching
POLICIES = ("sensascale", "edf", "chronus")  # the policies compared by default
TRACE = "chronus-slo"  # the Philly SLO trace (Chronus artifact): the default trace


OWN_OPTIONS = ("time_limit", "workers", "seed", "cooperate", "lexicographic")
"""Solve options that are :class:`ExactSettings` fields (the command's own options), never in its ``settings``."""


@dataclass(frozen=True)
class ExactSettings:
    """The one exact solve per window (:func:`sensaopt.solve.solve` options): solver name,
    ``time_limit`` seconds for the whole solve, ``workers`` search threads, the solver's
    random ``seed``, ``cooperate`` (the other backend continues the deadline-hard phase,
    ``sensaopt gap --cooperate``) and ``settings``: further options of the solve as sorted
    (name, value) pairs (``--exact-option``: any field of
    :class:`sensaopt.exact.settings.SolveSettings`, e.g. ``lns_share``). Deadline loss
    first, then the whole objective."""

    exact: str = "cpsat"
    time_limit: float = 60.0
    workers: int = 1
    seed: int = 0
    cooperate: bool = False
    settings: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "time_limit", float(self.time_limit))  # 60 and 60.0: one key
        object.__setattr__(self, "settings", tuple(sorted((str(k), v) for k, v in self.settings)))  # JSON lists: pairs again

    def options(self) -> dict[str, Any]:
        """The keyword options of :func:`sensaopt.solve.solve` (every field but ``exact``).

        Returns:
            The options."""
        extra = {"cooperate": True} if self.cooperate else {}
        return {**dict(self.settings), "time_limit": self.time_limit, "workers": self.workers, "seed": self.seed, "lexicographic": True,
                **extra}

    @property
    def label(self) -> str:
        """The solver column: ``cpsat``, or ``cpsat+highs`` when cooperating."""
        return self.exact + (("+highs" if self.exact == "cpsat" else "+cpsat") if self.cooperate else "")


@dataclass(frozen=True)
class WindowCut:
    """How the windows of one size are cut from ``trace`` (``sensaopt instances
    from-trace``'s options): ``jobs`` per window, the first window's first job ``first``
    (trace index), ``stride`` jobs between window starts (None: ``jobs``), nodes of
    ``node_gpus`` GPUs (3 cores, 62.5 GB per GPU), at most ``max_nodes``, the cluster
    scaled to offered ``load``, rounds of ``round_minutes`` minutes, a
    ``sensitive_fraction`` of the jobs sensitive; ``seed``: window ``k`` draws its model
    types with ``seed + k``."""

    trace: str = TRACE
    jobs: int = 20
    first: int = 0
    stride: int | None = None
    node_gpus: int = 8
    max_nodes: int = 4
    load: float = 1.15
    round_minutes: float = 10.0
    sensitive_fraction: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("load", "round_minutes", "sensitive_fraction"):  # 1 and 1.0: one key
            object.__setattr__(self, name, float(getattr(self, name)))

    def window_config(self, count: int) -> Any:
        """The :class:`sensaopt.traces.windows.WindowConfig` of ``count`` windows.

        Args:
            count: how many windows.

        Returns:
            The WindowConfig (from-trace's defaults for what this cut does not set)."""
        from sensaopt.traces.windows import WindowConfig

        return WindowConfig(n_jobs=self.jobs, count=count, stride=self.stride, first=self.first, node_gpus=self.node_gpus,
                            load=self.load, max_nodes=self.max_nodes, round_minutes=self.round_minutes, seed=self.seed)


@dataclass(frozen=True)
class WindowTask:
    """One window (index ``index`` of ``cut``) with its exact solve and ``policies``: a run
    of the sweep runner. ``instance`` (the window's instance JSON, ``sensaopt.io``'s form)
    travels with the task to the worker; it is not part of the key (the cut determines it)."""

    cut: WindowCut
    index: int
    exact: ExactSettings
    policies: tuple[str, ...]
    instance: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The task's JSON form (without the instance).

        Returns:
            ``cut``, ``index``, ``exact`` and ``policies``."""
        return {"cut": asdict(self.cut), "index": self.index, "exact": asdict(self.exact), "policies": list(self.policies)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WindowTask:
        """The task of a JSON form (:meth:`to_dict`); TypeError/KeyError/ValueError when it is none."""
        if set(d) != {"cut", "index", "exact", "policies"}:
            raise ValueError(f"not a window task: fields {sorted(d)}")
        return cls(WindowCut(**d["cut"]), int(d["index"]), ExactSettings(**d["exact"]), tuple(str(p) for p in d["policies"]))

    def key(self) -> str:
        """Stable hash of the task (and :data:`SCHEMA`): names its stored record."""
        text = json.dumps({"schema": SCHEMA, "kind": "window-gap", **self.to_dict()}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class GapSettings:
    """A whole ``experiment gaps`` run: the window sizes ``sizes`` (jobs), ``windows`` per
    size and seed, the cut's other options (``cut``: its ``jobs`` and ``seed`` are set per
    task), the seeds ``seeds``, the exact solve ``exact`` and the ``policies``;
    ``solver_seeds``: exact solves per window, with solver seeds ``exact.seed`` ..
    ``exact.seed + solver_seeds - 1`` (the solver's run-to-run spread, an interval over them)."""

    sizes: tuple[int, ...] = (20,)
    windows: int = 20
    cut: WindowCut = WindowCut()
    seeds: tuple[int, ...] = (0,)
    exact: ExactSettings = ExactSettings()
    policies: tuple[str, ...] = POLICIES
    solver_seeds: int = 1

    def exacts(self) -> list[ExactSettings]:
        """The exact solve of each solver seed, in seed order.

        Returns:
            ``exact`` with seeds ``exact.seed`` .. ``exact.seed + solver_seeds - 1``."""
        return [replace(self.exact, seed=self.exact.seed + k) for k in range(self.solver_seeds)]

    def cuts(self) -> list[WindowCut]:
        """One cut per (seed, size), seeds outer.

        Returns:
            The cuts."""
        return [replace(self.cut, jobs=n, seed=s) for s in self.seeds for n in self.sizes]

    def record(self) -> dict[str, Any]:
        """JSON form (provenance).

        Returns:
            Every field, the nested ones as objects."""
        return {f.name: (asdict(v) if f.name in ("cut", "exact") else list(v) if isinstance(v, tuple) else v)
                for f in fields(self) for v in [getattr(self, f.name)]}


def plan(s: GapSettings) -> list[tuple[WindowTask, dict[str, Any]]]:
    """Cut every window of ``s`` (the trace read once per seed) into its task, with the
    window's provenance (``sensaopt instances from-trace``'s: trace, first job, nodes, ...).

    Args:
        s: the settings.

    Returns:
        (task with its instance, provenance) per window: solver seeds outer (a whole set of
        windows per solver seed), then seeds, then sizes, then windows; fewer than
        ``s.windows`` per size when the trace ends (or a window's job is too large)."""
    from sensaopt.io import instance_to_dict
    from sensaopt.traces.sensitivity import SensitivityMix
    from sensaopt.traces.sources import make_trace
    from sensaopt.traces.windows import cut_windows

    cut_out: list[tuple[WindowCut, dict[str, Any], dict[str, Any]]] = []
    data: dict[int, Any] = {}
    for cut in s.cuts():
        if cut.seed not in data:
            data[cut.seed] = make_trace(cut.trace, seed=cut.seed)
        mix = SensitivityMix(mode="fraction", sensitive_fraction=cut.sensitive_fraction)
        cut_out += [(cut, instance_to_dict(inst), prov) for inst, prov in cut_windows(data[cut.seed], cut.window_config(s.windows), mix)]
    return [(WindowTask(cut, prov["window"], e, s.policies, inst), prov) for e in s.exacts() for cut, inst, prov in cut_out]


def instance_path(folder: Path, task: WindowTask) -> Path:
    """Where a window's instance file is kept: ``FOLDER/<jobs>-jobs/seed-<seed>/<name>.json``.

    Args:
        folder: the instances folder.
        task: the window.

    Returns:
        The path (``sensaopt gap PATH`` solves that window again)."""
    name = (task.instance or {}).get("name") or f"w{task.index}"
    return folder / f"{task.cut.jobs}-jobs" / f"seed-{task.cut.seed}" / f"{name}.json"


def save_instances(folder: Path, planned: Sequence[tuple[WindowTask, dict[str, Any]]], field: str = "--out-dir") -> list[Path]:
    """Write each planned window's instance file (with its from-trace provenance) under
    ``folder`` (:func:`instance_path`), unless it is there already.

    Args:
        folder: the instances folder.
        planned: (task, provenance) pairs of :func:`plan`.
        field: the option named in errors.

    Returns:
        The files, in plan order."""
    from sensaopt.io import json_text
    from sensaopt.outputs import write_text

    paths = []
    for task, prov in planned:
        p = instance_path(folder, task)
        if not p.is_file():
            p.parent.mkdir(parents=True, exist_ok=True)
            write_text(p, json_text({**(task.instance or {}), "provenance": prov}, indent=1, where=str(p)) + "\n", field=field)
        paths.append(p)
    return paths


def solve_window(task: WindowTask) -> dict[str, Any]:
    """The record of one window: its exact solve and each policy's comparison with it
    (JSON-ready; minutes, seconds, percent). A model the exact solver refuses is recorded
    as ``status: REFUSED`` with its message (no comparisons), not as a failure, and each
    policy against the instance's own bounds instead (``bounds_only``, :func:`bounds_only`).

    Args:
        task: the window, with its instance.

    Returns:
        The record (``key``, ``config``: the task, window and exact fields, ``policies``:
        policy -> :meth:`sensaopt.compare.Comparison.to_dict`)."""
    from sensaopt.errors import SensaoptError
    from sensaopt.io import instance_from_dict
    from sensaopt.result import package_versions
    from sensaopt.solve import solve

    t0 = time.perf_counter()
    inst = instance_from_dict(task.instance, source=f"window {task.index}")
    row: dict[str, Any] = {"key": task.key(), "config": task.to_dict(), "window": inst.name, "index": task.index,
                           "jobs": len(inst.jobs), "seed": task.cut.seed,
                           "first_job": task.cut.first + task.index * (task.cut.stride or task.cut.jobs), "nodes": inst.cluster.num_nodes,
                           "gpus": inst.cluster.total_gpus, "exact": task.exact.label, "load_at_start": _load()}
    try:
        e = solve(inst, task.exact.exact, **task.exact.options())
    except SensaoptError as err:
        row.update(status="REFUSED", message=str(err), seconds=round(time.perf_counter() - t0, 2), policies={})
        row["bounds_only"] = bounds_only(inst, task.policies)
    else:
        row.update(_exact_fields(e, inst))
        row["policies"] = _comparisons(inst, e, task.policies)
    row.update(wall_s=round(time.perf_counter() - t0, 2), versions=package_versions())
    return row


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _exact_fields(e: Any, inst: Any) -> dict[str, Any]:
    """The record's exact-solve fields of Result ``e`` on ``inst`` (status, seconds, objective
    and bound, misses and avg JCT, the JCT bound and the incumbent's distance to it in
    percent, and the solve's JSON params)."""
    from sensaopt.result import PartBounds

    params = e.json_params()
    lex = params.get("lexicographic")
    shortfall = lex.get("shortfall") if isinstance(lex, dict) else None
    m = e.metrics
    jct_bound = PartBounds.of(e, inst).avg_jct
    avg = m.avg_jct if m else None
    return {"status": e.status.value, "seconds": round(e.runtime_s, 2), "objective": e.objective, "bound": e.bound,
            "misses": m.slo_violations if m else None, "avg_jct": avg, "jct_bound": jct_bound,
            "jct_gap_to_bound_pct": None if avg is None or not jct_bound else 100.0 * (avg - jct_bound) / jct_bound,
            "horizon_proof": params.get("horizon_proof"), "zero_miss": (shortfall or {}).get("zero_miss"), "message": e.message,
            "exact_params": params}  # the solve's own report (phases, model size, warm start, allocations): where the gap lives


def bounds_only(inst: Any, policies: Sequence[str]) -> dict[str, Any]:
    """Where the exact model was refused: the instance's own bounds (:mod:`sensaopt.bounds`,
    every job at its best speed, valid for every schedule the validator accepts) and each
    policy against them. Kept apart from the exact statistics: these bound a policy's
    distance to the optimum from above, they do not measure it.

    Args:
        inst: the window's instance.
        policies: the policies to simulate.

    Returns:
        ``misses`` (no schedule misses fewer), ``lost_value`` (value units), ``avg_jct``
        (minutes: no schedule's average JCT is lower, whatever it misses) and ``policies``:
        policy -> its ``misses``, ``lost_value``, ``avg_jct`` and ``jct_gap_to_bound_pct``
        (percent above ``avg_jct``: at least its JCT gap to the optimum)."""
    from sensaopt.bounds import compute_bounds
    from sensaopt.compare import jct_gap_to
    from sensaopt.result import Level
    from sensaopt.simulator import simulate

    b = compute_bounds(inst, ("best",))  # what `sensaopt bound` reports
    jct = b.jct_bound("best")
    out: dict[str, Any] = {"misses": b.forced_misses("best"), "lost_value": b.misses["best"].lost_value, "avg_jct": jct,
                           "policies": {}}
    for p in policies:
        lvl = Level.of(simulate(inst, p))
        out["policies"][p] = {"misses": lvl.misses, "lost_value": lvl.lost_value, "avg_jct": lvl.avg_jct,
                              "jct_gap_to_bound_pct": jct_gap_to(lvl.avg_jct, jct)}
    return out


def _comparisons(inst: Any, e: Any, policies: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each policy simulated on ``inst`` and compared with the exact Result ``e``."""
    from sensaopt.compare import compare
    from sensaopt.simulator import simulate

    return {p: compare(simulate(inst, p), e, inst, label=p, instance_label=inst.name).to_dict() for p in policies}


def record_problem(record: Any, key: str) -> str | None:
    """Why ``record`` is not window ``key``'s record (None when it is): an object naming
    ``key`` whose ``config`` is a window task hashing to ``key``, with its ``policies``
    (:func:`sensaopt.sweep.store.record_problem`).

    Args:
        record: what a store file holds.
        key: the key it is stored under.

    Returns:
        The problem, or None."""
    from sensaopt.sweep.store import record_problem as problem

    return problem(record, key, WindowTask.from_dict, "policies")


def task_cost(task: WindowTask) -> float:
    """A task's rough cost (only an ordering for the runner: the largest windows first).

    Args:
        task: the window.

    Returns:
        Its jobs × the time limit (seconds)."""
    return task.cut.jobs * task.exact.time_limit


def command_args(s: GapSettings, out_dir: str | Path, results: str | Path | None = None) -> list[str]:
    """The ``sensaopt`` arguments of the ``experiment gaps`` command that plans exactly the
    windows of ``s`` (every setting spelled out; execution options such as ``--processes``
    left out: they change how, not what). ``s.seeds`` must be consecutive.

    Args:
        s: the settings.
        out_dir: the ``--out-dir`` folder.
        results: the ``--results`` folder (None: not given).

    Returns:
        The arguments after ``sensaopt``."""
    from sensaopt.config import format_value

    seeds = list(s.seeds)
    if not seeds or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(f"seeds must be consecutive to be given as --seed/--seeds, got {s.seeds}")
    c, e = s.cut, s.exact
    args = ["experiment", "gaps", "--out-dir", str(out_dir), "--trace", c.trace, "--jobs", ",".join(map(str, s.sizes)),
            "--windows", str(s.windows), "--first", str(c.first)]
    args += ["--stride", str(c.stride)] if c.stride is not None else []
    args += ["--node-gpus", str(c.node_gpus), "--max-nodes", str(c.max_nodes), "--load", repr(c.load), "--round-minutes",
             repr(c.round_minutes), "--sensitive-fraction", repr(c.sensitive_fraction), "--seed", str(seeds[0]), "--seeds",
             str(len(seeds)), "--exact", e.exact, "--time-limit", repr(e.time_limit), "--workers", str(e.workers), "--solver-seed",
             str(e.seed)]
    args += ["--solver-seeds", str(s.solver_seeds)] if s.solver_seeds > 1 else []
    args += ["--cooperate"] if e.cooperate else []
    args += [x for k, v in e.settings for x in ("--exact-option", f"{k}={format_value(v)}")]
    args += ["--policies", ",".join(s.policies)]
    return args + (["--results", str(results)] if results is not None else [])


def provenance(s: GapSettings, args: list[str], tasks: Sequence[WindowTask], records: dict[str, dict[str, Any]],
               status: dict[str, str], *, git: dict[str, Any], machine: dict[str, Any], wall_s: float,
               execution: dict[str, Any]) -> dict[str, Any]:
    """The provenance record of a gaps folder (as ``experiment paper``'s): the command, the
    settings, the code (``git``, taken when the command started), package versions, the
    machine (at the start; the load average at the end too), the wall time (seconds), how it
    ran, and per planned window its key, what this command did with it and its solve.

    Args:
        s: the settings.
        args: the command's arguments (:func:`command_args`).
        tasks: the planned windows.
        records: key -> stored record.
        status: key -> computed / failed (reused: stored before; missing: neither).
        git: :func:`sensaopt.sweep.provenance.git_state` at the start.
        machine: :func:`sensaopt.sweep.provenance.machine` at the start.
        wall_s: the command's wall time, seconds.
        execution: serial, processes, scheduler, report_only.

    Returns:
        The JSON-ready record."""
    import shlex

    from sensaopt.result import package_versions
    from sensaopt.sweep.provenance import load_average

    plan_ = []
    for t in tasks:
        k = t.key()
        r = records.get(k) or {}
        state = status.get(k) or ("reused" if k in records else "missing")
        plan_.append({"key": k, "jobs": t.cut.jobs, "seed": t.cut.seed, "index": t.index, "window": r.get("window"), "status": state,
                      "exact_status": r.get("status"), "seconds": r.get("seconds"), "load_at_start": r.get("load_at_start"),
                      "commit": r.get("commit")})
    counts = {k: sum(1 for p in plan_ if p["status"] == k) for k in ("computed", "reused", "failed", "missing")}
    return {"command": "sensaopt " + shlex.join(args), "args": args, "settings": s.record(), "git": git, "versions": package_versions(),
            "machine": {**machine, "loadavg_end": load_average()}, "wall_s": round(wall_s, 1), "execution": execution,
            "windows_total": len(plan_), **{f"windows_{k}": v for k, v in counts.items()}, "windows": plan_}
