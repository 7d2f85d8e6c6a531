import numpy as np
import pytest

from probekit.stats import bootstrap, bootstrap_ci, bootstrap_std


def test_constant_values_have_a_degenerate_interval():
    assert bootstrap_ci([1, 1, 1, 1]) == (1.0, 1.0)
    assert bootstrap_std([0.5] * 10) == 0.0


def test_interval_brackets_the_mean_and_narrows_with_more_data():
    rng = np.random.default_rng(1)
    small = rng.integers(0, 2, 40)
    large = rng.integers(0, 2, 4000)
    lo_s, hi_s = bootstrap_ci(small)
    lo_l, hi_l = bootstrap_ci(large)
    assert lo_s <= small.mean() <= hi_s
    assert lo_l <= large.mean() <= hi_l
    assert (hi_l - lo_l) < (hi_s - lo_s)
    # the normal approximation of a proportion's 95% interval: 1.96 * sqrt(p(1-p)/n) ≈ 0.0155 for n=4000
    assert (hi_l - lo_l) / 2 == pytest.approx(1.96 * np.sqrt(0.25 / 4000), rel=0.15)


def test_same_seed_same_draws_and_empty_input_is_nan():
    assert np.array_equal(bootstrap([0, 1, 1], seed=3), bootstrap([0, 1, 1], seed=3))
    lo, hi = bootstrap_ci([])
    assert np.isnan(lo) and np.isnan(hi)


def test_statistic_over_rows_of_a_2d_array():
    pairs = np.array([[1, 1], [1, 0], [0, 0], [1, 1]])
    both_right = lambda rows: rows.all(axis=1).mean()  # noqa: E731
    lo, hi = bootstrap_ci(pairs, both_right, n_resamples=500)
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0


def test_an_interval_that_misses_the_point_estimate_is_widened_to_it():
    values = [1.0, 1.0, 0.0]                                  # mean 2/3
    assert bootstrap(values, n_resamples=2).tolist() == pytest.approx([2 / 3, 1.0])
    # the percentile interval of those two draws, [0.675, 0.9917], lies above the mean: its lower end moves to it
    assert bootstrap_ci(values, n_resamples=2) == (pytest.approx(2 / 3), pytest.approx(0.675 + 0.3167, abs=1e-3))
    big = bootstrap(values, n_resamples=1000)                  # an interval that holds the mean is unchanged
    assert bootstrap_ci(values, n_resamples=1000) == tuple(np.percentile(big, [2.5, 97.5]))
