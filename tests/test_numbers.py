"""A number with an interval is written to the decimals its interval's width allows, the same for the value and
both bounds: hand cases from the book's pages (issue 65's "[-0.042, +0.3]", "0.0000" beside "0.00" and a γ of
"412926.09 [262002.51, 570668.60]")."""

from __future__ import annotations

import pytest

from probekit import numbers as N
from probekit.report.format import _RowView


def _r(value, low, high, metric="acc", n=100):
    return {"metric": metric, "value": value, "ci_low": low, "ci_high": high, "n": n}


@pytest.mark.parametrize("low, high, decimals", [(0.0, 0.042, 3), (55.0, 59.2, 1), (55.0, 70.1, 0),
                                                 (262002.51, 570668.60, -4), (0.0, 0.0, None), (1.0, 0.5, None)])
def test_places_show_the_width_to_two_significant_digits(low, high, decimals):
    assert N.places(low, high) == decimals


def test_a_gamma_in_the_hundred_thousands_is_rounded_to_its_intervals_width():
    assert N.cell(_r(412926.09, 262002.51, 570668.60, "gamma")) == "410000 [260000, 570000]"


def test_a_paired_difference_and_its_bounds_share_their_decimals():
    assert N.interval(-0.0121, -0.042, 0.3, sign=True) == "-0.01 [-0.04, +0.30]"   # not "[-0.042, +0.3]"
    assert N.cell(_r(0.007, -0.007, 0.025, "acc_diff"), with_n=True) == "+0.7 [-0.7, +2.5] (n = 100)"
    # a bound just below 0 keeps its sign when rounded to the width's decimals
    assert N.interval(-7.8, -15.6, -0.03, sign=True) == "-8 [-16, -0]"
    assert N.interval(-7.8, -15.6, -0.03, sign=True, least=1) == "-7.8 [-15.6, -0.0]"


def test_percent_cells_keep_one_decimal_more_for_a_narrow_interval_and_none_for_no_interval():
    assert N.cell(_r(0.954, 0.901, 0.990), unit=True) == "95.4% [90.1, 99.0]"   # not "95%" under a 95% threshold
    assert N.cell(_r(0.6234, 0.6201, 0.6245)) == "62.34 [62.01, 62.45]"
    assert N.cell(_r(0.0012, -0.0003, 0.0027, "acc_diff"), unit=True) == "+0.12 pts [-0.03, +0.27]"
    assert N.cell(_r(1.0, 1.0, 1.0)) == "100.0 [100.0, 100.0]"
    assert N.cell(_r(0.3456, 0.3, 0.39, "r")) == "0.346 [0.300, 0.390]"
    assert N.cell(_r(0.5, float("nan"), float("nan"))) == "50.0"


def test_tiny_numbers_are_written_in_scientific_notation_not_as_zeros():
    assert N.cell(_r(0.00009, 0.00004, 0.00013, "gamma_median")) == "9.0e-05 [4.0e-05, 1.3e-04]"
    assert N.number(0.0, "p") == "0.00" and N.number(3.1e-7, "p") == "3.1e-07"


def test_a_claim_s_interval_is_written_as_its_cell_writes_it():
    row = _r(-0.0121, -0.042, 0.3, "delta_c_pts_diff")
    assert _RowView(row).ci == "[-0.04, +0.30]" and N.cell(row).endswith(_RowView(row).ci)
