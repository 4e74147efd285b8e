"""A solver child process that never outlives sensaopt (used for CBC).

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
from collections.abc import Callable
from types import TracebackType
from typing import IO

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
    Use as a context manager: leaving the block kills the group if it still runs."""

    def __init__(self, args: list[str], log: IO[str], folder: str) -> None:
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=_die_with(os.getpid()))
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
