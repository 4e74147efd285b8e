"""The typer application object that command modules attach to."""

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="sensaopt: deadline- and sensitivity-aware GPU cluster scheduling.")


def command_line(command: str, options: dict) -> str:
    """The command that reproduces a run, rebuilt from its options (not from sys.argv,
    which is the test runner's inside tests)."""
    return f"sensaopt {command} " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in options.items() if v is not None)
