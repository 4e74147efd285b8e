"""What the paper's experiment runs: workloads, policies, metrics and files (constants),
:class:`PaperSettings`, replaying older records' arguments and the run configurations
(:func:`paper_configs`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sensaopt.sweep.config import RunConfig

WORKLOADS = (("Philly SLO", "chronus-slo", "philly"), ("Philly MIX1", "chronus-mix1", "philly"),
             ("Philly MIX2", "chronus-mix2", "philly"), ("Helios", "helios-gen", "helios"),
             ("Helios Venus log", "helios-venus", "helios"))
"""(label, trace source, cluster family) of each workload the experiment can run."""
DEFAULT_WORKLOADS = ("Philly SLO", "Philly MIX1", "Philly MIX2", "Helios")
"""The paper's four workloads (labels); ``--workloads`` picks others (the real Venus log: ``helios-venus``)."""
POLICIES = ("sensascale", "sensascale-paper", "chronus", "synergy-tune", "edf", "edf-demote", "edf-tune", "edf-tune-demote",
            "lst", "fifo")
"""The second edition's policies (the command runs those registered unless ``--policy`` is given)."""
FIRST_EDITION_POLICIES = ("sensascale", "chronus", "synergy-tune", "edf", "fifo")
SHAPES = ("chronus", "alibaba")
"""Node shapes (``sensaopt.traces.presets.NODE_VARIANTS``) of the extra Philly SLO cells."""
SHAPE_WORKLOAD = "Philly SLO"  # the workload (a WORKLOADS label) the extra node shapes run
OURS = ("sensascale", "sensascale-paper")  # SensaScale configurations: never a "baseline"
DECOMPOSITION: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("speed<=1", (("adjust", False), ("fill_spare", False), ("pairing", False))),
    ("ordering", (("adjust", False), ("backfill", "none"), ("fill_spare", False), ("pairing", False), ("repack_limit", 0),
                  ("stay_put", False))),
)
"""The speed-up decomposition (``--decomposition``): SensaScale (its defaults) with no job
above speed 1 (no pairing, no spare filling, no deadline-aware adjustment: every job at
most its proportional share), and "ordering only" (also no backfill reservations, no
repack, no stay-put: its order with greedy proportional placement); rows labelled
``sensascale (speed<=1)``, ``sensascale (ordering)`` on the Philly SLO cell with
8-GPU nodes of the main node shape."""
PAPER_BUDGET = "work:5"
"""The lease MILPs' budget (``--budget``): deterministic work units per solve (HiGHS: 100
nodes a unit, :mod:`sensaopt.solvers.budget`), so the table is the same on any machine load;
"time": Chronus's own 5-s wall-clock limit (the tables made before the budget existed)."""
SAFETY_NET_S = 60.0  # seconds: a lease solve's wall-clock safety net under a work budget (Chronus's time_limit_s)
BUDGET_KNOBS = ("budget", "time_limit_s")  # the knobs budget_knobs sets
FULL_GPUS = {"philly": 960, "helios": 768}
# the paper's average relative change of SensaScale vs Chronus (%); its queueing figure is shown
# under both queueing definitions (the paper does not say which; the Chronus artifact counts pending time)
PAPER_REDUCTION = {"slo_violation_rate": -74.22, "avg_jct": -25.86, "avg_queueing_time": -82.75, "avg_pending_time": -82.75}
# per-run figures: (column, source in the record's metrics, divide by the job count) -- units in RUN_UNITS
RUN_METRICS: tuple[tuple[str, str, bool], ...] = (
    ("slo_violation_rate", "slo_violation_rate", False), ("weighted_violation_rate", "weighted_violation_rate", False),
    ("avg_jct", "avg_jct", False), ("avg_queueing_time", "avg_queueing_time", False), ("avg_pending_time", "avg_pending_time", False),
    ("restarts_per_job", "preemptions", True), ("migrations_per_job", "migrations", True), ("resizes_per_job", "resizes", True),
    ("gpu_utilization", "gpu_utilization", False))
RUN_UNITS = {"slo_violation_rate": "fraction", "weighted_violation_rate": "fraction of deadline value", "avg_jct": "minutes",
             "avg_queueing_time": "minutes (first start - arrival)", "avg_pending_time": "minutes (total pending)",
             "restarts_per_job": "count per job", "migrations_per_job": "count per job", "resizes_per_job": "count per job",
             "gpu_utilization": "fraction"}
