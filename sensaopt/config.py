"""The one configuration surface: workload options and policy knobs.

* :class:`WorkloadConfig` — a trace workload on a cluster preset, every option defined
  once with its help text; the ``simulate`` and ``sweep`` commands, :class:`RunConfig`
  (which extends it) and :func:`sensaopt.traces.sources.workload_instance` use it.
* ``--set key=value`` — a policy knob, parsed and checked against the policy's config
  dataclass (:func:`parse_settings`, :func:`policy_settings`); the same dict goes to
  ``simulate(policy_config=)`` and, as sorted pairs, to ``RunConfig.policy_config``.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from sensaopt.errors import InputError

Settings = tuple[tuple[str, Any], ...]  # sorted (knob, value) pairs: hashable, for RunConfig


def _opt(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class WorkloadConfig:
    """A workload: trace (or generator) jobs on a cluster preset. Times in minutes."""

    trace: str = _opt("synthetic", "chronus-slo | chronus-mix1 | chronus-mix2 | helios-gen | helios-venus (also -earth, -saturn, "
                                   "-uranus: the real Helios logs) | philly-gen | synthetic | FILE (Chronus/Helios CSV, Philly JSON)")
    preset: str = _opt("philly-8", "Cluster preset: philly-8, philly-16, helios-8, helios-16 (suffix -chronus: Chronus nodes), or NxG.")
    seed: int = _opt(0, "Seed: generators, model-type and deadline draws, thinning, profile error.")
    load: float = _opt(1.0, "Arrival-rate multiplier.")
    sensitive_fraction: float = _opt(0.5, "Fraction of jobs given sensitive model types (mix 'fraction').")
    mix: str = _opt("fraction", "Model-type mix: fraction | synergy (image/language/speech 20/70/10).")
    guided: bool = _opt(False, "Give sensitive/image models to jobs drawing high Alibaba CPU-per-GPU asks.")
    cpu_per_gpu: float | None = _opt(None, "Cores per GPU (default: the preset's node variant).")
    mem_per_gpu: float | None = _opt(None, "GB per GPU (default: the preset's node variant).")
    start: float = _opt(0.0, "Window start, minutes from the trace origin.")
    days: float | None = _opt(None, "Window length, days (generators: days generated).")
    limit: int | None = _opt(None, "Keep the first N jobs of the window.")
    jobs: int | None = _opt(None, "Job count for philly-gen / synthetic.")
    round_minutes: float = _opt(5.0, "Round length, minutes.")
    best_effort_fraction: float = _opt(0.0, "Traces without deadlines: fraction of jobs made best effort.")
    profile_error: float = _opt(0.0, "Sigma of the hidden log-normal true-speed factor (0: profiles are exact).")
    sample: float = _opt(1.0, "Fraction of the jobs kept (seeded thinning).")
    move_cost_scale: float = _opt(1.0, "Multiplier of every change cost (restart, migration, resize; 0: moves are free).")
    duration_at: str | None = _opt(None, "What a trace duration is: node = run time at the proportional share of the node it "
                                         "runs on (work = duration x speed there), reference = at 3 cores, 62.5 GB per GPU "
                                         "(work = duration); none: node, or reference on nodes at that share (the same there).")
    columns: str | None = _opt(None, "A CSV trace in another layout: FIELD=COLUMN[:UNIT],... with fields arrival (min|s|h|datetime), "
                                     "gpus, work (min|s|h), deadline or deadline_after, id; e.g. arrival=submit_time:s,gpus=num_gpu,"
                                     "work=duration:s.")


def field_help(cls: type, name: str) -> str:
    """The help text of field ``name`` of the dataclass ``cls`` (its ``metadata["help"]``)."""
    return str(next(f for f in fields(cls) if f.name == name).metadata.get("help", ""))


def field_types(cls: type) -> dict[str, Any]:
    """Resolved type of every field of the dataclass ``cls``."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in fields(cls)}


def type_name(tp: Any) -> str:
    args = typing.get_args(tp)
    if args and _is_union(tp):
        return " or ".join("none" if a is type(None) else type_name(a) for a in args)
    return "JSON object" if tp is dict else getattr(tp, "__name__", str(tp))


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def parse_value(tp: Any, text: str) -> Any:
    """``text`` as a value of type ``tp`` (bool, int, float, str, dict from a JSON object,
    or an optional of one: ``none`` gives None). ValueError if it is not one."""
    if _is_union(tp):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if text.strip().lower() in ("none", "null") and len(args) < len(typing.get_args(tp)):
            return None
        for a in args:
            try:
                return parse_value(a, text)
            except ValueError:
                continue
        raise ValueError(f"expected {type_name(tp)}, got {text!r}")
    parse = _SCALARS.get(tp)
    if parse is None:
        raise ValueError(f"cannot set a {type_name(tp)} from the command line")
    return parse(text)


def format_value(value: Any) -> str:
    """``value`` as the command line gives it, so that :func:`parse_value` reads it back:
    ``none``, ``true`` / ``false``, a float by its repr, a dict as a JSON object."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "yes", "on", "1"):
        return True
    if low in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _number(kind: type, what: str) -> Any:
    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise ValueError(f"expected {what}, got {text!r}") from None

    return parse


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object such as {{\"key\": 1}}, got {text!r}")
    return value


_SCALARS: dict[Any, Any] = {bool: _bool, int: _number(int, "an integer"), float: _number(float, "a number"), str: str,
                            dict: _json_object}


def parse_settings(items: Sequence[str], config_class: type, owner: str = "policy", field: str = "--set") -> dict[str, Any]:
    """``["key=value", ...]`` as knob overrides of the dataclass ``config_class``, each
    value converted to its field's type and the whole checked by building the config.
    Raises :class:`InputError` naming ``field`` (the option), the key and the allowed keys or the expected type."""
    types_ = field_types(config_class)
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(field, item, "expected key=value")
        if key not in types_:
            known = ", ".join(sorted(types_)) or "none"
            raise InputError(field, key, f"{owner} has no such setting (settings: {known})")
        try:
            out[key] = parse_value(types_[key], text.strip())
        except ValueError as e:
            raise InputError(field, key, str(e)) from None
    from sensaopt.policies.base import make_config

    make_config(config_class, None, out, where=field)  # types, finiteness, ranges (sensaopt.limits.KNOBS) and the dataclass's own checks
    return out


def policy_settings(policies: Sequence[str], items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per policy, its knob overrides from ``--set`` items. ``key=value`` applies to every
    policy in ``policies`` (each must have the knob); ``policy.key=value`` to that one only."""
    from sensaopt.policies import policy_config_class

    scoped: dict[str, list[str]] = {p: [] for p in policies}
    for item in items:
        key = item.partition("=")[0]
        if "." not in key:
            for p in policies:
                scoped[p].append(item)
            continue
        owner = max((p for p in policies if key.startswith(p + ".")), key=len, default=None)  # a policy name may hold dots
        if owner is None:
            raise InputError("--set", key, f"{key.rpartition('.')[0]!r} is not a selected policy ({', '.join(policies)})")
        scoped[owner].append(item[len(owner) + 1:])
    return {p: parse_settings(its, policy_config_class(p), f"policy {p!r}") for p, its in scoped.items()}


def as_pairs(settings: dict[str, Any]) -> Settings:
    """Knob overrides as sorted (key, value) pairs (hashable; RunConfig.policy_config)."""
    return tuple(sorted(settings.items()))
