import numpy as np
import pytest

from probekit.stats import bootstrap, bootstrap_ci, bootstrap_std, pooled_bootstrap, pooled_ci, pooled_value


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


# ------------------------------------------------------------------------------- pooled over seeds


def test_one_seed_is_the_item_bootstrap_exactly():
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2, 57).astype(float)
    assert np.array_equal(pooled_bootstrap([values], seed=4), bootstrap(values, seed=4))
    assert pooled_ci([values], seed=4) == bootstrap_ci(values, seed=4)
    assert pooled_value([values]) == values.mean()
    # rows and a statistic over them (the triplets of a pair, NaN for one unscored), and few resamples (widened)
    rows = np.array([[1, 1], [1, 0], [0, np.nan], [1, 1], [0, 0]])
    assert pooled_ci([rows], np.nanmean, n_resamples=10) == bootstrap_ci(rows, np.nanmean, n_resamples=10)


def test_two_constant_seeds_span_their_values():
    # items resample to the same value, so each draw is the mean of two seeds drawn from {0.4, 0.6}: 0.4 (1/4),
    # 0.5 (1/2) or 0.6 (1/4); with ~250 draws at each end the 2.5th and 97.5th percentiles are 0.4 and 0.6
    per_seed = [np.full(10, 0.4), np.full(20, 0.6)]
    draws = pooled_bootstrap(per_seed)
    values, counts = np.unique(draws.round(12), return_counts=True)
    assert values.tolist() == [0.4, 0.5, 0.6]
    assert counts.sum() == 1000 and all(abs(c - e) < 60 for c, e in zip(counts, [250, 500, 250]))
    assert pooled_value(per_seed) == pytest.approx(0.5)
    assert pooled_ci(per_seed) == (pytest.approx(0.4, abs=1e-12), pytest.approx(0.6, abs=1e-12))


def test_one_constant_seed_has_a_point_interval():
    assert pooled_ci([np.full(5, 0.4)]) == (pytest.approx(0.4), pytest.approx(0.4))


def test_seeds_that_disagree_widen_the_interval():
    rng = np.random.default_rng(2)
    low, high = (rng.random(300) < p for p in (0.45, 0.75))
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    pooled = pooled_ci([low.astype(float), high.astype(float)])
    assert width(pooled) > 2 * max(width(bootstrap_ci(low.astype(float))), width(bootstrap_ci(high.astype(float))))
    assert pooled[0] < low.mean() + 0.05 and pooled[1] > high.mean() - 0.05
    # seeds that agree pool to about one seed's interval over twice the items, not wider than one seed's
    same = [(rng.random(300) < 0.6).astype(float) for _ in range(3)]
    assert width(pooled_ci(same)) <= width(bootstrap_ci(same[0])) + 0.01


def test_seeds_scored_on_the_same_items_resample_the_items_once():
    # a crossed design: 5 seeds of one model on the same 400 items, the items' effects shared (a_i ~ N(0, 1)) and
    # the seeds nearly alike: the pooled mean is about the items' mean, whose standard error is 1/sqrt(400) = 0.05,
    # so its 95% interval is about 2 * 1.96 * 0.05 = 0.196 wide; resampling each seed's items on its own would
    # average the shared item effects over 5 independent draws, an interval about sqrt(5) too narrow (0.088)
    rng = np.random.default_rng(3)
    items = rng.normal(size=400)
    per_seed = [items + 0.01 * rng.normal(size=400) for _ in range(5)]
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    assert width(pooled_ci(per_seed)) == pytest.approx(0.196, rel=0.15)
    # the same seeds on items of their own (one item fewer each) are resampled independently: the narrow interval
    assert width(pooled_ci([v[: 400 - i] for i, v in enumerate(per_seed)])) == pytest.approx(0.196 / 5 ** 0.5, rel=0.2)


def test_pooled_draws_are_deterministic_under_a_seed():
    per_seed = [np.array([0.0, 1.0, 1.0]), np.array([1.0, 0.0, 0.0, 0.0]), np.array([1.0])]
    assert np.array_equal(pooled_bootstrap(per_seed, seed=5), pooled_bootstrap(per_seed, seed=5))
    assert not np.array_equal(pooled_bootstrap(per_seed, seed=5), pooled_bootstrap(per_seed, seed=6))


def test_an_empty_seed_or_no_seed_is_an_error():
    with pytest.raises(ValueError, match=r"position \[1\] have no items"):
        pooled_ci([np.ones(3), np.array([])])
    with pytest.raises(ValueError, match="no seeds"):
        pooled_bootstrap([])
