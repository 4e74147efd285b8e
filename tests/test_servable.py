"""Jobs no schedule can serve (sensaopt.servable): hand-made boundaries both ways, and the
earliest finish checked against the validator's own replay of the best schedule."""

import numpy as np
import pytest

from sensaopt.allocations import best_speed
from sensaopt.errors import InputError
from sensaopt.schedule import Placement, Schedule, Segment
from sensaopt.servable import earliest_finishes, servable_summary, unservable_jobs
from sensaopt.validator import check_schedule

from .util import instance, job


def test_a_job_exactly_at_the_boundary_is_servable_and_one_epsilon_later_is_not():
    # R = 10: arrival 5 -> first round 1 (minute 10); bert runs at 1.0, 30 min of work -> 3 rounds -> finish 40
    inst = instance([job("on", 5, work=30, deadline=40.0), job("short", 5, work=30, deadline=39.9),
                     job("work+", 5, work=30.01, deadline=40.0), job("be", 5, work=30)], R=10.0)
    assert list(earliest_finishes(inst)) == [40.0, 40.0, 50.0, 40.0]
    assert unservable_jobs(inst) == {"short", "work+"}


def test_release_round_boundary_both_ways():
    # arriving exactly at a round start runs in that round; a moment later, the next one
    inst = instance([job("at", 10.0, work=10, deadline=20.0), job("after", 10.001, work=10, deadline=20.0)], R=10.0)
    assert list(earliest_finishes(inst)) == [20.0, 30.0]
    assert unservable_jobs(inst) == {"after"}


def test_best_speed_uses_the_whole_node_and_gang_jobs_whole_nodes():
    inst = instance([job("a", 0, gpus=1, work=240, model="res18", deadline=100.0),  # 24 cores: 2.4x -> 100 min
                     job("b", 0, gpus=8, work=100, model="res18", deadline=100.0),  # 3 cores per GPU: 1.0x
                     job("c", 0, gpus=16, work=100, model="res18", deadline=100.0),  # gang: 3 cores per GPU
                     job("d", 0, gpus=1, work=241, model="res18", deadline=100.0)], nodes=2, R=10.0)
    assert best_speed(inst.jobs[0].profile, 1, inst.cluster) == pytest.approx(2.4)
    assert list(earliest_finishes(inst)) == [100.0, 100.0, 100.0, 110.0]
    assert unservable_jobs(inst) == {"d"}
    # cut below the floor everywhere: no policy can run it, so the instance is refused at load
    with pytest.raises(InputError, match=r"job x\).*fits no node"):
        instance([job("x", 0, gpus=8, work=10, model="res18", deadline=1e6)], cpus=4, R=10.0)


def test_speed_factor_counts():
    inst = instance([job("slow", 0, work=10, deadline=10.0, speed_factor=0.5)], R=10.0)
    assert unservable_jobs(inst) == {"slow"}


def test_earliest_finish_is_what_the_validator_gives_the_best_schedule():
    jobs = [job(f"j{k}", 3.7 * k, gpus=[1, 2, 4, 8][k % 4], work=5 + 11.3 * k, model=["res18", "bert", "m5", "vae"][k % 4],
                deadline=3.7 * k + 60) for k in range(12)]
    inst = instance(jobs, R=5.0)
    fin = earliest_finishes(inst)
    for j, f in zip(inst.jobs, fin):
        alone = inst.with_jobs([j])
        rounds = int(f / inst.round_minutes) - inst.release_round(j)
        seg = Segment(j.id, inst.release_round(j), rounds, (Placement(0, j.gpus, 24, 500.0),))
        ev = check_schedule(alone, Schedule((seg,), inst.round_minutes))
        assert ev.ok and ev.outcomes[j.id].finish == f
        if rounds > 1:  # one round fewer does not finish the work
            short = Segment(j.id, inst.release_round(j), rounds - 1, seg.placements)
            ev2 = check_schedule(alone, Schedule((short,), inst.round_minutes), require_complete=False)
            assert ev2.outcomes[j.id].finish is None
    s = servable_summary(inst, [j.id for j in inst.jobs])
    assert s["slo_jobs"] == 12 and s["servable"] == 12 - s["unservable"] and s["violations"] == s["servable"]


def test_thirty_thousand_jobs_are_quick():
    import time

    jobs = [job(f"j{k}", float(k), gpus=[1, 2, 4, 8, 16][k % 5], work=10.0 + k % 97, model=["res18", "bert", "m5"][k % 3],
                deadline=k + 60.0) for k in range(30_000)]
    inst = instance(jobs, nodes=4, R=5.0)
    t = time.perf_counter()
    bad = unservable_jobs(inst)
    assert time.perf_counter() - t < 2.0 and 0 < len(bad) < 30_000
