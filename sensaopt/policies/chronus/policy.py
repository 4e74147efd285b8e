"""The Chronus policy: leases, admission, lease MILP, opportunistic filling.

Per round (length R minutes; a lease is ``k = max(1, floor(L / R + 1/2))`` rounds):

* **lease boundary** (first round of lease b, time T_b = b·k·R): every job is
  preempted and re-planned. Admitted jobs' lease counts ``l`` follow the artifact
  (a granted lease counts as one lease done; recomputed from observed progress and
  the padded estimate only when that is smaller); jobs that ran past their estimate
  are demoted to unadmitted (with the artifact's force flag); jobs that can no
  longer fit ``l`` slots before any deadline become hopeless. The lease MILP
  (:mod:`.selection`) picks one deadline option and ``l`` slots per admitted job;
  jobs with ``x[j,0] = 1`` are *guaranteed* their GPUs for this lease, the rest of
  the plan is cached (clean reading: its option stays fixed afterwards).
* **admission rounds** (every round if R >= 5 min, else every round(5/R) rounds):
  new SLO jobs are admitted by greedy packing against the slots of the *next*
  lease onwards (as in the artifact, where the lease step runs before arrivals);
  waiting SLO jobs that cannot meet their deadline any more become hopeless;
  unadmitted jobs that fit in the rest of the lease are force-guaranteed.
* **every round**: guaranteed jobs are placed first (same nodes as before when
  possible: no restart overhead), then forced jobs, then (inside a lease) the
  opportunistic jobs already running keep their place, then the remaining GPUs are
  filled in the artifact's 5-minute order: unadmitted and best-effort first by least
  remaining service (remaining estimate × GPUs), then admitted jobs by least slack ×
  GPUs, hopeless jobs last.

``chronus`` (``ChronusConfig.artifact = True``) reproduces the artifact's scheduling
where it departs from a clean reading; ``chronus-clean`` (:class:`ChronusCleanPolicy`)
does not. The two readings are strategy objects (:mod:`.rules`), chosen at reset. The
artifact's behaviours, each mapped to rounds (``models/chronus.md``):

* the odd-minute ``filling_jobs`` pass: inside a lease, the GPUs of jobs that finished
  in the previous round at a minute the artifact fills (:func:`.rules.filled_by_filling`) are
  handed out first in ascending queue priority, hopeless jobs first;
* overrun demotion of *any* job that ran last round (best effort and hopeless
  included) to unadmitted with the never-reset fake-force flag, which puts it first in
  the 5-minute order (not before running jobs);
* admission packs every unplanned job on its *first* deadline (for a soft job the
  most valuable one); a rejected job is judged hopeless against its first deadline,
  and its request stays in the packing for the rest of its admission step (a soft
  job's then blocks every later arrival of the step);
* every deadline option is offered again at each lease (the clean reading keeps the
  option of the first plan);
* at a lease boundary every job not guaranteed is checked for hope (all were
  preempted), not only those that did not run in the last round;
* force-guaranteed jobs submitted in the current lease are relabelled admitted (out
  of the lease MILP and admission), and the spare GPUs count guaranteed jobs by their
  GPUs, not their rounded demand.

CPU and memory are strictly GPU-proportional. Durations for planning: the job's
run time at the cluster's GPU-proportional share (``work / speed``), which is what a
GPU-proportional scheduler observes. Time in minutes.

Restart overhead: the simulator's rule applies (0.5 + 0.5·log2 g minutes lost in
the first round of a segment that resumes after a gap; a move to other nodes pays the
migration cost). The artifact charges (0.1 + 0.4)·(1 + log2 g) per resume, added to
the finish time; in both, a job that keeps running across a lease boundary on the
same nodes pays nothing.

Artifact behaviour not copied (simulator-level, in both policies): ``compute_progress``
= 1.0 (here speed follows the profile), one model for all jobs, the night-time node
turn-off (off in the paper's runs: ``--disable_turn_off=True``), the free progress a job
started by the filling pass gets for the minutes since the last 5-minute step, and
1-minute steps (here R-minute rounds: a finished job's GPUs wait for the next round).
"""

from __future__ import annotations

from sensaopt.instance import Instance
from sensaopt.policies.base import Allocation, BasePolicy, RoundState

from .config import ChronusConfig
from .planner import ChronusPlanner
from .rules import ChronusRules
from .state import ChronusState
from .stats import ChronusStats


class ChronusPolicy(BasePolicy):
    """Chronus as a policy (see the module docstring): the round's plan is its
    :class:`~.planner.ChronusPlanner`'s, made anew at each reset. What it remembers
    is in ``self.state`` (:class:`~.state.ChronusState`), its counters in
    ``self.stats`` (:class:`~.stats.ChronusStats`), each job's final class in
    ``self.classes`` (admitted / unadmitted / best_effort / hopeless)."""

    name = "chronus"
    config_class = ChronusConfig
    config: ChronusConfig
    planner: ChronusPlanner
    state: ChronusState
    stats: ChronusStats
    rules: ChronusRules

    def reset(self, instance: Instance) -> None:
        super().reset(instance)
        self.planner = ChronusPlanner(self.config, instance)
        self.rules, self.state = self.planner.rules, self.planner.state
        self.stats = self.state.stats

    @property
    def classes(self) -> dict[str, str]:
        return self.state.classes

    def decide(self, state: RoundState) -> Allocation:
        return self.planner.plan(state)


class ChronusCleanPolicy(ChronusPolicy):
    """Chronus as a clean reading of the paper (``ChronusConfig.artifact = False``):
    none of the artifact's scheduling quirks listed in ``models/chronus.md``."""

    name = "chronus-clean"

    def __init__(self, config: ChronusConfig | None = None, **overrides) -> None:
        super().__init__(config if config is not None else ChronusConfig(artifact=False), **overrides)
