"""The warm start of an exact solve: one registered policy's simulated schedule
(:data:`DEFAULT_START_POLICY`, SensaScale's, unless another is named), or with
:data:`BEST` the best schedule among the registered heuristic policies
(:data:`sensaopt.policies.POLICIES` without the rolling-horizon ones, which solve exact
models themselves), each simulated on the instance and validated by the simulator, the
lowest metrics objective winning (ties: the first tried; SensaScale is tried first,
then the others by name).

The start also shapes the model (its makespan sets the default horizon, its allocations
join the grid), so the best schedule is not the default: on tiny-8gpu it is Chronus's
(100123.4 vs SensaScale's 200113.4, makespan 21 vs 23 rounds), and with it CP-SAT did
not prove the grid optimum 100115.4 in 600 s (with SensaScale's: 16-30 s; load ~12).

This module sits above both the exact layer, which takes its warm start from the caller
as a schedule, and the policies and simulator it runs (``tests/test_layers.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sensaopt.errors import SensaoptError
from sensaopt.instance import Instance
from sensaopt.result import WarmStartReport
from sensaopt.schedule import Schedule

if TYPE_CHECKING:
    from sensaopt.exact.common import WarmStart

FIRST_POLICY = "sensascale"  # tried first: it wins ties
BEST = "best"  # as a start policy: the best registered heuristic policy's schedule
DEFAULT_START_POLICY = FIRST_POLICY  # what an exact solve starts from unless told (BEST: the best policy's)


def heuristic_policies() -> list[str]:
    """The registered policies that solve no exact model (plug-ins included).

    Returns:
        Their names, :data:`FIRST_POLICY` first, then by name.
    """
    from sensaopt.policies import POLICIES, policy_class
    from sensaopt.rolling import RollingPolicy

    names = [n for n in POLICIES.names() if not issubclass(policy_class(n), RollingPolicy)]
    return sorted(names, key=lambda n: (n != FIRST_POLICY, n))


@dataclass(frozen=True)
class StartChoice:
    """The chosen warm start: its ``schedule`` and the ``report`` of where it came from
    (recorded as ``Result.warm_start_from``)."""

    schedule: Schedule
    report: WarmStartReport


def choose_start(instance: Instance, policy: str = BEST) -> StartChoice:
    """The warm start of an exact solve of ``instance``.

    Args:
        instance: the instance.
        policy: a registered policy name: its schedule alone; :data:`BEST`: the best
            schedule of :func:`heuristic_policies` (a policy that fails on the instance is
            skipped, its objective recorded as None).

    Returns:
        The schedule with the lowest metrics objective and its report (every policy
        simulated, with its objective in metrics units).

    Raises:
        SensaoptError: the named policy fails, or every policy does (the first error).
    """
    from sensaopt.simulator import simulate  # looked up at call time (tests replace it)

    named = policy != BEST
    names = [policy] if named else heuristic_policies()
    tried: list[tuple[str, float | None]] = []
    best: tuple[str, float, Schedule] | None = None
    first_error: SensaoptError | None = None
    for name in names:
        try:
            res = simulate(instance, name)
        except SensaoptError as e:
            if named:
                raise
            first_error = first_error or e
            tried.append((name, None))
            continue
        tried.append((name, res.objective))
        if res.schedule is not None and res.objective is not None and (best is None or res.objective < best[1]):
            best = (name, res.objective, res.schedule)
    if best is None:
        raise first_error or SensaoptError("warm start: no registered heuristic policy gave a schedule")
    return StartChoice(best[2], WarmStartReport(best[0], tuple(tried)))


def policy_warm_start(instance: Instance, policy: str = FIRST_POLICY) -> WarmStart:
    """One policy's schedule as the exact layer's validated warm start, for callers that
    prepare model data themselves (:func:`sensaopt.exact.common.prepare`: tests, benchmarks).

    Args:
        instance: the instance.
        policy: a registered policy name.

    Returns:
        The validated warm start (its makespan sets the default horizon).
    """
    from sensaopt.exact.common import WarmStart

    return WarmStart.of(instance, choose_start(instance, policy).schedule)


__all__ = ["BEST", "DEFAULT_START_POLICY", "FIRST_POLICY", "StartChoice", "choose_start", "heuristic_policies", "policy_warm_start"]
