"""The round simulator: admit → decide → check → account, one round at a time.

Round r covers minutes [r·R, (r+1)·R). Jobs arriving during a round become visible
at the next round boundary. Stretches with nothing to do are skipped. Progress,
change costs (:func:`sensaopt.changes.classify` of each decision against the job's
placements in the last round it ran, priced by ``Instance.overheads``) and completion
follow exactly the validator's rules (the validator re-checks every schedule the
simulator produces).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, is_dataclass, replace
from typing import Any

import numpy as np

from sensaopt.changes import NONE, ChangeCosts, classify
from sensaopt.errors import ArgumentError, InputError, PolicyError
from sensaopt.instance import Instance, Job
from sensaopt.limits import OPTIONS
from sensaopt.metrics import compute_metrics
from sensaopt.policies import Decider, Policy, make_policy
from sensaopt.policies.base import Allocation, JobState, RoundState, check_config
from sensaopt.progress import first_round
from sensaopt.result import Result, Status, package_versions
from sensaopt.schedule import Schedule, ScheduleBuilder
from sensaopt.validator import check_schedule

ProgressFn = Callable[[int, int, int], None]  # (round, finished jobs, total jobs)


def apply_profile_error(instance: Instance, sigma: float, seed: int) -> Instance:
    """Copy of ``instance`` whose jobs' true speed differs from their profile by a
    factor exp(N(0, sigma²)) drawn per job with ``seed`` (sigma 0: unchanged).

    Args:
        instance: the instance.
        sigma: standard deviation of the log of the speed factor (0: the profiles are exact).
        seed: seed of the draw.

    Returns:
        The copy, with each job's ``speed_factor`` set.

    Raises:
        InputError: ``sigma`` or ``seed`` outside its range (:data:`sensaopt.limits.OPTIONS`), naming the argument.
    """
    for name, x in (("profile_error", sigma), ("seed", seed)):
        problem = OPTIONS[name].problem(x)
        if problem is not None:
            raise InputError("(argument)", name, problem)
    if sigma <= 0:
        return instance
    rng = np.random.default_rng(seed)
    factors = np.exp(rng.normal(0.0, sigma, size=len(instance.jobs)))
    return instance.with_jobs(replace(j, speed_factor=float(f)) for j, f in zip(instance.jobs, factors))


def public_instance(instance: Instance) -> Instance:
    """What a policy may know: the instance with every speed factor reset to 1.0.

    Args:
        instance: the instance (true speed factors included).

    Returns:
        ``instance`` itself when every factor is 1.0, else a copy with factors 1.0.
    """
    if all(j.speed_factor == 1.0 for j in instance.jobs):
        return instance
    return instance.with_jobs(replace(j, speed_factor=1.0) for j in instance.jobs)


def simulate(
    instance: Instance,
    policy: Decider | str = "sensascale",
    *,
    profile_error: float = 0.0,
    seed: int = 0,
    validate: bool = True,
    progress: ProgressFn | None = None,
    max_rounds: int | None = None,
    policy_config: dict[str, Any] | None = None,
) -> Result:
    """Run ``policy`` on ``instance`` until every job finishes; return its Result.

    Args:
        instance: the jobs and the cluster (minutes, cores, GB).
        policy: a policy object or a registered policy name.
        profile_error: sigma of the hidden log-normal true-speed factor per job (0: the
            profiles are exact); observed progress then differs from the profiles.
        seed: seed of the profile-error draw.
        validate: raise the validator's first error on a bad schedule (a policy bug).
        progress: called after each round with (round, finished jobs, total jobs).
        max_rounds: stop with a PolicyError past this round (default: a generous bound
            from the instance's total work).
        policy_config: knobs of a policy given by name (keys: fields of its config dataclass).

    Returns:
        The Result; ``params`` carries the policy's ``config`` and ``stats``
        (``"policy_stats"``), ``evaluation`` and ``truth`` the validator's verdict.
    """
    t0 = time.perf_counter()
    from sensaopt.arguments import as_instance, check_arguments

    instance = as_instance(instance, "simulate()")
    check_arguments("simulate()", simulate, {"profile_error": profile_error, "seed": seed, "validate": validate,
                                             "max_rounds": max_rounds, "policy_config": policy_config})
    if progress is not None and not callable(progress):
        raise ArgumentError("simulate()", "progress", f"must be a function (round, finished, total) or None, got {type(progress).__name__}")
    pol = _policy(policy, policy_config)
    truth = apply_profile_error(instance, profile_error, seed)
    public = public_instance(truth)
    pol.reset(public)
    limit = max_rounds if max_rounds is not None else _round_limit(truth)
    schedule, rounds_run = _rounds(truth, public, pol, limit, progress)
    ev = check_schedule(truth, schedule)
    if validate and ev.errors:
        raise ev.errors[0]
    metrics = compute_metrics(truth, ev)
    params = {"policy": pol.name, "profile_error": profile_error, "seed": seed, "rounds_decided": rounds_run, **_policy_params(pol)}
    return Result(
        solver=f"heuristic:{pol.name}",
        status=Status.FEASIBLE,
        objective=metrics.objective,
        bound=None,
        runtime_s=time.perf_counter() - t0,
        schedule=schedule,
        metrics=metrics,
        params=params,
        versions=package_versions(),
        evaluation=ev,
        truth=truth,
    )


def _rounds(truth: Instance, public: Instance, pol: Decider, limit: int, progress: ProgressFn | None) -> tuple[Schedule, int]:
    """The round loop of :func:`simulate`: admit the jobs released by each round,
    ask ``pol`` (already reset), check and account its decision, skip idle stretches,
    until every job of ``truth`` finishes. ``public``: ``truth`` as the policy sees it.
    Returns the schedule and the number of rounds decided; :class:`PolicyError` past
    round ``limit`` or when the policy stalls."""
    R = truth.round_minutes
    order = sorted(range(len(truth.jobs)), key=lambda k: (truth.release_round(truth.jobs[k]), k))
    release = [truth.release_round(truth.jobs[k]) for k in order]
    nxt = 0
    active: dict[str, JobState] = {}
    truth_of: dict[str, Job] = {}
    costs: dict[str, ChangeCosts] = {}  # per job: minutes lost to a restart, a migration, a resize
    speeds: dict[str, float] = {}  # per job: profile speed on its last placements
    builder = ScheduleBuilder(R)
    n_total, n_done = len(truth.jobs), 0
    r = release[0] if release else 0
    rounds_run = 0
    while n_done < n_total:
        while nxt < len(order) and release[nxt] <= r:
            j = truth.jobs[order[nxt]]
            active[j.id] = JobState(spec=public.jobs[order[nxt]], remaining=j.work)
            truth_of[j.id] = j
            costs[j.id] = ChangeCosts.of(truth.overheads, j.gpus)
            nxt += 1
        if not active:
            r = release[nxt]
            continue
        if r > limit:
            raise PolicyError(_unfinished_message(pol, active, truth_of, limit))
        state = RoundState(r, r * R, R, truth.cluster, truth.overheads, list(active.values()), len(order) - nxt)
        alloc = pol.decide(state)
        _check_decision(alloc, active, truth, pol.name, r)
        rounds_run += 1
        builder.add_round(r, alloc)
        if not alloc:
            if nxt >= len(order):
                raise PolicyError(f"policy {pol.name!r} ran nothing in round {r} while {len(active)} jobs wait and none will arrive")
            r = max(r + 1, release[nxt])
            continue
        n_done += _run_round(alloc, active, truth_of, costs, speeds, r, R)
        if progress is not None:
            progress(r, n_done, n_total)
        r += 1
    return builder.build({"policy": pol.name}), rounds_run


def _run_round(alloc: Allocation, active: dict[str, JobState], truth_of: dict[str, Job], costs: dict[str, ChangeCosts],
               speeds: dict[str, float], r: int, R: float) -> int:
    """Advance every job of ``alloc`` over round ``r`` (the validator's arithmetic,
    :func:`~sensaopt.progress.first_round`: the change from its last round,
    :func:`classify`, costs minutes of this one); finished jobs leave ``active``.
    ``speeds``: job id -> profile speed on its last placements (kept here: a job on one
    node that keeps its GPUs, cores and GB keeps its speed). Returns how many finished."""
    finished = 0
    for jid, pls in alloc.items():
        js = active[jid]
        job = truth_of[jid]
        last = js.last_round
        if last is None:
            kind = NONE
            prof = speeds[jid] = _profile_speed(job.profile, pls)
        else:
            prev = js.placements
            kind = classify(prev, last + 1, pls, r)
            if kind is NONE and len(pls) == 1 and prev is not None and len(prev) == 1:  # same node, GPUs, cores, GB: same speed
                prof = speeds[jid]
            else:
                prof = speeds[jid] = _profile_speed(job.profile, pls)
        cost = 0.0 if kind is NONE else costs[jid].minutes(kind)  # the common case: no lookup
        minutes, done, complete = first_round(js.remaining, prof * job.speed_factor, R, cost)
        js.predicted_work += prof * minutes
        js.observed_work += done
        js.remaining -= done
        if js.first_round is None:
            js.first_round = r
        js.last_round, js.placements = r, pls
        if complete:
            del active[jid]
            finished += 1
    return finished


def _policy(policy: Decider | str, policy_config: dict[str, Any] | None) -> Decider:
    """The policy to run: a fresh one by name (with ``policy_config``) or the given object,
    which must at least name itself, reset and decide (:class:`Decider`)."""
    if isinstance(policy, type):
        raise ArgumentError("simulate()", "policy", f"got the class {policy.__name__}; pass an instance ({policy.__name__}()) "
                                                    f"or a registered name")
    if policy_config is not None and not isinstance(policy_config, dict):
        raise ArgumentError("simulate()", "policy_config", f"must be a dict of knobs, got {type(policy_config).__name__}")
    odd = next((k for k in policy_config or {} if not isinstance(k, str)), None)
    if odd is not None:
        raise ArgumentError("simulate()", "policy_config", f"knob names must be strings, got {type(odd).__name__} {odd!r}")
    if not isinstance(policy, str) and policy_config:
        raise ArgumentError("simulate()", "policy_config", "applies to a policy given by name; configure a policy object directly")
    pol = make_policy(policy, **(policy_config or {})) if isinstance(policy, str) else policy
    if not isinstance(pol, Decider):
        missing = [a for a in ("name", "reset", "decide") if not hasattr(pol, a)]
        raise ArgumentError("simulate()", "policy", f"{type(pol).__name__} is not a policy (missing: {', '.join(missing)})")
    if isinstance(pol, Policy):
        check_config(pol.config, f"policy {pol.name!r} config")  # a config built by hand gets the knob checks too
    return pol


def _policy_params(pol: Decider) -> dict[str, Any]:
    """A :class:`Policy`'s config and stats for ``Result.params`` (e.g. Chronus: lease
    solves, fallbacks, never silent); a bare :class:`Decider` has neither."""
    if isinstance(pol, Policy):
        stats = asdict(pol.stats) if is_dataclass(pol.stats) and not isinstance(pol.stats, type) else pol.stats
        return {"policy_stats": _jsonable(stats), "config": _as_dict(pol.config)}
    return {}


def _profile_speed(profile, pls) -> float:
    """Profile speed of a job over its placements: the slowest node's (validator rule)."""
    if len(pls) == 1:
        p = pls[0]
        return profile.speed(p.cpus / p.gpus, p.mem_gb / p.gpus)
    return min(profile.speed(p.cpus / p.gpus, p.mem_gb / p.gpus) for p in pls)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [_jsonable(v) for v in x]
    return x if isinstance(x, (int, float, str, bool)) or x is None else str(x)


