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
