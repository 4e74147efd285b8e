"""The exact model solved by CP-SAT (the backend: :mod:`sensaopt.solvers.cpsat`).

All model data are integers (see :mod:`sensaopt.exact.model.data` for the scaling: work
in 1/``work_scale`` minutes, memory in 1/``mem_scale`` GB, objective × n·Q). Warm
start: the SensaScale schedule as a complete CP-SAT hint (``add_hint``).
"""

from __future__ import annotations

from sensaopt.exact.common import DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE, SolveSettings
from sensaopt.exact.model.builder import Family, ModelSpec, Strength
from sensaopt.exact.model.data import ModelData
from sensaopt.exact.model.grid import DEFAULT_REFINE
from sensaopt.exact.outcome import Engine, ModelBuild, build_model, exact_params, highs_partner
from sensaopt.exact.phases.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.exact.pipeline import solve_exact
from sensaopt.instance import Instance
from sensaopt.result import Result
from sensaopt.solvers import TimeBudget


def build_cpsat(data: ModelData, spec: ModelSpec | Strength | None = None, budget: TimeBudget | None = None) -> ModelBuild:
    return build_model(data, "cpsat", spec, budget)


def solve_cpsat(
    instance: Instance,
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
    """Exact offline optimum with CP-SAT (within ``horizon`` rounds; default: the
    SensaScale makespan + ``horizon_slack``). ``time_limit`` seconds, ``workers``
    search threads, ``seed`` the CP-SAT random seed. ``cooperate``: in the
    deadline-hard phase, CP-SAT gets 10 % of the time left (``COOPERATE_SHARE``), then HiGHS
    continues from its incumbent for the rest (both bounds count). ``branch_price``: in the deadline-hard phase,
    branch and price (:mod:`sensaopt.exact.decompositions.branch_price`) from the solver's incumbent
    for the second half of the phase's time (its bound and schedule count).
    ``solver_options``: raw CP-SAT parameters (``SatParameters`` fields), passed through.
    ``start``: the warm start, a heuristic's Result (None: SensaScale's, run within the
    time limit). ``families``: the model's constraint families (None: the formulation's,
    :data:`~sensaopt.exact.model.builder.BUILTIN_FAMILIES`). ``refine``: the finest
    allocation relaxation (steps per profile cell and axis) that may certify OPTIMAL over
    every valid allocation (:mod:`sensaopt.exact.phases.allocation`); ``relax_time_limit``:
    seconds for those relaxations (None: a quarter of ``time_limit``; 0: none, only the
    instance's own bounds — an optimum over the grid is then FEASIBLE unless they meet it)."""
    engine = Engine("cpsat", exact_params("cpsat", workers, seed, log, solver_options))
    settings = SolveSettings(time_limit=time_limit, workers=workers, seed=seed, warm_start=warm_start, horizon=horizon,
                             horizon_slack=horizon_slack, strength=strength, work_scale=work_scale, max_vars=max_vars,
                             lexicographic=lexicographic, phase1_share=phase1_share,
                             partner=highs_partner(workers, seed) if cooperate else None, branch_price=branch_price,
                             families=families, refine=refine,
                             relax_time_limit=relax_time_limit)
    return solve_exact("cpsat", instance, engine, settings, start)
