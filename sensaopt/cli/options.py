"""Command-line options shared by several commands, generated from the one definition
of each setting: the workload options from :class:`sensaopt.config.WorkloadConfig`,
``--set`` for policy knobs, and range checks for solver options."""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import typing
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, Optional, TypeVar

import typer

from sensaopt.config import WorkloadConfig, field_help, field_types, parse_value
from sensaopt.errors import InputError
from sensaopt.limits import OPTIONS

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_NOTE = re.compile(r"\s*\(default: ((?:[^()]|\([^()]*\))*)\)")  # a help text's "(default: ...)" note

SET_HELP = ("Policy knob as key=value (repeat; 'policy.key=value' for one policy only): a field of the policy's config "
            "dataclass, e.g. backfill=none for sensascale, time_limit_s=2 for chronus (default: none, each policy's own config).")

def _exact_default(name: str, fmt: str) -> Callable[[], str]:
    """The exact solvers' default of ``name`` (:class:`sensaopt.exact.common.SolveSettings`), read when help is shown."""
    def text() -> str:
        from sensaopt.exact.common import SolveSettings

        return fmt.format(getattr(SolveSettings(), name))

    return text


# what an option whose default is None (or an empty list) means, for options whose help has no "(default: ...)" note
# (the help shows it as "[default: ...]", sensaopt.cli._show_default; a function: called when the help is shown);
# keyed by parameter name
NONE_MEANS: dict[str, str | Callable[[], str]] = {
    "time_limit": _exact_default("time_limit", "{:g} s per exact solve"),  # solve: the exact solvers' own default
    "workers": _exact_default("workers", "{}"),
    "days": "the whole trace; generators: their own span",
    "limit": "every job of the window",
    "jobs": "the generator's own count",
    "duration_at": "none: node, or reference on nodes at that share",
    "columns": "none: a recognised header",
    "bin_minutes": "one round, no averaging",
    "budget": "time: the wall-clock --time-limit alone",
}


DEFAULT_POLICY = "sensascale"  # the one default of every command that runs a policy (--policy)
POLICY_NAMES_HELP = "a registered name (sensascale, edf, fifo, chronus, ...; `sensaopt.policies.policy_names()`) or package.module:Class"


def policy_option(help: str, repeat: bool = False) -> Any:
    """``--policy NAME`` with :data:`DEFAULT_POLICY` as its default (``repeat``: repeatable, a list)."""
    return typer.Option([DEFAULT_POLICY] if repeat else DEFAULT_POLICY, "--policy", metavar="NAME",
                        help=f"{help} NAME: {POLICY_NAMES_HELP}.")


def set_option() -> Any:
    """The ``--set key=value`` option (repeatable)."""
    return typer.Option([], "--set", help=SET_HELP, metavar="KEY=VALUE")


OUT_DIR = "--out-dir"  # the one spelling of a folder output; -o/--output always names a file


def out_dir_option(help: str) -> Any:
    """``--out-dir DIR`` (required): the folder a command writes into."""
    return typer.Option(..., OUT_DIR, metavar="DIR", help=help)


def table_format_option(what: str) -> Any:
    """``--format csv|parquet`` of a folder command: the file format of ``what`` (Parquet: the ``[parquet]`` extra, pyarrow)."""
    return typer.Option("csv", "--format", metavar="csv|parquet",
                        help=f"File format of {what}: csv, or parquet (typed columns; needs pyarrow, the [parquet] extra).")


def check_table_format(fmt: str) -> str:
    """``--format``'s value, lower case, if it is csv or parquet and can be written (else one line, exit 2)."""
    from sensaopt.tables import check_format

    return check_format(fmt.lower(), "--format", ("csv", "parquet"))


def retired_folder_option(*decls: str) -> Any:
    """A hidden option for a folder command's former spelling of ``--out-dir`` (``-o``,
    ``--output``, ``--out``, ``--store``): given, it is refused with one line naming
    ``--out-dir`` (exit 2), never read as a second meaning of ``-o``."""
    return typer.Option(None, *decls, hidden=True, expose_value=False, is_eager=True, callback=_refuse_retired)


