"""All SensaScale knobs in one place, with the choices made where the paper is silent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SensaScaleConfig:
    """SensaScale's knobs (``--set key=value``, ``policy_config=``), the project defaults; each
    attribute documents its unit and meaning (``models/sensascale.md``)."""

    # Step 1 — classification and optimal demand
    demand_tolerance: float = 0.1
    """Optimal demand = smallest allocation within this fraction of the peak speed
    (SPEC: "within a tolerance, e.g. 10%")."""
    sensitivity_threshold: float = 0.1
    """Sensitive if the peak is > 10% above the proportional-share speed, or the floor
    allocation is > 10% below it. Relative to the proportional share of the cluster's
    main node type (the one holding the most GPUs)."""

    # Step 2 — LST ordering
    hopeless_to_best_effort: bool = True
    """Jobs that cannot meet any of their deadlines even at optimal demand from now
    join the best-effort tier (ordered by shortest remaining time), out of the way."""
    urgent_first: bool = False
    """An *urgent* group first in the deadline tier: jobs whose LST ≤ now +
    ``urgent_rounds`` rounds, by LST, before the rest (by ``deadline_order``). Off by
    default: on the full Philly SLO trace (120 × 8-GPU Synergy nodes, 3 seeds) it costs
    261 violations instead of 116 and 6 % more average JCT — urgent jobs preempt running
    ones, which become urgent in turn (least laxity's domino under overload) — while on
    the loaded 2-day window it saves 20 of 21 (models/sensascale.md, "urgent group")."""
    urgent_rounds: float = 1.0
    """Preemption guard (with ``urgent_first``, or ``deadline_order="lst"``). Within the
    deadline tier, jobs are ordered (urgent, running, waiting) and by LST inside each
    group, where *urgent* means LST ≤ now + this many rounds. A running job is thus preempted only by a job that must start now to meet
    its deadline, not every time a waiting job's laxity dips below its own (plain
    least-laxity-first thrashes, paying a restart each time). The paper is silent."""

    deadline_order: str = "edf"
    """Order of the deadline tier after the urgent jobs (LST ≤ now + ``urgent_rounds``
    rounds, always first, by LST): "edf" — by target deadline, running or not (a
    fixed order: it cannot thrash, and a newcomer with an earlier deadline may preempt
    a running job, as in EDF); "lst" — running jobs, then waiting ones, each by LST
    (the anti-thrashing guard above; a newcomer then waits until it is urgent or GPUs
    free up: 4.5x EDF's queueing on the loaded Philly SLO window, models/sensascale.md);
    "lst-strict" — every deadline job by LST alone (the paper's order, no guard)."""
    lst_allocation: str = "expected"
    """Allocation the latest start time assumes: "expected" — what the job will likely
    get (its current allocation if running, else the base allocation of the main node
    type; never slower than the base) — or "optimal" (its optimal demand, the paper's
    reading). Whether a deadline is still reachable is always judged at the optimal
    demand."""

    protect_running: bool = False
    """An urgent job may preempt running jobs only if the deadline value it saves
    exceeds the value of the running jobs it would make miss (see
    ``analysis.protect_running``); otherwise it is moved out of the way. The paper's
    "hopeless jobs are moved out of the way", extended to jobs that can only be saved
    at a greater loss. Off by default: on the loaded Philly SLO window it *adds*
    violations (15 instead of 2 at move-cost scale 1, 20 instead of 17 at scale 4;
    models/sensascale.md) — the victims' projected misses it weighs rarely happen."""

    # Step 3 — complementarity pairing
    pairing: bool = True
    pairing_classes: str = "sensitive-insensitive"
    """Who is paired: "sensitive-insensitive" (the summary's conclusion: an insensitive
    job gives its CPU/memory share to a sensitive one) or "cpu-memory" (the abstract's
    "within each class": a CPU-leaning sensitive job with a memory-leaning one, the
    memory-leaning one at its optimal demand; measured in models/sensascale.md)."""
    pairing_method: str = "assignment"
    """"assignment": scipy linear_sum_assignment on the sensitive × insensitive
    matrix (same total weight as a maximum-weight matching on this bipartite graph);
    "networkx": networkx.max_weight_matching (the reference, slow on large graphs);
    "classes": identical weight rows/columns merged, then an exact min-cost flow
    (OR-Tools) between the classes — fast with ``urgency_levels`` > 0."""
    urgency_levels: int = 0
    """Round urgencies to multiples of 1/levels (0: exact floats, the default). Jobs of
    one type and urgency level then share a weight row, which ``pairing_method=
    "classes"`` exploits: with 16 levels the pairing of 1,000 candidates takes ~3 ms
    instead of ~21 ms (benchmarks/bench_pairing.py). Opt-in: it changes decisions
    slightly (8 CPU-scarce 40-job instances: 34 violations instead of 43; the committed
    ladder: 20 instead of 18), and the documented measurements use the default."""
    pair_hysteresis: float = 1.0
    """Pairs that make running jobs move or resize pay for it in the matching: the edge
    weight (GPUs × urgency × relative speed gained) is reduced by this factor × the
    change's minutes ÷ the member's remaining minutes (``pairing.switch_penalty``), so
    a running pair is re-matched only if the new partner gains more than the move
    costs over the work left. 0: re-match freely every round (the cost ignored)."""
    pairing_window: float = 1.0
    """Pair only among the queue prefix asking for at most this × the cluster's GPUs. 1.0 by
    default since session 39 (was 1.5): wider, the matching takes later-deadline partners
    ahead of queued jobs that then miss (full-scale edition, 12 cells × 3 seeds: fewer
    misses on average on 9 cells, most on MIX1 and MIX2; more on the loaded 2-day window
    at 5-minute rounds, 19.7 against 16.7; models/sensascale.md)."""
    weight_scale: int = 1_000_000
    """Pair weights are scaled by this and cast to int (exact matching arithmetic)."""

    # Step 4 — placement with safe backfill
    backfill: str = "easy"
    """"easy": the first unit that does not fit gets a reservation and later units may
    start only if they do not delay it; "conservative": every unit that does not fit
    gets one; "none": greedy, no reservations."""
    round_reservations: bool = False
    """A reservation starts at the end of the round in which its GPUs free up, not at the
    estimated end (minutes) of the unit it waits for: a unit placed now holds its GPUs to
    the end of its last round, so with a reservation at a unit's end of 40.1 minutes in a
    round ending at 50, jobs ending by 50 may still start now. Off by default (the committed
    tables ran without it; ``models/sensascale.md``, "Reservations at round ends")."""
    stay_put: bool = True
    """A running job keeps its node(s) and allocation unless a change ends it sooner,
    the change's cost counted (``Overheads``: a resize on the same node, a migration
    elsewhere); other units look for room among resources no running job held the
    round before first, and take held resources only when nothing else fits."""
    laxity_guard: bool = True
    """With ``stay_put``: a waiting unit takes resources held by running jobs only on nodes
    where every such job has at least the unit's own latest start time (LST; best-effort
    jobs: infinite), so a running job with little slack is not displaced by a newcomer
    with more (the paper's least laxity, applied only where the EDF order preempts). On by
    default since session 21: on the full Philly SLO, MIX1 and MIX2 traces (8- and 16-GPU
    nodes) and SLO on the Alibaba and Chronus-artifact nodes, 3 seeds, it misses fewer or
    equally many deadlines on all 36 runs (models/sensascale.md, "Where it loses")."""
    repack_limit: int = 8
    """Defragmentation: a single-node unit that fits on no node although enough GPUs
    are free in total may have single jobs planned this round moved off one node to
    make room, if the moves cost less than one round of its GPUs
    (``Repacker.repack`` in ``repack.py``); at most this many tries per round (0: never). Without it a
    stayed-put cluster stays fragmented and 8-GPU jobs wait for a node to drain."""
    move_cost_weight: float = 1.0
    """Multiplier on the change costs (restart, migration, resize) that SensaScale's own
    decisions price — latest start times, stay-or-move, pair hysteresis, resizes, repack —
    while the simulator keeps charging the instance's costs. 1: price what is charged.
    A diagnostic for why SensaScale does better when every cost is ×4
    (models/sensascale.md)."""
    min_speed_fraction: float = 0.5
    """When a node lacks CPU or memory for the base allocation, accept a smaller one
    only if it keeps at least this fraction of the base speed."""

    # Step 5 — deadline-aware adjustment
    adjust: bool = False
    """Move CPU/memory from co-located insensitive or slack-rich jobs (never below
    what keeps them on their own deadline, nor below their floor) toward the optimal
    demand of a job projected to miss its deadline. Off by default: on the loaded
    Philly SLO window it changes nothing at all (identical schedules at move-cost
    scale 1 and 4; models/sensascale.md): spare filling and the EDF order leave it no
    job to rescue. On the full Philly SLO trace (3 seeds, ``results/road-philly-slo-8/``)
    it adds 0.7 violations to the default's 96.0 (3.7 to 96.3 with ``pairing_window`` 1.5;
    with ``laxity_guard`` off as well it saved 3.7 of 116)."""
    resize_pays: bool = True
    """Adjustment and spare filling change a planned job's CPU/memory only if that ends
    it sooner, the resize cost counted (a job kept as it was pays a resize; a job
    already moving or resizing pays nothing more)."""
    fill_spare: bool = True
    """Give CPU/memory still free on a node to its jobs, most urgent first, up to
    their optimal demand (Synergy-style work conservation; the paper is silent)."""

    def __post_init__(self) -> None:
        if self.pairing_classes not in ("sensitive-insensitive", "cpu-memory"):
            raise ValueError("pairing_classes must be 'sensitive-insensitive' or 'cpu-memory'")
        if self.pairing_method not in ("assignment", "networkx", "classes"):
            raise ValueError("pairing_method must be 'assignment', 'networkx' or 'classes'")
        if self.urgency_levels < 0:
            raise ValueError("urgency_levels must be >= 0")
        if self.backfill not in ("easy", "conservative", "none"):
            raise ValueError("backfill must be 'easy', 'conservative' or 'none'")
        if not 0 <= self.demand_tolerance < 1:
            raise ValueError("demand_tolerance must be within [0, 1)")
        if self.deadline_order not in ("lst", "edf", "lst-strict"):
            raise ValueError("deadline_order must be 'lst', 'lst-strict' or 'edf'")
        if self.lst_allocation not in ("expected", "optimal"):
            raise ValueError("lst_allocation must be 'expected' or 'optimal'")
        if self.pair_hysteresis < 0:
            raise ValueError("pair_hysteresis must be >= 0")
        if not self.move_cost_weight >= 0:
            raise ValueError("move_cost_weight must be >= 0")
        if self.repack_limit < 0:
            raise ValueError("repack_limit must be >= 0")
        if self.pairing_window <= 0 or self.weight_scale < 1:
            raise ValueError("pairing_window and weight_scale must be positive")


@dataclass(frozen=True)
class SensaScalePaperConfig(SensaScaleConfig):
    """SensaScale as the paper describes it (``sensascale-paper``), nothing it does not
    name: LST order (``lst-strict``, the LST at the optimal demand), hopeless jobs out of
    the way, sensitive–insensitive max-weight pairing, EASY backfill, deadline-aware
    adjustment on. Off, because the paper does not describe them: spare filling, repack,
    staying put (and its laxity guard), pair hysteresis (the project default's additions,
    ``models/sensascale.md``). The paper names no pairing window; this configuration keeps
    1.5, the default's value until session 39, so its committed runs stand."""

    deadline_order: str = "lst-strict"
    urgent_first: bool = True
    lst_allocation: str = "optimal"
    adjust: bool = True
    fill_spare: bool = False
    repack_limit: int = 0
    stay_put: bool = False
    laxity_guard: bool = False
    pair_hysteresis: float = 0.0
    pairing_window: float = 1.5
