"""The ``sensaopt`` command line. Each area adds its commands in its own module.

User errors (bad files, unknown names) print one line on stderr and exit with code 2.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from sensaopt.cli import core  # noqa: F401  (registers commands)
from sensaopt.cli.app import app

_EXTRA = ("sensaopt.cli.exact", "sensaopt.cli.bounds", "sensaopt.cli.traces", "sensaopt.cli.gaps", "sensaopt.cli.plot", "sensaopt.cli.data")


def _load_extra() -> None:
    import importlib

    for mod in _EXTRA:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


@functools.cache
def _usage_classes() -> tuple[type[BaseException], type[BaseException], type[BaseException]]:
    """(ClickException, Exit, Abort) of the click that typer actually runs on.

    typer >= 0.2x bundles its own click (``typer._click``), older versions use the
    installed ``click``; ``typer.BadParameter`` is that click's class in both, so its
    bases name the right ClickException whatever versions are installed."""
    import typer

    click_exc = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    return click_exc, typer.Exit, typer.Abort


def _command() -> Any:
    """The click command of :data:`app`, its help polished: every command's summary is its
    docstring's whole first paragraph (click would cut it at 45 characters), arguments show
    as ``INSTANCE`` (not typer's ``{INSTANCE}``) and options as ``FLOAT``, ``INTEGER``,
    ``TEXT``, ``PATH`` (not typer's ``<float>``; ``-o``: ``FILE``, the one meaning of ``-o``)
    unless they name their own metavar, and
    every option that takes a value shows its default (:func:`_show_default`)."""
    import typer

    cmd = typer.main.get_command(app)
    for p in cmd.params:  # the root options (--log-level, --data-dir, ...)
        _show_default(p)
    _polish(cmd)
    return cmd


def _polish(cmd: Any) -> None:
    for sub in getattr(cmd, "commands", {}).values():
        text = (sub.help or "").strip()
        if sub.short_help is None and text:
            sub.short_help = " ".join(text.split("\n\n")[0].split())
        for p in sub.params:
            mv = p.metavar
            if p.param_type_name == "argument":
                if mv is None or mv.startswith("{"):
                    p.metavar = (p.name or "").upper()
                p.display_type_rich = lambda ctx=None: ""  # "INSTANCE", not typer's "INSTANCE <path>" (the help says what it is)
                p.get_usage_pieces = functools.partial(_usage_piece, p)
            elif p.param_type_name == "option":
                if not getattr(p, "is_flag", False) and (mv is None or mv.startswith("<")):
                    p.metavar = "FILE" if "-o" in p.opts else _metavar(getattr(getattr(p, "type_descriptor", None), "annotation", str))
                _show_default(p)
        _polish(sub)


def _usage_piece(p: Any, ctx: Any = None) -> list[str]:
    """An argument in a usage line: ``INSTANCE``, ``[NAME]...`` (optional), ``INSTANCES...``."""
    name = p.metavar or (p.name or "").upper()
    name = name if p.required else f"[{name}]"
    return [name + ("..." if p.nargs != 1 else "")]


def _show_default(p: Any) -> None:
    """Show ``[default: ...]`` on every option that takes a value: its value, or, when that
    is None or empty, what applies then — the help's ``(default: ...)`` note (moved into
    the brackets) or :data:`sensaopt.cli.options.NONE_MEANS`. Flags (off unless given)
    show none."""
    from sensaopt.cli.options import DEFAULT_NOTE, NONE_MEANS

    if getattr(p, "is_flag", False) and not getattr(p, "secondary_opts", None):
        return
    if p.default not in (None, [], ()) or isinstance(p.show_default, str):
        return
    m = DEFAULT_NOTE.search(p.help or "")
    if m is not None:
        note = m.group(1)
        p.help = (p.help[:m.start()] + p.help[m.end():]).strip()
        text: Any = lambda: note  # noqa: E731
    elif p.name in NONE_MEANS:
        got = NONE_MEANS[p.name]
        text = got if callable(got) else lambda: got
    else:
        return
    p.show_default = "(shown)"  # a text: typer shows it even for a None default
    p._get_default_string = lambda **_: text()  # typer would print "(show_default)"; called when the help is shown


def _metavar(annotation: object) -> str:
    """FLOAT, INTEGER, PATH or TEXT for an option's annotation (``float | None``, ``list[int]``: their element)."""
    import typing
    from pathlib import Path

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if args:
        return _metavar(args[0])
    return {float: "FLOAT", int: "INTEGER", Path: "PATH"}.get(annotation, "TEXT")  # type: ignore[call-overload]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; every way it ends is an exit code and at most one line on
    stderr: 0 done, 1 a schedule that ``validate`` rejects or failed runs, 2 a user error
    (:class:`SensaoptError`, usage, an operating-system error on a path or stream), 130
    interrupted; out of memory (a ``MemoryError`` anywhere, or a size refused up front)
    is one line naming the command's size, exit 1 (:mod:`sensaopt.memory`). A multi-part
    command that kept finished parts says which (:class:`sensaopt.outputs.Kept`).
    Programming errors keep their traceback."""
    global _ballast
    from sensaopt import memory, outputs

    _load_extra()
    outputs.last_kept = None
    args = list(sys.argv[1:] if argv is None else argv)
    memory.begin(memory.command_of(args))
    _ballast = bytearray(_BALLAST_BYTES)  # given back on a MemoryError, so that its line can be made and printed
    saved = {k: os.environ.get(k) for k in _root_env()}
    from sensaopt.solvers.interrupt import terminate_interrupts

    try:
        try:
            with terminate_interrupts():  # SIGTERM ends a command like Ctrl-C: finished parts kept and named, temp files removed
                outputs.check_output_words(args)
                rv = _command().main(args=argv, standalone_mode=False, prog_name="sensaopt")
        finally:
            _restore_env(saved)  # --data-dir / --mirror hold for this command (and its workers) only
            _flush_stdout()  # a full or closed stdout fails here, inside the boundary, not at interpreter exit
    except (Exception, KeyboardInterrupt, SystemExit) as e:
        code = _ended_by(e)
        if code is None:
            raise
        return code
    if rv == 130:  # typer (non-standalone) turns Ctrl-C into a returned 130; finished work is already saved
        _say(f"interrupted{_kept()}")
    return rv if isinstance(rv, int) else 0


def _root_env() -> tuple[str, ...]:
    """The environment variables the root options --data-dir and --mirror set."""
    from sensaopt.datasets import MIRROR_ENV, TRACES_ENV

    return (TRACES_ENV, MIRROR_ENV)


def _restore_env(saved: dict[str, str | None]) -> None:
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _kept(e: BaseException | None = None) -> str:
    """`` (kept: ...)`` when a multi-part command kept finished parts, else ``""``."""
    from sensaopt import outputs

    t = outputs.kept_of(e) or outputs.last_kept
    return f" ({t})" if t else ""


def _say(text: str) -> None:
    """Print ``text`` on stderr as one line: control characters it quotes from user input
    (a newline in a job id or a file name) are shown escaped (``\\n``)."""
    from sensaopt.errors import one_line

    print(one_line(text), file=sys.stderr)


def _ended_by(e: BaseException) -> int | None:
    """The exit code for an exception leaving a command, its line printed; None: not a
    user-facing error (a programming error keeps its traceback)."""
    from sensaopt.errors import SensaoptError

    if isinstance(e, MemoryError):
        return _out_of_memory(e)
    click_exc, exit_exc, abort_exc = _usage_classes()
    if isinstance(e, SensaoptError):
        _say(f"error: {e}{_kept(e)}")
        return 2
    if isinstance(e, KeyError):  # an unknown name in a registry
        _say(f"error: {e.args[0] if e.args else e}{_kept(e)}")
        return 2
    if isinstance(e, KeyboardInterrupt):
        _say(f"interrupted{_kept(e)}")
        return 130
    if isinstance(e, click_exc):  # usage errors (unknown command or option, missing argument, bad value): exit 2
        msg = _one_line(e)
        if msg:  # empty: a group called without a command (its help is already printed)
            _say(f"error: {msg}")
        return 2
    if isinstance(e, exit_exc):
        return int(getattr(e, "exit_code", 0))
    if isinstance(e, abort_exc):
        _say(f"aborted{_kept(e)}")
        return 130
    if os.environ.get(TRACEBACK_ENV):
        return None
    if isinstance(e, SystemExit) and isinstance(e.__context__, OSError):  # click's sys.exit(1) on a broken stdout pipe
        return _os_error(e.__context__, _kept(e.__context__))
    if isinstance(e, OSError):  # a name too long, a symlink loop, permission, a full disk or stdout: one line naming the path
        return _os_error(e, _kept(e))
    return None


_BALLAST_BYTES = 4 << 20
_ballast: bytearray | None = None


def _out_of_memory(e: MemoryError) -> int:
    """One line for a command that ran out of memory (:func:`sensaopt.memory.line`), exit 1.
    The ballast and everything the failed work's frames held are freed first; the
    command's outputs are atomic, so nothing half-written is left."""
    global _ballast
    import gc

    from sensaopt import memory

    _ballast = None
    note = _kept(e)
    text = str(e) if isinstance(e, memory.OutOfMemory) else None
    e.__traceback__ = None  # its frames hold what filled the memory
    e.__context__ = e.__cause__ = None
    gc.collect()
    _say(f"error: {text or memory.line()}{note}")
    return 1


TRACEBACK_ENV = "SENSAOPT_TRACEBACK"  # set: operating-system errors are raised with their traceback (debugging)


def _flush_stdout() -> None:
    sys.stdout.flush()


def _os_error(e: OSError, note: str = "") -> int:
    """One line for an operating-system error, exit 2: the path (``(stdout)`` for the
    output stream), what failed in words and the errno name."""
    import errno

    path = e.filename if e.filename is not None else "(stdout)" if isinstance(e, BrokenPipeError) or e.errno == errno.ENOSPC else None
    where = _short(os.fsdecode(path)) if isinstance(path, (str, bytes)) else "(stream)" if path is None else str(path)
    if e.filename2 is not None:
        where += f" -> {_short(os.fsdecode(e.filename2))}"
    code = errno.errorcode.get(e.errno or 0, "")
    what = e.strerror or str(e)
    _say(f"error: {where}: {what}{f' ({code})' if code else ''}{note}")
    if isinstance(e, BrokenPipeError) or e.errno in (errno.EPIPE, errno.ENOSPC):
        _silence_stdout()
    return 2


def _short(text: str, limit: int = 160) -> str:
    """A path shortened to ``limit`` characters (its start and end kept) for one line."""
    return text if len(text) <= limit else f"{text[:limit // 2]}…{text[-(limit // 2):]}"


def _silence_stdout() -> None:
    """After a failed write to stdout, point it at /dev/null so that the interpreter's
    final flush does not print a second error."""
    import contextlib

    with contextlib.suppress(Exception):
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def _one_line(e: BaseException) -> str:
    """A click error's message on one line (it may span several)."""
    fmt = getattr(e, "format_message", None)
    msg = fmt() if callable(fmt) else str(e)
    return " ".join(str(msg).split())


def entry() -> None:  # pragma: no cover
    sys.exit(main())
