"""The policy interface: one call per round, state in, allocation out.

A policy (:class:`Policy`) is a small class with a ``name``, its knobs in ``config``
(a frozen dataclass), its counters in ``stats`` (a dict or a dataclass of counters, reset by ``reset``) and
``decide(state) -> Allocation``; it may keep its own memory between rounds
(``reset`` is called once per run). The simulator copies ``config`` and ``stats``
into ``Result.params`` (keys ``"config"`` and ``"policy_stats"``).
The simulator owns the truth; a policy sees :class:`JobState` objects with the
job's public data (its ``speed_factor`` is hidden: always 1.0 in ``spec``) and
what a real scheduler observes (work done so far, where the job ran last round).
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

from sensaopt.errors import ArgumentError
from sensaopt.instance import Cluster, Instance, Job, Overheads
from sensaopt.limits import KNOBS, describe, value_problem
from sensaopt.schedule import Placement

Allocation = dict[str, tuple[Placement, ...]]
"""What a policy decides for one round: ``{job id: its placements}`` (a job absent is paused)."""


@dataclass(eq=False)
class JobState:
    """A job that has arrived and not finished, as the scheduler observes it."""

    spec: Job  # public data; spec.speed_factor is always 1.0
    remaining: float  # minutes of work (at speed 1.0) still to do — observed progress
    placements: tuple[Placement, ...] | None = None  # where it ran in the last round it ran
    last_round: int | None = None  # last round it ran in (None: never ran)
    first_round: int | None = None
    predicted_work: float = 0.0  # work the profile predicted for the rounds it ran
    observed_work: float = 0.0  # work it actually did in those rounds

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def gpus(self) -> int:
        return self.spec.gpus

    @property
    def started(self) -> bool:
        return self.last_round is not None

    @property
    def speed_correction(self) -> float:
        """Observed ÷ profile-predicted progress so far (1.0 before it has run)."""
        return self.observed_work / self.predicted_work if self.predicted_work > 0 else 1.0


@dataclass
class RoundState:
    """What a policy sees at the start of a round.

    Attributes:
        round: the round number (from 0).
        now: minutes at the start of this round.
        round_minutes: the round length, minutes.
        cluster: the cluster.
        overheads: minutes lost per restart, migration and resize.
        jobs: the jobs arrived and unfinished, in arrival order.
        pending_arrivals: jobs not arrived yet.
        extra: free-form state a policy keeps between rounds.
    """

    round: int
    now: float  # minutes, start of this round
    round_minutes: float
    cluster: Cluster
    overheads: Overheads
    jobs: list[JobState]  # arrived, unfinished, in arrival order
    pending_arrivals: int = 0  # jobs not arrived yet
    extra: dict[str, Any] = field(default_factory=dict)

    def was_running(self, js: JobState) -> bool:
        return js.last_round == self.round - 1


@runtime_checkable
class Decider(Protocol):
    """The least the simulator can run: a name, ``reset`` and ``decide`` (a policy
    without config or stats; its Result then records neither)."""

    name: str

    def reset(self, instance: Instance) -> None:
        """Called once before a run; ``instance`` jobs carry no speed factors."""

    def decide(self, state: RoundState) -> Allocation:
        """Placements for this round; jobs left out do not run this round."""


@runtime_checkable
class Policy(Decider, Protocol):
    """A full policy: its knobs and counters reach ``Result.params``."""

    config: Any  # a (frozen) dataclass instance: the policy's knobs
    stats: Any  # counters since the last reset: a dict or a dataclass (JSON-ready values)


@dataclass(frozen=True)
class NoConfig:
    """The config of a policy without knobs."""


class BasePolicy:
    """Convenience base: ``config`` built from :attr:`config_class` (a frozen dataclass)
    and keyword overrides, ``stats`` emptied and the instance stored on ``reset``."""

    name: str = "base"
    config_class: ClassVar[type] = NoConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        self.config = make_config(self.config_class, config, overrides)
        self.stats: Any = {}

    def reset(self, instance: Instance) -> None:
        self.instance = instance
        self.stats = {}

    def decide(self, state: RoundState) -> Allocation:  # pragma: no cover - abstract
        raise NotImplementedError


def make_config(config_class: type, config: Any = None, overrides: dict[str, Any] | None = None, where: str = "policy_config") -> Any:
    """An instance of the dataclass ``config_class``: ``config`` (default: all defaults)
    with ``overrides`` applied, every knob checked (:func:`check_config`). An unknown knob,
    a value of the wrong type (``"no"`` for a bool, 2.5 for an int), a non-finite number
    or one outside its range (:data:`sensaopt.limits.KNOBS`) raises
    :class:`~sensaopt.errors.ArgumentError` naming the knob (``where``: how it was given);
    so does the config's own ``__post_init__`` check."""
    if config is not None and is_dataclass(config_class) and not isinstance(config, config_class):
        raise ArgumentError(where, "config", f"must be a {config_class.__name__}, got {describe(config)}")
    base = config if config is not None else config_class()
    if not overrides:
        check_config(base, where)
        return base
    allowed = {f.name for f in fields(config_class)} if is_dataclass(config_class) else set()
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ArgumentError(where, ", ".join(unknown), f"{config_class.__name__} has no knob {', '.join(unknown)} "
                                                       f"(knobs: {', '.join(sorted(allowed)) or 'none'})")
    for name, value in overrides.items():  # before the dataclass sees them: its own checks may not expect a "no" or a NaN
        check_knob(config_class, name, value, where)
    try:
        cfg = replace(base, **overrides)
    except (TypeError, ValueError) as e:  # the config's own __post_init__ checks (choices, ranges)
        if isinstance(e, ArgumentError):
            raise
        raise ArgumentError(where, ", ".join(sorted(overrides)), str(e)) from None
    return cfg


def check_knob(config_class: type, name: str, value: Any, where: str = "policy_config") -> None:
    """Raise :class:`ArgumentError` unless ``value`` suits knob ``name`` of ``config_class``:
    the type its field is annotated with (no truthy strings, no bool for a number, no 2.5
    for an int), finite, within :data:`sensaopt.limits.KNOBS` (or the generic bound)."""
    tp = _field_types(config_class).get(name)
    if tp is None:
        return
    problem = value_problem(tp, value, KNOBS.get(name))
    if problem is not None:
        raise ArgumentError(where, name, problem)


def check_config(config: Any, where: str = "policy_config") -> None:
    """:func:`check_knob` for every field of a config dataclass instance (a config built
    by hand, ``SensaScaleConfig(urgent_rounds=nan)``, is checked like ``--set``)."""
    if not is_dataclass(config) or isinstance(config, type):
        return
    for f in fields(config):
        check_knob(type(config), f.name, getattr(config, f.name), where)


@functools.cache
def _field_types(config_class: type) -> dict[str, Any]:
    if not is_dataclass(config_class):
        return {}
    try:
        hints = typing.get_type_hints(config_class)
    except Exception:  # an annotation that cannot be resolved: its fields are not type-checked
        return {}
    return {f.name: hints.get(f.name) for f in fields(config_class)}
