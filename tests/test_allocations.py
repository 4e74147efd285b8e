"""The valid allocations of a job on a node (:mod:`sensaopt.allocations`): the rule, the
sets against brute force, and the one cache."""

from __future__ import annotations

import gc
import itertools
import math

import numpy as np
import pytest

from sensaopt import allocations as al
from sensaopt.allocations import rule as al_rule
from sensaopt.instance import Cluster, NodeType
from sensaopt.io import load_instance
from sensaopt.profiles import Option, SensitivityProfile, catalog, get_profile
from sensaopt.schedule import Placement, Schedule, Segment
from sensaopt.validator import check_schedule

NODE = NodeType("n", gpus=4, cpus=10, mem_gb=250.0)
CLUSTER = Cluster((NODE, NodeType("m", gpus=8, cpus=24, mem_gb=500.0)))


def test_the_rule():
    p = get_profile("res18")
    fc, fm = p.floor
    assert al.meets_floor(p, fc, fm) and not al.meets_floor(p, fc - 1e-6, fm) and not al.meets_floor(p, fc, fm - 1e-6)
    assert al.whole_cores(3.0) and al.whole_cores(3 + 1e-12) and not al.whole_cores(2.5)
    assert al.fits(NODE, 4, Option(2.5, 62.5, 1.0))  # 10 cores, 250 GB: the whole node
    assert not al.fits(NODE, 4, Option(2.75, 62.5, 1.0))  # 11 cores
    assert not al.fits(NODE, 3, Option(2.5, 62.5, 1.0)) and al.fits(NODE, 3, Option(2.5, 62.5, 1.0), whole=False)  # 7.5 cores
    assert al.proportional_share(NODE) == (2, 62.5)


def test_the_validator_applies_the_rule():
    inst = load_instance("tiny-8gpu")
    job = inst.jobs[0]
    fc, fm = job.profile.floor
    node = next(n for n in inst.cluster.nodes if n.gpus >= job.gpus)
    bad = {"whole_cores": (job.gpus * fc + 0.5, job.gpus * fm), "floor": (math.ceil(job.gpus * fc) - 1, job.gpus * fm)}
    for rule, (cpus, mem) in bad.items():
        seg = Segment(job.id, inst.release_round(job), 1, (Placement(node.index, job.gpus, cpus, mem),))
        # built without the format's construction checks (Schedule refuses fractional cores itself):
        # the validator's own rule must catch a schedule altered after construction
        sched = object.__new__(Schedule)
        for name, value in (("segments", (seg,)), ("round_minutes", inst.round_minutes), ("meta", {})):
            object.__setattr__(sched, name, value)
        errors = check_schedule(inst, sched, require_complete=False).errors
        assert rule in {e.rule for e in errors}


@pytest.mark.parametrize("name", ["res18", "alexnet", "bert"])
def test_pareto_keeps_exactly_the_undominated(name):
    p = get_profile(name)
    pts = [Option(c, m, round(p.speed(c, m), 12)) for c, m in itertools.product(range(1, 13), p.mem_levels)]
    front = al.pareto(o for o in pts if o.speed > 0)
    for o in pts:
        if o.speed <= 0:
            continue
        covered = any(f.cpu <= o.cpu and f.mem <= o.mem and f.speed >= o.speed for f in front)
        assert covered, o
    for a in front:
        assert not any(b is not a and b.cpu <= a.cpu and b.mem <= a.mem and b.speed >= a.speed for b in front), a
    assert [o.speed for o in front] == sorted(o.speed for o in front)


@pytest.mark.parametrize("name", sorted(catalog()))
def test_box_max_is_the_highest_speed_of_a_dense_sample(name):
    p = get_profile(name)
    rng = np.random.default_rng(7)
    for _ in range(5):
        c0, c1 = sorted(rng.uniform(p.floor[0], p.cpu_levels[-1] * 1.3, 2))
        m0, m1 = sorted(rng.uniform(p.floor[1], p.mem_levels[-1] * 1.3, 2))
        cs = [*np.linspace(c0, c1, 41), *(c for c in p.cpu_levels if c0 < c < c1)]  # the levels inside too: where the
        ms = [*np.linspace(m0, m1, 41), *(m for m in p.mem_levels if m0 < m < m1)]  # bilinear surface may peak
        assert al.box_max(p, c0, c1, m0, m1) == pytest.approx(max(p.speed(c, m) for c in cs for m in ms), abs=1e-12)


