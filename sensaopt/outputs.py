"""Output files: checked before any work starts, written atomically.

The one rule set for every file sensaopt writes (``docs/reliability.md``, "Outputs"):

* an output never overwrites an input of the same command: "the same file" is the same
  device and inode, so a second path or a hard link to the input counts too;
* an output never replaces a symbolic link, a directory, a FIFO, a socket or a device
  (``/dev/null`` included: leave ``-o`` out to write nothing);
* a missing parent directory is created; its nearest existing ancestor must be a
  directory this process can write into;
* every refusal, and every write that fails anyway (a read-only file system, a full
  disk), is one :class:`~sensaopt.errors.InputError` naming the path (exit 2 at the CLI);
* files are written to a temporary file in the target's directory and renamed over the
  target, so a reader sees the old file or the whole new one, never half of one.

Commands call :func:`check_output` (files) or :func:`check_output_dir` (output folders)
for every output before they read or compute anything, then write with
:func:`write_text` / :func:`write_bytes` / :func:`staged`, which check again.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from sensaopt.errors import InputError

PathLike = str | os.PathLike[str]
OUTPUT = "(output)"  # the field named in errors when the caller names no option


def _lstat(p: Path) -> os.stat_result | None:
    """``os.lstat`` or None when nothing is there (also when a parent is not a directory)."""
    try:
        return os.lstat(p)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _special(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), None)


def _same_input(st: os.stat_result, inputs: Iterable[PathLike | None]) -> str | None:
    """The first of ``inputs`` that is the file ``st`` describes (same device and inode)."""
    for inp in inputs:
        if inp is None:
            continue
        try:
            ist = os.stat(inp)
        except (OSError, ValueError):  # not a file (e.g. a generator name), unreadable, or an odd string
            continue
        if (ist.st_dev, ist.st_ino) == (st.st_dev, st.st_ino):
            return os.fspath(inp)
    return None


def _check_parent(p: Path, field: str) -> None:
    """The nearest existing ancestor of ``p`` must be a directory we can write into
    (missing directories below it are created when the file is written)."""
    q = p.parent
    while _lstat(q) is None and q != q.parent:
        q = q.parent
    if not q.is_dir():  # follows a symlink to a directory, which is fine as a parent
        raise InputError(str(p), field, f"cannot create it: {q} is not a directory")
    if not os.access(q, os.W_OK | os.X_OK):
        raise InputError(str(p), field, f"cannot write into directory {q} (permission denied)")


def check_output(path: PathLike, *, inputs: Iterable[PathLike | None] = (), field: str = OUTPUT) -> Path:
    """Refuse ``path`` as an output file unless writing it is safe (see the module doc);
    ``inputs`` are the files the command reads (names that are not files are ignored).
    Returns ``path`` as a :class:`Path`. Raises :class:`InputError`."""
    p = Path(path)
    st = _lstat(p)
    if st is not None:
        kind = _special(st.st_mode)
        if kind is not None:
            raise InputError(str(p), field, f"is {kind}; refusing to replace it (name a regular file)")
        same = _same_input(st, inputs)
        if same is not None:
            raise InputError(str(p), field, f"is the input file {same}; refusing to overwrite an input (choose another output)")
    _check_parent(p, field)
    return p


def check_output_dir(path: PathLike, *, field: str = OUTPUT) -> Path:
    """Refuse ``path`` as an output folder unless it is a writable directory (a symlink
    to one is fine) or can be created. Returns it as a :class:`Path`. Raises :class:`InputError`."""
    p = Path(path)
    if _lstat(p) is None:
        _check_parent(p, field)
    elif not p.is_dir():
        raise InputError(str(p), field, "is not a directory (an output folder is needed here)")
    elif not os.access(p, os.W_OK | os.X_OK):
        raise InputError(str(p), field, "cannot write into this directory (permission denied)")
    return p


def _cannot(p: Path, field: str, e: OSError) -> InputError:
    return InputError(str(p), field, f"cannot write: {e.strerror or e}")


@contextlib.contextmanager
def staged(path: PathLike, *, inputs: Iterable[PathLike | None] = (), field: str = OUTPUT, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``path`` (ending in ``suffix``) for the caller to
    write; when the block ends without an exception it is renamed onto ``path``
    (checked by :func:`check_output` before and again just before the rename), else
    removed. Raises :class:`InputError` for a refused path or a failed write."""
    inputs = tuple(inputs)
    p = check_output(path, inputs=inputs, field=field)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{p.name}.", suffix=f".tmp{suffix}", dir=p.parent)
        os.close(fd)
    except OSError as e:
        raise _cannot(p, field, e) from None
    tmp = Path(tmp_name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a plain open() would honour the umask
        check_output(p, inputs=inputs, field=field)  # nothing took the name's place meanwhile
        os.replace(tmp, p)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _cannot(p, field, e) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_bytes(path: PathLike, data: bytes, *, inputs: Iterable[PathLike | None] = (), field: str = OUTPUT) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename) after :func:`check_output`."""
    with staged(path, inputs=inputs, field=field) as tmp, open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_text(path: PathLike, text: str, *, inputs: Iterable[PathLike | None] = (), field: str = OUTPUT) -> None:
    """Write ``text`` as UTF-8, ending in a newline, to ``path`` like :func:`write_bytes`."""
    write_bytes(path, (text if text.endswith("\n") else text + "\n").encode("utf-8"), inputs=inputs, field=field)
