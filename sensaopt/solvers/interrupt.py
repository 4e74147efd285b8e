"""Stopping a solve on Ctrl-C or SIGTERM.

A solver's C++ search holds the main thread: Python's SIGINT handler only runs once
it returns. :func:`run_stoppable` therefore runs the search in a helper thread while
the main thread waits; an exception in the waiting thread (``KeyboardInterrupt`` from
SIGINT, or from SIGTERM under :func:`terminate_interrupts`) calls the solver's own
stop (CP-SAT ``stop_search``, HiGHS ``cancelSolve`` and a zero time limit), waits
up to ``STOP_WAIT_S`` for the search to end and re-raises: the command then stops with
``interrupted`` (exit 130) and writes nothing. A search that has not ended by then
(HiGHS checks neither flag inside its sub-MIPs) is left running; should the
interpreter exit while it still runs, it exits at once with code 130 (a live solver
thread would abort the interpreter's shutdown). CBC, and HiGHS on large models
(:mod:`sensaopt.solvers.highs_child`), run as a child process group that is killed
instead (:mod:`sensaopt.solvers.child`); temporary folders go with the ``with`` blocks
that made them.

Within a :func:`cancel_scope` (a portfolio's side, in its own thread), the search is also
stopped, and a child killed, once the scope's event is set: the other side proved the
optimum, so this one has nothing left to find.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeVar

T = TypeVar("T")

STOP_WAIT_S = 1.0  # seconds a stopped search gets to return before the interrupt propagates anyway
POLL_S = 0.05  # seconds between checks of the waiting thread


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


_scope = threading.local()  # .event: this thread's cancel event (cancel_scope)
CANCEL_NOTE = "before its time limit: the other side of the portfolio proved the optimum"


@contextlib.contextmanager
def thread_setting(holder: threading.local, name: str, value: object) -> Iterator[None]:
    """Within the block, in this thread, ``holder.<name>`` is ``value`` (then what it was)."""
    previous = getattr(holder, name, None)
    setattr(holder, name, value)
    try:
        yield
    finally:
        setattr(holder, name, previous)


def cancel_scope(event: threading.Event) -> contextlib.AbstractContextManager[None]:
    """Within the block, in this thread, :func:`run_stoppable` stops its search and
    :func:`sensaopt.solvers.child.run_guarded` kills its child once ``event`` is set."""
    return thread_setting(_scope, "event", event)


def cancel_event() -> threading.Event | None:
    """This thread's :func:`cancel_scope` event (None outside a scope)."""
    return getattr(_scope, "event", None)


def cancelled() -> bool:
    """Whether this thread's :func:`cancel_scope` event is set."""
    event = cancel_event()
    return event is not None and event.is_set()


def run_stoppable(search: Callable[[], T], stop: Callable[[], None], stop_at: float | None = None) -> T:
    """``search()`` in a helper thread; on an exception while waiting for it (Ctrl-C,
    SIGTERM) call ``stop()``, give the search ``STOP_WAIT_S`` seconds to return and
    re-raise. ``stop_at``: a :func:`time.perf_counter` value at which ``stop()`` is
    called too (the search then returns what it has), as it is once this thread's
    :func:`cancel_scope` event is set. Outside the main thread (no signals there) the
    search still runs in a helper thread when ``stop_at`` or a cancel scope is given,
    else directly."""
    cancel = cancel_event()
    if stop_at is None and cancel is None and not _in_main_thread():
        return search()
    box: dict[str, object] = {}
    done = threading.Event()  # not Thread.join: a join interrupted by Ctrl-C leaves the thread's lock broken (Python < 3.12)

    def target() -> None:
        try:
            box["value"] = search()
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, name="sensaopt-solve", daemon=True).start()
    stopped = False
    try:
        while not done.wait(POLL_S):
            if not stopped and ((stop_at is not None and time.perf_counter() > stop_at)
                                or (cancel is not None and cancel.is_set())):
                stop()
                stopped = True
    except BaseException:
        stop()
        if not done.wait(STOP_WAIT_S):  # HiGHS does not look at its interrupt flag inside sub-MIPs
            _abandoned.append(done)
        raise
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


_abandoned: list[threading.Event] = []  # searches still running after an interrupt propagated


@atexit.register
def _exit_without_running_searches() -> None:
    """A solver thread still running when the interpreter finalizes aborts it ("terminate
    called without an active exception", exit code -6): exit at once instead, with the
    interrupted code 130 (only an interrupt abandons a search)."""
    if any(not d.is_set() for d in _abandoned):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(130)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def terminate_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` like Ctrl-C (so solver
    processes are killed and temporary folders removed on the way out); the previous
    handler is restored after. Only in the main thread (elsewhere: no change)."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
