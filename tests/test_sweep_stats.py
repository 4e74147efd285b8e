"""mean_interval: the Student-t interval over seeds."""

import math

import pytest

from sensaopt.sweep.stats import mean_interval


def test_known_interval():
    # n=3, mean 2, sd 1, t_{0.975,2} = 4.302653 -> half width 4.302653/sqrt(3)
    m, lo, hi = mean_interval([1.0, 2.0, 3.0])
    half = 4.302652729911275 / math.sqrt(3)
    assert (m, lo, hi) == pytest.approx((2.0, 2.0 - half, 2.0 + half))
    _, lo90, hi90 = mean_interval([1.0, 2.0, 3.0], confidence=0.90)
    assert lo < lo90 < 2.0 < hi90 < hi


def test_degenerate_inputs():
    assert mean_interval([5.0, 5.0]) == (5.0, 5.0, 5.0)
    m, lo, hi = mean_interval([4.0, None, float("nan")])
    assert m == 4.0 and math.isnan(lo) and math.isnan(hi)
    assert all(math.isnan(x) for x in mean_interval([]))
    with pytest.raises(ValueError):
        mean_interval([1.0, 2.0], confidence=1.0)
