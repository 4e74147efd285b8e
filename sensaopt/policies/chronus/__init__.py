"""Chronus (SoCC 2021) baseline. The policy (policy) around its round planning
(planner); what it remembers (state: the
lease clock, the jobs of job, the class transitions) and its counters (stats); the
artifact vs clean-reading rules as strategy objects (rules); the lease boundary
(lease_step) and the 5-minute step (admission_step); the filling orders (order) and
one round's placement (placement); the artifact's lease arithmetic (lease), admission
packing (admission), the lease-slot selection MILP and its greedy fallback
(selection, lease_model); knobs (config). Model: ``models/chronus.md``."""

from .config import ChronusConfig
from .policy import ChronusCleanPolicy, ChronusPolicy

__all__ = ["ChronusCleanPolicy", "ChronusConfig", "ChronusPolicy"]
