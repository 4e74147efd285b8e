"""The exact model's variables, by kind (:class:`Vars`: decision variables, and 0/1
:class:`Indicators` that the data may fix), and adding constraints to a family of them
(:func:`add_constraint`: counted per family, the build's clock looked at every
:data:`BUILD_CHECK_EVERY` constraints). Re-exported by :mod:`sensaopt.exact.model.builder`."""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sensaopt.errors import SensaoptError
from sensaopt.solvers import Backend

# keys of the model's variables: job index k, slot t, (pattern, option) pair, deadline index d, node index
Pair = tuple[int, int]  # (pattern index, option index) of a job
JobSlotPair = tuple[int, int, Pair]  # (k, t, pair)
JobSlot = tuple[int, int]  # (k, t)
JobDeadline = tuple[int, int]  # (k, d)
NodeSlot = tuple[int, int]  # (node, t)
K = TypeVar("K", bound=Hashable)


class Decisions(dict[K, Any]):
    """Decision variables of the backend keyed by ``K``: every value is a variable."""


class Indicators(Generic[K]):
    """A 0/1 per key ``K``: a decision variable (:meth:`decide`) or a value the data
    fix (:meth:`fix`: 0 or 1). ``ind[key]`` is either, for expressions; :meth:`var`
    tells them apart. Iteration is in insertion order (the model's term order)."""

    __slots__ = ("_fixed", "_value")

    def __init__(self) -> None:
        self._value: dict[K, Any] = {}
        self._fixed: set[K] = set()

    def decide(self, key: K, var: Any) -> None:
        self._value[key] = var

    def fix(self, key: K, value: int) -> None:
        self._value[key] = value
        self._fixed.add(key)

    def __getitem__(self, key: K) -> Any:
        return self._value[key]

    def get(self, key: K, default: Any = None) -> Any:
        return self._value.get(key, default)

    def var(self, key: K) -> Any | None:
        """The decision variable of ``key``; None when the data fix its value (or no such key)."""
        return None if key in self._fixed else self._value.get(key)

    def fixed(self, key: K) -> int | None:
        """The fixed value of ``key`` (0 or 1); None when it is a decision."""
        return self._value[key] if key in self._fixed else None

    def items(self) -> Iterator[tuple[K, Any]]:
        """(key, variable or fixed value), in insertion order."""
        return iter(self._value.items())

    def decisions(self) -> Iterator[tuple[K, Any]]:
        """(key, variable) of the keys that are decisions, in insertion order."""
        return ((k, x) for k, x in self._value.items() if k not in self._fixed)

    def __iter__(self) -> Iterator[K]:
        return iter(self._value)

    def __contains__(self, key: object) -> bool:
        return key in self._value

    def __len__(self) -> int:
        return len(self._value)


@dataclass
class Vars:
    """The model's variables and expressions, by kind (keys above; units: slots, progress
    units of :mod:`sensaopt.exact.model.data`), and the objective's terms."""

    x: Decisions[JobSlotPair] = field(default_factory=Decisions)  # placement binaries
    run: dict[JobSlot, Any] = field(default_factory=dict)  # expressions: the sum of the slot's x
    rb: Indicators[JobSlot] = field(default_factory=Indicators)  # ran before slot t
    loss: Decisions[JobSlot] = field(default_factory=Decisions)  # progress units lost to the slot's change
    cum: Decisions[JobSlot] = field(default_factory=Decisions)  # progress units done by the end of t
    runs: Decisions[JobSlot] = field(default_factory=Decisions)  # slots run up to t (min_run_slots' running count)
    done: Indicators[JobSlot] = field(default_factory=Indicators)  # complete by the end of t
    met: Indicators[JobDeadline] = field(default_factory=Indicators)  # deadline d met
    leftover: Decisions[int] = field(default_factory=Decisions)  # job k: rounds of work left after the window
    ever: Decisions[NodeSlot] = field(default_factory=Decisions)  # node used by slot t (symmetry breaking)
    shortfall: Decisions[JobDeadline] = field(default_factory=Decisions)  # work units short at deadline d (shortfall model)
    families: dict[str, int] = field(default_factory=dict)  # family -> constraints added
    objective_terms: list[tuple[int, Any]] = field(default_factory=list)  # (coef, var) for the variable part
    objective_const: int = 0  # scaled constant part of the variable objective expression
    loss_terms: list[tuple[int, Any]] = field(default_factory=list)  # (coef, var): the deadline-loss part of objective_terms
    loss_const: int = 0  # scaled constant of the deadline-loss part (hopeless deadlines)
    deadline: float | None = None  # time.perf_counter() value past which building stops (BuildTimeout)
    usage: dict | None = None  # while building: (node, slot) -> charges of each x (builder._node_usage, read by two families)
    added: int = 0  # constraints added so far (the deadline is looked at every BUILD_CHECK_EVERY)

class HorizonTooShort(SensaoptError):
    """Some job cannot finish within the horizon even alone: the model is infeasible."""


class BuildTimeout(SensaoptError):
    """The time limit ran out while the model was being built."""


# constraints between two looks at the clock while building (variables: every 8 slots of a job, builder._clocked);
# 512 left up to 1 s unchecked on 500-round windows
BUILD_CHECK_EVERY = 16


def check_deadline(v: Vars) -> None:
    """Raise :class:`BuildTimeout` when the build's deadline has passed."""
    if v.deadline is not None and time.perf_counter() > v.deadline:
        raise BuildTimeout("the time limit ran out while building the model")


START_SHARE = 0.5  # a built model is solved only if the whole call has this x its build seconds left


def check_start(call_deadline: float, build_s: float) -> None:
    """Raise :class:`BuildTimeout` when the whole call (its deadline ``call_deadline``, a
    :func:`time.perf_counter` value) has less than :data:`START_SHARE` × ``build_s``
    seconds left after a build of ``build_s`` seconds. A solver cannot be stopped while it
    loads and presolves a model: CP-SAT's first 0.01 s took 0.15-0.41 x the model's
    Python build (seven models, 4 k-99 k variables; ``docs/reliability.md``), so a run
    started with less left overran the call by up to 3.6 s and found nothing."""
    left = call_deadline - time.perf_counter()
    if left < START_SHARE * build_s:
        raise BuildTimeout(f"too little of the time limit left to solve the model: {max(left, 0.0):.2f} s "
                           f"after a {build_s:.2f}-s build")


def _count(v: Vars, family: str, n: int = 1) -> None:
    v.families[family] = v.families.get(family, 0) + n


def add_constraint(be: Backend, v: Vars, con: Any, family: str) -> None:
    """Add ``con`` to family ``family`` (counted in ``v.families``); a constant ``True`` is skipped."""
    if isinstance(con, bool):
        if not con:
            raise AssertionError(f"constant constraint of family {family} is false")
        return
    be.add(con, family)
    _count(v, family)
    v.added += 1
    if v.added % BUILD_CHECK_EVERY == 0:
        check_deadline(v)
