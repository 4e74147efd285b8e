"""The public entry of the exact solvers (:func:`~sensaopt.exact.cpsat.solve_cpsat`,
:func:`~sensaopt.exact.milp.solve_milp`, ``solve(..., solver=...)``), in order: the
keyword options checked into :class:`~sensaopt.exact.settings.SolveSettings`, the
backend, the clock and the refusals (:func:`~sensaopt.exact.pipeline.begin`), the warm
start — SensaScale's schedule unless one is given, simulated here within the time
limit — and the pipeline (:func:`~sensaopt.exact.pipeline.solve_exact`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sensaopt.errors import ArgumentError
from sensaopt.exact.common import engine_of, sensascale_start
from sensaopt.exact.pipeline import begin, solve_exact
from sensaopt.exact.settings import SolveSettings
from sensaopt.instance import Instance
from sensaopt.result import Result
from sensaopt.schedule import Schedule


def solve_on(backend: str, label: str, instance: Instance, start: Schedule | None, options: Mapping[str, Any],
             where: str) -> Result:
    """Solve ``instance`` on ``backend`` (a :mod:`sensaopt.solvers` name; ``label``: the
    Result's solver) from ``start`` (None: SensaScale's schedule), with the keyword
    ``options`` of :class:`SolveSettings` (:class:`~sensaopt.errors.ArgumentError`
    naming ``where`` for a bad one)."""
    settings = SolveSettings.of(where, options)
    if start is not None and not isinstance(start, Schedule):
        raise ArgumentError(where, "start", f"must be a Schedule (the warm start) or None, got {type(start).__name__}")
    engine = engine_of(backend, settings, label)
    budget = begin(instance, engine, settings, simulate_start=start is None)
    if start is None:
        start = sensascale_start(instance)  # the default warm start: its simulation counts in the time limit
    return solve_exact(instance, engine, settings, start, budget)


__all__ = ["solve_on"]