METRIC_NAMES = tuple(k for k, _, _ in RUN_METRICS)
# the comparison of two policies is computed for these (misses, then times): the relative change (%),
# except the DIFFERENCES columns (an absolute difference, defined also where the base is 0)
REDUCTION_METRICS = ("slo_violation_rate", "slo_violation_points", "servable_violation_rate", "weighted_violation_rate", "avg_jct",
                     "avg_queueing_time", "avg_pending_time")
REDUCTION_HEADERS = ("SLO violation rate", "SLO violations, Δ points", "over servable jobs", "weighted violation rate", "avg JCT",
                     "avg queueing", "avg pending")
DIFFERENCES = {"slo_violation_points": ("slo_violation_rate", 100.0)}
"""Comparison columns that are differences, not relative changes: column -> (run metric, multiplier).
``slo_violation_points``: 100·(ours − base) of the SLO violation rate, in percentage points. A
relative change is undefined where the base misses no deadline (a cell where the base misses
none and SensaScale some would drop out of the relative average and flatter it); the
difference is not."""
# the bar figure's panels: (column, axis label, multiplier)
METRICS = (("slo_violation_rate", "SLO violation rate (%)", 100.0), ("avg_jct", "avg JCT (min)", 1.0),
           ("avg_queueing_time", "avg queueing, first start − arrival (min)", 1.0))