def _as_dict(cfg: Any) -> dict[str, Any]:
    """A policy's config as a JSON-ready dict (a dataclass; a mapping is accepted too)."""
    return _jsonable(asdict(cfg) if is_dataclass(cfg) and not isinstance(cfg, type) else dict(cfg))


def _round_limit(inst: Instance) -> int:
    """A generous bound on the rounds any sane policy needs: last release plus every job
    run one after another at its slowest allowed speed (the lowest of its profile's grid ×
    its true speed factor, and never faster than 1/10) with a restart every round. From
    each job's own speed: a valid slow job (speed 0.01, or ``speed_factor`` 0.001) is not
    cut off (before: 1/10 was assumed for every job)."""
    R = inst.round_minutes
    last = max(inst.release_round(j) for j in inst.jobs)
    serial = sum(math.ceil(j.work / (min(0.1, _slowest(j)) * R)) + 1 for j in inst.jobs)
    return last + serial + 10


def _slowest(job: Job) -> float:
    """The job's slowest true speed at any allowed allocation (every speed is positive)."""
    return min(min(row) for row in job.profile.speeds) * job.speed_factor


def _unfinished_message(pol: Decider, active: dict[str, JobState], truth_of: dict[str, Job], limit: int) -> str:
    """Why the simulation stopped at the round limit: the policy's failure, naming the jobs
    left and how far each got (jobs that never ran are named as such)."""
    left = sorted(active.values(), key=lambda js: js.id)
    def state(js: JobState) -> str:
        return "never ran" if js.first_round is None else f"{100 * (1 - js.remaining / truth_of[js.id].work):.0f} % done"

    shown = ", ".join(f"{js.id} ({state(js)})" for js in left[:5])
    more = f" and {len(left) - 5} more" if len(left) > 5 else ""
    return (f"policy {pol.name!r}: {len(active)} jobs still unfinished after {limit} rounds, a bound every job meets run alone "
            f"one after another at its slowest speed: {shown}{more}")


