"""The Chronus baseline's counters, reported in ``Result.params["policy_stats"]``."""

from __future__ import annotations

from dataclasses import dataclass, field

from sensaopt.result import Status

from .selection import Selection


@dataclass
class ChronusStats:
    """Counters since the last reset; counts are jobs unless named otherwise."""

    lease_rounds: int
    """Rounds per lease."""
    lease_minutes_effective: float
    """Lease length in minutes (``lease_rounds`` × round length)."""
    admission_every_rounds: int
    lease_solves: int = 0
    """Lease MILPs solved (one per lease boundary with jobs to plan)."""
    milp_optimal: int = 0
    """Solves ended optimal (the certified ones included)."""
    certified: int = 0
    """Solves answered by the certified greedy (optimal by its upper bound; no MILP built)."""
    milp_time_limit: int = 0
    """Solves stopped by the time limit with an incumbent."""
    fallbacks: int = 0
    """Solves answered by the greedy fallback (never silent)."""
    safety_net: int = 0
    """Solves a work budget's wall-clock safety net stopped (their plans depend on the machine's load)."""
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    """Fallbacks by reason (text before any parenthesis)."""
    unplanned_by_fallback: int = 0
    """Admitted jobs a fallback left unplanned (they became unadmitted)."""
    solve_s_total: float = 0.0
    """Wall-clock seconds in lease solves."""
    solve_s_max: float = 0.0
    max_lease_jobs: int = 0
    """Most jobs in one lease MILP."""
    max_variables: int = 0
    kept_plans: int = 0
    """Plans kept from the cache by the candidate limit."""
    admitted: int = 0
    unadmitted: int = 0
    best_effort: int = 0
    hopeless: int = 0
    """Jobs found hopeless (each once)."""
    overruns: int = 0
    """Jobs demoted for running as long as their estimate (each once)."""
    forced: int = 0
    """Force guarantees given."""
    relabelled_admitted: int = 0
    filled: int = 0
    """Jobs placed by the artifact's odd-minute filling pass (job-rounds)."""
    guaranteed_unplaced: int = 0
    """Guaranteed jobs that did not fit in their round (job-rounds)."""

    def count_selection(self, selection: Selection, jobs: int) -> None:
        """Add one lease solve of ``jobs`` jobs (fallbacks by reason)."""
        self.lease_solves += 1
        self.solve_s_total += selection.solve_s
        self.solve_s_max = max(self.solve_s_max, selection.solve_s)
        self.max_lease_jobs = max(self.max_lease_jobs, jobs)
        self.max_variables = max(self.max_variables, selection.variables)
        self.safety_net += selection.safety_net
        if selection.fallback:
            self.fallbacks += 1
            reason = selection.reason.split("(")[0].strip() or "unknown"
            self.fallback_reasons[reason] = self.fallback_reasons.get(reason, 0) + 1
        elif selection.status == Status.OPTIMAL:
            self.milp_optimal += 1
            self.certified += selection.certified
        else:  # TIME_LIMIT with an incumbent
            self.milp_time_limit += 1
