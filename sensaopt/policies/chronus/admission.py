"""Admission of new SLO jobs: greedy packing over lease slots, then a binary search
for the earliest feasible deadline (the artifact's ``batch_fast_check_if_packable``
and ``process_unaccepted_jobs``).

A *request* is ``(key, r, l, m)``: ``r`` rounded GPUs held in every slot it gets,
``l`` leases needed, ``m`` slots available before its deadline (slots ``0..m-1``).
``capacity[t]`` is the number of GPUs still free in slot ``t`` once the plans of
already planned jobs are subtracted; slots past the end of the list have ``total``.

Speed: the packing is sequential in a fixed order, so :class:`Packer` keeps the
free GPUs per slot before each request of that order; a probe (one more request)
starts from the state at its place in the order and replays only the requests after
it. Same plans as packing from scratch (``tests/test_chronus_fast_paths.py``).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

Request = tuple[object, int, int, int]  # (key, r, l, m)
OrderKey = tuple[int, int, int, int]  # (-r, m - l, -m, input index)


class Packer:
    """The greedy packing of a list of requests that grows by :meth:`add`, probed with
    one more request by :meth:`probe`.

    Order: (-r, m - l, -m), ties in input order (a probe comes after every request
    added so far). Each request takes the latest ``l`` slots before ``m`` that still
    have ``r`` GPUs free (from slot m-1 backwards). ``caps[i]``: free GPUs per slot
    before the ``i``-th request of the order (``caps[n]``: after all); the chain stops
    at the first request that does not pack (``failed``)."""

    def __init__(self, requests: list[Request], capacity: list[int], total: int) -> None:
        """Args:
            requests: the requests packed first, in input order.
            capacity: GPUs free per slot (slot 0 first); later slots have ``total``.
            total: GPUs of the cluster.
        """
        self.total = total
        self.given = len(capacity)  # slots of the capacity list given
        horizon = max([m for _, _, _, m in requests] + [len(capacity)])
        self.caps: list[list[int]] = [list(capacity) + [total] * (horizon - len(capacity))]
        self.slots: list[list[int]] = []  # each request's slots, ascending (order of the keys)
        self.keys: list[OrderKey] = sorted([(-r, m - leases, -m, k) for k, (_, r, leases, m) in enumerate(requests)])
        self.requests: list[Request] = [requests[key[3]] for key in self.keys]
        self.added = len(requests)
        self.failed: int | None = None  # order position of the first request that does not pack
        self._kept: tuple = ()  # the last probe's (request, position, states, slots) for :meth:`add`
        self._replay(0)

    def _grow(self, horizon: int) -> None:
        """Extend every stored state to ``horizon`` slots (``total`` GPUs free in the new ones)."""
        extra = horizon - len(self.caps[0])
        if extra > 0:
            pad = [self.total] * extra
            for cap in self.caps:
                cap += pad

    def _replay(self, start: int) -> None:
        """Recompute the chain from order position ``start`` (whose state is kept) on."""
        del self.caps[start + 1:], self.slots[start:]
        self.failed = None
        for i in range(start, len(self.requests)):
            cap = self.caps[i][:]
            got = take(cap, self.requests[i])
            if got is None:
                self.failed = i
                return
            self.slots.append(got)
            self.caps.append(cap)

    def _place(self, request: Request) -> tuple[OrderKey, int]:
        _, r, leases, m = request
        self._grow(m)
        key = (-r, m - leases, -m, self.added)
        return key, bisect_left(self.keys, key)

    def probe(self, request: Request, keep: bool = False) -> list[int] | None:
        """The slots ``request`` gets (ascending) if it packs together with every request
        added so far, else None. ``keep``: remember the states for an :meth:`add` of the
        same request next (nothing else changes).

        When every request packs and the state after all of them still has ``r`` GPUs
        free in each slot the request takes, no later request's slots change (a later
        request keeps each slot it took: that slot's free GPUs after it are at least
        those after all, so at least ``r``; a slot it found too full stays too full), so
        the rest of the order is not replayed."""
        _key, p = self._place(request)
        self._kept = ()
        if self.failed is not None and self.failed < p:
            return None
        cap = self.caps[p][:]
        first = take(cap, request)
        if first is None:
            return None
        if self.failed is None:
            r, last = request[1], self.caps[-1]
            for t in first:
                if last[t] < r:
                    break
            else:  # the later requests keep their slots
                if keep:
                    self._kept = (request, p, None, (cap, first))
                return first
        caps, slots = [cap], [first]
        for i in range(p, len(self.requests)):
            if keep:
                cap = cap[:]
            got = take(cap, self.requests[i])
            if got is None:
                return None
            if keep:
                caps.append(cap)
                slots.append(got)
        if keep:
            self._kept = (request, p, caps, slots)
        return first

    def add(self, request: Request) -> None:
        """Add ``request`` to the packing (after the requests added before it among equal keys)."""
        key, p = self._place(request)
        self.keys.insert(p, key)
        self.requests.insert(p, request)
        self.added += 1
        if self._kept and self._kept[0] == request and self._kept[1] == p:  # the probe just made: every request packs
            if self._kept[2] is None:  # no later request moved: their states lose ``r`` in the request's slots
                cap, first = self._kept[3]
                r = request[1]
                for later in self.caps[p + 1:]:
                    for t in first:
                        later[t] -= r
                self.caps.insert(p + 1, cap)
                self.slots.insert(p, first)
            else:
                del self.caps[p + 1:], self.slots[p:]
                self.caps += self._kept[2]
                self.slots += self._kept[3]
            self.failed = None
        elif self.failed is None or p <= self.failed:  # else the chain still stops before ``p``
            self._replay(p)
        self._kept = ()

    def plans(self) -> dict | None:
        """``{key: ascending slot list}`` of every request, or None if one does not pack."""
        if self.failed is not None:
            return None
        return {req[0]: s for req, s in zip(self.requests, self.slots)}


def take(cap: list[int], request: Request) -> list[int] | None:
    """The latest ``l`` slots before ``m`` with ``r`` GPUs free in ``cap`` (ascending),
    taken from ``cap`` (in place); None, ``cap`` untouched, if there are fewer.

    Args:
        cap: GPUs free per slot (at least ``m`` slots).
        request: ``(key, r, l, m)``.

    Returns:
        The slots, or None.
    """
    _, r, leases, m = request
    if leases > m:
        return None
    got: list[int] = []
    if leases <= 0:
        return got
    for t in range(m - 1, -1, -1):  # the latest slots with room, from m - 1 backwards
        if cap[t] >= r:
            got.append(t)
            if len(got) == leases:
                break
    else:
        return None
    for t in got:
        cap[t] -= r
    got.reverse()
    return got


def greedy_pack(requests: list[Request], capacity: list[int], total: int) -> dict | None:
    """Pack every request (order and rule: :class:`Packer`), or return ``None``.

    Args:
        requests: ``(key, r, l, m)`` requests, ties in this order.
        capacity: GPUs free per slot (slot 0 first); later slots have ``total``.
        total: GPUs of the cluster.

    Returns:
        ``{key: sorted slot list}`` on success, else None.
    """
    return Packer(requests, capacity, total).plans()


def earliest_feasible_m(others: list[Request] | Packer, new: Request, capacity: list[int] | None = None,
                        total: int | None = None) -> int:
    """Smallest ``m`` (>= the new request's ``l`` and ``m``) for which the new request
    packs together with ``others`` (binary search, as in the artifact).

    Args:
        others: the requests already packed (or their :class:`Packer`).
        new: the request ``(key, r, l, m)`` whose ``m`` is searched.
        capacity: GPUs free per slot (when ``others`` is a list).
        total: GPUs of the cluster (when ``others`` is a list).

    Returns:
        The slot count ``m``.
    """
    packer = others if isinstance(others, Packer) else Packer(others, capacity or [], int(total or 0))
    key, r, leases, m = new
    left = max(leases, m)
    right = max([mm for _, _, _, mm in packer.requests] + [packer.given, m]) + leases + 1
    if packer.probe((key, r, leases, left)) is not None:
        return left
    while left < right:
        mid = (left + right) // 2
        if packer.probe((key, r, leases, mid)) is not None:
            right = mid
        else:
            left = mid + 1
    return right


@dataclass(frozen=True)
class AdmissionDecision:
    admitted: bool
    m: int  # slots the job is admitted with (or the earliest feasible, if rejected)
    plan: tuple[int, ...] | None  # the greedy packing's slots for the job (if admitted)


def admit(others: list[Request] | Packer, new: Request, capacity: list[int] | None = None, total: int | None = None,
          last_m: int = 0) -> AdmissionDecision:
    """Chronus admission of one job.

    ``new`` carries its last deadline's slot count ``m``. Admitted when the greedy
    packing of ``others`` + ``new`` succeeds; otherwise the earliest feasible slot
    count ``m'`` is searched and the job is admitted only if ``m' <= last_m`` (its
    last deadline, snapped down to a lease boundary; with the artifact's tolerance
    ratio 1.0 this never admits a job the first check rejected).

    Args:
        others: the requests already packed (or their :class:`Packer`; the decision adds nothing to it).
        new: the job's request ``(key, r, l, m)``.
        capacity: GPUs free per slot (when ``others`` is a list).
        total: GPUs of the cluster (when ``others`` is a list).
        last_m: slot count of its last deadline.

    Returns:
        The decision (slot count, and the job's slots if admitted).
    """
    packer = others if isinstance(others, Packer) else Packer(others, capacity or [], int(total or 0))
    key, r, leases, m = new
    if leases <= m:
        slots = packer.probe(new, keep=True)
        if slots is not None:
            return AdmissionDecision(True, m, tuple(slots))
    m2 = earliest_feasible_m(packer, new)
    if m2 <= last_m:
        slots = packer.probe((key, r, leases, m2), keep=True)
        assert slots is not None  # m2 is a count at which it packs
        return AdmissionDecision(True, m2, tuple(slots))
    return AdmissionDecision(False, m2, None)
