"""The card's convergence column: the slope of each held-out curve over the last third of training, and whether
its CI shows the curve flat (within +-2 points per 10k steps), still moving, or neither."""

import pytest

from probekit.toymodels.convergence import cell, trends, unsettled


def _history(values, every=1000):
    return {"probe_step": [every * (i + 1) for i in range(len(values))], "probe": [{"acc": v} for v in values]}


def test_the_slope_and_its_ci_are_those_of_a_line_through_the_last_third_by_hand():
    # nine points, last third = steps 7000, 8000, 9000 at 50, 52, 57 %: slope 7 points over 2000 steps = 35 per
    # 10k; residuals 0.5, -1, 0.5, so se = sqrt(1.5 / 1 / 2e6) per step and the 95% t with 1 df is 12.706
    found = trends(_history([0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.50, 0.52, 0.57]), ["acc", "absent"])
    slope, lo, hi = found["acc"]
    half = 12.7062 * (1.5 / 2e6) ** 0.5 * 1e4
    assert set(found) == {"acc"}
    assert slope == pytest.approx(35.0) and (lo, hi) == pytest.approx((35.0 - half, 35.0 + half), abs=1e-2)
    assert cell(found).startswith("acc not resolved +35.0 [")       # three noisy points resolve nothing


def test_a_curve_still_climbing_is_named_with_its_slope_and_one_that_plateaued_is_flat():
    climbing = trends(_history([0.5 + 0.01 * i + (0.02 if i % 2 else 0) for i in range(30)]), ["acc"])
    plateau = trends(_history([0.2, 0.4, 0.6, 0.8] + [0.9, 0.91] * 13), ["acc"])   # rose early, level since
    assert climbing["acc"][1] > 0 and cell(climbing).startswith("acc rising +10.6 [")
    assert unsettled(plateau) == {} and cell(plateau) == "flat"
    assert trends(_history([0.9] * 12), ["acc"]) == {"acc": (0.0, 0.0, 0.0)}
    falling = trends(_history([0.9 - 0.01 * i for i in range(12)]), ["acc"])
    assert cell(falling) == "acc falling -10.0 [-10.0, -10.0]"
    # a bound just below 0 is shown to the interval's decimals and keeps its sign (toy-clip-noverb's verb choice,
    # seed 0), not with more decimals than its interval's other bound
    assert cell({"acc": (-7.8, -15.6, -0.03)}) == "acc falling -7.8 [-15.6, -0.0]"


def test_flat_means_shown_within_two_points_per_10k_steps_not_merely_not_shown_moving():
    assert cell({"acc": (0.6, 0.3, 0.8)}) == "flat"                  # a creep near ceiling (toy-clip at 60k steps)
    assert cell({"acc": (0.0, -2.0, 2.0)}) == "flat"
    assert cell({"acc": (2.3, -1.4, 5.9)}) == "acc not resolved +2.3 [-1.4, +5.9]"   # toy-clip-unbound's pair curve
    assert cell({"acc": (2.5, 1.5, 3.5)}) == "acc rising +2.5 [+1.5, +3.5]"
    assert cell({"a": (0.1, -1.0, 1.2), "b": (-3.0, -4.0, -2.1)}) == "b falling -3.0 [-4.0, -2.1]"


def test_too_short_a_curve_says_so():
    assert trends(_history([0.5, 0.6, 0.7]), ["acc"]) == {} and cell({}) == "n/a"
    assert trends({}, ["acc"]) == {}


def test_a_curve_added_while_a_member_trained_is_fitted_on_the_points_that_have_it():
    # nine points, last third = steps 7000-9000; the new curve was probed from step 8000 on (a member resumed onto
    # a newer probe): two points are too few for a trend; from 7000 on it has three, 20 points apart
    history = _history([0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.50, 0.52, 0.57])
    for p, v in zip(history["probe"][7:], [0.4, 0.6]):
        p["new"] = v
    assert set(trends(history, ["acc", "new"])) == {"acc"}
    history["probe"][6]["new"] = 0.2
    assert trends(history, ["new"])["new"][0] == pytest.approx(200.0)   # 20 points per 1000 steps
