"""The exact model as a MILP (solved by :func:`sensaopt.solve.solve_milp`): HiGHS (default, highspy directly:
:mod:`sensaopt.solvers.highs`) or CBC (``backend="cbc"``: the model written as MPS by
PuLP, the CBC binary PuLP ships run as a child process: :mod:`sensaopt.solvers.cbc`).

Same integer data as CP-SAT (:mod:`sensaopt.exact.model.data`); placement, ran-before,
done and deadline indicators are binaries, progress/cumulative work and the units
lost to a change (restart, migration, resize) are continuous (their integrality is
implied or irrelevant). MIP gaps: exact (the scaled objective is integral, so an
absolute gap of 0.5 is a proof; :data:`sensaopt.exact.outcome.EXACT_OPTIONS`).

Warm start: HiGHS gets the warm start's schedule as a start solution; CBC as a
MIPSTART file. Both are recorded in ``Result.params["hinted"]``. When CBC is killed
at the time limit without a solution, the warm start stays the incumbent.
"""

from __future__ import annotations

from sensaopt.errors import SensaoptError
from sensaopt.exact.common import DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE, WarmStart, prepare
from sensaopt.exact.model.builder import ModelSpec, Strength, objective_offset
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.outcome import ModelBuild, build_model
from sensaopt.instance import Instance
from sensaopt.schedule import Schedule
from sensaopt.solvers import TimeBudget

BACKENDS = ("highs", "cbc")


def build_highs(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    """The model on HiGHS directly."""
    return build_model(data, "highs", spec, budget)


def build_milp(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    """The model on PuLP (CBC, export)."""
    return build_model(data, "cbc", spec, budget)


def export_model(instance: Instance, path: str, start: Schedule, fmt: str = "mps", horizon: int | None = None,
                 horizon_slack: int = DEFAULT_HORIZON_SLACK, max_vars: int = DEFAULT_MAX_VARS) -> dict:
    """Write the offline MILP as MPS or LP (for SCIP, Gurobi, ...) from the warm start
    ``start`` (a valid schedule: its makespan + ``horizon_slack`` is the default horizon,
    its allocations join the model's grid). Returns size info. The file's objective is the
    scaled model objective; see ``params`` for the scaling. The caller checks the size
    (:func:`~sensaopt.exact.model.data.precheck_size`) before it simulates the start."""
    data = prepare(instance, horizon, horizon_slack, False, DEFAULT_WORK_SCALE, max_vars, WarmStart.of(instance, start)).data
    mb = build_milp(data)
    prob = mb.backend.prob  # type: ignore[attr-defined]
    if fmt == "mps":
        prob.writeMPS(path)
    elif fmt == "lp":
        prob.writeLP(path)
    else:
        raise SensaoptError(f"unknown export format {fmt!r}; use mps or lp")
    scale = max(data.n, 1) * data.obj_scale
    # MPS/LP files drop the objective constant: add it back through the offset
    return {"horizon": data.H, "variables": len(prob.variables()), "constraints": len(prob.constraints),
            "objective_scale": scale, "objective_offset_minutes": objective_offset(data) + mb.vars.objective_const / scale}
