"""Rolling-horizon policies: every round, solve the window model of the next ``window``
rounds from the simulator's current state and apply its first round.

The window model is the offline model (:mod:`sensaopt.exact.builder`) with:
only arrived, unfinished jobs; each job's *remaining* work; "ran before" and "node
set of the previous round" taken from the :class:`RoundState` (so continuing on the
same nodes pays no restart); jobs need not finish inside the window. Its objective
is the offline one with each unfinished job's JCT estimated as the window length
plus its leftover work in rounds at its best speed, and a deadline after the window
counted as met only if the leftover work fits before it at the best speed.

If the solver returns no solution within the per-round time limit, the round falls
back to EDF (recorded in ``stats["fallback_rounds"]``).
"""

from __future__ import annotations

from sensaopt.exact.builder import Strength, build
from sensaopt.exact.data import build_data, placements_of
from sensaopt.policies.base import Allocation, BasePolicy, RoundState
from sensaopt.policies.simple import EDFPolicy


class RollingPolicy(BasePolicy):
    """Window model solved each round. ``window`` rounds, ``time_limit`` seconds per
    round, ``workers`` threads, ``seed`` solver seed; ``backend`` cpsat | highs | cbc."""

    name = "rolling"
    backend = "cpsat"

    def __init__(self, window: int = 4, time_limit: float = 2.0, workers: int = 1, seed: int = 0, backend: str | None = None):
        self.window = int(window)
        self.time_limit = float(time_limit)
        self.workers = int(workers)
        self.seed = int(seed)
        if backend is not None:
            self.backend = backend
        self.config = {"window": self.window, "time_limit": self.time_limit, "workers": self.workers,
                       "seed": self.seed, "backend": self.backend}
        self.stats = {"rounds": 0, "optimal_rounds": 0, "fallback_rounds": 0}

    def reset(self, instance) -> None:
        super().reset(instance)
        self._edf = EDFPolicy()
        self._edf.reset(instance)
        self.stats = {"rounds": 0, "optimal_rounds": 0, "fallback_rounds": 0}

    def window_data(self, state: RoundState):
        states = {}
        for js in state.jobs:
            prev = frozenset(p.node for p in js.placements) if (state.was_running(js) and js.placements) else None
            states[js.id] = (js.remaining, js.started, prev)
        return build_data(self.instance, self.window, states=states, start_round=state.round, window=True)

    def decide(self, state: RoundState) -> Allocation:
        if not state.jobs:
            return {}
        self.stats["rounds"] += 1
        data = self.window_data(state)
        value, optimal, v = self._solve(data)
        if value is None:
            self.stats["fallback_rounds"] += 1
            return self._edf.decide(state)
        self.stats["optimal_rounds"] += int(optimal)
        out: Allocation = {}
        for (k, t, pair), x in v.x.items():
            if t == 0 and value(x) > 0.5:
                jd = data.jobs[k]
                out[jd.id] = placements_of(data, jd, pair)
        return out

    def _solve(self, data):
        s = Strength(symmetry=False)
        if self.backend == "cpsat":
            from sensaopt.exact.cpsat import CpSatBackend, run_cpsat
            from sensaopt.result import Status

            be = CpSatBackend()
            v = build(data, be, s)
            status, _solver, value, _b, _m, _o = run_cpsat(be, self.time_limit, self.workers, self.seed)
            return value, status == Status.OPTIMAL, v
        from sensaopt.exact.milp import PulpBackend, run_milp
        from sensaopt.result import Status

        be = PulpBackend(data.instance.name)
        v = build(data, be, s)
        status, value, _b, _m, _o = run_milp(be, v, self.backend, self.time_limit, self.workers, self.seed, False)
        return value, status == Status.OPTIMAL, v


class RollingCPSATPolicy(RollingPolicy):
    name = "rolling-cpsat"
    backend = "cpsat"


class RollingMILPPolicy(RollingPolicy):
    name = "rolling-milp"
    backend = "highs"


