"""Chronus (SoCC 2021) baseline: lease bookkeeping (lease), admission (admission),
the lease-slot selection MILP and its greedy fallback (selection), filling and the
policy (policy), knobs (config). Model: ``models/chronus.md``."""

from .config import ChronusConfig
from .policy import ChronusCleanPolicy, ChronusPolicy

__all__ = ["ChronusCleanPolicy", "ChronusConfig", "ChronusPolicy"]
