"""Step 1 (classify, optimal demand) and step 2 (LST order) of SensaScale.

All times are minutes. A job's remaining time at an allocation is its observed
remaining work ÷ (profile speed × observed speed correction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sensaopt.instance import Cluster, NodeType
from sensaopt.policies.base import JobState, RoundState
from sensaopt.policies.placement import job_options
from sensaopt.profiles import Option, SensitivityProfile

from .config import SensaScaleConfig


@dataclass(frozen=True)
class ProfileFacts:
    """Per-profile facts that do not change during a run."""

    sensitive: bool
    options: tuple[Option, ...]
    opt: Option  # optimal demand, per GPU
    base: dict[NodeType, Option]  # cheapest option keeping (1 - tol) of the proportional-share speed


def profile_facts(profile: SensitivityProfile, cluster: Cluster, cfg: SensaScaleConfig) -> ProfileFacts:
    ref = cluster.reference_type
    share = (ref.cpu_per_gpu, ref.mem_per_gpu)
    opts = job_options(profile, cluster)
    opt = profile.optimal_demand(cfg.demand_tolerance, share)
    base = {}
    for nt in cluster.node_types:
        c, m = math.floor(nt.cpu_per_gpu + 1e-9), nt.mem_per_gpu
        target = (1 - cfg.demand_tolerance) * profile.speed(c, m) - 1e-12
        fit = [o for o in opts if o.speed >= target]
        base[nt] = min(fit, key=lambda o: (max(o.cpu / c, o.mem / m), o.cpu, o.mem)) if fit else opts[-1]
    return ProfileFacts(profile.is_sensitive(cfg.sensitivity_threshold, share), opts, opt, base)


@dataclass(eq=False)
class JobInfo:
    js: JobState
    facts: ProfileFacts
    running: bool  # ran in the previous round
    overhead: float  # minutes lost if it (re)starts elsewhere or after a pause
    target: float | None  # deadline aimed at (None: best effort or hopeless)
    tier: int  # 0: deadline still reachable; 1: best effort or hopeless
    key: tuple  # sort key, smaller = more urgent
    lst: float  # latest start time, minutes (inf in tier 1)

    @property
    def id(self) -> str:
        return self.js.id

    @property
    def gpus(self) -> int:
        return self.js.gpus

    def time_at(self, opt: Option) -> float:
        """Minutes to finish at this per-GPU option (observed speed correction applied)."""
        return self.js.remaining / (opt.speed * self.js.speed_correction)

    def start_overhead(self, nodes: frozenset[int] | None) -> float:
        """Overhead if placed on ``nodes`` this round (validator's restart rule)."""
        if not self.js.started:
            return 0.0
        if self.running and nodes is not None and nodes == frozenset(p.node for p in self.js.placements):
            return 0.0
        return self.overhead


def analyse(state: RoundState, facts_of, cfg: SensaScaleConfig) -> list[JobInfo]:
    """JobInfo for every waiting or running job, most urgent first."""
    now, R = state.now, state.round_minutes
    out = []
    for js in state.jobs:
        f = facts_of(js.spec.profile)
        running = state.was_running(js)
        oh = state.overheads.restart_minutes(js.gpus)
        start_oh = 0.0 if (running or not js.started) else oh
        t_opt = js.remaining / (f.opt.speed * js.speed_correction)
        target = None
        for at, _value in js.spec.deadlines():
            if now + start_oh + t_opt <= at + 1e-9:
                target = at
                break
            if not cfg.hopeless_to_best_effort:
                target = at
                break
        bonus = cfg.stickiness_rounds * R if running else 0.0
        if target is not None:
            lst = target - t_opt - start_oh
            key = (0, lst - bonus, js.spec.arrival, js.id)
            tier = 0
        else:
            lst = math.inf
            key = (1, t_opt + start_oh - bonus, js.spec.arrival, js.id)
            tier = 1
        out.append(JobInfo(js, f, running, oh, target, tier, key, lst))
    out.sort(key=lambda i: i.key)
    return out
