"""Profile interpolation, optimal demand and classification against the shared figures."""

import math

import pytest

from sensaopt import profile_data
from sensaopt.allocations import optimal_demand, whole_core_options
from sensaopt.profiles import SensitivityProfile, catalog, get_profile

SENSITIVE = {"alexnet", "deepspeech", "m5", "mobilenet", "res18", "res50", "shufflenet"}


def test_catalog_has_the_twelve_models():
    assert set(catalog()) == SENSITIVE | {"bert", "gnmt", "lstm", "transformer", "vae"}


@pytest.mark.parametrize(
    "model,cpu,mem,expected",
    [
        ("alexnet", 3, 62.5, 1.0),  # the reference share
        ("alexnet", 7, 62.5, 1.75 + (2.0 - 1.75) / 3),  # between 6 (1.75) and 9 (2.0) cores
        ("alexnet", 12, 93.75, (2.0 + 2.94) / 2),  # halfway between 62.5 GB (2.0) and 125 GB (2.94)
        ("alexnet", 10.5, 93.75, 0.25 * (2.0 + 2.0 + 2.0 + 2.94)),  # bilinear cell centre
        ("m5", 6, 156.25, 2.25),  # between 125 GB (2.0) and 187.5 GB (2.5)
        ("res18", 1, 20.83, 0.1),  # the floor: stalls
        ("res18", 1, 41.665, (0.1 + 0.37) / 2),
        ("res18", 30, 300, 2.4),  # flat above the grid
        ("gnmt", 1, 20.83, 1.0),
    ],
)
def test_interpolation_hand_values(model, cpu, mem, expected):
    assert get_profile(model).speed(cpu, mem) == pytest.approx(expected)


def test_below_floor_is_zero():
    p = get_profile("bert")
    assert p.speed(0.5, 62.5) == 0.0 and p.speed(3, 10) == 0.0


@pytest.mark.parametrize("model", sorted(profile_data.BEST))
def test_optimal_demand_at_zero_tolerance_matches_synergy_profiler(model):
    cpus, mem, speed = profile_data.BEST[model][1]
    o = optimal_demand(get_profile(model), tolerance=0.0)
    assert o.cpu == cpus
    assert o.mem == pytest.approx(max(mem, profile_data.MEM_PER_GPU_GB[0]))  # Synergy writes 20 for the 20.83 floor
    assert o.speed == pytest.approx(speed)


def test_optimal_demand_with_tolerance_hand_values():
    # res18: peak 2.4; 90% = 2.16; 8 cores give 1.75 + 2/3·0.65 = 2.1833 >= 2.16, 7 give 1.9667
    o = optimal_demand(get_profile("res18"), 0.1)
    assert (o.cpu, o.mem) == (8, 62.5) and o.speed == pytest.approx(2.183333333)
    # mobilenet: peak 1.55; 90% = 1.395; 5 cores give 1.49, 4 give 1.3
    assert optimal_demand(get_profile("mobilenet"), 0.1).cpu == 5


@pytest.mark.parametrize("model", sorted(catalog()))
def test_classification(model):
    assert get_profile(model).is_sensitive(0.1) == (model in SENSITIVE)


def test_classification_threshold_matters():
    res50 = get_profile("res50")  # gains 15% with more CPU, loses 90% at the floor
    gain, loss = res50.sensitivity()
    assert gain == pytest.approx(0.15) and loss == pytest.approx(0.9)
    custom = SensitivityProfile("mild", (1.0, 3.0, 6.0), (20.0, 62.5), ((0.95, 0.95), (1.0, 1.0), (1.12, 1.12)))
    assert custom.is_sensitive(0.1) and not custom.is_sensitive(0.15)


@pytest.mark.parametrize("model", sorted(catalog()))
def test_options_are_pareto_efficient_and_sorted(model):
    opts = whole_core_options(get_profile(model))
    assert [o.speed for o in opts] == sorted(o.speed for o in opts)
    for a in opts:
        for b in opts:
            if a is not b:
                assert not (b.cpu <= a.cpu and b.mem <= a.mem and b.speed >= a.speed), (a, b)
    assert opts[-1].speed == pytest.approx(get_profile(model).peak)


def test_bad_profile_rejected():
    with pytest.raises(ValueError):
        SensitivityProfile("x", (3.0, 1.0), (20.0,), ((1.0,), (1.0,)))
    with pytest.raises(ValueError):
        SensitivityProfile("x", (1.0,), (20.0,), ((math.nan,),))
