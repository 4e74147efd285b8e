"""The exact model as a MILP: HiGHS (default, highspy directly:
:mod:`sensaopt.solvers.highs`) or CBC (``backend="cbc"``: the model written as MPS by
PuLP, the CBC binary PuLP ships run as a child process: :mod:`sensaopt.solvers.cbc`).

Same integer data as CP-SAT (:mod:`sensaopt.exact.model.data`); placement, ran-before,
done and deadline indicators are binaries, progress/cumulative work and the units
lost to a change (restart, migration, resize) are continuous (their integrality is
implied or irrelevant). MIP gaps: exact (the scaled objective is integral, so an
absolute gap of 0.5 is a proof; :data:`sensaopt.exact.outcome.EXACT_OPTIONS`).

Warm start: HiGHS gets the SensaScale schedule as a start solution; CBC as a
MIPSTART file. Both are recorded in ``Result.params["hinted"]``. When CBC is killed
at the time limit without a solution, the warm start stays the incumbent.
"""

from __future__ import annotations

from sensaopt.errors import SensaoptError
from sensaopt.exact.common import DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE, SolveSettings, heuristic_start, prepare
from sensaopt.exact.model.builder import Family, ModelSpec, Strength, objective_offset
from sensaopt.exact.model.data import ModelData, precheck_size
from sensaopt.exact.model.grid import DEFAULT_REFINE
from sensaopt.exact.outcome import Engine, ModelBuild, build_model, cpsat_partner, exact_params
from sensaopt.exact.phases.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.exact.pipeline import solve_exact
from sensaopt.instance import Instance
from sensaopt.result import Result
from sensaopt.solvers import TimeBudget

BACKENDS = ("highs", "cbc")


def build_highs(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    """The model on HiGHS directly."""
    return build_model(data, "highs", spec, budget)


def build_milp(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    """The model on PuLP (CBC, export)."""
    return build_model(data, "cbc", spec, budget)


def solve_milp(
    instance: Instance,
    backend: str = "highs",
    time_limit: float = 60,
    workers: int = 2,
    seed: int = 0,
    warm_start: bool = True,
    horizon: int | None = None,
    horizon_slack: int = DEFAULT_HORIZON_SLACK,
    strength: Strength | dict | None = None,
    work_scale: int = DEFAULT_WORK_SCALE,
    max_vars: int = DEFAULT_MAX_VARS,
    log: bool = False,
    lexicographic: bool = True,
    phase1_share: float = DEFAULT_PHASE1_SHARE,
    cooperate: bool = False,
    branch_price: bool = False,
    solver_options: dict | None = None,
    start: Result | None = None,
    families: tuple[Family, ...] | None = None,
    refine: int = DEFAULT_REFINE,
    relax_time_limit: float | None = None,
) -> Result:
    """Exact offline optimum with a MILP solver (``backend`` "highs" or "cbc").
    ``cooperate``: in the deadline-hard phase, CP-SAT continues from the MILP
    solver's incumbent after its first 10 % of the time left (both bounds count).
    ``branch_price``: as in :func:`sensaopt.exact.cpsat.solve_cpsat`. ``solver_options``:
    raw options of the solver (HiGHS option names; CBC command-line options), passed through.
    ``start``, ``families``, ``refine``, ``relax_time_limit``: as in :func:`~sensaopt.exact.cpsat.solve_cpsat`."""
    if backend not in BACKENDS:
        raise SensaoptError(f"unknown MILP backend {backend!r}; known: {', '.join(BACKENDS)}")
    partner = cpsat_partner(workers, seed) if cooperate else None
    settings = SolveSettings(time_limit=time_limit, workers=workers, seed=seed, warm_start=warm_start, horizon=horizon,
                             horizon_slack=horizon_slack, strength=strength, work_scale=work_scale, max_vars=max_vars,
                             lexicographic=lexicographic, phase1_share=phase1_share, partner=partner,
                             branch_price=branch_price, families=families, refine=refine,
                             relax_time_limit=relax_time_limit)
    engine = Engine(backend, exact_params(backend, workers, seed, log, solver_options))
    return solve_exact(f"milp:{backend}", instance, engine, settings, start)


def export_model(instance: Instance, path: str, fmt: str = "mps", horizon: int | None = None,
                 horizon_slack: int = DEFAULT_HORIZON_SLACK, max_vars: int = DEFAULT_MAX_VARS) -> dict:
    """Write the offline MILP as MPS or LP (for SCIP, Gurobi, ...). Returns size info.
    The file's objective is the scaled model objective; see ``params`` for the scaling."""
    precheck_size(instance, horizon, horizon_slack, max_vars)  # before the heuristic run
    data = prepare(instance, horizon, horizon_slack, False, DEFAULT_WORK_SCALE, max_vars, heuristic_start(instance)).data
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
