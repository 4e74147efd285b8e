"""A solver child process that never outlives sensaopt (used for CBC, and for HiGHS on
large models: :mod:`sensaopt.solvers.highs_child`).

The child runs in its own process group (a Ctrl-C at the terminal reaches only
sensaopt, which then kills the group). Two guards cover a sensaopt that dies without
cleaning up (SIGKILL, a crash):

* on Linux the child is started with ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel
  kills it when its parent dies;
* everywhere, a watchdog (``/bin/sh``, in its own session) holds the read end of a
  pipe whose only write end sensaopt holds; when sensaopt dies the pipe reaches end of
  file and the watchdog kills the child's process group (the child's own children
  too) and removes the run's temporary folder. A normal end tells the watchdog to
  stand down (one line on the pipe) before the group and folder go away.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import IO

from sensaopt.result import Status
from sensaopt.solvers.base import SolveOutcome
from sensaopt.solvers.budget import SAFETY_NET_NOTE, TimeBudget
from sensaopt.solvers.interrupt import CANCEL_NOTE, POLL_S, cancel_event, cancelled

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCHDOG_SCRIPT = 'read line; [ "$line" = done ] || { kill -9 -"$1" 2>/dev/null; rm -rf "$2"; }'  # dash: no "--" for kill


def _die_with(parent: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks Linux to SIGKILL the child when ``parent`` dies (None elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl: die now
            os._exit(137)

    return preexec


class GuardedChild:
    """``args`` run in a new process group with stdout/stderr into ``log``; ``folder``
    (the run's temporary folder) is removed by the watchdog if sensaopt dies first.
    ``env``: the child's environment (None: this process's). Use as a context manager:
    leaving the block kills the group if it still runs."""

    def __init__(self, args: list[str], log: IO[str], folder: str, env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=_die_with(os.getpid()), env=env)
        self._pipe: int | None = None
        self._watchdog: subprocess.Popen | None = None
        read, write = os.pipe()
        try:
            self._watchdog = subprocess.Popen(["/bin/sh", "-c", WATCHDOG_SCRIPT, "sensaopt-watchdog", str(self.proc.pid), folder],
                                              stdin=read, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                              start_new_session=True)
            self._pipe = write
        except OSError:  # no /bin/sh: only the Linux guard
            os.close(write)
        finally:
            os.close(read)

    def wait(self, timeout: float) -> int:
        """The exit code (``subprocess.TimeoutExpired`` after ``timeout`` seconds)."""
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        """SIGKILL the whole process group and reap the child."""
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def __enter__(self) -> GuardedChild:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        if self.proc.poll() is None:
            self.kill()
        if self._pipe is not None:  # stand the watchdog down; it exits at once
            with contextlib.suppress(OSError):
                os.write(self._pipe, b"done\n")
            os.close(self._pipe)
            self._pipe = None
        if self._watchdog is not None:
            self._watchdog.wait()


def run_guarded(args: list[str], log_path: str, kill_at: float, folder: str, echo: bool = False,
                env: Mapping[str, str] | None = None) -> int | None:
    """Run ``args`` as a :class:`GuardedChild` (own process group, killed with sensaopt,
    ``folder`` removed if sensaopt dies), its output into the file ``log_path``; kill the
    group at ``kill_at`` (a :func:`time.perf_counter` value), once this thread's
    :func:`~sensaopt.solvers.interrupt.cancel_scope` event is set, or on Ctrl-C/SIGTERM
    (re-raised). ``echo``: the log copied to stderr while it runs (:class:`LogEcho`).
    Returns the exit code, None when killed."""
    cancel = cancel_event()
    with open(log_path, "w") as log_file, LogEcho(log_path, echo), GuardedChild(args, log_file, folder, env) as child:
        while True:
            left = max(kill_at - time.perf_counter(), 0.0)
            try:
                return child.wait(timeout=left if cancel is None else min(left, POLL_S))
            except subprocess.TimeoutExpired:
                if time.perf_counter() >= kill_at or (cancel is not None and cancel.is_set()):
                    child.kill()
                    return None


class LogEcho:
    """While active, a thread copies what a child appends to its log file onto ``sys.stderr``
    (every ``every_s`` seconds, and the rest when the block ends); the file itself stays
    whole for the caller to parse. Inactive: nothing."""

    def __init__(self, path: str, active: bool, every_s: float = 0.2) -> None:
        self.path, self.active, self.every_s = path, active, every_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pos = 0

    def _copy(self) -> None:
        with contextlib.suppress(OSError), open(self.path, errors="replace") as f:
            f.seek(self._pos)
            text = f.read()
            self._pos = f.tell()
            if text:
                sys.stderr.write(text)
                sys.stderr.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._copy()

    def __enter__(self) -> LogEcho:
        if self.active:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._copy()


def no_solution(status: Status, message: str, t0: float) -> SolveOutcome:
    """An outcome without solution or bound, ``t0`` (a :func:`time.perf_counter` value) its start."""
    return SolveOutcome(status=status, value=None, objective=None, bound=None, wall_s=time.perf_counter() - t0, message=message)


def stopped_by_clock(budget: TimeBudget, message: str, t0: float) -> SolveOutcome:
    """TIME_LIMIT without a solution, stopped by the clock (a child killed or not started):
    under a work limit that is the safety net (charged to ``budget``, named in the message:
    not deterministic). Inside a set :func:`~sensaopt.solvers.interrupt.cancel_scope` the
    kill was the portfolio's, not the clock's: no safety net, and the message says so."""
    if cancelled():
        return no_solution(Status.TIME_LIMIT, f"stopped {CANCEL_NOTE} (its child process killed)", t0)
    if not budget.deterministic:
        return no_solution(Status.TIME_LIMIT, message, t0)
    budget.charge(0.0, safety_net=True)
    return replace(no_solution(Status.TIME_LIMIT, f"{message}; {SAFETY_NET_NOTE}", t0), safety_net=True)
