"""The common result of every solver: heuristic policies, baselines, CP-SAT, MILP."""

from __future__ import annotations

import math
import platform
from dataclasses import asdict, dataclass, field, replace
from html import escape
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sensaopt.io import check_json_numbers, parse_schedule_dict, read_json
from sensaopt.metrics import JobMetrics, Metrics
from sensaopt.metrics import job_metrics as _job_metrics
from sensaopt.registry import Registry
from sensaopt.schedule import Schedule
from sensaopt.status import Status as Status  # how a solve ended (re-exported: sensaopt.result.Status)

if TYPE_CHECKING:
    import pandas as pd

    from sensaopt.instance import Instance
    from sensaopt.validator import Evaluation

VALUE_TOL = 1e-6  # deadline value: lost values closer than this are equal (solver round-off)
VIEWS: Registry[Any] = Registry("result view", {"frame": "sensaopt.frames:result_frame"})
"""Views of a Result from the layers above this module (``tests/test_layers.py``: a Result
never imports the reports), as lazy ``"module:attr"`` paths imported on first use
(:meth:`Result.to_frame`)."""


@dataclass(frozen=True)
class HorizonProof:
    """The horizon proof of an exact solve (:mod:`sensaopt.exact.phases.horizon`):
    ``needed``: slots (rounds from the model's first) within which every optimal
    schedule finishes the jobs not ``exempt`` (None: no incumbent to argue from);
    ``horizon``: the model's; ``contains_optimum``: ``horizon >= needed``."""

    horizon: int
    needed: int | None
    outside_bound: float | None = None  # metrics units: no schedule running past the horizon does better
    bound: float | None = None  # metrics units: the model's bound, valid within the horizon
    extended_from: int | None = None  # the default horizon a solve with the horizon the proof needed replaced
    optimal_within_horizon: bool = False  # the solver's OPTIMAL holds among schedules ending within the horizon only

    @property
    def contains_optimum(self) -> bool:
        return self.needed is not None and self.horizon >= self.needed

    @property
    def global_bound(self) -> float | None:
        """A bound on every schedule: the model's (within the horizon) or, for schedules
        running past it, :attr:`outside_bound` — the model's alone once the horizon is proven."""
        if self.bound is None or self.contains_optimum or self.outside_bound is None:
            return self.bound
        return min(self.bound, self.outside_bound)

    def to_dict(self) -> dict:
        return {"horizon": self.horizon, "needed": self.needed, "contains_optimum": self.contains_optimum,
                "global_bound": self.global_bound}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HorizonProof:
        """Read back from :meth:`to_dict`: the global bound as the bound (same ``to_dict``)."""
        return cls(d["horizon"], d["needed"], None, d["global_bound"])


@dataclass(frozen=True)
class ModelSize:
    """The size of an exact model: placement variables ``x_vars``, ``constraints``, and
    the constraints each family added (``families``). JSON: ``params["model_size"]``."""

    x_vars: int
    constraints: int
    families: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"x_vars": self.x_vars, "constraints": self.constraints, "families": dict(self.families)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelSize:
        return cls(d["x_vars"], d["constraints"], dict(d["families"]))


@dataclass(frozen=True)
class LossProof:
    """What an exact solve proved about the lost deadline value, in violation weight ×
    value units (the model's loss part): ``bound``: no schedule loses less (None:
    nothing proven); ``fixed``: no deadline decision was open, so every schedule of the
    model loses the same value as the result's. Set by the exact solvers; the JSON form
    is ``params["lexicographic"]["phase1"]``."""

    bound: float | None = None
    fixed: bool = False


# ---- what an exact solve reports (typed on the Result; ``params`` keys only in JSON) ----------
SKIPPED_NO_OPEN = "skipped (no open deadline decision)"  # phase 1 not run: every deadline decided by the data
SKIPPED_ZERO_MISS = "skipped (shortfall 0: a zero-miss schedule exists)"  # phase 1 not run: the deadline-hard phase instead


