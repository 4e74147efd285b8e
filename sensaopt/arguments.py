"""Arguments of the Python API, checked before any work starts (the command line's
checks, applied to ``solve(...)``, ``simulate(...)`` and their options).

Every argument is checked against the annotation of the function that takes it (a
``float`` must be a real number, not ``"2"``; an ``int`` not ``2.5``; a ``bool`` a real
bool) and against the one range table of its name (:data:`sensaopt.limits.OPTIONS`, then
:data:`sensaopt.limits.KNOBS`, then :data:`ARGUMENTS`; other numbers: finite and of sane
size). An unknown argument, or a bad one, raises :class:`~sensaopt.errors.ArgumentError`
naming the function and the argument: ``solve(): time_limit: must be within (0, 604800]
seconds, got nan``.
"""

from __future__ import annotations

import functools
import inspect
import os
import typing
from collections.abc import Callable, Mapping
from typing import Any

from sensaopt.errors import ArgumentError
from sensaopt.limits import KNOBS, MAX_ROUNDS, OPTIONS, Range, describe, value_problem

# API arguments that are not command-line options nor policy knobs
ARGUMENTS: dict[str, Range] = {
    "max_rounds": Range(1, MAX_ROUNDS, "rounds", integer=True),
    "horizon_slack": Range(0, MAX_ROUNDS, "rounds", integer=True),
    "max_vars": Range(1, 1e9, "variables", integer=True),
    "work_scale": Range(1, 1e6, integer=True),
    "refine": Range(1, 64, "steps per profile cell", integer=True),  # the allocation relaxation's grid (sensaopt.allocations)
    "relax_time_limit": Range(0, 604800, "seconds"),  # the allocation relaxations' time (exact.phases.allocation)
    "lns_share": Range(0, 0.9, "of the deadline-hard phase's time"),  # large-neighbourhood search first (exact.phases.lns)
    "colgen_share": Range(0, 0.9, "of the deadline-hard phase's time"),  # price and branch from the start (exact.phases.price_branch)
    "recreate_stall": Range(0, 1e9, "moves", integer=True),  # ruin and recreate: idle moves that stop it (0: never; unset: 10 per job pair)
    "recreate_time_share": Range(0, 1, "of ruin and recreate's moves"),  # ruin by time (exact.decompositions.recreate)
    "search_share": Range(0, 0.9, "of the time limit"),  # the relaxation's search before the inner solve (exact.pipeline)
}


def range_of(name: str) -> Range | None:
    """The one range of an argument name (options first, then knobs, then :data:`ARGUMENTS`)."""
    return OPTIONS.get(name) or KNOBS.get(name) or ARGUMENTS.get(name)


@functools.cache
def _annotations(fn: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that cannot be resolved (a TYPE_CHECKING import): not type-checked
        hints = {}
    return sig, hints


def check_arguments(where: str, fn: Callable[..., Any], args: Mapping[str, Any], skip: tuple[str, ...] = ()) -> None:
    """Raise :class:`ArgumentError` for an argument in ``args`` that ``fn`` does not take,
    or whose value does not suit ``fn``'s annotation and the argument's range."""
    sig, hints = _annotations(fn)
    params = sig.parameters
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for name, value in args.items():
        if name in skip:
            continue
        if name not in params or params[name].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            if open_ended:
                continue
            known = ", ".join(p for p, v in params.items() if v.kind is not inspect.Parameter.VAR_POSITIONAL and p not in skip)
            raise ArgumentError(where, name, f"unexpected argument (accepted: {known})")
        tp = hints.get(name)
        if tp is None:
            continue
        problem = value_problem(tp, value, range_of(name))
        if problem is not None:
            raise ArgumentError(where, name, problem)


def as_instance(x: Any, where: str, name: str = "instance") -> Any:
    """``x`` if it is an :class:`~sensaopt.instance.Instance`; a path or a packaged
    instance's name (``"tiny-8gpu"``) is loaded (:func:`sensaopt.io.load_instance`);
    anything else is an :class:`ArgumentError` naming the argument."""
    from sensaopt.instance import Instance

    if isinstance(x, Instance):
        return x
    if isinstance(x, (str, os.PathLike)):
        from sensaopt.io import load_instance

        return load_instance(os.fspath(x))
    hint = " (a parsed JSON object: sensaopt.io.instance_from_dict(d))" if isinstance(x, Mapping) else ""
    raise ArgumentError(where, name, f"must be an Instance, a path to an instance file or a packaged instance's name, "
                                     f"got {type(x).__name__} {describe(x)}{hint}")
