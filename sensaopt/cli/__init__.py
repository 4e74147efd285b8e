"""The ``sensaopt`` command line. Each area adds its commands in its own module.

User errors (bad files, unknown names) print one line on stderr and exit with code 2.
"""

from __future__ import annotations

import sys

from sensaopt.cli.app import app
from sensaopt.cli import core  # noqa: F401  (registers commands)

_EXTRA = ("sensaopt.cli.exact", "sensaopt.cli.traces", "sensaopt.cli.plot")


def _load_extra() -> None:
    import importlib

    for mod in _EXTRA:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


def main(argv: list[str] | None = None) -> int:
    from sensaopt.errors import SensaoptError

    _load_extra()
    try:
        rv = app(args=argv, standalone_mode=False)
    except SensaoptError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyError as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # click usage errors
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            return 2
        if isinstance(e, click.exceptions.Exit):
            return e.exit_code
        if isinstance(e, click.exceptions.Abort):
            print("aborted", file=sys.stderr)
            return 130
        raise
    if rv == 130:  # typer (non-standalone) turns Ctrl-C into a returned 130; finished work is already saved
        print("interrupted", file=sys.stderr)
    return rv if isinstance(rv, int) else 0


def entry() -> None:  # pragma: no cover
    sys.exit(main())