@dataclass(frozen=True)
class ShortfallReport:
    """The shortfall run (:mod:`sensaopt.exact.phases.shortfall`): status, seconds,
    incumbent and bound in work units (1/``work_scale`` minute at speed 1), the number
    of priced deadlines (``tiers``), and what was proven. JSON:
    ``params["lexicographic"]["shortfall"]`` (without ``message`` and ``miss_cost``)."""

    status: Status
    seconds: float
    incumbent: float | None
    bound: float | None
    tiers: int
    zero_miss: bool  # a schedule meeting every open deadline was found (validated arithmetic)
    proves_miss: bool  # the bound proves that every schedule misses an open deadline
    message: str = ""
    miss_cost: int = 0  # scaled objective units: the cheapest priced deadline (what a proven miss costs at least)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "seconds": round(self.seconds, 3), "incumbent": self.incumbent,
                "bound": self.bound, "tiers": self.tiers, "zero_miss": self.zero_miss, "proves_miss": self.proves_miss}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShortfallReport:
        return cls(Status(d["status"]), d["seconds"], d["incumbent"], d["bound"], d["tiers"], d["zero_miss"], d["proves_miss"])


@dataclass(frozen=True)
class PhaseReport:
    """Phase 1 of the lexicographic solve: status, seconds, incumbent and proven bound of
    the lost value × violation_weight (metrics units). JSON: ``params["lexicographic"]["phase1"]``."""

    status: Status
    seconds: float
    loss_incumbent: float | None
    loss_bound: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "seconds": round(self.seconds, 3),
                "loss_incumbent": self.loss_incumbent, "loss_bound": self.loss_bound}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PhaseReport:
        return cls(Status(d["status"]), d["seconds"], d["loss_incumbent"], d["loss_bound"])


@dataclass(frozen=True)
class RunReport:
    """One solver run: status, objective and bound (scaled model units), seconds."""

    status: Status
    objective: float | None
    bound: float | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "objective": self.objective, "bound": self.bound, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunReport:
        return cls(Status(d["status"]), d["objective"], d["bound"], d["seconds"])


@dataclass(frozen=True)
class CooperationReport:
    """The deadline-hard phase's cooperation: the ``partner``'s name, the primary's run
    and the partner's (None: not run); ``mode``: ``sequential`` (the partner after the
    primary, from its incumbent) or ``parallel`` (side by side, one core each).
    JSON: ``params["lexicographic"]["cooperation"]``."""

    partner: str
    primary_run: RunReport
    partner_run: RunReport | None = None
    mode: str = "sequential"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"partner": self.partner, "primary_run": self.primary_run.to_dict(), "mode": self.mode}
        if self.partner_run is not None:
            out["partner_run"] = self.partner_run.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CooperationReport:
        run = d.get("partner_run")
        return cls(d["partner"], RunReport.from_dict(d["primary_run"]), None if run is None else RunReport.from_dict(run),
                   d.get("mode", "sequential"))


@dataclass(frozen=True)
class BranchPriceReport:
    """Branch and price after the deadline-hard phase's solver (scaled model units):
    bound, incumbent, proven, the root's bound, nodes solved, ``open`` left, columns,
    seconds. JSON: ``params["lexicographic"]["branch_price"]``."""

    bound: float | None
    incumbent: float | None
    proven: bool
    root_bound: float | None
    nodes: int
    open: int
    columns: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"bound": self.bound, "incumbent": self.incumbent, "proven": self.proven, "root_bound": self.root_bound,
                "nodes": self.nodes, "open": self.open, "columns": self.columns, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BranchPriceReport:
        return cls(**d)


@dataclass(frozen=True)
class LnsReport:
    """Large-neighbourhood search before the deadline-hard phase's solver
    (:mod:`sensaopt.exact.phases.lns`): the start's and the result's objective (metrics
    units), rounds, rounds that improved, the last neighbourhood size (jobs), seconds.
    JSON: ``params["lexicographic"]["lns"]``."""

    start: float
    objective: float
    rounds: int
    improved: int
    size: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "objective": self.objective, "rounds": self.rounds, "improved": self.improved,
                "size": self.size, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LnsReport:
        return cls(**d)


