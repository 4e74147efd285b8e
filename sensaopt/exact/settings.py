"""The options of an exact solve, written once: :class:`SolveSettings` is the table of
every keyword argument ``solve_cpsat``, ``solve_milp`` and ``solve(..., solver=...)``
take besides the instance, the warm start and the MILP backend (types and defaults
here, ranges in :data:`sensaopt.arguments.ARGUMENTS` / :data:`sensaopt.limits.OPTIONS`);
:meth:`SolveSettings.of` checks a keyword dict against it (one-line
:class:`~sensaopt.errors.ArgumentError`, before any work).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sensaopt.allocations import DEFAULT_REFINE
from sensaopt.arguments import check_arguments
from sensaopt.errors import ArgumentError, SensaoptError
from sensaopt.exact.model.builder import Family, ModelSpec, Strength
from sensaopt.exact.model.data import DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE
from sensaopt.exact.phases.lexicographic import DEFAULT_PHASE1_SHARE
from sensaopt.solvers.budget import parse_budget

COLGEN_MIPS = ("cpsat", "highs", "highs+cpsat")  # the solvers of price and branch's restricted master MIP (``colgen_mip``)

DEFAULT_HORIZON_SLACK = 2  # rounds added to the warm start's makespan
MODEL_REFINE = 1  # the model's own grid: refined steps (1: grid levels, whole cores, node shares; sensaopt.allocations)


@dataclass(frozen=True)
class SolveSettings:
    """Every option of an exact solve (seconds, threads, rounds):

    ``time_limit`` seconds for the whole call (the default warm start's simulation
    included; under a work ``budget`` only the safety net); ``budget``: ``"work:N"``, a
    deterministic limit of N work units for the whole call (:mod:`sensaopt.solvers.budget`:
    one unit is a CP-SAT deterministic second, or 100 HiGHS / CBC nodes), or ``"time"`` /
    None: the wall-clock ``time_limit`` alone; ``workers`` search threads; ``seed`` the solver's random seed;
    ``warm_start``: hint the warm start; ``horizon`` rounds (None: the warm start's
    makespan + ``horizon_slack``); ``strength``: :class:`Strength` (or its fields as a
    dict); ``work_scale``, ``max_vars``: the model's scaling and size limit;
    ``log``: the solver's log; ``lexicographic``: deadline loss first
    (:mod:`sensaopt.exact.phases.lexicographic`), ``phase1_share`` of the time for phase 1;
    ``cooperate``: in the deadline-hard phase the other backend continues after
    ``COOPERATE_SHARE`` of the time left (both bounds count); ``branch_price``: branch and
    price after the deadline-hard phase's solver (:mod:`sensaopt.exact.decompositions.branch_price`);
    ``solver_options``: raw solver options passed through (CP-SAT ``SatParameters``
    fields, HiGHS option names, CBC command-line options); ``partner_options``: raw options
    of the cooperating backend instead (HiGHS option names beside CP-SAT, over its
    defaults :data:`~sensaopt.exact.outcome.PARTNER_OPTIONS`); ``families``: the model's
    constraint families (None: :data:`~sensaopt.exact.model.builder.BUILTIN_FAMILIES`);
    ``refine``: the finest allocation relaxation (steps per profile cell and axis) that
    may certify OPTIMAL over every valid allocation (:mod:`sensaopt.exact.phases.allocation`);
    ``relax_time_limit``: seconds for those relaxations (None: a share of
    ``time_limit`` that grows with the jobs,
    :func:`~sensaopt.exact.phases.allocation.relax_share`; recorded as
    ``params["relax_s"]``; 0: none, only the instance's own bounds; under a work budget
    the relaxations get the same share of the work units); ``lns_share``: the share of
    the deadline-hard phase's time that large-neighbourhood search
    (:mod:`sensaopt.exact.phases.lns`) spends improving its start before the solver runs
    (0: none); ``colgen_share``: the share of the deadline-hard phase's time that price
    and branch from its start (column generation seeded with the start's columns, then
    the restricted master as a MIP from them: :mod:`sensaopt.exact.phases.price_branch`)
    spends improving the start before the solver runs, after large-neighbourhood search
    (default 0.8 since session 25; 0: none; not under a work ``budget``); ``colgen_mip``:
    the solver of that restricted master MIP: ``highs+cpsat`` (the default since session
    26: HiGHS for half of its time, then CP-SAT from HiGHS's answer unless HiGHS proved
    it optimal over the columns), ``cpsat`` or ``highs``; ``recreate_stall``: the moves in
    a row without a lower cost after which price and branch's ruin and recreate stops and
    leaves the rest of its share to the solver
    (:func:`~sensaopt.exact.decompositions.recreate.ruin_and_recreate`; None, the default
    since session 33: :data:`~sensaopt.exact.decompositions.recreate.STALL_PER_PAIR` moves
    per pair of jobs, :func:`~sensaopt.exact.decompositions.recreate.stall_moves`; 0: it
    never stalls and searches until the share is spent); ``recreate_time_share``: the
    share of that search's moves that remove the jobs running nearest a slot instead of the
    jobs sharing the most capacity rows (None, the default:
    :data:`~sensaopt.exact.decompositions.recreate.TIME_SHARE`, 0.5 since session 34,
    ``models/measurements.md``; 0: none, the search of session 33 draw for draw); ``cpsat_workers``:
    CP-SAT's search workers where it runs (its portfolio: LP,
    core-based and LNS subsolvers; None: ``workers``) — the threads of the other backends
    stay ``workers``. More CP-SAT workers than cores time-share them: with ``workers=1``
    and the process on one core (``taskset -c K``), ``cpsat_workers=8`` spends one core's
    seconds on CP-SAT's whole portfolio instead of its single default search
    (``models/measurements.md``, "One core, CP-SAT's portfolio"); ``lp_first``: the
    relaxations' root LPs run before the inner solve (from the warm start's objective,
    within the relaxations' seconds), the inner solve then gets all the time left and
    the relaxations' searches only what it leaves (without a root LP, e.g. when the warm
    start misses a deadline, the split stays as without it); ``search_share``: with
    ``lp_first``, when the root LPs leave a gap to the warm start, the share of the time
    limit kept from the inner solve for the relaxation's search (its cutoff the
    incumbent, its schedule lifted to a valid one when it can be:
    :mod:`sensaopt.exact.phases.lift`; 0: the inner solve gets all the time); ``relax_beside``:
    with two ``workers`` or more, that search runs on one thread beside the inner solve
    (on the others) from the start instead (:mod:`sensaopt.exact.phases.beside`);
    ``relax_colgen``: after the deadline-hard relaxation's root LP, its Dantzig–Wolfe
    bound by column generation over whole per-job schedules
    (:func:`~sensaopt.exact.phases.dantzig_wolfe.dantzig_wolfe`; not under a work ``budget``)."""

    time_limit: float = 60.0
    workers: int = 2
    seed: int = 0
    warm_start: bool = True
    horizon: int | None = None
    horizon_slack: int = DEFAULT_HORIZON_SLACK
    strength: Strength | dict | None = None
    work_scale: int = DEFAULT_WORK_SCALE
    max_vars: int = DEFAULT_MAX_VARS
    log: bool = False
    lexicographic: bool = True
    phase1_share: float = DEFAULT_PHASE1_SHARE
    cooperate: bool = False
    branch_price: bool = False
    solver_options: dict | None = None
    partner_options: dict | None = None
    families: tuple[Family, ...] | None = None
    refine: int = DEFAULT_REFINE
    relax_time_limit: float | None = None
    lns_share: float = 0.0
    colgen_share: float = 0.8
    colgen_mip: str = "highs+cpsat"
    recreate_stall: int | None = None
    recreate_time_share: float | None = None
    lp_first: bool = True
    search_share: float = 0.0
    relax_beside: bool = False
    relax_colgen: bool = True
    budget: str | None = None
    cpsat_workers: int | None = None

    @classmethod
    def of(cls, where: str, options: Mapping[str, Any]) -> SolveSettings:
        """The settings of keyword ``options``; :class:`~sensaopt.errors.ArgumentError`
        (naming ``where`` and the option) for an unknown option or a bad value."""
        check_arguments(where, cls, options)
        try:
            work = parse_budget(options.get("budget"), "budget")
        except SensaoptError as e:
            raise ArgumentError(where, "budget", str(e).removeprefix("budget: ")) from None
        mip = options.get("colgen_mip", cls.colgen_mip)
        if mip not in COLGEN_MIPS:
            raise ArgumentError(where, "colgen_mip", f"must be {' or '.join(COLGEN_MIPS)}, got {mip!r}")
        if work is not None and options.get("branch_price"):
            raise ArgumentError(where, "branch_price", "branch and price runs on wall-clock seconds only; use budget='time' with it")
        return cls(**options)

    @property
    def cpsat_threads(self) -> int:
        """CP-SAT's ``num_workers`` in this solve: ``cpsat_workers``, else ``workers``."""
        return self.cpsat_workers or self.workers

    @property
    def work(self) -> float | None:
        """The work units of ``budget`` (None: wall-clock only)."""
        return parse_budget(self.budget, "budget")

    @property
    def model_strength(self) -> Strength:
        return strength_from(self.strength)

    @property
    def model_spec(self) -> ModelSpec:
        """What every model of the solve is built from: strength and families."""
        if self.families is None:
            return ModelSpec(strength=self.model_strength)
        return ModelSpec(strength=self.model_strength, families=self.families)


def strength_from(kw: Strength | dict | None) -> Strength:
    if isinstance(kw, Strength):
        return kw
    return Strength(**(kw or {}))


__all__ = ["DEFAULT_HORIZON_SLACK", "MODEL_REFINE", "SolveSettings", "strength_from"]
