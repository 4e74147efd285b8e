"""Output files: checked before any work starts, written atomically.

The one rule set for every file sensaopt writes (``docs/reliability.md``, "Outputs"):

* an output never overwrites an input of the same command: "the same file" is the same
  device and inode, so a second path or a hard link to the input counts too; an input
  given as the name of a packaged instance (``tiny-8gpu``) is the packaged file it names;
* nothing is written into sensaopt's packaged data (the instances shipped as
  ``sensaopt.instances``, the package itself), whatever the name
  (:func:`packaged_root_of`; ``SENSAOPT_WRITE_PACKAGED=1`` lets a maintainer regenerate
  the committed instances);
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
from collections.abc import Callable, Iterable, Iterator
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


def input_file(inp: PathLike) -> PathLike | None:
    """The file an input names: the path itself if something is there, else the packaged
    instance file a name such as ``tiny-8gpu`` resolves to (:func:`sensaopt.io.load_instance`
    reads that), else None (a generator's or source's name, no file)."""
    try:
        if os.path.exists(inp):  # what load_instance reads first
            return inp
    except (TypeError, ValueError):  # an odd string (a NUL byte)
        return None
    from sensaopt.datasets import packaged_instance

    packaged = packaged_instance(os.fspath(inp))
    return None if packaged is None else Path(str(packaged))


PACKAGED_ENV = "SENSAOPT_WRITE_PACKAGED"  # "1": writing into the packaged instances is allowed (regenerating them)


def packaged_root_of(path: PathLike) -> Path | None:
    """The packaged-data folder of sensaopt that ``path`` lies in (after resolving
    symbolic links and ``..``), or None. The folders: the packaged instances
    (``sensaopt.instances``, the repository's ``instances/`` in an editable install)
    and the ``sensaopt`` package itself."""
    from sensaopt.datasets import packaged_data_dirs

    real = Path(os.path.realpath(path))
    for root in packaged_data_dirs():
        if real == root or root in real.parents:
            return root
    return None


def _same_input(st: os.stat_result, inputs: Iterable[PathLike | None]) -> str | None:
    """The first of ``inputs`` that is the file ``st`` describes (same device and inode;
    a packaged instance's name stands for its file)."""
    for inp in inputs:
        if inp is None:
            continue
        try:
            f = input_file(inp)
            if f is None:
                continue
            ist = os.stat(f)
        except (OSError, ValueError):  # not a file (e.g. a generator name), unreadable, or an odd string
            continue
        if (ist.st_dev, ist.st_ino) == (st.st_dev, st.st_ino):
            return os.fspath(inp) if f is inp else f"{os.fspath(inp)} (the packaged {os.fspath(f)})"
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


def check_path_text(path: PathLike, field: str, what: str) -> None:
    """An empty path (``-o ""``: an unset shell variable), and for a file a name ending in
    ``/`` (a folder's name), are refused instead of read as ``.`` or as a file ``NAME``."""
    text = os.fspath(path)
    if text == "":
        raise InputError("(empty path)", field, f"an empty path; name {what}")
    if what == "a file" and text.endswith(("/", os.sep)) and not os.path.isdir(text):
        raise InputError(text, field, "ends in '/', a folder's name; name a file here")


FILE_OPTIONS = ("-o", "--output", "--save-schedule")  # command-line options naming an output file
FOLDER_OPTIONS = ("--out-dir", "--results", "--data-dir")  # ... a folder written into


def check_output_words(argv: list[str]) -> None:
    """:func:`check_path_text` on the command line's words, before click makes a
    :class:`Path` of them (``Path("")`` is ``.``, ``Path("out/")`` is ``out``)."""
    for i, word in enumerate(argv):
        if word == "--":
            return
        name, eq, value = word.partition("=")
        if not eq:
            if i + 1 >= len(argv):
                return
            name, value = word, argv[i + 1]
        if name in FILE_OPTIONS:
            check_path_text(value, name, "a file")
        elif name in FOLDER_OPTIONS:
            check_path_text(value, name, "a folder (. for this one)")


def check_output(path: PathLike, *, inputs: Iterable[PathLike | None] = (), field: str = OUTPUT) -> Path:
    """Refuse ``path`` as an output file unless writing it is safe (see the module doc);
    ``inputs`` are the files the command reads (names that are not files are ignored).
    Returns ``path`` as a :class:`Path`. Raises :class:`InputError`."""
    check_path_text(path, field, "a file")
    p = Path(path)
    st = _lstat(p)
    if st is not None:
        kind = _special(st.st_mode)
        if kind is not None:
            raise InputError(str(p), field, f"is {kind}; refusing to replace it (name a regular file)")
        same = _same_input(st, inputs)
        if same is not None:
            raise InputError(str(p), field, f"is the input file {same}; refusing to overwrite an input (choose another output)")
    _check_packaged(p, field)
    _check_parent(p, field)
    return p


def _check_packaged(p: Path, field: str) -> None:
    if os.environ.get(PACKAGED_ENV) == "1":
        return
    root = packaged_root_of(p)
    if root is not None:
        raise InputError(str(p), field, f"is inside sensaopt's packaged data ({root}); refusing to write there (choose another output)")


def check_output_dir(path: PathLike, *, field: str = OUTPUT) -> Path:
    """Refuse ``path`` as an output folder unless it is a writable directory (a symlink
    to one is fine) or can be created. Returns it as a :class:`Path`. Raises :class:`InputError`."""
    check_path_text(path, field, "a folder (. for this one)")
    p = Path(path)
    _check_packaged(p, field)
    if _lstat(p) is None:
        _check_parent(p, field)
    elif not p.is_dir():
        raise InputError(str(p), field, "is not a directory (an output folder is needed here)")
    elif not os.access(p, os.W_OK | os.X_OK):
        raise InputError(str(p), field, "cannot write into this directory (permission denied)")
    return p


def _identity(p: Path) -> tuple[object, ...]:
    """What makes two output paths one file: device and inode when it exists, else the
    resolved path (symbolic links and ``..`` followed)."""
    try:
        st = os.stat(p)
        return (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return (os.path.normcase(os.path.realpath(p)),)


def check_distinct(outputs: Iterable[tuple[PathLike, str]]) -> None:
    """Refuse two outputs of one command that are one file (``simulate --save-schedule
    DIR/edf.summary.json --out-dir DIR``, ``--policy edf`` given twice): the second would
    replace the first. ``outputs``: (path, the option that names it). Raises :class:`InputError`."""
    seen: dict[tuple[object, ...], tuple[PathLike, str]] = {}
    for path, field in outputs:
        key = _identity(Path(path))
        if key in seen:
            first, first_field = seen[key]
            raise InputError(os.fspath(path), field, f"is also the {first_field} output {os.fspath(first)}; two outputs of one "
                                                     "command would be one file (choose other names, or give each --policy once)")
        seen[key] = (path, field)


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


KEPT_ATTR = "sensaopt_kept"  # set on an exception leaving a multi-part command: what it kept


class Kept:
    """What a multi-part command (``gap`` rows, ``round-gap`` rounds, ``simulate``
    policies) has written so far: each finished part is written as it completes (whole
    files, atomically), so an error or Ctrl-C keeps what was done. :meth:`guard` tags an
    exception leaving the block with :meth:`text`, which the CLI adds to its one line
    (``interrupted (kept: 2 of 3 rows in gap.csv)``); nothing kept: no tag, the rule
    "one line, nothing written" holds."""

    def __init__(self) -> None:
        self.parts: dict[str, str | Callable[[], str | None]] = {}  # file -> what of it is finished

    def note(self, path: PathLike, what: str | Callable[[], str | None]) -> None:
        """``what``: a text, or a function giving it when the command ends (None: nothing kept there)."""
        self.parts[os.fspath(path)] = what

    def text(self) -> str | None:
        done = [(path, what() if callable(what) else what) for path, what in self.parts.items()]
        done = [(path, what) for path, what in done if what is not None]
        if not done:
            return None
        return "kept: " + ", ".join(f"{what} in {path}" if what else path for path, what in done)

    @contextlib.contextmanager
    def guard(self) -> Iterator[Kept]:
        global last_kept
        try:
            yield self
        except BaseException as e:
            t = self.text()
            if t is not None:
                last_kept = t  # typer swallows a KeyboardInterrupt (it returns 130): the CLI reads this instead
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(e, KEPT_ATTR, t)
            raise


last_kept: str | None = None  # the Kept text of the last multi-part command that ended by an exception (reset by the CLI)


def kept_of(e: BaseException | None) -> str | None:
    """The :class:`Kept` tag of ``e`` or of an exception it was raised from (click turns
    Ctrl-C into ``Abort`` raised from the ``KeyboardInterrupt``)."""
    seen = 0
    while e is not None and seen < 10:
        t = getattr(e, KEPT_ATTR, None)
        if t is not None:
            return str(t)
        e = e.__cause__ or e.__context__
        seen += 1
    return None
