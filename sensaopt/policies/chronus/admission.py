"""Admission of new SLO jobs: greedy packing over lease slots, then a binary search
for the earliest feasible deadline (the artifact's ``batch_fast_check_if_packable``
and ``process_unaccepted_jobs``).

A *request* is ``(key, r, l, m)``: ``r`` rounded GPUs held in every slot it gets,
``l`` leases needed, ``m`` slots available before its deadline (slots ``0..m-1``).
``capacity[t]`` is the number of GPUs still free in slot ``t`` once the plans of
already planned jobs are subtracted; slots past the end of the list have ``total``.
"""

from __future__ import annotations

from dataclasses import dataclass

Request = tuple[object, int, int, int]  # (key, r, l, m)


def greedy_pack(requests: list[Request], capacity: list[int], total: int) -> dict | None:
    """Pack every request, or return ``None``.

    Order: (-r, m - l, -m), ties in input order. Each request takes the latest
    ``l`` slots before ``m`` that still have ``r`` GPUs free (from slot m-1
    backwards). Returns ``{key: sorted slot list}`` on success.
    """
    horizon = max([m for _, _, _, m in requests] + [len(capacity)])
    cap = list(capacity) + [total] * (horizon - len(capacity))
    order = sorted([(-r, m - leases, -m, k) for k, (_, r, leases, m) in enumerate(requests)])  # k: ties in input order
    plans: dict = {}
    for _r, _slack, _m, k in order:
        key, r, leases, m = requests[k]
        if leases > m:
            return None
        got: list[int] = []
        if leases > 0:
            for t in range(m - 1, -1, -1):  # the latest slots with room, from m - 1 backwards
                if cap[t] >= r:
                    got.append(t)
                    if len(got) == leases:
                        break
            if len(got) < leases:
                return None
            for t in got:
                cap[t] -= r
        plans[key] = got[::-1]  # ascending
    return plans


def earliest_feasible_m(others: list[Request], new: Request, capacity: list[int], total: int) -> int:
    """Smallest ``m`` (>= the new request's ``l`` and ``m``) for which the new request
    packs together with ``others`` (binary search, as in the artifact)."""
    key, r, leases, m = new
    left = max(leases, m)
    right = max([mm for _, _, _, mm in others] + [len(capacity), m]) + leases + 1
    if greedy_pack(others + [(key, r, leases, left)], capacity, total) is not None:
        return left
    while left < right:
        mid = (left + right) // 2
        if greedy_pack(others + [(key, r, leases, mid)], capacity, total) is not None:
            right = mid
        else:
            left = mid + 1
    return right


@dataclass(frozen=True)
class AdmissionDecision:
    admitted: bool
    m: int  # slots the job is admitted with (or the earliest feasible, if rejected)
    plan: tuple[int, ...] | None  # the greedy packing's slots for the job (if admitted)


def admit(others: list[Request], new: Request, capacity: list[int], total: int, last_m: int) -> AdmissionDecision:
    """Chronus admission of one job.

    ``new`` carries its last deadline's slot count ``m``. Admitted when the greedy
    packing of ``others`` + ``new`` succeeds; otherwise the earliest feasible slot
    count ``m'`` is searched and the job is admitted only if ``m' <= last_m`` (its
    last deadline, snapped down to a lease boundary; with the artifact's tolerance
    ratio 1.0 this never admits a job the first check rejected).
    """
    key, r, leases, m = new
    if leases <= m:
        plans = greedy_pack(others + [new], capacity, total)
        if plans is not None:
            return AdmissionDecision(True, m, tuple(plans[key]))
    m2 = earliest_feasible_m(others, new, capacity, total)
    if m2 <= last_m:
        plans = greedy_pack(others + [(key, r, leases, m2)], capacity, total)
        assert plans is not None  # m2 is a count at which it packs
        return AdmissionDecision(True, m2, tuple(plans[key]))
    return AdmissionDecision(False, m2, None)
