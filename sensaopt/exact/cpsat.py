"""The exact model solved by CP-SAT (the backend: :mod:`sensaopt.solvers.cpsat`).

All model data are integers (see :mod:`sensaopt.exact.model.data` for the scaling: work
in 1/``work_scale`` minutes, memory in 1/``mem_scale`` GB, objective × n·Q). Warm
start: the caller's schedule as a complete CP-SAT hint (``add_hint``); the public entry
is :func:`sensaopt.solve.solve_cpsat`.
"""

from __future__ import annotations

from sensaopt.exact.model.builder import ModelSpec, Strength
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.outcome import ModelBuild, build_model
from sensaopt.solvers import TimeBudget


def build_cpsat(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    return build_model(data, "cpsat", spec, budget)

