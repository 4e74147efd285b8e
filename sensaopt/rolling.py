"""Rolling-horizon policies: every round, solve the window model of the next ``window``
rounds from the simulator's current state and apply its first round.

The window model is the offline model (:mod:`sensaopt.exact.model.builder`) with:
only arrived, unfinished jobs; each job's *remaining* work; "ran before" and the
placements of the previous round taken from the :class:`RoundState` (so continuing on the
same placements pays nothing, and a restart, migration or resize its cost as in the
validator); jobs need not finish inside the window. Its objective
is the offline one with each unfinished job's JCT estimated as the window length
plus its leftover work in rounds at its best speed, and a deadline after the window
counted as met only if the leftover work fits before it at the best speed.

If the solver returns no solution within the per-round time limit, the round falls
back to EDF (recorded in ``stats["fallback_rounds"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sensaopt.errors import SensaoptError
from sensaopt.exact.model.builder import Strength, build, to_objective
from sensaopt.exact.model.data import ModelData, build_data, pair_of, placements_of
from sensaopt.exact.model.numeric import check_numbers
from sensaopt.exact.outcome import SolveOutcome, exact_params
from sensaopt.instance import Instance
from sensaopt.policies.base import Allocation, BasePolicy, Policy, RoundState
from sensaopt.policies.simple import EDFPolicy
from sensaopt.result import Status
from sensaopt.schedule import Placement
from sensaopt.solvers import TimeBudget, new_backend, parse_budget
from sensaopt.solvers.budget import WALL_CLOCK

ROLLING_BACKENDS = ("cpsat", "highs", "cbc")


@dataclass(frozen=True)
class RollingConfig:
    """``window`` rounds per model, ``time_limit`` seconds per round, ``workers``
    solver threads, ``seed`` solver seed, ``backend`` cpsat | highs | cbc; ``budget``:
    "work:N", N work units per window solve (:mod:`sensaopt.solvers.budget`,
    ``time_limit`` then the safety net), or None / "time": the wall-clock limit alone."""

    window: int = 4
    time_limit: float = 2.0
    workers: int = 1
    seed: int = 0
    backend: str = "cpsat"
    budget: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in ROLLING_BACKENDS:
            raise ValueError(f"rolling backend must be one of {', '.join(ROLLING_BACKENDS)}, not {self.backend!r}")
        if self.window < 1 or not self.time_limit > 0:
            raise ValueError("rolling window must be >= 1 round and time_limit > 0 seconds")
        try:
            parse_budget(self.budget, "rolling")
        except SensaoptError as e:
            raise ValueError(str(e)) from None


@dataclass(frozen=True)
class RollingMILPConfig(RollingConfig):
    """:class:`RollingConfig` with HiGHS as the default backend."""

    backend: str = "highs"


def _window_states(state: RoundState) -> dict[str, tuple[float, bool, tuple[Placement, ...] | None]]:
    """Per job: remaining work (minutes), ran before, placements of the previous round
    (None if it did not run then): the window's first slot pays the change from them."""
    states = {}
    for js in state.jobs:
        prev = tuple(js.placements) if (state.was_running(js) and js.placements) else None
        states[js.id] = (js.remaining, js.started, prev)
    return states


def solve_window(data: ModelData, cfg: RollingConfig, fix: Allocation | None = None) -> tuple[SolveOutcome | None, Any]:
    """Build the window model on ``cfg.backend`` and solve it in ``cfg.time_limit``
    seconds; ``fix``: the first round fixed to this allocation (None when it is not
    representable in the model). Returns (outcome or None, the model's Vars). The time
    limit counts from the end of the build."""
    be = new_backend(cfg.backend, data.instance.name)
    check_numbers(data, be.limits)  # never a wrong status
    v = build(data, be, Strength(symmetry=False))
    if fix is not None and not _fix_first_round(data, be, v, fix):
        return None, v
    budget = TimeBudget.start(cfg.time_limit, parse_budget(cfg.budget, "rolling budget"))
    return be.solve(budget, exact_params(cfg.backend, cfg.workers, cfg.seed)), v


def _fix_first_round(data: ModelData, be: Any, v: Any, alloc: Allocation) -> bool:
    """Fix slot 0 to ``alloc``; False if some placement is not representable."""
    for jd in data.jobs:
        pls = alloc.get(jd.id)
        pair = pair_of(jd, pls) if pls else None
        if pls and pair is None:
            return False
        for p in jd.pairs:
            if (jd.k, 0, p) in v.x:
                be.add(v.x[jd.k, 0, p] == int(p == pair), "fixed_decision")
    return True


class RollingPolicy(BasePolicy):
    """Window model solved each round (:class:`RollingConfig`)."""

    name = "rolling"
    config_class = RollingConfig
    config: RollingConfig

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self._edf = EDFPolicy()
        self._edf.reset(instance)
        self.stats = {"rounds": 0, "optimal_rounds": 0, "fallback_rounds": 0}

    def window_data(self, state: RoundState) -> ModelData:
        return build_data(self.instance, self.config.window, states=_window_states(state), start_round=state.round, window=True)

    def decide(self, state: RoundState) -> Allocation:
        if not state.jobs:
            return {}
        self.stats["rounds"] += 1
        data = self.window_data(state)
        out, v = solve_window(data, self.config)
        if out is None or out.value is None:
            self.stats["fallback_rounds"] += 1
            return self._edf.decide(state)
        self.stats["optimal_rounds"] += int(out.status == Status.OPTIMAL)
        alloc: Allocation = {}
        for (k, t, pair), x in v.x.items():
            if t == 0 and out.value(x) > 0.5:
                jd = data.jobs[k]
                alloc[jd.id] = placements_of(data, jd, pair)
        return alloc


