"""Queue orders shared by the simple references (EDF, least laxity, FIFO, SRTF), with
the two ingredients a reviewer adds to them: late-job demotion and sticky placement.

* **Order** (``order``): ``"edf"`` — deadline jobs by the deadline they aim at, then
  best-effort jobs; ``"lst"`` — deadline jobs by latest start time (least laxity:
  target deadline − remaining minutes at the policy's best speed − restart minutes);
  ``"fifo"`` — by arrival; ``"srtf"`` — by remaining minutes at the best speed.
* **Demotion** (``demote_late``): a deadline job that cannot meet any of its deadlines
  even if it runs from this round on, without a pause, at the best speed the policy
  can give it (restart cost counted, completion rounded up to the end of a round as
  the validator does) joins the best-effort tier; that tier is then ordered by
  shortest remaining time, so late jobs no longer take GPUs from jobs that can still
  make it (the paper's "moved out of the way").
* **Sticky** (``sticky``): the jobs the order admits this round (greedily by GPU count)
  are placed running-first, so that a job that ran last round keeps its nodes when
  they still fit, instead of losing them to a newcomer placed before it; the jobs not
  admitted fill what is left, in order.

Times in minutes. "Best speed" is a per-job figure given by the policy (profile speed
per GPU at the allocation it would give at best, times the job's observed speed
correction).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sensaopt.changes import RESTART
from sensaopt.policies.base import JobState, RoundState

ORDERS = ("edf", "lst", "fifo", "srtf")


def check_order(order: str, owner: str, allowed: tuple[str, ...] = ORDERS) -> None:
    if order not in allowed:
        raise ValueError(f"{owner} order must be one of {', '.join(allowed)}, not {order!r}")


def remaining_minutes(js: JobState, speed: float) -> float:
    """Minutes of run time ``js`` still needs at ``speed`` (its observed speed correction applied)."""
    return js.remaining / (speed * js.speed_correction)


def restart_minutes(js: JobState, state: RoundState) -> float:
    """Minutes ``js`` loses if it runs this round: the restart cost if it ran before but
    not last round, else 0."""
    return state.overheads.minutes(RESTART, js.gpus) if (js.started and not state.was_running(js)) else 0.0


def run_minutes(js: JobState, state: RoundState, speed: float) -> float:
    """Minutes from the start of this round until ``js`` finishes if it runs from now
    on at ``speed`` (per GPU, relative to speed 1.0) without a pause: the restart cost
    of a paused job counted, rounded up to whole rounds (completion = end of the round
    in which the work is done)."""
    R = state.round_minutes
    need = (remaining_minutes(js, speed) + restart_minutes(js, state)) / R
    return math.ceil(need - 1e-9) * R


def target_deadline(js: JobState, state: RoundState, speed: float, demote_late: bool) -> float | None:
    """The deadline ``js`` aims at: its first deadline (soft ones included) that it still
    meets at ``speed``; with ``demote_late`` None when it meets none (and always None
    for best effort); without, its first deadline regardless."""
    if not demote_late or js.spec.deadline is None:  # the hot path of plain EDF: no tuple built
        return js.spec.deadline
    deadlines = js.spec.deadlines()
    finish = state.now + run_minutes(js, state, speed)
    for at, _value in deadlines:
        if finish <= at + 1e-9:
            return at
    return None


def queue_order(jobs: list[JobState], state: RoundState, order: str, demote_late: bool,
                best_speed: Callable[[JobState], float]) -> list[JobState]:
    """``jobs`` in priority order (see the module docstring); ties by arrival, then id."""
    if order == "fifo":
        return sorted(jobs, key=lambda js: (js.spec.arrival, js.id))
    if order == "srtf":
        return sorted(jobs, key=lambda js: (remaining_minutes(js, best_speed(js)), js.spec.arrival, js.id))

    if order == "edf" and not demote_late:  # plain EDF, every round: the same keys without the general closure's steps
        return sorted(jobs, key=edf_key)
    return sorted(jobs, key=order_key(state, order, demote_late, best_speed))


def order_key(state: RoundState, order: str, demote_late: bool,
              best_speed: Callable[[JobState], float]) -> Callable[[JobState], tuple[Any, ...]]:
    """The sort key of the deadline orders ("edf", "lst"): (tier, deadline or latest
    start in minutes, arrival, id); tier 1 (best effort or demoted) by arrival, or with
    ``demote_late`` by remaining minutes."""
    needs_speed = demote_late or order == "lst"

    def key(js: JobState) -> tuple[Any, ...]:
        speed = best_speed(js) if needs_speed else 1.0
        target = target_deadline(js, state, speed, demote_late)
        if target is None:  # best effort (or demoted): after every deadline job
            second = remaining_minutes(js, speed) if demote_late else js.spec.arrival
            return (1, second, js.spec.arrival, js.id)
        if order == "lst":
            return (0, target - remaining_minutes(js, speed) - restart_minutes(js, state), js.spec.arrival, js.id)
        return (0, target, js.spec.arrival, js.id)

    return key


def edf_key(js: JobState) -> tuple[Any, ...]:
    """:func:`order_key` of plain EDF (``order="edf"``, no demotion), written out:
    the first deadline (:func:`target_deadline` without demotion), best effort after
    every deadline job by arrival."""
    spec = js.spec
    deadline = spec.deadline
    if deadline is None:
        return (1, spec.arrival, spec.arrival, spec.id)
    return (0, deadline, spec.arrival, spec.id)


def sticky_order(ordered: list[JobState], state: RoundState) -> list[JobState]:
    """Placement order for sticky placement: the jobs admitted by ``ordered`` within the
    free GPUs (greedily), those that ran last round first, then the other admitted
    ones, then the rest; each group keeps the priority order."""
    free = state.cluster.total_gpus
    admitted, rest = [], []
    for js in ordered:
        if js.gpus <= free:
            free -= js.gpus
            admitted.append(js)
        else:
            rest.append(js)
    running = [js for js in admitted if state.was_running(js)]
    waiting = [js for js in admitted if not state.was_running(js)]
    return running + waiting + rest


__all__ = ["ORDERS", "check_order", "edf_key", "order_key", "queue_order", "remaining_minutes", "restart_minutes", "run_minutes",
           "sticky_order", "target_deadline"]
