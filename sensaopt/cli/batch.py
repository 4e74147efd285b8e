"""Long commands run unattended (a batch job, CI, ``nohup``): progress as lines, the log, resume notes.

* :class:`RunLines`: when stderr is not a terminal, one line per finished run and one
  every ``every_s`` seconds while runs go on — counts, elapsed time, ETA (the mean time
  per finished run so far × the runs left); on a terminal the tqdm bar instead.
* :func:`configure_logging`: ``--log-level`` (``warning`` by default): sensaopt's log and
  Dask's (``distributed``: nanny and worker warnings of a restarted sweep) on stderr as
  ``LEVEL logger: message``; Dask's messages below ERROR only from ``info`` on (the others
  are counted, :func:`dask_warnings`).
* :class:`ResumeNotes`: a result store's stale claims taken over on resume logged one by
  one at INFO and summarized in one line (a record moved aside stays a warning).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
DASK_LOGGERS = ("distributed", "dask")


def duration(seconds: float) -> str:
    """``1h02m``, ``3m05s``, ``42s``."""
    s = int(round(max(seconds, 0.0)))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class RunLines:
    """Progress of ``total`` runs as lines on ``stream``: :meth:`update` (done, total) prints
    one when a run finishes; a timer thread one every ``every_s`` seconds in between
    (0: none); :meth:`close` stops it."""

    def __init__(self, total: int, desc: str, every_s: float = 60.0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.desc, self.every_s, self.clock = total, desc, every_s, clock
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.t0 = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if every_s > 0 and total > 0:
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()

    def line(self, still: bool = False) -> str:
        elapsed = self.clock() - self.t0
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = f", ETA {duration(elapsed / self.done * (self.total - self.done))}" if 0 < self.done < self.total else ""
        tail = ", running" if still else ""
        return f"{self.desc}: {self.done}/{self.total} runs done ({pct:.0f} %), {duration(elapsed)} elapsed{eta}{tail}"

    def _print(self, still: bool = False) -> None:
        with self._lock:
            print(self.line(still), file=self.stream, flush=True)

    def update(self, done: int, total: int) -> None:
        self.total = total
        if done > self.done:
            self.done = done
            self._print()

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            if self.done < self.total:
                self._print(still=True)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)


class _Counter(logging.Handler):
    """Counts the records it sees (the Dask messages not shown)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


_DASK_COUNTER = _Counter()


class _Below(logging.Filter):
    """Keeps Dask's records below ``level`` off the stderr handler (they are counted)."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".")[0] in DASK_LOGGERS and record.levelno < self.level:
            _DASK_COUNTER.handle(record)
            return False
        return True


class _Stderr(logging.StreamHandler):
    """A stream handler writing to whatever ``sys.stderr`` is when a record comes (not the
    stream of the moment it was made: a command run in-process, under a test's capture)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


def configure_logging(level: str = "warning", stream: TextIO | None = None) -> None:
    """One stderr handler on the root logger at ``level`` (:data:`LOG_LEVELS`); Dask's own
    handlers removed so its messages go through it (below ERROR only at ``info`` or
    ``debug``)."""
    lvl = getattr(logging, level.upper())
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "sensaopt", False)]:
        root.removeHandler(h)
    handler: logging.Handler = logging.StreamHandler(stream) if stream is not None else _Stderr()
    handler.sensaopt = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(_Below(logging.ERROR if lvl > logging.INFO else 0))
    root.addHandler(handler)
    root.setLevel(lvl)
    if lvl > logging.INFO:  # Dask's worker processes (children: they read this at start) log errors only
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
    route_dask_logs()


def route_dask_logs() -> None:
    """Send Dask's loggers through the root handler (again after ``import distributed``,
    which installs its own stderr handler: :func:`dask_ready`)."""
    for name in DASK_LOGGERS:
        lg = logging.getLogger(name)
        for h in list(lg.handlers):
            lg.removeHandler(h)
        lg.propagate = True
        lg.setLevel(logging.NOTSET)


def dask_ready() -> None:
    """Import ``distributed`` now and route its logs (before a sweep starts its cluster)."""
    import distributed  # noqa: F401  (its import installs the handlers route_dask_logs removes)

    route_dask_logs()


def dask_warnings() -> int:
    """How many Dask messages were kept off stderr so far."""
    return _DASK_COUNTER.count


class ResumeNotes:
    """A result store's ``warn`` callback: a stale claim taken over (a resumed sweep meets
    one per run its stopped predecessor held) is logged at INFO and counted for
    :meth:`summary`; every other warning (a record moved aside: something is wrong with
    it) stays one ``warning:`` line on stderr, as the store prints it."""

    def __init__(self) -> None:
        self.claims = 0
        self.dask_before = dask_warnings()
        self.log = logging.getLogger("sensaopt.sweep")

    def __call__(self, message: str) -> None:
        if "is stale" in message and "claim" in message:
            self.claims += 1
            self.log.info(message)
        else:
            print(f"warning: {message}", file=sys.stderr)

    def summary(self) -> str | None:
        """One line (with the Dask messages kept off stderr since the store was opened), or None."""
        parts = []
        if self.claims:
            parts.append(f"{self.claims} stale claim{'s' if self.claims != 1 else ''} taken over (their sweeps had ended)")
        dask = dask_warnings() - self.dask_before
        if dask:
            parts.append(f"{dask} Dask message{'s' if dask != 1 else ''} below error")
        if not parts:
            return None
        return f"resume: {'; '.join(parts)} (--log-level info lists them)"
