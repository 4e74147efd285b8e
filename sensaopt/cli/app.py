"""The typer application object that command modules attach to."""

import typer

# plain click help (rich_markup_mode=None): typer's rich help shows every flag with a "<bool>"
# value it does not take; the plain one shows flags as flags ("--json", "--f / --no-f")
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False,
                  help="sensaopt: deadline- and sensitivity-aware GPU cluster scheduling.")


def command_line(command: str, options: dict) -> str:
    """The command that reproduces a run, rebuilt from its options (not from sys.argv,
    which is the test runner's inside tests)."""
    return f"sensaopt {command} " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in options.items() if v is not None)


def progress_bar(total: int, desc: str, quiet: bool, unit: str = "job"):
    """A tqdm bar on stderr, off with ``--quiet`` or when stderr is not a terminal.
    Returns (bar, callback) where callback(round, done, total) suits
    :func:`sensaopt.simulate`'s ``progress``."""
    import sys

    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, disable=quiet or not sys.stderr.isatty(), file=sys.stderr, leave=False)

    def cb(r: int, done: int, tot: int) -> None:
        bar.set_postfix_str(f"round {r}", refresh=False)
        bar.update(done - bar.n)

    return bar, cb