@dataclass(frozen=True)
class LexicographicReport:
    """The phases of a lexicographic exact solve: ``phase1`` (None: not run, ``skipped``
    says why: :data:`SKIPPED_NO_OPEN` or :data:`SKIPPED_ZERO_MISS`), the shortfall run
    before it, the scaled loss limits added for phase 2 (``loss_cap``, ``loss_floor``),
    and in the deadline-hard phase (``phase2``) its large-neighbourhood search, cooperation
    and branch and price.
    JSON: ``params["lexicographic"]`` (``phase1`` is the ``skipped`` string when not run)."""

    phase1_share: float
    phase1: PhaseReport | None = None
    skipped: str = ""
    shortfall: ShortfallReport | None = None
    loss_cap: int | None = None
    loss_floor: int | None = None
    phase2: str | None = None
    cooperation: CooperationReport | None = None
    branch_price: BranchPriceReport | None = None
    lns: LnsReport | None = None
    price_branch: PriceBranchReport | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"phase1_share": self.phase1_share,
                               "phase1": self.phase1.to_dict() if self.phase1 is not None else self.skipped}
        if self.shortfall is not None:
            out["shortfall"] = self.shortfall.to_dict()
        if self.loss_cap is not None:
            out["loss_cap"], out["loss_floor"] = self.loss_cap, self.loss_floor
        if self.phase2 is not None:
            out["phase2"] = self.phase2
        if self.cooperation is not None:
            out["cooperation"] = self.cooperation.to_dict()
        if self.branch_price is not None:
            out["branch_price"] = self.branch_price.to_dict()
        if self.lns is not None:
            out["lns"] = self.lns.to_dict()
        if self.price_branch is not None:
            out["price_branch"] = self.price_branch.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LexicographicReport:
        p1, sf, coop, bp = d["phase1"], d.get("shortfall"), d.get("cooperation"), d.get("branch_price")
        return cls(phase1_share=d["phase1_share"], phase1=None if isinstance(p1, str) else PhaseReport.from_dict(p1),
                   skipped=p1 if isinstance(p1, str) else "", shortfall=None if sf is None else ShortfallReport.from_dict(sf),
                   loss_cap=d.get("loss_cap"), loss_floor=d.get("loss_floor"), phase2=d.get("phase2"),
                   cooperation=None if coop is None else CooperationReport.from_dict(coop),
                   branch_price=None if bp is None else BranchPriceReport.from_dict(bp),
                   lns=None if d.get("lns") is None else LnsReport.from_dict(d["lns"]),
                   price_branch=None if d.get("price_branch") is None else PriceBranchReport.from_dict(d["price_branch"]))


@dataclass(frozen=True)
class PriceBranchReport:
    """Price and branch from the start before the deadline-hard phase's solver
    (:mod:`sensaopt.exact.phases.price_branch`): the start's and the result's objective
    (metrics units), the columns generated, whether column generation converged, seconds,
    the restricted master's solver and answer, and ruin and recreate's moves after it.
    JSON: ``params["lexicographic"]["price_branch"]``."""

    start: float
    objective: float
    columns: int
    converged: bool
    seconds: float
    mip: str = "highs"  # the restricted master's solver (``SolveSettings.colgen_mip``; records before session 26: HiGHS)
    mip_objective: float | None = None  # the restricted master's answer, metrics units (None: none, or a record before session 31)
    moves: int = 0  # ruin and recreate's moves after the MIP (records before session 31: 0, it did not exist)
    improving: int = 0  # those of its moves that lowered the cost

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "objective": self.objective, "columns": self.columns, "converged": self.converged,
                "seconds": round(self.seconds, 3), "mip": self.mip, "mip_objective": self.mip_objective,
                "moves": self.moves, "improving": self.improving}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PriceBranchReport:
        return cls(**d)