SERVABLE_METRICS = ("servable_violation_rate", "unservable")
"""Per run, from the record's ``servable`` counts (:mod:`sensaopt.servable`): the SLO
violation rate over the servable deadline jobs (fraction) and the number of deadline
jobs no schedule can serve."""
BOUND_METRICS = ("forced_misses", "forced_misses_share", "misses_above_forced", "jct_bound")
"""Per run, from its workload's instance alone (:mod:`sensaopt.bounds`): the deadline misses
no schedule avoids (at best speed, and at the proportional share: for policies that never
speed a job up), the run's misses beyond the first (count), and the average-JCT lower
bound at best speed (minutes, every deadline relaxed)."""
LEGACY_RUN_COLUMNS = ("workload", "node_gpus", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
"""runs.csv columns of tables made before node shapes and servable jobs (results/paper-full, paper-scale-0.05)."""
METRIC_NAMES = METRIC_NAMES + SERVABLE_METRICS
PRE_BOUNDS_RUN_COLUMNS = ("workload", "node_gpus", "node", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
"""runs.csv columns of tables made before the bound columns."""
METRIC_NAMES = METRIC_NAMES + BOUND_METRICS
RUN_COLUMNS = ("workload", "node_gpus", "node", "policy", "seed", "preset", "key", "jobs") + METRIC_NAMES + ("simulate_s",)
FIGURE_FILES = ("fig_bars.png", "fig_jct_cdf.png")  # what figures() writes into its folder
CONFIDENCE = 0.95


@dataclass(frozen=True)
class PaperSettings:
    """What the experiment runs. ``node``: the node shape of the 8 main cells; ``shapes``:
    further node shapes, each running :data:`SHAPE_WORKLOAD` on ``shape_gpus``-GPU nodes;
    ``decomposition``: the :data:`DECOMPOSITION` rows; ``duration_at``: what a trace
    duration means (:data:`sensaopt.traces.trace.DURATION_AT`; None: the default of each
    node shape); ``workloads``: the labels of the :data:`WORKLOADS` run."""

    scale: float = 1.0
    policies: tuple[str, ...] = POLICIES
    seeds: tuple[int, ...] = (0, 1, 2)
    round_minutes: float = 5.0
    sensitive_fraction: float = 0.5
    node: str = "synergy"  # a NODE_VARIANTS name
    helios_days: float = 14.0
    shapes: tuple[str, ...] = SHAPES
    shape_gpus: tuple[int, ...] = (8, 16)
    decomposition: bool = False
    duration_at: str | None = None
    workloads: tuple[str, ...] = DEFAULT_WORKLOADS  # labels of WORKLOADS
    budget: str = PAPER_BUDGET  # the solver-based policies' budget (budget_knobs)


LEGACY_SETTINGS: dict[str, Any] = {"shapes": [], "shape_gpus": [8, 16], "decomposition": False, "duration_at": "reference",
                                   "workloads": list(DEFAULT_WORKLOADS), "budget": "time"}
"""What a provenance record whose settings lack a field did (made before the field existed)."""


def legacy_args(settings: dict[str, Any]) -> list[str]:
    """Arguments that make today's command plan what a recorded command (its provenance
    ``settings``) planned, for the fields its settings lack (:data:`LEGACY_SETTINGS`;
    ``decomposition`` is off by default, then and now)."""
    out: list[str] = []
    if "shapes" not in settings:
        out += ["--shape", "none"]
    if "duration_at" not in settings:
        out += ["--duration-at", "reference"]
    if "budget" not in settings:
        out += ["--budget", "time"]
    return out


RETIRED_OUT_FLAGS = ("-o", "--output")
"""How ``experiment paper`` named its output folder before ``--out-dir`` (commands recorded in provenance.json)."""


def replay_args(args: list[str]) -> list[str]:
    """A recorded ``experiment paper`` argument list (provenance ``args``) in today's
    spelling: the output folder as ``--out-dir`` (recorded before it as ``-o``/``--output``,
    also ``--output=DIR``); everything else unchanged."""
    out: list[str] = []
    for a in args:
        flag, eq, value = a.partition("=")
        if a in RETIRED_OUT_FLAGS:
            out.append("--out-dir")
        elif eq and flag in RETIRED_OUT_FLAGS:
            out.append(f"--out-dir={value}")
        else:
            out.append(a)
    return out


def settings_record(s: PaperSettings) -> dict[str, Any]:
    """``s`` as provenance stores it."""
    from dataclasses import asdict

    return asdict(s)


def node_of(cfg: RunConfig) -> str:
    """The node shape of a run: the preset's variant suffix (``synergy`` without one), or
    ``custom`` when cores or GB per GPU are set."""
    from sensaopt.traces.presets import NODE_VARIANTS

    if cfg.cpu_per_gpu is not None or cfg.mem_per_gpu is not None:
        return "custom"
    return next((v for v in NODE_VARIANTS.names() if cfg.preset.endswith(f"-{v}")), "synergy")


def policy_label(cfg: RunConfig) -> str:
    """The policy column of a run: its policy, or ``sensascale (speed<=1)`` for a
    :data:`DECOMPOSITION` variant, or ``policy [k=v, ...]`` for other knob overrides
    (the knobs of a work budget, :func:`budget_knobs`, are not named: they change how
    long a solve may search, recorded in the run's config and provenance)."""
    own = cfg.policy_config
    if dict(own).get("budget") is not None:
        own = tuple((k, v) for k, v in own if k not in BUDGET_KNOBS)
    if not own:
        return cfg.policy
    for name, knobs in DECOMPOSITION:
        if cfg.policy == "sensascale" and tuple(cfg.policy_config) == knobs:
            return f"sensascale ({name})"
    return f"{cfg.policy} [{', '.join(f'{k}={v}' for k, v in own)}]"


def workload_choice(names: Iterable[str]) -> tuple[str, ...]:
    """The labels of the workloads named (each a :data:`WORKLOADS` trace source or label,
    comma-separated or repeated) in :data:`WORKLOADS` order; ValueError naming an unknown one."""
    by_name = {w[1]: w[0] for w in WORKLOADS} | {w[0].lower(): w[0] for w in WORKLOADS}
    chosen: set[str] = set()
    for n in (x.strip() for name in names for x in name.split(",")):
        if n and n.lower() not in by_name:
            raise ValueError(f"unknown workload {n!r} (known: {', '.join(w[1] for w in WORKLOADS)})")
        if n:
            chosen.add(by_name[n.lower()])
    if not chosen:
        raise ValueError("no workload named")
    return tuple(w[0] for w in WORKLOADS if w[0] in chosen)


def check_decomposition() -> None:
    """Every :data:`DECOMPOSITION` knob is a SensaScale knob (ValueError naming it, before any run)."""
    from dataclasses import fields

    from sensaopt.policies import policy_config_class

    known = {f.name for f in fields(policy_config_class("sensascale"))}
    for name, knobs in DECOMPOSITION:
        bad = [k for k, _ in knobs if k not in known]
        if bad:
            raise ValueError(f"decomposition {name!r}: sensascale has no knob {', '.join(bad)}")


def cluster_for(family: str, node_gpus: int, s: PaperSettings, node: str | None = None) -> tuple[str, float]:
    """(preset, kept job fraction) for a workload family and node size (on ``node``, default ``s.node``)."""
    node = s.node if node is None else node
    suffix = "" if node == "synergy" else f"-{node}"
    if s.scale >= 1.0:
        return f"{family}-{node_gpus}{suffix}", 1.0
    gpus = max(16, round(FULL_GPUS[family] * s.scale / 16) * 16)
    return f"{gpus // node_gpus}x{node_gpus}{suffix}", gpus / FULL_GPUS[family]


def paper_configs(s: PaperSettings) -> list[tuple[str, int, RunConfig]]:
    """(workload label, GPUs per node, run configuration) of every run of the experiment,
    seed by seed (a sweep stopped early holds whole seeds first when run in this order)."""
    from sensaopt.config import as_pairs

    out = []
    chosen = [w for w in WORKLOADS if w[0] in s.workloads]
    cells = [(label, trace, family, g, s.node) for label, trace, family in chosen for g in (8, 16)]
    cells += [(label, trace, family, g, shape) for shape in s.shapes if shape != s.node
              for label, trace, family in chosen if label == SHAPE_WORKLOAD for g in s.shape_gpus]
    for seed in s.seeds:
        for label, trace, family, g, node in cells:
            preset, frac = cluster_for(family, g, s, node)
            variants: list[tuple[str, dict[str, Any]]] = [(pol, budget_knobs(pol, s.budget)) for pol in s.policies]
            if s.decomposition and label == SHAPE_WORKLOAD and g == 8 and node == s.node:
                variants += [("sensascale", dict(knobs)) for _, knobs in DECOMPOSITION]
            for pol, knobs in variants:
                cfg = RunConfig(trace=trace, preset=preset, policy=pol, seed=seed, sensitive_fraction=s.sensitive_fraction,
                                round_minutes=s.round_minutes, sample=frac, days=s.helios_days if family == "helios" else None,
                                duration_at=s.duration_at, policy_config=as_pairs(knobs))
                out.append((label, g, cfg))
    return out


def budget_knobs(policy: str, budget: str) -> dict[str, Any]:
    """The knobs giving ``policy`` the work ``budget`` (a policy with a ``budget`` knob:
    Chronus's lease MILPs; its ``time_limit_s`` becomes the :data:`SAFETY_NET_S` safety
    net); none for "time" (the policy's own wall-clock limit) or a policy without solver."""
    from sensaopt.solvers.budget import WALL_CLOCK

    knobs = policy_defaults(policy) or {}
    if budget == WALL_CLOCK or "budget" not in knobs:
        return {}
    return {"budget": budget, **({"time_limit_s": SAFETY_NET_S} if "time_limit_s" in knobs else {})}




Group = tuple[str, int, str]  # (workload, GPUs per node, node shape)


def _group(r: dict[str, Any]) -> Group:
    return (r["workload"], r["node_gpus"], r.get("node", "synergy"))


def _groups(rows: list[dict[str, Any]]) -> list[Group]:
    """(workload, GPUs per node, node shape) cells present in ``rows``: :data:`WORKLOADS`
    order, Synergy nodes then :data:`SHAPES`, 8 before 16."""
    order = [w for w, _, _ in WORKLOADS]
    nodes = ["synergy", *SHAPES]
    return sorted({_group(r) for r in rows},
                  key=lambda x: (nodes.index(x[2]) if x[2] in nodes else len(nodes), x[2],
                                 order.index(x[0]) if x[0] in order else len(order), x[0], x[1]))


def _policies(rows: list[dict[str, Any]]) -> list[str]:
    """Policies present in ``rows``: :data:`POLICIES` order first, then the others sorted."""
    present = {r["policy"] for r in rows}
    return [p for p in POLICIES if p in present] + sorted(present - set(POLICIES))


def _jsonable(x: Any) -> Any:
    import json

    return json.loads(json.dumps(x, default=str))


def policy_defaults(policy: str) -> dict[str, Any] | None:
    """The knobs of ``policy``'s default configuration (this code's), JSON-ready; None
    for a policy not registered here."""
    from dataclasses import asdict, is_dataclass

    from sensaopt.policies import POLICIES as REGISTERED
    from sensaopt.policies import make_policy

    if policy not in REGISTERED:
        return None
    cfg = make_policy(policy).config
    return _jsonable(asdict(cfg)) if is_dataclass(cfg) and not isinstance(cfg, type) else {}
