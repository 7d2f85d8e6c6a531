"""The cluster bootstrap (probekit.stats, ``clusters=``): whole units resampled, on hand-made clustered data whose
right interval is known."""

import numpy as np
import pytest

from probekit.stats import bootstrap, bootstrap_ci, pooled_bootstrap, pooled_ci

WIDTH = lambda ci: ci[1] - ci[0]  # noqa: E731


def test_mirrored_pairs_with_exactly_one_row_right_have_no_spread_by_pair():
    # 400 mirrored pairs, one row of each right: accuracy is exactly 1/2 whatever pairs are drawn, so the right
    # interval is [0.5, 0.5]; rows drawn one by one see 800 coin flips, about ± 1.96 sqrt(.25 / 800) = ± 3.5 points
    values = np.tile([1.0, 0.0], 400)
    pairs = np.repeat(np.arange(400), 2)
    by_row, by_pair = bootstrap_ci(values), bootstrap_ci(values, clusters=pairs)
    assert by_pair == (0.5, 0.5)
    assert WIDTH(by_row) == pytest.approx(2 * 1.96 * np.sqrt(0.25 / 800), rel=0.15)


def test_units_of_identical_rows_give_the_bootstrap_of_the_units():
    # 50 units of 4 identical rows each: the cluster bootstrap draws units exactly as a bootstrap of the 50 unit
    # values draws rows (same seed, same draws), so the two intervals agree; rows one by one are about half as wide
    unit_values = np.random.default_rng(3).integers(0, 2, 50).astype(float)
    rows, units = np.repeat(unit_values, 4), np.repeat([f"u{i}" for i in range(50)], 4)
    assert bootstrap(rows, seed=2, clusters=units) == pytest.approx(bootstrap(unit_values, seed=2))
    assert bootstrap_ci(rows, clusters=units) == pytest.approx(bootstrap_ci(unit_values))
    assert WIDTH(bootstrap_ci(rows)) < 0.6 * WIDTH(bootstrap_ci(rows, clusters=units))


def test_a_mean_over_drawn_units_weighs_each_by_its_rows():
    # unit a: one row right; unit b: three rows wrong.  Two units drawn: aa -> 1, ab or ba -> 1/4 (one right row of
    # four), bb -> 0, with probabilities 1/4, 1/2, 1/4
    draws = bootstrap([1.0, 0.0, 0.0, 0.0], clusters=["a", "b", "b", "b"], n_resamples=4000)
    found, counts = np.unique(draws, return_counts=True)
    assert found.tolist() == [0.0, 0.25, 1.0]
    assert counts / 4000 == pytest.approx([0.25, 0.5, 0.25], abs=0.03)


def test_one_row_per_unit_draws_exactly_the_rows_in_any_label_order():
    values = np.random.default_rng(1).random(40)
    for labels in (np.arange(40), np.arange(40)[::-1], [f"row {i}" for i in range(40)]):
        assert np.array_equal(bootstrap(values, seed=7, clusters=labels), bootstrap(values, seed=7))


def test_rows_of_a_unit_need_not_be_adjacent_and_labels_must_match_the_rows():
    values, units = np.array([1.0, 0.0, 0.0, 1.0]), np.array(["p", "q", "p", "q"])   # each pair one right
    assert bootstrap_ci(values, clusters=units) == (0.5, 0.5)
    with pytest.raises(ValueError, match="3 cluster labels for 4 rows"):
        bootstrap(values, clusters=units[:3])


def test_pooled_over_seeds_resamples_units_within_each_seed():
    values, pairs = np.tile([1.0, 0.0], 30), np.repeat(np.arange(30), 2)
    assert np.array_equal(pooled_bootstrap([values], seed=4, clusters=[pairs]), bootstrap(values, seed=4,
                                                                                           clusters=pairs))
    # two seeds at exactly 1/2 by pair: the pooled interval is a point; by row it is not
    assert pooled_ci([values, values], clusters=[pairs, pairs]) == (pytest.approx(0.5), pytest.approx(0.5))
    assert WIDTH(pooled_ci([values, values])) > 0.1
    # a seed without units (None) is resampled row by row
    assert WIDTH(pooled_ci([values, values], clusters=[pairs, None])) > 0


def test_an_interval_carries_its_items_and_units():
    by_unit, by_row = bootstrap_ci([1.0, 0.0], clusters=["a", "a"]), bootstrap_ci([1.0, 0.0])
    assert by_unit.items.clusters.tolist() == ["a", "a"] and by_row.items.clusters is None
    assert by_row.items.values.tolist() == [1.0, 0.0] and by_row.items.statistic is np.mean
    assert by_row.scaled(100) == (100 * by_row[0], 100 * by_row[1]) and by_row.scaled(100).items.scale == 100