@dataclass(frozen=True)
class WarmStartReport:
    """Where an exact solve's warm start came from: the registered ``policy`` whose
    simulated schedule it is (None: the caller's schedule) and the policies simulated to
    choose it with their objectives (``candidates``, metrics units, in the order tried;
    empty when one policy was named or a schedule given). JSON: ``params["warm_start_from"]``."""

    policy: str | None
    candidates: tuple[tuple[str, float | None], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "candidates": dict(self.candidates)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WarmStartReport:
        return cls(d["policy"], tuple(d["candidates"].items()))


STAGE_ROOT_LP, STAGE_SEARCH, STAGE_BOTH = "root LP", "search", "root LP and search"
"""What an allocation relaxation stage ran (:attr:`RelaxationStage.steps`)."""


@dataclass(frozen=True)
class RelaxationStage:
    """One allocation relaxation tried (:mod:`sensaopt.exact.phases.allocation`): its
    refinement, horizon (rounds), bound within that horizon, loss floor and bound over
    every schedule (metrics units); ``model``: ``weighted`` (loss floored) or
    ``deadline-hard`` (every deadline a constraint), ``backend``: the solver that ran it,
    ``steps``: what ran (:mod:`~sensaopt.exact.phases.allocation`: its root LP, its search or both);
    ``seconds``: its wall-clock seconds, build included (None in records written before session 19);
    ``dantzig_wolfe``: how the stage's Dantzig–Wolfe column generation stopped (``converged``,
    ``time``, ...; None: it did not run, or the record is older than session 27)."""

    refine: int
    horizon: int
    within_horizon_bound: float
    loss_floor: float
    bound: float
    model: str = "weighted"
    backend: str = ""
    steps: str = STAGE_BOTH  # or STAGE_ROOT_LP alone, or STAGE_SEARCH after this refinement's root LP
    seconds: float | None = None
    dantzig_wolfe: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AllocationReport:
    """The allocation check (:mod:`sensaopt.exact.phases.allocation`): which case applied
    (``check``: ``dominated``, ``relaxation``, ``static: ...``, ``skipped: ...``), the
    relaxation's refinement, the model's own bound (``grid_bound``) and, for
    ``relaxation``, the relaxations' bound, loss floor and stages (metrics units).
    JSON: ``params["allocations"]``."""

    check: str
    refine: int
    grid_bound: float | None
    relaxation_bound: float | None = None
    loss_floor: float | None = None
    stages: tuple[RelaxationStage, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"refine": self.refine, "grid_bound": self.grid_bound, "check": self.check}
        if self.stages is not None:
            out.update(relaxation_bound=self.relaxation_bound, loss_floor=self.loss_floor,
                       stages=[st.to_dict() for st in self.stages])
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AllocationReport:
        stages = d.get("stages")
        return cls(d["check"], d["refine"], d["grid_bound"], d.get("relaxation_bound"), d.get("loss_floor"),
                   None if stages is None else tuple(RelaxationStage(**st) for st in stages))


@dataclass
class Result:
    """What every solver (heuristic, baseline, CP-SAT, MILP) returns.

    Attributes:
        solver: e.g. ``heuristic:sensascale``, ``cpsat``, ``milp:highs``.
        status: the :class:`Status`.
        objective: the metrics module's objective of ``schedule`` (None without one).
        bound: proven lower bound on the objective (None: none).
        runtime_s: wall-clock seconds.
        schedule: the schedule (None: none found).
        metrics: its :class:`~sensaopt.metrics.Metrics` (minutes, counts, fractions).
        params: time limit (s), workers, seed, policy config; the typed reports below in JSON.
        versions: package versions.
        message: the solver's note.
        evaluation: the validator's evaluation of ``schedule``.
        truth: the instance it was scored on (hidden speed factors under profile error).
        loss_proof, horizon_proof, model_size, horizon, lexicographic, allocations, warm_start_from:
            exact solves only (None for heuristics).
    """

    solver: str  # e.g. "heuristic:sensascale", "cpsat", "milp:highs"
    status: Status
    objective: float | None  # the metrics module's objective of ``schedule``
    bound: float | None  # proven lower bound on the objective, if any
    runtime_s: float  # wall-clock seconds
    schedule: Schedule | None
    metrics: Metrics | None
    params: dict = field(default_factory=dict)  # time limit, workers, seed, policy config
    versions: dict = field(default_factory=dict)
    message: str = ""
    # the validator's evaluation of ``schedule`` (per-job outcomes, resource use) and the
    # instance it was scored on (the truth: hidden speed factors drawn when profile error
    # applies); downstream code reads these instead of re-validating
    evaluation: Evaluation | None = field(default=None, repr=False, compare=False)
    truth: Instance | None = field(default=None, repr=False, compare=False)
    # the exact solve's proof about the loss part (None: a heuristic, or a weighted solve); read by PartBounds
    loss_proof: LossProof | None = field(default=None, repr=False, compare=False)
    # the exact solve's horizon proof (None: a heuristic, or decided before any solve); JSON: params["horizon_proof"]
    horizon_proof: HorizonProof | None = field(default=None, repr=False, compare=False)
    # the exact model's size (None: a heuristic, or no model built); JSON: params["model_size"]
    model_size: ModelSize | None = field(default=None, repr=False, compare=False)
    # the exact model's horizon in rounds (None: a heuristic); JSON: params["horizon"]
    horizon: int | None = field(default=None, repr=False, compare=False)
    # the lexicographic solve's phases (None: a heuristic, a weighted solve, or decided before any solve); JSON: params["lexicographic"]
    lexicographic: LexicographicReport | None = field(default=None, repr=False, compare=False)
    # the allocation check of an exact solve (None: a heuristic); JSON: params["allocations"]
    allocations: AllocationReport | None = field(default=None, repr=False, compare=False)
    # where an exact solve's warm start came from (None: a heuristic); JSON: params["warm_start_from"]
    warm_start_from: WarmStartReport | None = field(default=None, repr=False, compare=False)

    @property
    def optimal_within_horizon_only(self) -> bool:
        """OPTIMAL among the schedules ending within the model's horizon, not proven beyond it."""
        return self.status == Status.OPTIMAL and self.horizon_proof is not None and not self.horizon_proof.contains_optimum

    def __repr__(self) -> str:
        m = self.metrics
        parts = [f"solver={self.solver!r}", f"status={self.status.value}", f"objective={self.objective!r}", f"bound={self.bound!r}",
                 f"runtime_s={self.runtime_s:.3g}"]
        if m is not None:
            parts += [f"jobs={m.jobs}", f"slo_violations={m.slo_violations}", f"avg_jct={m.avg_jct!r}"]
        if self.message:
            parts.append(f"message={self.message!r}")
        return f"Result({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """A one-row HTML table for notebooks: solver, status, objective, bound, misses
        (SLO violations / deadline jobs), lost value, avg JCT and avg queueing (minutes),
        runtime (seconds); an exact solver's bound of each part in parentheses."""
        m, b = self.metrics, PartBounds.of(self)

        def num(x: float | None, fmt: str, bound: float | None = None) -> str:
            text = "–" if x is None else format(x, fmt)
            return text if bound is None else f"{text} (≥ {format(bound, fmt)})"

        cells = {
            "solver": self.solver, "status": self.status.value, "objective": num(self.objective, ".4f"), "bound": num(self.bound, ".4f"),
            "misses": "–" if m is None else f"{m.slo_violations}/{m.slo_jobs}",
            "lost value": num(None if m is None else m.weighted_violations, "g", b.lost_value),
            "avg JCT (min)": num(None if m is None else m.avg_jct, ".1f", b.avg_jct),
            "avg queueing (min)": num(None if m is None else m.avg_queueing_time, ".1f"),
            "runtime (s)": f"{self.runtime_s:.3g}",
        }
        head = "".join(f"<th>{escape(k)}</th>" for k in cells)
        row = "".join(f"<td>{escape(v)}</td>" for v in cells.values())
        note = f"<p>{escape(self.message)}</p>" if self.message else ""
        return f"<table class=\"sensaopt-result\"><thead><tr>{head}</tr></thead><tbody><tr>{row}</tr></tbody></table>{note}"

    def job_metrics(self) -> list[JobMetrics]:
        """Per-job outcomes (minutes, job order) from the carried evaluation and truth;
        ValueError for a result that carries none (e.g. no schedule)."""
        if self.evaluation is None or self.truth is None:
            raise ValueError(f"result of {self.solver} ({self.status.value}) carries no evaluation")
        return _job_metrics(self.truth, self.evaluation)

    def to_frame(self, label: str | None = None) -> pd.DataFrame:
        """This result as a one-row pandas DataFrame (:func:`sensaopt.frames.result_frame`).

        Args:
            label: the row's index (None: the result's ``solver``).

        Returns:
            One row with the columns of :func:`sensaopt.frames.metrics_frame`.
        """
        return VIEWS.get("frame")(self, label)

    def json_params(self) -> dict[str, Any]:
        """``params`` with the typed reports written in (the JSON form: keys ``horizon``,
        ``model_size``, ``lexicographic``, ``horizon_proof``, ``allocations``, ``warm_start_from``; from the
        horizon proof ``optimal_within_horizon`` (its rounds, when the solver's optimum holds within them
        only) and ``horizon_extended_from``)."""
        out = dict(self.params)
        typed = {"horizon": self.horizon, "model_size": self.model_size, "lexicographic": self.lexicographic,
                 "horizon_proof": self.horizon_proof, "allocations": self.allocations, "warm_start_from": self.warm_start_from}
        for key, value in typed.items():
            if value is not None:
                out[key] = value if isinstance(value, int) else value.to_dict()
        if self.horizon_proof is not None and self.horizon_proof.optimal_within_horizon:
            out["optimal_within_horizon"] = self.horizon_proof.horizon
        if self.horizon_proof is not None and self.horizon_proof.extended_from is not None:
            out["horizon_extended_from"] = self.horizon_proof.extended_from
        return out

    def to_dict(self, instance: Instance | None = None, with_schedule: bool = True) -> dict[str, Any]:
        """JSON-ready form; the schedule needs ``instance`` (else it is written as null).
        Strict JSON: a NaN or infinity anywhere raises :class:`~sensaopt.errors.SensaoptError`
        (one line naming the field) instead of reaching a file as ``NaN``/``Infinity``."""
        bounds = PartBounds.of(self)
        d: dict[str, Any] = {
            "solver": self.solver,
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.bound,
            "runtime_s": self.runtime_s,
            "metrics": self.metrics.to_dict() if self.metrics else None,
            "params": self.json_params(),
            "versions": self.versions,
            "message": self.message,
            # proven bounds of the lexicographic parts (PartBounds): lost value, avg JCT minutes
            "part_bounds": {"lost_value": bounds.lost_value, "avg_jct": bounds.avg_jct},
        }
        if with_schedule:
            d["schedule"] = self.schedule.to_dict(instance) if (self.schedule and instance is not None) else None
        check_json_numbers(d, f"result of {self.solver}")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], instance: Instance | None = None, source: str = "result") -> Result:
        """Read back :meth:`to_dict`'s form: the typed reports from their ``params`` keys
        (a weighted solve's ``"lexicographic": false`` stays in ``params``), the schedule
        with ``instance`` (else None), ``instance`` also as the truth (the violation
        weight of the part bounds), the loss proof as the solver derived it
        (:func:`loss_proof_of`). No evaluation: validate the schedule again for it. The
        rules are ``check_result_fields``' (the same for result files: :func:`load_result`,
        ``validate`` and ``plot`` of a ``solve -o`` file; :mod:`sensaopt.result_checks`). ``source`` names the file in errors.
        Not a dict: :class:`~sensaopt.errors.ArgumentError`; a missing or bad field:
        :class:`~sensaopt.errors.InputError` naming it."""
        from sensaopt.errors import ArgumentError, InputError

        if not isinstance(d, dict):
            raise ArgumentError("Result.from_dict()", "d", f"must be a dict (Result.to_dict's form), got {type(d).__name__}")
        from sensaopt.result_checks import check_result_fields

        check_result_fields(d, source)
        try:
            return cls._from_dict(d, instance, source)
        except KeyError as e:
            raise InputError(source, str(e.args[0]), "missing required field") from None
        except (TypeError, ValueError, AttributeError, IndexError) as e:
            if isinstance(e, InputError):
                raise
            raise InputError(source, "(fields)", f"not a result: {e}") from None

    @classmethod
    def _from_dict(cls, d: dict[str, Any], instance: Instance | None, source: str) -> Result:
        params = dict(d.get("params") or {})
        lex, proof, size, alloc, start = (params.pop(k, None) for k in ("lexicographic", "horizon_proof", "model_size", "allocations",
                                                                         "warm_start_from"))
        if lex is False:
            params["lexicographic"] = False
        within, extended = params.pop("optimal_within_horizon", None), params.pop("horizon_extended_from", None)
        horizon_proof = HorizonProof.from_dict(proof) if proof else None
        if horizon_proof is not None:
            horizon_proof = replace(horizon_proof, extended_from=extended, optimal_within_horizon=within is not None)
        raw_schedule = d.get("schedule")
        lex_report = LexicographicReport.from_dict(lex) if isinstance(lex, dict) else None
        alloc_report = AllocationReport.from_dict(alloc) if alloc else None
        return cls(
            solver=d["solver"], status=Status(d["status"]), objective=d["objective"], bound=d["bound"], runtime_s=d["runtime_s"],
            schedule=parse_schedule_dict(raw_schedule, instance, source) if raw_schedule is not None and instance is not None else None,
            metrics=Metrics(**d["metrics"]) if d.get("metrics") else None, params=params, versions=dict(d.get("versions") or {}),
            message=d.get("message", ""), horizon=params.pop("horizon", None),
            lexicographic=lex_report, allocations=alloc_report, loss_proof=loss_proof_of(lex_report, alloc_report), truth=instance,
            horizon_proof=horizon_proof, model_size=ModelSize.from_dict(size) if size else None,
            warm_start_from=WarmStartReport.from_dict(start) if start else None)


