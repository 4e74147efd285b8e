"""A sweep run's configuration and the function that runs it (on any worker).

A :class:`RunConfig` fully determines a run (every random draw is seeded), so its
hash (:meth:`RunConfig.key`) names the stored result.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import time
from dataclasses import asdict, dataclass, fields
from typing import Any

from sensaopt.config import Settings, WorkloadConfig

SCHEMA = 1  # bump when a run's meaning changes: old stored results stop matching

# fields added after SCHEMA 1 -> the value at which they are left out of key() and
# to_dict(), so that runs stored before they existed keep their keys
_NEUTRAL: dict[str, Any] = {"guided": False, "policy_config": (), "move_cost_scale": 1.0, "duration_at": "reference", "columns": None}
# duration_at is stored *resolved* (sensaopt.traces.trace.resolve_duration_at: None means the
# default for the preset's node shape): every run stored before the option existed made work =
# duration ("reference", Chronus nodes included), so "reference" is left out of the key and a
# stored config without the field reads back as "reference"; a run on a non-reference node
# with the new default (None -> "node") gets a key of its own. On Synergy nodes every value
# resolves to "reference" (the same instance), so those keys never change.


@dataclass(frozen=True)
class RunConfig(WorkloadConfig):
    """One sweep run: a workload (every :class:`WorkloadConfig` field) and a policy
    with its knob overrides (``policy_config``: sorted (knob, value) pairs, as
    :func:`sensaopt.config.as_pairs` makes them; empty: the policy's defaults)."""

    policy: str = "edf"
    policy_config: Settings = ()

    def __post_init__(self) -> None:
        # duration_at is kept resolved for this run's node shape (see _NEUTRAL): None becomes
        # "node" on a non-reference node and every value "reference" on Synergy nodes
        object.__setattr__(self, "duration_at", _resolved_duration_at(self.duration_at, self.preset, self.cpu_per_gpu,
                                                                      self.mem_per_gpu))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for name, neutral in _NEUTRAL.items():
            if d[name] == neutral:
                del d[name]
        if "policy_config" in d:
            d["policy_config"] = [list(kv) for kv in self.policy_config]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunConfig:
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown run-config field(s): {', '.join(sorted(unknown))}")
        pc = d.get("policy_config") or ()
        # a config stored without duration_at predates it (or is the neutral value): "reference"
        return cls(**{"duration_at": "reference", **d, "policy_config": tuple((str(k), v) for k, v in pc)})

    def key(self) -> str:
        """Stable hash of the configuration (and :data:`SCHEMA`)."""
        text = json.dumps({"schema": SCHEMA, **self.to_dict()}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@functools.lru_cache(maxsize=256)
def _resolved_duration_at(duration_at: str | None, preset: str, cpu_per_gpu: float | None,
                          mem_per_gpu: float | None) -> str | None:
    """:func:`sensaopt.traces.trace.resolve_duration_at` on the preset's cluster; a bad
    preset or value stays as given (the run reports it, :func:`check_configs` first)."""
    from sensaopt.errors import InputError
    from sensaopt.traces.presets import preset_cluster
    from sensaopt.traces.trace import resolve_duration_at

    try:
        return resolve_duration_at(duration_at, preset_cluster(preset, cpu_per_gpu, mem_per_gpu))
    except InputError:
        return duration_at


# Relative CPU cost of one run per policy, Philly SLO at scale 1 (CPU s, measured by
# benchmarks/paper_estimate.py; only an ordering hint: the sweep starts long runs first)
_POLICY_COST = {"chronus": 110.0, "chronus-clean": 110.0, "sensascale": 40.0, "synergy-tune": 15.0, "fifo": 9.0, "edf": 7.0}
_MIX2_CHRONUS = 10.0  # Chronus's lease MILPs on MIX2 (soft jobs, several options) take ~10x SLO's


def knob_text(v: Any) -> str:
    """A knob's value as run labels and configuration notes print it (``knob=value``):
    booleans lower-case (``true``), anything else by ``str`` (None and dicts too: the
    stored labels were written so)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def expected_cost(cfg: RunConfig) -> float:
    """Rough CPU seconds of ``cfg``'s run, to start the longest runs first (a sweep on
    a few workers then ends with short runs, not one long straggler). Not a timing."""
    cost = _POLICY_COST.get(cfg.policy, 20.0) * cfg.sample * cfg.load
    if cfg.policy.startswith("chronus") and "mix2" in cfg.trace.lower():
        cost *= _MIX2_CHRONUS
    return cost


def grid(base: RunConfig | None = None, **axes: Any) -> list[RunConfig]:
    """Cartesian product: ``grid(policy=["edf", "fifo"], seed=[0, 1])``."""
    from dataclasses import replace

    base = base or RunConfig()
    names = list(axes)
    out = []
    for combo in itertools.product(*(axes[n] for n in names)):
        out.append(replace(base, **dict(zip(names, combo))))
    return out


LEASE_COUNTERS = ("lease_solves", "milp_optimal", "milp_time_limit", "fallbacks", "safety_net")


def lease_counters(stats: object) -> dict[str, int]:
    """The lease-solve counters of a Chronus run (solves, proven optimal, stopped at the
    time limit with an incumbent, greedy fallbacks, stopped by a work budget's safety
    net); empty for other policies. Kept with each run because Chronus's 5-s wall-clock
    limit makes its plans load-dependent (a work budget does not, unless its safety net fired)."""
    if not isinstance(stats, dict):
        return {}
    return {k: int(stats[k]) for k in LEASE_COUNTERS if k in stats}


def run_config(cfg: RunConfig) -> dict:
    """Run one configuration; returns the JSON-ready record that the store keeps
    (``servable``: :func:`sensaopt.servable.servable_summary` of its deadline misses, on
    the speeds the run was scored on; ``bounds``: :meth:`sensaopt.bounds.Bounds.record` of
    that instance, the misses no schedule avoids and the average-JCT bound).
    Raises on failure (the sweep records the failure and retries it next time)."""
    from sensaopt.bounds import compute_bounds
    from sensaopt.result import package_versions
    from sensaopt.servable import missed_jobs, servable_summary
    from sensaopt.traces.run import run_policy
    from sensaopt.traces.sources import workload_instance

    t0 = time.perf_counter()
    inst, data = workload_instance(cfg)
    res, _ = run_policy(inst, cfg.policy, seed=cfg.seed, profile_error=cfg.profile_error, policy_config=dict(cfg.policy_config))
    if res.metrics is None:
        raise RuntimeError(f"{res.solver} on {inst.name} returned no metrics ({res.status.value})")
    rows = res.job_metrics()
    jct = [m.jct for m in rows if m.jct is not None]
    truth = res.truth if res.truth is not None else inst  # with profile error: the true speeds the run was scored on
    servable = servable_summary(truth, missed_jobs(truth.jobs, (m.met_deadline for m in rows)))
    return {
        "key": cfg.key(),
        "config": cfg.to_dict(),
        "instance": {"name": inst.name, "jobs": len(inst.jobs), "gpus": inst.cluster.total_gpus, "skipped": data.skipped},
        "solver": res.solver,
        "status": res.status.value,
        "objective": res.objective,
        "metrics": res.metrics.to_dict(),
        "jct": jct,
        "simulate_s": res.runtime_s,
        "lease": lease_counters(res.params.get("policy_stats")),
        "servable": servable,
        "bounds": compute_bounds(truth).record(),
        "params": {"config": res.params.get("config")},  # the policy's whole configuration (every knob)
        "wall_s": time.perf_counter() - t0,
        "versions": package_versions(),
    }
