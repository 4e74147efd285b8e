"""One name registry for everything found by name: policies, solvers, trace sources, cluster presets.

An entry is either the object itself or a lazy ``"package.module:attr"`` path, imported
on first :meth:`Registry.get` so that ``import sensaopt`` stays light. A registry may
also take entries from installed packages (``entry_points``: an entry-point group, read
on first use; a name already registered wins) and, with ``import_paths``, any
``"package.module:attr"`` given as a name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

from sensaopt.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names of one ``kind`` (e.g. ``"policy"``) mapped to objects or lazy import paths."""

    def __init__(self, kind: str, entries: dict[str, T | str] | None = None, *, entry_points: str | None = None,
                 import_paths: bool = False) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = dict(entries or {})
        self.entry_points = entry_points
        self.import_paths = import_paths
        self._plugins_read = entry_points is None
        self._remembered: set[str] = set()  # import paths get() imported: kept, not listed

    def _read_plugins(self) -> None:
        """Add the entry points of the group ``entry_points`` (``name = "module:attr"``), once."""
        if self._plugins_read:
            return
        self._plugins_read = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=self.entry_points or ""):
            self._entries.setdefault(ep.name, ep.value)

    def register(self, name: str, target: T | str) -> None:
        """Add (or replace) ``name``; ``target`` is the object or ``"module:attr"``."""
        self._entries[name] = target
        self._remembered.discard(name)

    def decorator(self, name: str) -> Callable[[T], T]:
        """``@registry.decorator("name")`` registers the decorated object."""

        def deco(obj: T) -> T:
            self.register(name, obj)
            return obj

        return deco

    def names(self) -> list[str]:
        """The registered names (installed plug-ins included; import paths are not listed)."""
        self._read_plugins()
        return sorted(n for n in self._entries if n not in self._remembered)

    def __contains__(self, name: object) -> bool:
        self._read_plugins()
        return name in self._entries or (self.import_paths and isinstance(name, str) and is_import_path(name))

    def get(self, name: str) -> T:
        """The object named ``name`` (or, with ``import_paths``, at ``"module:attr"``);
        KeyError, one line, listing the known names if there is none or naming what
        cannot be imported."""
        self._read_plugins()
        if name not in self._entries and not (self.import_paths and is_import_path(name)):
            hint = "; or package.module:Class" if self.import_paths else ""
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}{hint}")
        if name not in self._entries:
            self._remembered.add(name)
        target = self._entries.get(name, name)  # an import path is kept only once it imports
        if isinstance(target, str):
            obj: T = _import(target, f"{self.kind} {name!r}")  # type: ignore[assignment]  # what the entry names
            self._entries[name] = obj
            return obj
        return target


    def forget(self, name: str) -> None:
        """Drop an import path :meth:`get` remembered (a registered name stays)."""
        if name in self._remembered:
            self._remembered.discard(name)
            self._entries.pop(name, None)


def is_import_path(name: str) -> bool:
    """``name`` has the form ``package.module:attr`` (dotted identifiers either side of one colon)."""
    module, colon, attr = name.partition(":")
    return bool(colon) and all(p.isidentifier() for p in module.split(".")) and all(p.isidentifier() for p in attr.split("."))


def _import(target: str, what: str) -> object:
    """The object at ``"module:attr"``; KeyError naming ``what`` when the module (not one it
    imports) or the attribute is missing (an error inside the module is raised as it is)."""
    module, _, attr = target.partition(":")
    try:
        obj: object = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or not (module == e.name or module.startswith(e.name + ".")):
            raise
        raise UnknownNameError(f"{what}: no module named {e.name!r} (is the package installed?)") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UnknownNameError(f"{what}: module {module!r} has no {attr!r}")
        obj = getattr(obj, part)
    return obj
