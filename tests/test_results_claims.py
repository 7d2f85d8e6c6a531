"""The result schema, the claim verdicts and their rendering, on hand-made rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from probekit import claims as C
from probekit import numbers as N
from probekit import papers, results as R
from probekit.papers import guided_masking, svo_probes
from probekit.registry import load
from probekit.studies import STUDIES
from probekit.report import format as F


def _r(value, low, high, metric="acc", chance=0.5, n=100, **kw):
    return R.row(study="s", probe="p", model=kw.pop("model", "m"), metric=metric, value=value, ci=(low, high),
                 n=n, chance=chance, **kw)


def test_frame_fills_defaults_orders_columns_and_types():
    df = R.frame([{"study": "s", "probe": "p", "model": "m", "metric": "acc", "value": 0.5, "n": 3}])
    assert list(df.columns) == R.COLUMNS
    row = df.iloc[0]
    assert (row.condition, row.subset, row.source) == ("", "all", "ours")
    assert math.isnan(row.ci_low) and math.isnan(row.chance) and row.n == 3.0


@pytest.mark.parametrize("bad,word", [
    ({"study": "s", "probe": "p", "model": "m", "value": 0.5}, "metric"),                       # missing column
    ({"study": "s", "probe": "p", "model": "m", "metric": "a", "value": 0.5, "lo": 0.1}, "lo"),  # unknown column
    ({"study": "s", "probe": "p", "model": "m", "metric": "a", "value": "high"}, "value"),       # not numeric
    ({"study": "s", "probe": "p", "model": "m", "metric": "a", "value": 0.9, "ci_low": 0.1, "ci_high": 0.5},
     "does not hold"),                                                                         # interval misses value
])
def test_frame_rejects_rows_outside_the_schema(bad, word):
    with pytest.raises(R.SchemaError, match=word):
        R.frame([bad])


def test_select_one_save_load_roundtrip(tmp_path):
    rows = R.frame([_r(0.6, 0.5, 0.7, model="a"), _r(0.4, 0.3, 0.5, model="b")])
    assert list(R.select(rows, model=["b"])["value"]) == [0.4]
    assert R.one(rows, model="a").value == 0.6
    with pytest.raises(KeyError, match="2 result rows"):
        R.one(rows, study="s")
    path = R.save(rows, tmp_path / "x" / "rows.parquet")
    pd.testing.assert_frame_equal(R.load(path), rows)
    assert not list(path.parent.glob(".*partial"))


@pytest.mark.parametrize("value,low,high,verdict", [
    (0.62, 0.55, 0.70, C.ABOVE),          # interval wholly above 0.5
    (0.40, 0.31, 0.49, C.BELOW),
    (0.55, 0.45, 0.65, C.UNRESOLVED),     # straddles chance
    (0.60, 0.50, 0.70, C.UNRESOLVED),     # touching chance is not excluding it
    (0.60, math.nan, math.nan, C.UNRESOLVED),  # a paper's number: no interval
])
def test_versus_chance(value, low, high, verdict):
    assert C.versus_chance(_r(value, low, high)) == verdict


def test_versus_chance_without_chance_level():
    assert C.versus_chance(_r(0.3, 0.2, 0.4, chance=math.nan)) == C.NO_CHANCE


def test_compare_needs_separate_intervals():
    # the predicate-noun chapter used to print "nouns easier" from 1.00 vs 0.99 on 100 pairs
    nouns, predicates = _r(1.00, 1.00, 1.00), _r(0.99, 0.97, 1.00)
    assert C.compare(nouns, predicates) == C.UNRESOLVED
    assert C.compare(_r(0.9, 0.85, 0.95), _r(0.6, 0.5, 0.7)) == C.HIGHER
    assert C.compare(_r(0.6, 0.5, 0.7), _r(0.9, 0.85, 0.95)) == C.LOWER
    assert C.compare(_r(0.9, 0.85, 0.95), _r(0.6, math.nan, math.nan)) == C.UNRESOLVED


def test_difference_sign_from_paired_interval():
    assert C.difference(_r(0.05, 0.01, 0.09, metric="acc_diff", chance=0)) == C.HIGHER
    assert C.difference(_r(-0.05, -0.09, -0.01, metric="acc_diff", chance=0)) == C.LOWER
    assert C.difference(_r(0.05, -0.01, 0.11, metric="acc_diff", chance=0)) == C.UNRESOLVED


@pytest.mark.parametrize("low, high, verdict", [(-1.0, 2.0, C.NO_DIFFERENCE), (-1.0, 8.0, C.UNRESOLVED),
                                                 (6.0, 9.0, C.HIGHER), (-9.0, -6.0, C.LOWER),
                                                 (1.0, 4.0, C.NO_DIFFERENCE), (-5.0, 5.0, C.NO_DIFFERENCE),
                                                 (3.0, 8.0, C.UNRESOLVED), (-25.3, -4.5, C.UNRESOLVED)])
def test_no_difference_is_an_equivalence_test_on_the_paired_difference(low, high, verdict):
    """Margin 5 (points): an interval within ±5 is "no difference" (even one that excludes 0 by less than the
    margin), one wholly beyond the margin a difference, and one that reaches past the margin on one side and into
    it on the other is not resolved, whether it holds 0 or not."""
    d = _r((low + high) / 2, low, high, metric="delta_c_pts", chance=math.nan)
    assert C.equivalent(d, 5.0) == verdict
    assert C.equivalent(_r(0.5, math.nan, math.nan), 5.0) == C.UNRESOLVED   # no interval, nothing resolved


def test_each_p_value_is_read_off_the_interval_that_decides_its_verdict():
    """p < 0.05 exactly when the 95% interval resolves the test: at an interval's end the p is 0.05, with the
    standard error read off the half of the interval facing the null (an asymmetric interval: 0.2 below, 0.1
    above the value)."""
    r = _r(0.3, 0.1, 0.4, metric="acc_diff", chance=0.0)
    assert C.p_value(r, 0.1) == pytest.approx(0.05) and C.p_value(r, 0.4) == pytest.approx(0.05)
    # 0.3 over a standard error of 0.2 / 1.96: z = 2.94
    assert C.p_value(r) == pytest.approx(math.erfc(0.3 / (0.2 / C.Z95) / math.sqrt(2)))
    assert C.p_value(r, 0.35) > 0.05 and C.p_value(r, 0.45) < 0.05 and C.p_value(r, 0.05) < 0.05
    assert math.isnan(C.p_value(_r(0.3, math.nan, math.nan)))
    d = _r(0.0, -2.0, 3.0, metric="delta_c_pts", chance=math.nan)
    # TOST: the larger one-sided p (the upper side: 5 over 3 / 1.96), doubled onto the interval's scale
    assert C.p_within(d, 0.0, 5.0) == pytest.approx(math.erfc(5 / (3 / C.Z95) / math.sqrt(2)))
    assert C.p_within(_r(0.0, -5.0, 3.0, chance=math.nan), 0.0, 5.0) == pytest.approx(0.05)
    assert C.p_within(_r(4.0, 3.0, 8.0, chance=math.nan), 0.0, 5.0) > 0.05 > C.p_within(d, 0.0, 5.0)
    assert C.p_beyond(_r(7.5, 5.0, 9.0, chance=math.nan), 0.0, 5.0) == pytest.approx(0.05)
    assert C.p_beyond(_r(-7.5, -9.0, -6.0, chance=math.nan), 0.0, 5.0) < 0.05 < C.p_beyond(d, 0.0, 5.0)
    # two rows on different items: 0.2 apart, standard errors 0.05 / 1.96 and 0.1 / 1.96 (the halves facing)
    a, b = _r(0.7, 0.65, 0.9), _r(0.5, 0.3, 0.6)
    assert C.p_apart(a, b) == pytest.approx(math.erfc(0.2 / (math.hypot(0.05, 0.1) / C.Z95) / math.sqrt(2)))
    assert C.p_apart(a, b) == C.p_apart(b, a) and math.isnan(C.p_apart(a, _r(0.5, math.nan, math.nan)))


def test_holm_adjusts_a_family_by_hand():
    """p = 0.01, 0.04, 0.03, 0.005 (and a line not judged): sorted 0.005 × 4 = 0.02, 0.01 × 3 = 0.03,
    0.03 × 2 = 0.06, 0.04 × 1 = 0.04 -> 0.06 (never below the one before); the NaN is not counted in m."""
    adjusted = C.holm([0.01, math.nan, 0.04, 0.03, 0.005])
    assert adjusted[:1] + adjusted[2:] == pytest.approx([0.03, 0.06, 0.06, 0.02]) and math.isnan(adjusted[1])
    assert C.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0]) and C.holm([]) == []


def test_claim_picks_template_by_verdict_and_renders_rows():
    a, b = _r(0.62, 0.55, 0.70, model="toy-vilt"), _r(0.40, 0.31, 0.49, model="toy-vilt")
    templates = {C.HIGHER: "**{model}** accepts {a} and rejects {b}: positives higher",
                 C.LOWER: "{model}: negatives higher", C.UNRESOLVED: "{model}: {a.value} vs {b.value} not resolved"}
    c = C.claim("toy-vilt: pos vs neg", C.compare(a, b), templates, {"a": a, "b": b}, model="toy-vilt")
    assert c.verdict == C.HIGHER
    assert F.render_claim(c) == ("**toy-vilt** accepts 62.0% [55.0, 70.0] (n = 100) and rejects 40.0% [31.0, 49.0] "
                                 "(n = 100): positives higher")
    same = C.claim("t", C.compare(a, a), templates, {"a": a, "b": a}, model="m")
    assert F.render_claim(same) == "m: 62.0% vs 62.0% not resolved"
    assert C.by_topic([c, same], "t") is same
    with pytest.raises(KeyError, match="unknown"):
        F.render_claim(C.claim("x", C.HIGHER, "{unknown}"))


def test_numbers_percent_points_and_plain():
    assert N.number(0.6234, "acc") == "62.3%"
    assert N.number(-0.051, "acc_diff") == "-5.1 pts"
    assert N.number(0.3456, "r") == "0.35"
    assert N.number(float("nan"), "acc") == "n/a"
    assert N.cell(_r(0.5, 0.25, 0.75), with_n=True) == "50.0 [25.0, 75.0] (n = 100)"


def test_table_is_wide_with_cells_in_given_order():
    rows = R.frame([_r(v, v - 0.1, v + 0.1, model=m, subset=s, metric=k)
                    for m in ("a", "b") for s in ("all", "verb") for k, v in (("pos", 0.8), ("neg", 0.3))])
    wide = F.table(rows, "model", ["subset", "metric"], order={"metric": ["neg", "pos"]})
    assert list(wide.index) == ["a", "b"]
    assert list(wide.columns) == [("all", "neg"), ("verb", "neg"), ("all", "pos"), ("verb", "pos")]
    assert wide.loc["a", ("all", "pos")] == "80.0 [70.0, 90.0]"
    assert F.counts(rows, "model", ["subset", "metric"]).loc["b", ("verb", "neg")] == 100


def test_each_studys_declared_paper_reports_its_rows_and_rejects_an_unknown_table():
    for study in (s for s in STUDIES.values() if s.paper):
        rows = papers.reported(load(study.paper))
        assert len(rows) and (rows["source"] != R.OURS).all()
        assert (rows["study"] == study.name).all()
        fractions = rows[~rows["metric"].map(N.is_plain)]["value"].dropna()
        assert fractions.between(-1, 1).all(), f"{study.name}: paper percentages must be stored as fractions"
        with pytest.raises(KeyError, match="no 'Table 99'"):
            papers.reported(load(study.paper), "Table 99")


def test_bootstrap_free_rows_keep_nan_interval():
    df = R.frame([_r(0.5, np.nan, np.nan)])
    assert df["ci_low"].isna().all()


def test_small_differences_never_print_as_zero():
    assert N.number(-0.000012, "mu_c_diff") == "-0.0012 pts"
    assert N.number(0.0, "mu_c_diff") == "+0.0 pts"
    assert N.number(0.00049, "acc") == "0.049%"
    assert N.number(0.004, "r") == "0.0040"   # two significant digits
    assert N.number(3e-7, "p") == "3.0e-07"   # not "0.0000"


def test_magnitude_of_a_paired_difference_is_unsigned_with_its_interval_mirrored():
    gain, drop = _r(-0.648, -0.70, -0.60, metric="accuracy_diff"), _r(0.648, 0.60, 0.70, metric="accuracy_diff")
    for r in (gain, drop):
        m = F.magnitude(r)
        assert (m["metric"], m["value"], m["ci_low"], m["ci_high"]) == ("accuracy_size", pytest.approx(0.648),
                                                                        pytest.approx(0.60), pytest.approx(0.70))
        assert F._RowView(r).size == "64.8 pts [60.0, 70.0] (n = 100)"
    assert F.magnitude(_r(0.5, 0.4, 0.6)) == dict(_r(0.5, 0.4, 0.6))   # not a difference: unchanged


@pytest.mark.parametrize("value, verdict", [(0.648, C.HIGHER), (-0.648, C.LOWER)])
def test_drop_and_gain_sentences_quote_the_magnitude_their_verdict_names(value, verdict):
    """Masking's and predicate–noun's paired changes: the verdict (the sign) picks the word (a drop or a gain,
    lowers or raises), so the number quoted is the unsigned magnitude, never "+64.8" after "a drop of"."""
    from probekit.studies.masking import claims as masking_claims
    from probekit.studies.prednoun import claims as prednoun_claims
    lo, hi = sorted((value - 0.05, value + 0.05))
    rows = []
    for cond, v, lo_, hi_, metric in (("full image", 0.9, 0.85, 0.95, "accuracy"),
                                      ("subject ablated", 0.9 - value, 0.8 - value, 1 - value, "accuracy"),
                                      ("full image − subject ablated", value, lo, hi, "accuracy_diff"),
                                      ("full image", 0.9, 0.85, 0.95, "word_accuracy"),
                                      ("full image − subject ablated", value, lo, hi, "word_accuracy_diff")):
        rows.append(R.row(study="masking", probe="top-k", model="m", condition=cond, subset="all", metric=metric,
                          value=v, ci=(lo_, hi_), n=100, chance=0.25 if not metric.endswith("diff") else 0.0))
    found = masking_claims.claims(R.frame(rows))
    said = [C.by_topic(found, "m: full image − subject ablated"),
            C.by_topic(found, "m: whole words, full image − subject ablated")]
    cropped = [R.row(study="prednoun", probe="pairs", model="m", condition=c, subset="all", metric=m, value=v,
                     ci=(a, b), n=100, chance=0.25)
               for c, m, v, a, b in (("full", "pair_accuracy", 0.5, 0.4, 0.6),
                                     ("cropped", "pair_accuracy", 0.5 + value / 2, 0.4 + value / 2, 0.6 + value / 2),
                                     (prednoun_claims.CROP_GAIN, "pair_accuracy_diff", value, lo, hi))]
    cropped += [R.row(study="prednoun", probe="pairs", model="m", condition="full", subset=s, metric="pair_accuracy",
                      value=0.5, ci=(0.4, 0.6), n=50, chance=0.25) for s in ("noun", "predicate")]
    said.append(C.by_topic(prednoun_claims.claims(R.frame(cropped)), "m: crop gain"))
    for c in said:
        assert c.verdict == verdict
        text = F.render_claim(c)
        assert F._RowView(c.rows["d"]).size in text
        assert N.number(c.rows["d"]["value"], c.rows["d"]["metric"]) not in text   # the signed "+64.8 pts"


def test_a_size_of_a_metric_in_points_is_shown_in_points():
    from probekit.numbers import number
    assert number(5.0, "delta_c_pts_size") == "5.00 pts"          # the equivalence margin of a Δc claim
    assert number(5.0, "delta_c_pts_size", unit=False) == "5.00"
    assert number(0.05, "accuracy_size") == "5.0 pts" and number(-0.05, "delta_c_pts_diff") == "-0.05"


def test_a_papers_effect_is_the_difference_of_two_of_its_rows():
    # SVO-Probes Table 5: MMT pretrained on Conceptual Captions 34.8 % on negative pairs, on COCO 60.9 %
    where = dict(probe="svo", subset="all", metric="neg")
    assert papers.effect(svo_probes, {**where, "model": "MMT"}, {**where, "model": "MMT-COCO"}) == pytest.approx(-0.261)
    # the guided-masking paper's ViLBERT: top-5 73.9 % with the full image, 71.5 % with the subject blanked
    topk = dict(probe="top-k", model="ViLBERT", subset="SVO-Probes", metric="accuracy")
    assert papers.effect(guided_masking, {**topk, "condition": "full image"},
                         {**topk, "condition": "subject ablated"}) == pytest.approx(0.024)
    with pytest.raises(KeyError, match="rows where"):   # a where that names no single row
        papers.effect(svo_probes, dict(model="MMT"), dict(model="MMT-COCO"))
