"""Scheduling policies behind one interface, found by name.

Add your own with :func:`register_policy`::

    @register_policy("mine")
    class Mine(BasePolicy):
        name = "mine"
        def decide(self, state): ...

or, without touching sensaopt, from an installed package: an entry point in the group
:data:`ENTRY_POINT_GROUP` (``[project.entry-points."sensaopt.policies"] mine =
"my_pkg.policy:Mine"``; a built-in name wins), or the import path itself as the name
(``--policy my_pkg.policy:Mine``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import is_dataclass
from typing import Any

from sensaopt.policies.base import Allocation, BasePolicy, Decider, JobState, NoConfig, Policy, RoundState
from sensaopt.registry import Registry

ENTRY_POINT_GROUP = "sensaopt.policies"
"""The entry-point group of policies from other packages (``name = "module:Class"``)."""

POLICIES: Registry[type] = Registry("policy", {
    "fifo": "sensaopt.policies.simple:FIFOPolicy",
    "edf": "sensaopt.policies.simple:EDFPolicy",
    "edf-demote": "sensaopt.policies.simple:EDFDemotePolicy",
    "lst": "sensaopt.policies.simple:LSTPolicy",
    "sensascale": "sensaopt.policies.sensascale:SensaScalePolicy",
    "sensascale-paper": "sensaopt.policies.sensascale:SensaScalePaperPolicy",
    "chronus": "sensaopt.policies.chronus:ChronusPolicy",
    "chronus-clean": "sensaopt.policies.chronus:ChronusCleanPolicy",
    "synergy-tune": "sensaopt.policies.synergy:SynergyTunePolicy",
    "edf-tune": "sensaopt.policies.synergy:EDFTunePolicy",
    "edf-tune-demote": "sensaopt.policies.synergy:EDFTuneDemotePolicy",
    "rolling-cpsat": "sensaopt.rolling:RollingCPSATPolicy",
    "rolling-milp": "sensaopt.rolling:RollingMILPPolicy",
}, entry_points=ENTRY_POINT_GROUP, import_paths=True)
"""The policies by name: each a class, or ``"module:Class"`` imported on first use (so that
``import sensaopt`` stays light); plus the entry points of :data:`ENTRY_POINT_GROUP` and
``package.module:Class`` import paths."""


def register_policy(name: str) -> Callable[[type], type]:
    """Class decorator: ``@register_policy("mine")`` makes the class available by name.

    Args:
        name: the name ``simulate``, ``solve`` and the command line know it by.

    Returns:
        The decorator (it returns the class unchanged).
    """
    return POLICIES.decorator(name)


def register_builtin(name: str, target: str) -> None:
    """Register a policy by import path, imported on first use.

    Args:
        name: the policy's name.
        target: ``"package.module:Class"``.
    """
    POLICIES.register(name, target)


def policy_names() -> list[str]:
    """The names of the registered policies (built-ins and installed plug-ins).

    Returns:
        The names.
    """
    return POLICIES.names()


def policy_class(name: str) -> type:
    """The policy class named ``name``.

    Args:
        name: a registered name, an installed plug-in's, or ``package.module:Class``.

    Returns:
        The class.

    Raises:
        KeyError: one line, when there is none or it is not a class.
    """
    cls = POLICIES.get(name)
    if not isinstance(cls, type):
        POLICIES.forget(name)  # an import path to something else is not remembered
        raise KeyError(f"policy {name!r}: {type(cls).__name__} object is not a class")
    return cls


def file_stem(name: str) -> str:
    """The policy's part of an output file name.

    Args:
        name: a policy name or import path.

    Returns:
        ``name`` with ``:`` (an import path's) as ``-``.
    """
    return name.replace(":", "-")


def check_policy(name: str, field: str = "--policy") -> None:
    """Check that ``name`` names a policy class (imported to check).

    Args:
        name: the policy name or import path.
        field: the option or field named in the error.

    Raises:
        InputError: one line, when it does not.
    """
    from sensaopt.errors import InputError

    try:
        policy_class(name)
    except KeyError as e:
        raise InputError(field, "policy", str(e.args[0])) from None


def check_policies(names: Iterable[str], field: str = "--policy") -> None:
    """Check every name with :func:`check_policy`, and that each is named once (a policy
    given twice would run twice into the same files or table rows).

    Args:
        names: the policy names or import paths.
        field: the option or field named in the error.

    Raises:
        InputError: one line, for an unknown policy or one given twice.
    """
    from sensaopt.errors import InputError

    seen: set[str] = set()
    for name in names:
        check_policy(name, field)
        if name in seen:
            raise InputError(field, "policy", f"{name!r} given twice (name each policy once)")
        seen.add(name)


def make_policy(name: str, config: Any = None, **overrides: Any) -> Policy:
    """A fresh policy by name.

    Args:
        name: a policy name or import path (:func:`policy_class`).
        config: an instance of the policy's config dataclass (None: its defaults).
        **overrides: single knobs (fields of the config dataclass) for its constructor.

    Returns:
        The policy object.
    """
    cls = policy_class(name)
    pol: Policy = cls(config=config, **overrides) if config is not None else cls(**overrides)
    return pol


def policy_config_class(name: str) -> type:
    """The config dataclass of a policy: the type of a default instance's ``config``.

    Args:
        name: a policy name or import path.

    Returns:
        The dataclass (:class:`NoConfig` for a policy without knobs).
    """
    cfg = make_policy(name).config
    return type(cfg) if is_dataclass(cfg) else NoConfig


__all__ = ["ENTRY_POINT_GROUP", "Allocation", "BasePolicy", "Decider", "JobState", "NoConfig", "POLICIES", "Policy", "RoundState",
           "check_policy", "file_stem", "make_policy", "policy_class", "policy_config_class", "policy_names", "register_builtin",
           "register_policy"]