# ---- per-round gap: a policy's round decision scored by the window model ----------------------
class RoundGapRecorder(BasePolicy):
    """Wraps a policy: each round, lets it decide, then solves the window model twice —
    free (the window optimum) and with the first round fixed to the policy's decision —
    and records both values (window-objective units, see :mod:`sensaopt.exact.rolling`).
    The simulator runs the wrapped policy's decisions unchanged."""

    def __init__(self, inner, window: int = 4, time_limit: float = 2.0, workers: int = 1, seed: int = 0):
        self.inner = inner
        self.name = f"gap[{inner.name}]"
        self.window, self.time_limit, self.workers, self.seed = window, time_limit, workers, seed
        self.rows: list[dict] = []

    def reset(self, instance) -> None:
        super().reset(instance)
        self.inner.reset(instance)
        self.rows = []

    def decide(self, state: RoundState) -> Allocation:
        from sensaopt.exact.builder import to_objective
        from sensaopt.exact.cpsat import CpSatBackend, run_cpsat
        from sensaopt.exact.data import pair_of
        from sensaopt.result import Status

        alloc = self.inner.decide(state)
        if not state.jobs:
            return alloc
        states, extra = {}, {}
        for js in state.jobs:
            prev = frozenset(p.node for p in js.placements) if (state.was_running(js) and js.placements) else None
            states[js.id] = (js.remaining, js.started, prev)
        for jid, pls in alloc.items():
            pts = {(p.cpus / p.gpus, p.mem_gb / p.gpus) for p in pls}
            if len(pts) == 1:
                c, m = next(iter(pts))
                if abs(c - round(c)) < 1e-9:
                    extra[jid] = {(int(round(c)), m)}
        data = build_data(self.instance, self.window, states=states, start_round=state.round, window=True, extra_options=extra)
        vals = []
        for fixed in (False, True):
            be = CpSatBackend()
            v = build(data, be, Strength(symmetry=False))
            if fixed and not self._fix_first_round(data, be, v, alloc, pair_of):
                vals.append(None)  # decision not representable in the window model
                continue
            status, _solver, _value, bound, _m, obj = run_cpsat(be, self.time_limit, self.workers, self.seed)
            vals.append((to_objective(data, obj) if obj is not None else None, status == Status.OPTIMAL,
                         to_objective(data, bound) if bound is not None else None))
        opt, pol = vals[0], vals[1]
        row = {"round": state.round, "jobs": len(state.jobs), "window_optimum": opt[0] if opt else None,
               "optimum_proven": bool(opt and opt[1]), "window_bound": opt[2] if opt else None,
               "policy_value": pol[0] if pol else None, "policy_proven": bool(pol and pol[1])}
        if row["window_optimum"] is not None and row["policy_value"] is not None:
            row["abs_gap"] = row["policy_value"] - row["window_optimum"]
        self.rows.append(row)
        return alloc


def _fix_first_round_impl(data, be, v, alloc, pair_of) -> bool:
    for jd in data.jobs:
        pls = alloc.get(jd.id)
        pair = pair_of(jd, pls) if pls else None
        if pls and pair is None:
            return False
        for p in jd.pairs:
            if (jd.k, 0, p) in v.x:
                be.add(v.x[jd.k, 0, p] == int(p == pair), "fixed_decision")
    return True


RoundGapRecorder._fix_first_round = staticmethod(_fix_first_round_impl)


def per_round_gaps(instance, policy: str = "sensascale", window: int = 4, time_limit: float = 2.0, workers: int = 1, seed: int = 0) -> list[dict]:
    """Run ``policy`` through the simulator and score every round decision against the
    window optimum (rows: round, window_optimum, policy_value, abs_gap, proven flags)."""
    from sensaopt.policies import make_policy
    from sensaopt.simulator import simulate

    rec = RoundGapRecorder(make_policy(policy), window, time_limit, workers, seed)
    simulate(instance, rec)
    return rec.rows