class RollingCPSATPolicy(RollingPolicy):
    name = "rolling-cpsat"


class RollingMILPPolicy(RollingPolicy):
    name = "rolling-milp"
    config_class = RollingMILPConfig


# ---- per-round gap: a policy's round decision scored by the window model ----------------------
class RoundGapRecorder(BasePolicy):
    """Wraps a policy: each round, lets it decide, then solves the window model twice —
    free (the window optimum) and with the first round fixed to the policy's decision —
    and records both values (window-objective units, see :mod:`sensaopt.rolling`).
    The simulator runs the wrapped policy's decisions unchanged."""

    config_class = RollingConfig
    config: RollingConfig

    def __init__(self, inner: Policy, config: RollingConfig | None = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self.inner = inner
        self.name = f"gap[{inner.name}]"
        self.rows: list[dict] = []

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self.inner.reset(instance)
        self.rows = []

    def decide(self, state: RoundState) -> Allocation:
        alloc = self.inner.decide(state)
        if not state.jobs:
            return alloc
        extra: dict[str, set[tuple[float, float]]] = {}
        for jid, pls in alloc.items():
            pts = {(p.cpus / p.gpus, p.mem_gb / p.gpus) for p in pls}
            if len(pts) == 1:
                c, m = next(iter(pts))
                if abs(c - round(c)) < 1e-9:
                    extra[jid] = {(float(round(c)), m)}
        data = build_data(self.instance, self.config.window, states=_window_states(state), start_round=state.round, window=True,
                          extra_options=extra)
        vals: list[tuple[float | None, bool, float | None] | None] = []
        parts: list[WindowParts | None] = []
        fired = False
        for fix in (None, alloc):
            out, v = solve_window(data, self.config, fix)
            fired = fired or (out is not None and out.safety_net)
            if out is None:
                vals.append(None)  # decision not representable in the window model
                parts.append(None)
                continue
            vals.append((to_objective(data, out.objective) if out.objective is not None else None, out.status == Status.OPTIMAL,
                         to_objective(data, out.bound) if out.bound is not None else None))
            parts.append(WindowParts.of(data, v, out))
        opt, pol = vals[0], vals[1]
        row = {"round": state.round, "jobs": len(state.jobs), "window_optimum": opt[0] if opt else None,
               "optimum_proven": bool(opt and opt[1]), "window_bound": opt[2] if opt else None,
               "policy_value": pol[0] if pol else None, "policy_proven": bool(pol and pol[1])}
        if row["window_optimum"] is not None and row["policy_value"] is not None:
            row["objective_diff"] = row["policy_value"] - row["window_optimum"]
        if self.config.budget not in (None, WALL_CLOCK):
            row["safety_net"] = fired  # the work budget's wall-clock safety net stopped a solve: not deterministic
        for side, wp in zip(("window", "policy"), parts):
            row[f"{side}_misses"], row[f"{side}_lost_value"], row[f"{side}_jct"] = (
                (wp.misses, wp.lost_value, wp.avg_jct) if wp is not None else (None, None, None))
        self.rows.append(row)
        return alloc


@dataclass(frozen=True)
class WindowParts:
    """The lexicographic parts of a window solution: deadline misses (first deadline
    not met in the window model), lost deadline value, and the window-estimated avg
    JCT (minutes: the window objective minus its deadline-loss part)."""

    misses: int
    lost_value: float
    avg_jct: float

    @classmethod
    def of(cls, data: ModelData, v: Any, out: SolveOutcome) -> WindowParts | None:
        """Parts of ``out``'s incumbent (None without one)."""
        value = out.value
        if value is None or out.objective is None:
            return None

        def met(k: int, d: int) -> int:
            m = v.met.var((k, d))
            return int(v.met[k, d]) if m is None else int(round(value(m)))

        misses, lost = 0, 0.0
        for jd in data.jobs:
            steps = [val for _, val in jd.deadlines] + [0.0]
            misses += int(bool(jd.deadlines) and met(jd.k, 0) == 0)
            lost += sum((1 - met(jd.k, d)) * (steps[d] - steps[d + 1]) for d in range(len(jd.deadlines)))
        loss_scaled = v.loss_const + sum(c * round(value(x)) for c, x in v.loss_terms)
        return cls(misses=misses, lost_value=lost, avg_jct=to_objective(data, out.objective - loss_scaled))


def per_round_gaps(instance: Instance, policy: str = "sensascale", window: int = 4, time_limit: float = 2.0, workers: int = 1,
                   seed: int = 0, budget: str | None = None) -> list[dict]:
    """Run ``policy`` through the simulator and score every round decision against the
    window optimum (CP-SAT, ``window`` rounds, ``time_limit`` seconds and ``workers``
    threads per window solve, solver ``seed``; ``budget``: :class:`RollingConfig`'s). One row per round: round, jobs, the
    window objective of the optimum and of the policy's decision (``window_optimum``,
    ``policy_value``, ``objective_diff`` = policy − optimum; window-objective units), proven flags, the parts of
    each side (``window_``/``policy_`` ``misses``, ``lost_value``, ``jct``: deadline value,
    window-estimated avg JCT in minutes) and their comparison
    (:func:`sensaopt.compare.compare_round`: ``extra_misses``, ``extra_lost_value``,
    ``jct_gap_pct`` — percent, only at equal misses and lost value)."""
    from sensaopt.compare import compare_round
    from sensaopt.policies import make_policy
    from sensaopt.simulator import simulate

    rec = RoundGapRecorder(make_policy(policy), RollingConfig(window=window, time_limit=time_limit, workers=workers, seed=seed,
                                                              budget=budget))
    simulate(instance, rec)
    return [{**row, **compare_round(row)} for row in rec.rows]
