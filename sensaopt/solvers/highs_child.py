"""HiGHS in a child process that sensaopt kills (:mod:`sensaopt.solvers.highs`, "Where
it runs"): the parent's side (:func:`run_child`: the job written, the child run and
killed should it outlive the budget, its result read) and the child's program
(``python -m sensaopt.solvers.highs_child FOLDER``, :func:`solve_job`).

The job (``FOLDER/job.npz``): the model's arrays
(:class:`~sensaopt.solvers.highs_run.HighsArrays`), the options, the seconds left to the
budget's deadline and stop time. The child builds the ``highspy.Highs`` the in-process
path builds (:func:`~sensaopt.solvers.highs_run.loaded_highs`), gives it the seconds left
as its time limit, stops it at the stop time as the in-process path does
(``cancelSolve`` and a zero time limit) and writes what the run left
(``FOLDER/result.npz``: :class:`~sensaopt.solvers.highs_run.HighsEnd`, the column
values, for an LP its safe dual bound).

Test hook: with :data:`STALL_ENV` set to a file path the child writes its process id
there and sleeps instead of solving (a HiGHS that never stops on its own).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from sensaopt.errors import SensaoptError
from sensaopt.solvers.base import SolverParams
from sensaopt.solvers.budget import MIN_SOLVE_S, TimeBudget
from sensaopt.solvers.child import run_guarded
from sensaopt.solvers.highs_run import HighsArrays, end_of, loaded_highs, run_lp, run_search

HIGHS_GRACE_S = 0.5  # seconds past the budget's stop time before the child's group is killed (time to write what a stopped HiGHS left)
STALL_ENV = "SENSAOPT_HIGHS_CHILD_STALL"  # test hook (module doc)
REFUSED_EXIT = 3  # the child's exit code when HiGHS refused an option (the message: the log's last line)
JOB, RESULT, LOG = "job.npz", "result.npz", "highs.log"


@dataclass(frozen=True)
class ChildEnd:
    """How a child run ended: ``meta`` (what it wrote: the run's end, an LP's bound) and
    ``col`` (the column values) when it wrote a result; else ``note``, why not, and
    ``killed``: it was killed or not started (the clock), not failed."""

    meta: dict[str, Any] | None
    col: np.ndarray | None
    note: str = ""
    killed: bool = False


def run_child(a: HighsArrays, params: SolverParams, budget: TimeBudget, kind: str, max_nodes: int | None) -> ChildEnd:
    """Write the job into a temporary folder, run the child until it ends or
    :data:`HIGHS_GRACE_S` past ``budget``'s stop time, read its result. Not started once
    the whole call's deadline has passed (a child's start takes about 1 s at load 7.6)."""
    spent = ChildEnd(None, None, "highs not run: the time limit was spent", killed=True)
    if time.perf_counter() >= budget.outer_deadline:  # as for CBC: once the call's time is spent HiGHS is not started
        return spent
    with tempfile.TemporaryDirectory(prefix="sensaopt-highs-") as tmp:
        _write_job(tmp, a, params, budget, kind, max_nodes)
        if time.perf_counter() >= budget.outer_deadline:  # writing a large model's job takes seconds
            return spent
        log = os.path.join(tmp, LOG)
        code = run_guarded([sys.executable, "-m", __name__, tmp], log, budget.stop_at() + HIGHS_GRACE_S, tmp,
                           echo=params.log, env=_child_env())
        if code is None:
            over = time.perf_counter() - budget.outer_deadline
            return ChildEnd(None, None, f"highs stopped from outside: its process was killed {over:.2f} s past the time limit "
                                        "(it did not stop on its own)", killed=True)
        last = _last_line(log)
        if code == REFUSED_EXIT:
            raise SensaoptError(last)
        if code != 0 or not os.path.exists(os.path.join(tmp, RESULT)):
            return ChildEnd(None, None, f"highs failed in its child process (exit code {code}): {last}")
        return _read_result(tmp)


def _child_env() -> dict[str, str]:
    """This process's environment with this sensaopt first on the child's import path."""
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the sensaopt package
    paths = [root, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _plain(value: Any) -> Any:
    """A raw option's value as JSON takes it (numpy scalars as Python numbers)."""
    if isinstance(value, np.generic):
        return value.item()
    raise SensaoptError(f"HiGHS option value {value!r}: not a number, boolean or string")