def _refuse_retired(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> None:
    if value is not None:
        from sensaopt.errors import InputError

        used = "/".join(param.opts)
        raise InputError("(command line)", used, f"this command writes a folder: give it as {OUT_DIR} DIR "
                                                 f"(-o/--output names a file in every command)")


BUDGET_HELP = ("work:N: a deterministic limit of N work units per {per} (CP-SAT: deterministic seconds; HiGHS, CBC: 100 "
               "branch-and-bound nodes; the same numbers on any machine load, --time-limit only a safety net, recorded when "
               "it fires) | time: the wall-clock --time-limit alone.")


def budget_option(default: str | None, per: str) -> Any:
    """``--budget work:N|time`` (:func:`sensaopt.solvers.budget.parse_budget`), checked before any work."""
    return typer.Option(default, "--budget", metavar="work:N|time", callback=_check_budget, help=BUDGET_HELP.format(per=per))


def _check_budget(value: str | None) -> str | None:
    from sensaopt.errors import SensaoptError
    from sensaopt.solvers.budget import parse_budget

    try:
        parse_budget(value)
    except SensaoptError as e:
        raise typer.BadParameter(str(e).removeprefix("--budget: "), param_hint="'--budget'") from None
    return value


def move_cost_option() -> Any:
    """``--move-cost-scale`` for commands reading an instance file: the
    :class:`WorkloadConfig` field's default, help and range (apply it with
    :meth:`sensaopt.instance.Instance.with_move_cost_scale`)."""
    name = "move_cost_scale"
    default = next(f.default for f in fields(WorkloadConfig) if f.name == name)
    return typer.Option(default, _flag(name), help=field_help(WorkloadConfig, name), callback=in_range(name))


def check_option(name: str, value: Any) -> Any:
    """``value`` of option ``--name`` if within :data:`sensaopt.limits.OPTIONS` (None and
    options without a range pass); else the usage error ``Invalid value for '--name': must
    be within [lo, hi], got X`` (exit 2). A ``--trace`` naming a file must be a readable
    text file (:func:`sensaopt.traces._rows.check_text_file`)."""
    r = OPTIONS.get(name)
    if r is not None and value is not None:
        msg = r.problem(value)
        if msg is not None:
            raise typer.BadParameter(msg, param_hint=f"'{_flag(name)}'")
    if name == "trace" and isinstance(value, str):
        _check_trace_file(value)
    return value


def in_range(name: str) -> Callable[[Any], Any]:
    """typer callback checking an option against ``sensaopt.limits.OPTIONS[name]``
    (e.g. ``typer.Option(None, callback=in_range("time_limit"))``)."""
    def cb(value: Any) -> Any:
        return check_option(name, value)

    return cb


def _check_trace_file(spec: str) -> None:
    """A ``--trace`` that names an existing path (not a source name) must be a text file:
    checked before anything is read or written."""
    from pathlib import Path

    from sensaopt.traces._rows import check_text_file
    from sensaopt.traces.sources import SOURCES

    if spec not in SOURCES and Path(spec).exists():
        check_text_file(spec)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


class TextCodec:
    """How a field that is not a plain bool/int/float/str looks on the command line."""

    def __init__(self, to_text: Callable[[Any], str], from_text: Callable[[str], Any]) -> None:
        self.to_text, self.from_text = to_text, from_text


def grid_metavar(tp: Any) -> str:
    """The metavar of a repeatable workload option, read as text (``none``/``preset`` allowed): its field's type."""
    import typing

    args = [a for a in typing.get_args(tp) if a is not type(None)]
    base = args[0] if args else tp
    return {float: "FLOAT", int: "INTEGER", bool: "BOOLEAN"}.get(base, "TEXT")


def dataclass_options(
    cls: type,
    param: str,
    *,
    names: tuple[str, ...] | None = None,
    helps: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
    grid: bool = False,
    codecs: dict[str, TextCodec] | None = None,
) -> Callable[[F], F]:
    """Add one option per field of the dataclass ``cls`` (or of ``names``) to a typer
    command whose function takes ``param``; defaults come from the dataclass, help texts
    from ``helps`` or the field's ``metadata["help"]``. The function gets one ``cls``
    instance built from the options, or with ``grid=True`` (every option repeatable) the
    list of instances of their cartesian product (``none``/``preset``: None)."""
    types = field_types(cls)
    chosen = [f for f in fields(cls) if names is None or f.name in names]
    codecs = codecs or {}

    def deco(fn: F) -> F:
        sig = inspect.signature(fn, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != param]
        added = []
        for f in chosen:
            help_ = (helps or {}).get(f.name) or f.metadata.get("help", "")
            default_value = f.default if f.default is not MISSING else None
            codec = codecs.get(f.name)
            if grid:
                ann: Any = list[str]
                shown = DEFAULT_NOTE.sub("", help_)  # a field's own "(default: ...)" note becomes the grid's default
                note = DEFAULT_NOTE.search(help_)
                dflt = note.group(1) if note else NONE_MEANS.get(f.name, "none") if default_value is None else default_value
                default: Any = typer.Option([], _flag(f.name), help=f"{shown} Repeat for a grid (default: {dflt}).",
                                            metavar=grid_metavar(types[f.name]))
            else:
                ann = str if codec else _typer_type(types[f.name])
                value = ... if f.name in required else (codec.to_text(default_value) if codec else default_value)
                default = typer.Option(value, _flag(f.name), help=help_, callback=in_range(f.name))
            added.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann))

        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            given = {f.name: kwargs.pop(f.name) for f in chosen}
            if grid:
                kwargs[param] = _grid(cls, given, types)
            else:
                for name, codec in codecs.items():
                    if name in given:
                        try:
                            given[name] = codec.from_text(given[name])
                        except ValueError as e:
                            raise InputError(_flag(name), name, str(e)) from None
                kwargs[param] = cls(**given)
            return fn(**kwargs)

        wrapper.__signature__ = sig.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *added]}
        return wrapper  # type: ignore[return-value]

    return deco


def with_workload(*, grid: bool = False, required: tuple[str, ...] = ()) -> Callable[[F], F]:
    """One option per :class:`WorkloadConfig` field; the function's ``workload``
    parameter gets the config (``grid=True``: the list of configs of the grid)."""
    return dataclass_options(WorkloadConfig, "workload", grid=grid, required=required)


def _typer_type(tp: Any) -> Any:
    """``X | None`` as ``Optional[X]`` (what every typer version understands)."""
    args = typing.get_args(tp)
    if type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return Optional[inner]  # noqa: UP045 (a runtime type for typer, not an annotation)
    return tp


def _grid(cls: type, given: dict[str, list[str]], types: dict[str, Any]) -> list[Any]:
    axes: dict[str, list[Any]] = {}
    for name, texts in given.items():
        if not texts:
            continue
        vals = []
        for t in texts:
            if t.strip().lower() == "preset" and type(None) in typing.get_args(types[name]):
                t = "none"
            try:
                value = parse_value(types[name], t)
            except ValueError as e:
                raise InputError(_flag(name), name, str(e)) from None
            vals.append(check_option(name, value))
        axes[name] = vals
    names = list(axes)
    return [cls(**dict(zip(names, combo))) for combo in itertools.product(*(axes[n] for n in names))]
