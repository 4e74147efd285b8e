"""The typer application object that command modules attach to."""

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="sensaopt: deadline- and sensitivity-aware GPU cluster scheduling.")
