"""Finished sweep runs on disk, one JSON file per run named by its config hash.

Layout under ``root``:

* ``runs/<key>.json``: a finished run's record, written atomically
  (:func:`sensaopt.outputs.write_text`), so an interrupted sweep never leaves half a
  record and resumes by skipping every key whose record is here;
* ``failed/<key>.json``: the last error of a failed run (retried by the next sweep);
  ``failed/<key>.<time>.<random>.invalid``: a run file that did not hold run ``key``'s
  record, moved aside (see :meth:`ResultStore.get`);
* ``claims/<key>.claim``: the run is being computed by the sweep named inside
  (:class:`Claim`); two sweeps on one store never compute the same run at once.

Every record is verified against its key on load: a file that cannot be read (bad bytes,
a directory), is not a record (``[]``), or holds another run's record (a copied file) is
moved to ``failed/`` with one warning line and the run counts as missing, so it is
recomputed rather than reused under the wrong key.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sensaopt.io import json_text
from sensaopt.outputs import write_text
from sensaopt.sweep.config import RunConfig

STALE_CLAIM_S = 24 * 3600.0  # a claim older than this is taken over even if its process seems alive (seconds)
UNREADABLE_GRACE_S = 10.0  # an unreadable claim file younger than this may be being written (O_EXCL fallback): left alone


def _warn_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class Claim:
    """Who is computing a run: process ``pid`` on ``host`` since ``time`` (seconds since
    the epoch); ``token`` tells this claim from a later one on the same run."""

    pid: int
    host: str
    time: float
    token: str


def record_problem(record: Any, key: str, task: Callable[[Any], Any] = RunConfig.from_dict, part: str = "metrics") -> str | None:
    """Why ``record`` is not run ``key``'s record (None when it is): it must be an object
    naming ``key``, whose ``config`` is a run (``task``: its JSON form -> the run, default a
    sweep's :class:`RunConfig`) hashing to ``key``, and which has ``part`` (an object)."""
    if not isinstance(record, dict):
        return f"holds a JSON {type(record).__name__}, not a run record"
    if record.get("key") != key:
        return f"holds the record of run {record.get('key')!r}"
    try:
        own = task(record["config"]).key()
    except (KeyError, TypeError, ValueError, AttributeError):
        return "its config is not a run configuration"
    if own != key:
        return f"its config is run {own}'s"
    if not isinstance(record.get(part), dict):
        return f"has no {part}"
    return None


def _create_exclusive(path: Path, tmp: Path, text: str) -> None:
    """Create ``path`` holding ``text``; FileExistsError if it exists. A hard link of the
    written ``tmp`` (the file appears complete), else ``O_EXCL`` (file systems without hard links)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)


def _parse_claim(data: bytes) -> Claim | None:
    """The claim a claim file's bytes hold (None: not a claim, e.g. half written)."""
    try:
        d = json.loads(data.decode("utf-8"))
        return Claim(int(d["pid"]), str(d["host"]), float(d["time"]), str(d["token"]))
    except (ValueError, KeyError, TypeError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # someone else's process (or an absurd pid: not ours to judge alive)
    return True


class ResultStore:
    """The store under ``root`` (see the module doc). ``warn`` gets one line per moved
    file or taken-over claim (default: ``warning: ...`` on stderr); a claim older than
    ``stale_after_s`` seconds, or whose process on this host has ended, is stale; ``verify``
    (record, key) says why a file's record is not run ``key``'s (None: it is; default
    :func:`record_problem`, a sweep run's record)."""

    def __init__(self, root: str | Path, *, warn: Callable[[str], None] | None = None, stale_after_s: float = STALE_CLAIM_S,
                 verify: Callable[[Any, str], str | None] = record_problem):
        self.root = Path(root)
        self.warn = warn or _warn_stderr
        self.verify = verify
        self.stale_after_s = stale_after_s
        self._held: dict[str, str] = {}  # key -> token of the claims this object holds

    # ---- records ----------------------------------------------------------------------
    def path(self, key: str) -> Path:
        return self.root / "runs" / f"{key}.json"

    def has(self, key: str) -> bool:
        """A finished run: its file holds its verified record (see :meth:`get`)."""
        return self.get(key) is not None

    def get(self, key: str) -> dict | None:
        """Run ``key``'s record, verified (``verify``: :func:`record_problem`); None when there is none.
        A file that is there but does not hold it is moved to ``failed/`` (one warning)."""
        p = self.path(key)
        try:
            st = os.lstat(p)
        except (FileNotFoundError, NotADirectoryError):
            return None
        record: Any = None
        if not stat.S_ISREG(st.st_mode):
            problem: str | None = "is not a regular file"
        else:
            try:
                record = json.loads(p.read_bytes().decode("utf-8"))
                problem = self.verify(record, key)
            except FileNotFoundError:
                return None  # moved aside by another sweep meanwhile
            except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
                problem = f"cannot be read ({type(e).__name__})"
        if problem is not None:
            self._set_aside(p, key, problem)
            return None
        return record

    def _set_aside(self, p: Path, key: str, problem: str) -> None:
        dest = self.root / "failed" / f"{key}.{time.strftime('%Y%m%dT%H%M%S')}.{uuid.uuid4().hex[:8]}.invalid"
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(p, dest)
        except FileNotFoundError:
            return  # another sweep moved it first
        except OSError as e:
            self.warn(f"{p}: {problem}; cannot move it to {dest.parent} ({e.strerror}); the run will be recomputed")
            return
        self.warn(f"{p}: {problem}; moved to {dest}, the run will be recomputed")

    def put(self, record: dict) -> None:
        write_text(self.path(record["key"]), json_text(record, where=str(self.path(record["key"]))))
        failed = self.root / "failed" / f"{record['key']}.json"
        if failed.exists():
            failed.unlink()

    def put_failure(self, key: str, config: dict, error: str) -> None:
        write_text(self.root / "failed" / f"{key}.json", json_text({"key": key, "config": config, "error": error}, where=key))

    def keys(self) -> list[str]:
        d = self.root / "runs"
        return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []

    def records(self) -> list[dict]:
        return [r for k in self.keys() if (r := self.get(k)) is not None]

    # ---- claims -----------------------------------------------------------------------
    def claim_path(self, key: str) -> Path:
        return self.root / "claims" / f"{key}.claim"

    def claim_of(self, key: str) -> Claim | None:
        """The claim on run ``key`` (None: no claim, or an unreadable one)."""
        try:
            return _parse_claim(self.claim_path(key).read_bytes())
        except OSError:
            return None

    def claim(self, key: str) -> bool:
        """Claim run ``key`` for this process: True if this store now holds the claim,
        False if a live sweep holds it. The claim file appears complete or not at all (a
        hard link of a written file, which fails if the name exists; ``O_EXCL`` where hard
        links are not supported); a stale claim is taken over with one warning."""
        d = self.root / "claims"
        d.mkdir(parents=True, exist_ok=True)
        c = Claim(os.getpid(), socket.gethostname(), time.time(), uuid.uuid4().hex)
        text = json.dumps(asdict(c))
        tmp = d / f".{key}.{c.token}.tmp"
        tmp.write_text(text)
        try:
            for _ in range(3):  # a stale claim removed: try again (someone else may win the race)
                try:
                    _create_exclusive(self.claim_path(key), tmp, text)
                except FileExistsError:
                    if not self._break_stale(key):
                        return False
                    continue
                self._held[key] = c.token
                return True
            return False
        finally:
            tmp.unlink(missing_ok=True)

    def stale_reason(self, claim: Claim | None) -> str | None:
        """Why ``claim`` no longer holds (None: it holds)."""
        if claim is None:
            return "unreadable"  # (a claim younger than UNREADABLE_GRACE_S may still be being written: not judged)
        if time.time() - claim.time > self.stale_after_s:
            return f"older than {self.stale_after_s:g} s"
        if claim.host == socket.gethostname() and not _pid_alive(claim.pid):
            return f"process {claim.pid} has ended"
        return None

    def _break_stale(self, key: str) -> bool:
        """Remove the claim on ``key`` if it is stale; True if it was removed (or gone)."""
        p = self.claim_path(key)
        try:
            seen, age = p.read_bytes(), time.time() - p.stat().st_mtime
        except FileNotFoundError:
            return True
        claim = _parse_claim(seen)  # the bytes the rename below is checked against, not a second read
        reason = self.stale_reason(claim)
        if reason is None or (claim is not None and self._held.get(key) == claim.token):
            return False
        if claim is None and age < UNREADABLE_GRACE_S:
            return False
        grave = p.with_name(f".{key}.{uuid.uuid4().hex}.stale")
        try:
            os.rename(p, grave)  # atomic: only one sweep removes a given claim file
        except FileNotFoundError:
            return True
        try:
            if grave.read_bytes() != seen:  # a fresh claim replaced the stale one meanwhile: put it back
                with contextlib.suppress(FileExistsError):
                    os.link(grave, p)
                return False
        finally:
            grave.unlink(missing_ok=True)
        who = f"process {claim.pid} on {claim.host}" if claim is not None else "an unknown sweep"
        self.warn(f"{p}: claim of {who} is stale ({reason}); this sweep computes run {key}")
        return True

    def release(self, key: str) -> None:
        """Give up this store's claim on ``key`` (a claim someone took over is left alone)."""
        token = self._held.pop(key, None)
        if token is None:
            return
        claim = self.claim_of(key)
        if claim is not None and claim.token == token:
            self.claim_path(key).unlink(missing_ok=True)

    def release_all(self) -> None:
        for key in list(self._held):
            self.release(key)
