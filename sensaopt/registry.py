"""One name registry for everything found by name: policies, solvers, trace sources, cluster presets.

An entry is either the object itself or a lazy ``"package.module:attr"`` path, imported
on first :meth:`Registry.get` so that ``import sensaopt`` stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Names of one ``kind`` (e.g. ``"policy"``) mapped to objects or lazy import paths."""

    def __init__(self, kind: str, entries: dict[str, T | str] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = dict(entries or {})

    def register(self, name: str, target: T | str) -> None:
        """Add (or replace) ``name``; ``target`` is the object or ``"module:attr"``."""
        self._entries[name] = target

    def decorator(self, name: str) -> Callable[[T], T]:
        """``@registry.decorator("name")`` registers the decorated object."""

        def deco(obj: T) -> T:
            self.register(name, obj)
            return obj

        return deco

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> T:
        """The object named ``name``; KeyError listing the known names if there is none."""
        if name not in self._entries:
            raise KeyError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        target = self._entries[name]
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            obj: T = getattr(importlib.import_module(module), attr)
            self._entries[name] = obj
            return obj
        return target