def loss_proof_of(lexicographic: LexicographicReport | None, allocations: AllocationReport | None) -> LossProof | None:
    """The loss proof an exact solve's reports carry: the allocation relaxations' loss
    floor (valid over every allocation) when they ran, else phase 1's bound, else fixed
    (phase 1 skipped: no open deadline decision, or a zero-miss schedule exists); None
    for a weighted solve."""
    if allocations is not None and allocations.check == "relaxation":
        return LossProof(bound=allocations.loss_floor)
    if lexicographic is None:
        return None
    return LossProof(fixed=True) if lexicographic.phase1 is None else LossProof(bound=lexicographic.phase1.loss_bound)


def load_result(path: str | Path, instance: Instance | None = None) -> Result:
    """A Result from a ``solve --json`` file (:meth:`Result.from_dict`); ``instance`` reads its schedule.

    Args:
        path: the result file.
        instance: the instance it solved (None: the schedule is not read).

    Returns:
        The result (no evaluation: validate its schedule for one).

    Raises:
        InputError: an unreadable file or one that breaks :func:`sensaopt.result_checks.check_result_fields`."""
    raw = read_json(path)
    if not isinstance(raw, dict):
        from sensaopt.errors import InputError
        from sensaopt.limits import type_problem

        raise InputError(str(path), "(top level)", type_problem(dict, raw))
    return Result.from_dict(raw, instance, str(path))