def test_inner_options_are_valid_and_outer_options_cover_the_inner():
    p = get_profile("res50")
    for gpus in (1, 3, 8):
        inner = al.inner_options(p, CLUSTER, gpus)
        assert all(al.meets_floor(p, o.cpu, o.mem) and o.speed == round(p.speed(o.cpu, o.mem), 12) for o in inner)
        outer = al.relaxation_options(p, 2, gpus)
        for i in inner:  # every real allocation lies in a box whose option is no costlier and as fast
            assert any(o.cpu <= i.cpu + 1e-9 and o.mem <= i.mem + 1e-9 and o.speed >= i.speed for o in outer), i
        assert al.dominated(outer, outer) and not al.dominated(outer, ())


def test_model_grids_hold_what_fits_and_keep_the_extra_points():
    inst = load_instance("tiny-16gpu")
    job = inst.jobs[0]
    extra = {job.id: {(1.5, 30.0), (2.0, 62.5)}}
    for relaxed in (False, True):
        grid = al.model_grids(inst, [job], relaxed=relaxed, refine=2, inner_refine=1, extra=extra)[job.id]
        for (t, g), held in grid.holds.items():
            assert held == {k for k, o in enumerate(grid.options) if al.fits(t, g, o, whole=not relaxed)}
        pts = {(o.cpu, o.mem) for o in grid.options}
        assert ((1.5, 30.0) in pts) == (not relaxed and job.profile.speed(1.5, 30.0) > 0)
    assert al.schedule_points(Schedule((Segment(job.id, 0, 1, (Placement(0, 2, 3, 60.0),)),), 10.0)) == {job.id: {(1.5, 30.0)}}


def test_one_cache_per_profile_by_value_released_with_it():
    def fresh():
        return SensitivityProfile("cache-probe", (1.0, 4.0), (20.0, 80.0), ((0.5, 0.7), (0.9, 1.0)))

    p = fresh()
    first = al.inner_options(p, CLUSTER, 2)
    assert al.inner_options(p, CLUSTER, 2) is first and al.inner_options(fresh(), CLUSTER, 2) is first
    assert al.job_options(p, CLUSTER) is al.job_options(fresh(), CLUSTER)
    n = len(al_rule._CACHE)
    del p, first
    gc.collect()
    assert len(al_rule._CACHE) == n - 1


def test_warm_start_points_do_not_grow_the_cache():
    inst = load_instance("tiny-8gpu")
    job = inst.jobs[0]
    sizes = []
    for c in (1.0, 2.0, 3.0, 4.0):
        al.model_grids(inst, [job], relaxed=False, refine=2, inner_refine=1, extra={job.id: {(c, 62.5)}})
        sizes.append(len(al_rule._CACHE[job.profile]))
    assert sizes[1:] == sizes[:1] * 3


def test_schedule_faults_flag_each_placement_as_the_rule_does():
    inst = load_instance("tiny-16gpu")
    job = max(inst.jobs, key=lambda j: j.gpus)
    fc, fm = job.profile.floor
    pls = (Placement(0, 1, math.ceil(fc), fm), Placement(1, 1, 1.5, fm), Placement(2, 1, math.ceil(fc), fm / 2),
           Placement(3, 0, 1.0, fm))
    segs = (Segment(job.id, 0, 1, pls), Segment("nobody", 0, 1, pls), Segment(job.id, 0, 1, pls[:1]))
    faults = al.schedule_faults(inst, segs)
    want_low = {k for k, p in enumerate(pls) if p.gpus > 0 and not al.meets_floor(job.profile, p.cpus / p.gpus, p.mem_gb / p.gpus)}
    assert faults[0].below_floor == want_low and 2 in want_low and 3 not in want_low
    assert faults[0].fractional == {1}
    assert faults[1] is al.NO_FAULTS and faults[2] is al.NO_FAULTS  # unknown job; a clean segment


