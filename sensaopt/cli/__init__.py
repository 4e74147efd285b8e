"""The ``sensaopt`` command line. Each area adds its commands in its own module.

User errors (bad files, unknown names) print one line on stderr and exit with code 2.
"""

from __future__ import annotations

import sys

from sensaopt.cli import core  # noqa: F401  (registers commands)
from sensaopt.cli.app import app

_EXTRA = ("sensaopt.cli.exact", "sensaopt.cli.traces", "sensaopt.cli.plot", "sensaopt.cli.data")


def _load_extra() -> None:
    import importlib

    for mod in _EXTRA:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


def _usage_classes() -> tuple[type[BaseException], type[BaseException], type[BaseException]]:
    """(ClickException, Exit, Abort) of the click that typer actually runs on.

    typer >= 0.2x bundles its own click (``typer._click``), older versions use the
    installed ``click``; ``typer.BadParameter`` is that click's class in both, so its
    bases name the right ClickException whatever versions are installed."""
    import typer

    click_exc = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    return click_exc, typer.Exit, typer.Abort


def main(argv: list[str] | None = None) -> int:
    from sensaopt.errors import SensaoptError

    _load_extra()
    click_exc, exit_exc, abort_exc = _usage_classes()
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="sensaopt")
    except SensaoptError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyError as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except click_exc as e:  # usage errors (unknown command or option, missing argument, bad value): exit 2
        msg = _one_line(e)
        if msg:  # empty: a group called without a command (its help is already printed)
            print(f"error: {msg}", file=sys.stderr)
        return 2
    except exit_exc as e:
        return int(getattr(e, "exit_code", 0))
    except abort_exc:
        print("aborted", file=sys.stderr)
        return 130
    if rv == 130:  # typer (non-standalone) turns Ctrl-C into a returned 130; finished work is already saved
        print("interrupted", file=sys.stderr)
    return rv if isinstance(rv, int) else 0


def _one_line(e: BaseException) -> str:
    """A click error's message on one line (it may span several)."""
    fmt = getattr(e, "format_message", None)
    msg = fmt() if callable(fmt) else str(e)
    return " ".join(str(msg).split())


def entry() -> None:  # pragma: no cover
    sys.exit(main())
