"""Scheduling policies behind one interface, found by name.

Add your own with :func:`register_policy`::

    @register_policy("mine")
    class Mine(BasePolicy):
        name = "mine"
        def decide(self, state): ...
"""

from __future__ import annotations

import importlib

from sensaopt.policies.base import Allocation, BasePolicy, JobState, Policy, RoundState

# name -> "module:Class"; imported on first use so that `import sensaopt` stays light
_BUILTIN = {
    "fifo": "sensaopt.policies.simple:FIFOPolicy",
    "edf": "sensaopt.policies.simple:EDFPolicy",
    "sensascale": "sensaopt.policies.sensascale:SensaScalePolicy",
    "chronus": "sensaopt.policies.chronus:ChronusPolicy",
    "synergy-tune": "sensaopt.policies.synergy:SynergyTunePolicy",
    "rolling-cpsat": "sensaopt.exact.rolling:RollingCPSATPolicy",
    "rolling-milp": "sensaopt.exact.rolling:RollingMILPPolicy",
}
_REGISTRY: dict[str, type] = {}


def register_policy(name: str):
    def deco(cls):
        _REGISTRY[name] = cls
        return cls

    return deco


def register_builtin(name: str, target: str) -> None:
    """Register a policy by import path (``"package.module:Class"``)."""
    _BUILTIN[name] = target


def policy_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTRY))


def policy_class(name: str) -> type:
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name not in _BUILTIN:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(policy_names())}")
    mod, cls = _BUILTIN[name].split(":")
    return getattr(importlib.import_module(mod), cls)


def make_policy(name: str, **config) -> Policy:
    """A fresh policy by name; ``config`` goes to its constructor."""
    return policy_class(name)(**config)


__all__ = ["Allocation", "BasePolicy", "JobState", "Policy", "RoundState", "make_policy", "policy_names", "register_policy", "register_builtin"]
