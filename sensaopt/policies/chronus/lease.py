"""Lease bookkeeping of the Chronus baseline: demand rounding, duration estimate,
lease counts and lease-slot horizons. Units: minutes, GPUs.

All formulas follow the Chronus artifact (S-Lab-System-Group/ChronusArtifact,
``time_aware_with_lease.py``): ``convert_to_bin``, ``estimate_duration``,
``still_required_lease_count`` and ``compute_maximum_lease``.
"""

from __future__ import annotations

import math

CHECKPOINT_OVERHEAD = 0.1  # minutes (artifact constant)
RESUME_OVERHEAD = 0.4  # minutes (artifact constant)
ESTIMATE_MARGIN = 1.1  # artifact: estimates are padded by 10 %

# queue priorities of the artifact (its constants; larger is not "better")
LOWEST = -1  # hopeless: cannot meet its deadline any more
ACCEPTED = 0  # admitted SLO job, guaranteed by the lease plan
UNACCEPTED = 1  # SLO job that failed admission: runs like best effort
BEST_EFFORT = 2
CLASS_NAMES = {LOWEST: "hopeless", ACCEPTED: "admitted", UNACCEPTED: "unadmitted", BEST_EFFORT: "best_effort"}


def rounded_gpus(gpus: int) -> int:
    """GPU demand used for lease accounting: 3-4 -> 4, 5-7 -> 8; other sizes unchanged."""
    if gpus > 8:
        return gpus
    if gpus in (5, 6, 7):
        return 8
    if gpus in (3, 4):
        return 4
    return gpus


def estimate_duration(duration: float, gpus: int, lease_minutes: float) -> int:
    """Planning estimate of a job's run time, minutes:
    ``int(duration * (1 + (1 + log2 g) * 0.5 / L) * 1.1)``."""
    coef = 1 + (1 + math.log2(gpus)) * (RESUME_OVERHEAD + CHECKPOINT_OVERHEAD) / lease_minutes
    return int(duration * coef * ESTIMATE_MARGIN)


def leases_needed(minutes: float, lease_minutes: float) -> int:
    """Leases still needed for ``minutes`` of estimated run time (at least 0)."""
    if minutes <= 0:
        return 0
    return math.ceil(minutes / lease_minutes - 1e-9)


def maximum_lease(deadline: float, slot0_start: float, lease_minutes: float) -> int:
    """Number of whole lease slots between ``slot0_start`` and ``deadline`` (>= 0)."""
    return max(0, math.floor((deadline - slot0_start) / lease_minutes + 1e-9))
