"""The exact model solved by CP-SAT (the backend: :mod:`sensaopt.solvers.cpsat`).

All model data are integers (see :mod:`sensaopt.exact.model.data` for the scaling: work
in 1/``work_scale`` minutes, memory in 1/``mem_scale`` GB, objective × n·Q). Warm
start: the SensaScale schedule as a complete CP-SAT hint (``add_hint``).
"""

from __future__ import annotations

from typing import Any

from sensaopt.exact.entry import solve_on
from sensaopt.exact.model.builder import ModelSpec, Strength
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.outcome import ModelBuild, build_model
from sensaopt.instance import Instance
from sensaopt.result import Result
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget


def build_cpsat(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    return build_model(data, "cpsat", spec, budget)


def solve_cpsat(instance: Instance, *, start: Schedule | None = None, **options: Any) -> Result:
    """Exact offline optimum with CP-SAT (within ``horizon`` rounds; default: the warm
    start's makespan + ``horizon_slack``). ``start``: the warm start, a valid schedule
    (None: SensaScale's, simulated within the time limit). ``options``: the fields of
    :class:`~sensaopt.exact.settings.SolveSettings` (``time_limit`` seconds, ``workers``
    search threads, ``seed`` the CP-SAT random seed, ``cooperate``: HiGHS continues the
    deadline-hard phase, ``solver_options``: raw ``SatParameters`` fields, ...)."""
    return solve_on("cpsat", "cpsat", instance, start, options, "solve_cpsat()")
