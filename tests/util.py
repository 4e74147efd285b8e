"""Small builders for hand-made test instances."""

from __future__ import annotations

from sensaopt.instance import Cluster, Instance, Job, NodeType, Overheads, SoftDeadline
from sensaopt.profiles import get_profile


def job(id, arrival=0.0, gpus=1, work=10.0, model="bert", deadline=None, value=1.0, soft=(), speed_factor=1.0) -> Job:
    return Job(
        id=id, arrival=arrival, gpus=gpus, work=work, profile=get_profile(model), deadline=deadline,
        value=value, soft_deadlines=tuple(SoftDeadline(a, v) for a, v in soft), speed_factor=speed_factor,
    )


def instance(jobs, nodes=1, gpus=8, cpus=24, mem=500.0, R=10.0, overhead=(0.5, 0.5), name="t") -> Instance:
    return Instance(
        name=name,
        cluster=Cluster((NodeType("n", gpus, cpus, mem, nodes),)),
        round_minutes=R,
        jobs=tuple(jobs),
        overheads=Overheads(*overhead),
    )


def grid_optimal(res) -> bool:
    """The exact solve proved its grid model optimal: OPTIMAL over every valid allocation,
    or FEASIBLE because the allocation relaxation did not certify an optimum the grid
    model proved (``Result.allocations``, ``models/formulation.md``)."""
    from sensaopt.result import Status

    if res.status == Status.OPTIMAL:
        return True
    check = res.allocations
    gb = None if check is None else check.grid_bound
    rb = -1e300 if check is None or check.relaxation_bound is None else check.relaxation_bound
    return (res.status == Status.FEASIBLE and res.objective is not None and gb is not None
            and gb >= res.objective - 1e-6 and rb <= res.objective + 1e-6)


def wait_for(pred, timeout: float) -> bool:
    """Poll ``pred`` every 50 ms until it holds or ``timeout`` seconds pass (a guard
    against a hang, not a timing); its last value."""
    import time

    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()