@dataclass(frozen=True)
class Level:
    """The lexicographic parts of one schedule's objective: SLO violations (misses),
    lost deadline value, average JCT (minutes); None where unknown."""

    misses: int | None
    lost_value: float | None
    avg_jct: float | None

    @classmethod
    def of(cls, result: Result) -> Level:
        m = result.metrics
        if m is None:
            return cls(None, None, None)
        return cls(m.slo_violations, m.weighted_violations, m.avg_jct)


def _weight(result: Result, instance: Instance | None) -> float | None:
    inst = instance if instance is not None else result.truth
    return None if inst is None else inst.objective.violation_weight


@dataclass(frozen=True)
class PartBounds:
    """Proven lower bounds of one exact Result, per part (None: not known): the whole
    objective (``objective``), the lost deadline value (``lost_value``, value units) and
    the average JCT at the result's loss level (``avg_jct``, minutes); see the module
    docstring for when each is valid."""

    objective: float | None
    lost_value: float | None
    avg_jct: float | None

    @classmethod
    def of(cls, result: Result, instance: Instance | None = None) -> PartBounds:
        """Bounds of ``result``; ``instance`` gives the violation weight W (default:
        ``result.truth``, which every solver sets)."""
        w = _weight(result, instance)
        proof = result.loss_proof
        lvl = Level.of(result)
        loss: float | None = None
        if proof is not None and w is not None and w > 0:
            if proof.bound is not None:
                loss = max(float(proof.bound), 0.0) / w
            elif proof.fixed and result.schedule is not None:
                loss = lvl.lost_value  # no open deadline decision: every schedule loses this
        if loss is not None and lvl.lost_value is not None:
            loss = min(loss, lvl.lost_value)  # a bound never above an attained value (round-off)
        jct: float | None = None
        if (result.bound is not None and loss is not None and lvl.lost_value is not None and w is not None
                and math.isclose(loss, lvl.lost_value, rel_tol=1e-9, abs_tol=VALUE_TOL)):
            jct = result.bound - w * lvl.lost_value
        return cls(objective=result.bound, lost_value=loss, avg_jct=jct)


_PACKAGES = ("sensaopt", "ortools", "pulp", "highspy", "networkx", "numpy", "numba", "scipy", "pandas", "pydantic", "matplotlib", "dask",
             "distributed")


def package_versions() -> dict[str, str | None]:
    """Versions of Python and of the packages whose behaviour a result depends on."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out