def _check_decision(alloc, active, inst: Instance, name: str, r: int) -> None:
    """Raise :class:`PolicyError` if the allocation names a job that is not active,
    breaks a job's gang size, or over-commits a node's GPUs, cores or GB."""
    nodes = inst.cluster.nodes
    n_nodes = len(nodes)
    ug = [0] * n_nodes
    uc = [0] * n_nodes
    um = [0.0] * n_nodes
    touched: dict[int, None] = {}  # nodes in first-use order (the order errors are reported in)
    for jid, pls in alloc.items():
        js = active.get(jid)
        if js is None:
            raise PolicyError(f"policy {name!r} placed job {jid!r} in round {r}, which is not waiting or running")
        total = 0
        for p in pls:
            n = p.node
            total += p.gpus
            ug[n] += p.gpus
            uc[n] += p.cpus
            um[n] += p.mem_gb
            touched[n] = None
        if total != js.spec.gpus:
            raise PolicyError(f"policy {name!r} gave job {jid!r} {total} GPUs in round {r}; it needs {js.gpus}")
    for n in touched:
        node = nodes[n]
        g, c, m = ug[n], uc[n], um[n]
        if g > node.gpus or c > node.cpus or m > node.mem_gb + 1e-6:
            raise PolicyError(f"policy {name!r} over-committed node {node.name} in round {r}: {g} GPUs, {c} cores, {m:g} GB")
