"""A rebuild's numbers compared with a page's at the precision that suits each: a result row's as the page writes
it, a lab line's rows likewise, an item's to its column's scale (hand-made rows)."""

from __future__ import annotations

import json

import pandas as pd

from probekit.chapters import reproduce, same
from probekit.numbers import cell
from probekit.results import frame, row


def _delta(low: float, value: float = 4.891904) -> dict:
    """The conceptual page's row whose lower bound a fresh clone's rebuild moved (−0.0408855 -> −0.0408809)."""
    return row(study="conceptual", probe="probe-b-single", model="toy-clip", condition="scene", subset="(x0, x̃0)",
               metric="delta_c_pts", value=value, ci=(low, 10.01598), n=180)


def test_a_bound_near_0_moved_by_float_noise_is_the_same():
    old, new = _delta(-0.0408855), _delta(-0.0408809)     # 1.1e-4 relative, 4.5e-6 absolute
    assert same.same_numbers(old, new) == [True, True, True, True]
    assert reproduce.tally(frame([old]), frame([new])) == (4, 4)
    assert cell(old) == cell(new)


def test_a_digit_the_page_shows_differs():
    assert same.same_numbers(_delta(-0.0408855), _delta(-0.0408855, value=5.6)) == [False, True, True, True]
    assert same.same_numbers(_delta(-0.0408855), _delta(-0.6)) == [True, False, True, True]   # "-0" -> "-1"
    pct = lambda v, low=0.4, n=60: row(study="s", probe="p", model="m", metric="pairwise", value=v, ci=(low, 0.7), n=n)
    assert same.as_shown(pct(0.5512)) == ("55.12", "40.00", "70.00", "60.0")   # the finest any page writes
    assert same.same_numbers(pct(0.5512), pct(0.5513)) == [False, True, True, True]   # 55.12 -> 55.13
    assert same.same_numbers(pct(0.5512), pct(0.55120004)) == [True] * 4
    assert same.same_numbers(pct(0.5512), pct(0.5512, n=61)) == [True, True, True, False]


def test_a_rounding_edge_crossed_by_noise_only_is_the_same():
    pct = lambda v: row(study="s", probe="p", model="m", metric="pairwise", value=v, ci=(0.4, 0.7), n=60)
    below, above = pct(0.551249999999), pct(0.551250000001)   # 55.12 and 55.13 on the page, 2e-10 apart
    assert same.as_shown(below)[0] != same.as_shown(above)[0]
    assert same.same_numbers(below, above)[0]
    assert not same.same_numbers(pct(0.55124), pct(0.55126))[0]   # 2e-5 apart: a fifth of the last digit


def test_a_row_without_an_interval_is_compared_as_written():
    paper = lambda v: row(study="s", probe="p", model="m", metric="avg", value=v, source="paper")
    assert same.same_numbers(paper(0.643), paper(0.643 + 1e-12)) == [True] * 4
    assert not same.same_numbers(paper(0.643), paper(0.6431))[0]


def test_lab_lines_compare_their_rows_as_shown_and_holm_to_two_digits():
    def line(value, p=0.0031, seeds=None):
        rows = json.dumps([{"model": "m", "metric": "mu_c_diff", "value": value, "ci_low": 0.0024, "ci_high": 0.0072,
                            "n": 139.0}])
        return pd.DataFrame({"what": ["claim"], "verdict": ["holds"], "rows": [rows], "holm": [p],
                             "seed_rows": [seeds]})
    assert not reproduce.same_table(line(0.0046), line(0.0047))                       # +0.46 -> +0.47 points
    assert reproduce.same_table(line(0.0046, p=0.00312), line(0.0046, p=0.00308))       # p = 0.0031 both
    assert not reproduce.same_table(line(0.0046, p=0.0031), line(0.0046, p=0.0032))
    seeds = json.dumps([{"seed": 0, "model": "m", "metric": "acc", "value": 0.61, "ci_low": 0.5, "ci_high": 0.7,
                         "n": 9.0}])
    assert not reproduce.same_table(line(0.0046, seeds=seeds), line(0.0046))           # pooled, then not
    assert not reproduce.same_table(line(0.0046, seeds=seeds), line(0.0046, seeds=seeds.replace('"seed": 0',
                                                                                               '"seed": 1')))


def test_an_item_score_near_0_takes_its_columns_scale():
    items = pd.DataFrame({"item_id": ["a", "b"], "score": [-0.0408855, 12.5]})
    assert reproduce.same_table(items, items.assign(score=[-0.0408809, 12.5]))       # 4.6e-6 of a column of 12.5
    assert not reproduce.same_table(items, items.assign(score=[-0.038, 12.5]))
    lists = pd.DataFrame({"item_id": ["a"], "scores": [[0.00001, 3.0]]})
    assert reproduce.same_table(lists, lists.assign(scores=[[0.0000102, 3.0]]))
    assert not reproduce.same_table(lists, lists.assign(scores=[[0.01, 3.0]]))