def test_exact_allocations_are_what_each_phase_asked_for_before():
    from sensaopt.exact.model.data import build_data
    from sensaopt.servable import best_speeds
    from sensaopt.simulator import simulate

    inst = load_instance("tiny-8gpu")
    start = simulate(inst, "sensascale").schedule
    allocs = al.exact_allocations(inst, start, refine=2, inner_refine=1, relax_refines=(1, 2))
    assert allocs.inner == al.model_grids(inst, inst.jobs, relaxed=False, refine=2, inner_refine=1,
                                          extra=al.schedule_points(start))
    assert allocs.dominated == al.grids_dominate(inst, 2, 1)
    assert list(allocs.best_speeds) == list(best_speeds(inst))
    assert allocs.best_speeds == tuple(al.best_speed(j.profile, j.gpus, inst.cluster) * j.speed_factor for j in inst.jobs)
    assert not allocs.dominated and set(allocs.relaxed) == {1, 2}  # tiny-8gpu needs the relaxation
    handed = build_data(inst, 20, inner_refine=1, grids=allocs.inner)
    asked = build_data(inst, 20, inner_refine=1, extra_options=al.schedule_points(start))
    for kw, grids in allocs.relaxed.items():
        a, b = build_data(inst, 20, relaxed=True, refine=kw, grids=grids), build_data(inst, 20, relaxed=True, refine=kw)
        assert [(j.options, j.pairs, j.full, j.kept) for j in a.jobs] == [(j.options, j.pairs, j.full, j.kept) for j in b.jobs]
    assert [(j.options, j.pairs, j.full, j.kept) for j in handed.jobs] == [(j.options, j.pairs, j.full, j.kept) for j in asked.jobs]


@pytest.mark.parametrize("name", ["res50", "alexnet", "m5", "lstm"])
@pytest.mark.parametrize("gpus", [1, 2, 3, 8])
def test_the_cpu_exact_relaxation_grid_covers_every_whole_core_allocation(name, gpus):
    """The Lemma's covering property on the CPU-exact grid: every allocation one node gives
    all of a job's GPUs (k whole cores for g GPUs, any memory from the floor) lies in a box
    whose option costs no more and is at least as fast; and each option lifts to a real
    allocation of its own CPU and speed (sensaopt.exact.phases.lift)."""
    from sensaopt.exact.phases.lift import lifted_option

    p = get_profile(name)
    cores = 24
    opts = al.relaxation_options(p, 2, gpus, cores)
    assert opts == al.exact_cpu_options(p, 2, gpus, cores)
    rng = np.random.default_rng(gpus)
    mems = [*p.mem_levels, *rng.uniform(p.floor[1], p.mem_levels[-1] * 1.2, 25)]
    for k in range(1, cores + 1):
        c = k / gpus
        for m in mems:
            if not al.meets_floor(p, c, m):
                continue
            s = p.speed(c, m)
            assert any(o.cpu <= c + 1e-9 and o.mem <= m + 1e-9 and o.speed >= s - 1e-12 for o in opts), (k, m)
    for o in opts:  # k / g exactly: a relaxation schedule (the shortfall model's) has whole cores
        assert abs(o.cpu * gpus - round(o.cpu * gpus)) < 1e-9
        up = lifted_option(p, gpus, o, 2)
        assert up is not None and up.cpu == pytest.approx(o.cpu, abs=0.01) and round(up.cpu * gpus, 9) % 1 == 0
        assert up.mem >= o.mem - 1e-9 and up.speed >= o.speed - 1e-9 and up.speed == p.speed(up.cpu, up.mem)


def test_a_gang_job_keeps_the_coarser_relaxation_grids():
    p = get_profile("res50")
    assert al.relaxation_options(p, 2, 16, None) == al.relaxation_options(p, 2, 16)
    assert len(al.exact_cpu_axis(p, 1, 24)) == 24 and al.exact_cpu_axis(p, 8, 24)[-1] == 3.0
