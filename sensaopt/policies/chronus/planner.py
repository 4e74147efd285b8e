"""Chronus's round planning without the policy interface (:class:`ChronusPlanner`):
the lease boundary, the admission step and one round's placement, over the memory of
one run. :class:`~.policy.ChronusPolicy` makes one per run and asks it every round;
a test may drive one alone, round state by round state. Times in minutes."""

from __future__ import annotations

from sensaopt.instance import Instance
from sensaopt.policies.base import Allocation, JobState, RoundState

from .admission_step import admit_new, check_waiting, force_guarantee
from .config import ChronusConfig
from .job import ChronusJob
from .lease_step import plan_lease
from .placement import place_round
from .rules import ChronusRules, rules_for
from .state import ChronusState


class ChronusPlanner:
    """One run of Chronus on ``instance`` with ``config``: ``state`` (what it
    remembers, :class:`~.state.ChronusState`) and ``rules`` (the artifact's or the
    clean reading, :mod:`.rules`); :meth:`plan` gives each round's allocation."""

    def __init__(self, config: ChronusConfig, instance: Instance) -> None:
        """Args:
            config: Chronus's knobs.
            instance: the instance of the run (its jobs without speed factors).
        """
        self.config = config
        self.rules: ChronusRules = rules_for(config)
        self.state: ChronusState = ChronusState.of(config, instance)

    def plan(self, state: RoundState) -> Allocation:
        """This round's allocation: the lease MILP at a lease boundary, admission every
        admission round, then the round's placement (module docstring of
        :mod:`.policy`).

        Args:
            state: the round (its jobs, clock and cluster); rounds come in order.

        Returns:
            Job id -> placements for the round.
        """
        chronus, rules = self.state, self.rules
        active = {js.spec.id: js for js in state.jobs}  # spec.id: not the property, once per job per round
        lease = chronus.clock.lease_of(state.round)
        boundary = lease != chronus.current_lease
        chronus.fill_budget = rules.filling_budget(chronus, active, boundary)
        chronus.endings = {}
        self._sync_jobs(state, active)
        rules.demote_overruns(chronus, state, active, boundary)
        if boundary:
            chronus.current_lease = lease
            plan_lease(chronus, rules, self.config, active, lease)
        if boundary or state.round % chronus.clock.admission_every_rounds == 0:
            admit_new(chronus, rules, active, lease)
            check_waiting(chronus, rules, state, active, boundary)
            if self.config.force_guarantee:
                force_guarantee(chronus, rules, state, active, lease, boundary)
        out = place_round(chronus, rules, state, boundary)
        rules.predict_endings(chronus, state, active, out)
        return out

    def _sync_jobs(self, state: RoundState, active: dict[str, JobState]) -> None:
        """Forget finished jobs; add arrivals (to be seen by the next admission step)."""
        chronus = self.state
        for jid in [j for j in chronus.jobs if j not in active]:
            del chronus.jobs[jid]
            chronus.guaranteed.discard(jid)
        for js in state.jobs:
            if js.spec.id not in chronus.jobs:
                chronus.jobs[js.id] = ChronusJob.of(js, chronus.share, self.config.lease_minutes)
                chronus.new_jobs.append(js.id)
