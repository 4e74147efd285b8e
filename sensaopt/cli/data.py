"""Data commands: ``data list`` and ``data fetch`` (the table is :data:`sensaopt.datasets.DATA_FILES`)."""

from __future__ import annotations

import os

import typer

from sensaopt.cli.app import app
from sensaopt.cli.options import in_range

data_app = typer.Typer(no_args_is_help=True, help="The public trace and calibration files: list them, fetch them.")
app.add_typer(data_app, name="data")


def _folders() -> str:
    from sensaopt.datasets import MIRROR_ENV, fetch_dir, search_dirs

    read = ", then ".join(f"{d} ({label})" for label, d in search_dirs())
    mirror = os.environ.get(MIRROR_ENV)
    src = f"; downloads from {mirror} ({MIRROR_ENV})" if mirror else ""
    return f"read from {read}; `sensaopt data fetch` writes to {fetch_dir()}{src}"


@data_app.command("list")
def data_list() -> None:
    """Each file: name, whether it is present (and where), licence, path; its source below."""
    from sensaopt.datasets import DATA_FILES, instance_names, where

    typer.echo(_folders())
    rows = []
    for f in DATA_FILES.values():
        found = where(f.path)
        rows.append((f.name, "missing" if found is None else f"present ({found[0]})", f.licence, f.path, f.source))
    w = [max(len(r[k]) for r in rows) for k in range(3)]
    typer.echo(f"{'name':<{w[0]}}  {'status':<{w[1]}}  {'licence':<{w[2]}}  file")
    for name, status, licence, path, source in rows:
        typer.echo(f"{name:<{w[0]}}  {status:<{w[1]}}  {licence:<{w[2]}}  {path}")
        typer.echo(f"{'':<{w[0]}}  source: {source}")
    names = instance_names()
    typer.echo(f"packaged instances (sensaopt solve NAME): {', '.join(names) if names else 'none (sensaopt is not installed)'}")


@data_app.command("fetch")
def data_fetch(
    names: list[str] = typer.Argument(None, metavar="NAME", help="Files to fetch (names from `sensaopt data list`; default: all)."),
    timeout: float = typer.Option(120.0, "--timeout", callback=in_range("timeout"), metavar="SECONDS",
                                  help="Seconds to wait for a server to answer."),
) -> None:
    """Download or derive the files not yet present into the user cache (or SENSAOPT_TRACES), each checked (SHA-256, git blob)."""
    from sensaopt.datasets import DATA_FILES, fetch

    for got in fetch(names or None, timeout_s=timeout):  # a FetchError is one line, exit 2 (nothing of that file kept)
        f = DATA_FILES[got.name]
        ok = f" ({f.check_kind} ok)" if f.check_kind else ""
        if got.action == "present":
            typer.echo(f"{got.name}: present ({got.where}) {got.path}")
        elif got.action == "derived":
            typer.echo(f"{got.name}: derived from {got.url} -> {got.path}{ok}")
        else:
            typer.echo(f"{got.name}: fetched {got.url} -> {got.path}{ok}")