def _write_job(folder: str, a: HighsArrays, params: SolverParams, budget: TimeBudget, kind: str, max_nodes: int | None) -> None:
    """The model, the options and the seconds left (to the deadline and to the stop time,
    as of the wall clock ``sent``) into ``folder``/:data:`JOB`."""
    now = time.perf_counter()
    meta = {"kind": kind, "threads": int(params.workers), "seed": int(params.seed), "log": bool(params.log),
            "extra": dict(params.extra), "max_nodes": max_nodes, "left_s": budget.deadline - now,
            "stop_s": budget.stop_at() - now, "sent": time.time()}
    arrays = {f.name: getattr(a, f.name) for f in fields(a) if getattr(a, f.name) is not None}
    np.savez(os.path.join(folder, JOB), meta=np.array(json.dumps(meta, default=_plain)), **arrays)


def _read_result(folder: str) -> ChildEnd:
    """What the child wrote into ``folder``/:data:`RESULT`."""
    with np.load(os.path.join(folder, RESULT)) as got:
        return ChildEnd(json.loads(str(got["meta"])), np.array(got["col_value"], dtype=float))


def _last_line(path: str) -> str:
    """The last non-empty line of the child's log ("" if none)."""
    try:
        lines = [line.strip() for line in Path(path).read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _stall() -> None:
    """The test hook (module doc): write the process id to the file named by :data:`STALL_ENV`, then sleep."""
    Path(os.environ[STALL_ENV]).write_text(str(os.getpid()))
    time.sleep(3600)


def solve_job(folder: str) -> int:
    """The child's work: load ``folder``/:data:`JOB`, run HiGHS as the in-process path does
    and write ``folder``/:data:`RESULT`. Returns the exit code (:data:`REFUSED_EXIT`
    when HiGHS refused an option: the message printed)."""
    if os.environ.get(STALL_ENV):
        _stall()
    with np.load(os.path.join(folder, JOB)) as job:
        meta = json.loads(str(job["meta"]))
        a = HighsArrays(**{f.name: np.array(job[f.name]) for f in fields(HighsArrays) if f.name in job})
    params = SolverParams(workers=meta["threads"], seed=meta["seed"], log=meta["log"], extra=meta["extra"])
    try:
        h = loaded_highs(a, params)
    except SensaoptError as err:
        print(err, flush=True)
        return REFUSED_EXIT
    passed = time.time() - meta["sent"]
    h.setOptionValue("time_limit", max(meta["left_s"] - passed, MIN_SOLVE_S))  # loading took time: HiGHS gets what is left
    stop_at = time.perf_counter() + meta["stop_s"] - passed
    out: dict[str, Any] = {}
    if meta["kind"] == "lp":
        out["lp_bound"] = run_lp(h, stop_at)
        col = np.zeros(0)
    else:
        if meta["max_nodes"] is not None:
            h.setOptionValue("mip_max_nodes", int(meta["max_nodes"]))
        run_search(h, stop_at)
        end = end_of(h)
        out["end"] = asdict(end)
        col = np.asarray(h.getSolution().col_value, dtype=float) if end.has_solution else np.zeros(0)
    part = os.path.join(folder, "partial-" + RESULT)
    np.savez(part, meta=np.array(json.dumps(out)), col_value=col)
    os.replace(part, os.path.join(folder, RESULT))  # whole or absent
    return 0


if __name__ == "__main__":
    code = solve_job(sys.argv[1])
    sys.stdout.flush()
    os._exit(code)  # no interpreter teardown: freeing a large model takes time the parent waits for
