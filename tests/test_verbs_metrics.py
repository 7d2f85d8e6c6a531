"""ITM metrics of the verbs chapter on hand-computed cases, as rows of the one result schema."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from probekit.metrics.itm import (coverage, itm_accuracy, itm_accuracy_diff, negative_type, pairwise_accuracy,
                                  pairwise_by, ranked_verbs, triplet_negative_counts, verb_accuracy,
                                  verb_pair_counts)
from probekit.results import COLUMNS
from probekit.results import ITEMS as ROW_ITEMS
from probekit.studies.pair_scores import score_pairs


def table(rows, triplets=None):
    """Item rows; each sentence's positive triplet is "<sentence>,<verb>,x" unless ``triplets`` says otherwise;
    image paths "/<id>" (present)."""
    out = pd.DataFrame(rows, columns=["sentence", "pos_image_id", "neg_image_id", "subj_neg", "verb_neg",
                                      "obj_neg", "verb"])
    out["pos_triplet"] = triplets if triplets is not None else out["sentence"] + "," + out["verb"] + ",x"
    out["pos_image"], out["neg_image"] = "/" + out["pos_image_id"], "/" + out["neg_image_id"]
    return out


# s1 has two negatives sharing its positive p1 (counted once); s3's row has two flags set (left out everywhere).
ROWS = [
    ("s1", "p1", "n1", True, False, False, "run"),
    ("s1", "p1", "n2", False, True, False, "run"),
    ("s2", "p2", "n3", False, True, False, "eat"),
    ("s2", "p2", "n4", False, False, True, "eat"),
    ("s3", "p3", "n5", True, True, False, "sit"),
]
ITEMS = table(ROWS)
POS = [0.9, 0.9, 0.4, 0.4, 0.8]
NEG = [0.2, 0.7, 0.1, 0.6, 0.1]


def values(results):
    return {(r.subset, r.metric): (r.value, r.n) for r in results.itertuples()}


def test_exactly_one_flag_decides_the_negative_type():
    assert negative_type(ITEMS).tolist() == ["subject", "verb", "verb", "object", None]


def test_itm_accuracy_by_hand():
    rows = itm_accuracy(ITEMS, POS, NEG, "m", threshold=0.5, n_resamples=50)
    assert list(rows.columns) == [*COLUMNS, ROW_ITEMS] and set(rows["study"]) == {"verbs"} and set(rows["probe"]) == {"svo"}
    assert set(rows["condition"]) == {"threshold 0.5"} and set(rows["chance"]) == {0.5}
    assert set(rows["source"]) == {"ours"} and set(rows["model"]) == {"m"}
    got = values(rows)
    # all: positives (s1,p1)=0.9 ok, (s2,p2)=0.4 wrong -> 1/2; negatives 0.2 ok, 0.7 wrong, 0.1 ok, 0.6 wrong -> 2/4
    assert got["all", "pos"] == (0.5, 2) and got["all", "neg"] == (0.5, 4) and got["all", "avg"] == (0.5, 6)
    assert got["subject", "pos"] == (1.0, 1) and got["subject", "neg"] == (1.0, 1)
    # verb: positives p1 ok, p2 wrong; negatives n2 wrong (0.7), n3 ok (0.1)
    assert got["verb", "pos"] == (0.5, 2) and got["verb", "neg"] == (0.5, 2)
    assert got["object", "avg"] == (0.0, 2)
    # the threshold is a parameter: at 0.35 every positive is a match, and n4 (0.6) stays wrong
    low_rows = itm_accuracy(ITEMS, POS, NEG, "m", threshold=0.35, n_resamples=50)
    assert set(low_rows["condition"]) == {"threshold 0.35"}
    low = values(low_rows)
    assert low["all", "pos"][0] == 1.0 and low["all", "neg"][0] == 0.5 and low["all", "avg"][0] == 0.75


def test_paired_difference_of_two_runs_by_hand():
    # run b accepts everything: positives p1, p2 both right, negatives n1..n4 all wrong (s3 is left out everywhere)
    b_pos, b_neg = [0.9, 0.9, 0.6, 0.6, 0.9], [0.9, 0.9, 0.9, 0.9, 0.9]
    rows = itm_accuracy_diff(ITEMS, (POS, NEG), (b_pos, b_neg), "a", "b", threshold=0.5, n_resamples=200)
    assert list(rows.columns) == [*COLUMNS, ROW_ITEMS] and set(rows["chance"]) == {0.0}
    assert set(rows["condition"]) == {"a − b, threshold 0.5"} and set(rows["subset"]) == {"all"}
    got = values(rows)
    # positives: a 1/2, b 2/2 -> -0.5 over 2; negatives: a 2/4, b 0/4 -> +0.5 over 4; average (-0.5 + 0.5) / 2 = 0
    assert got["all", "pos_diff"] == (-0.5, 2) and got["all", "neg_diff"] == (0.5, 4)
    assert got["all", "avg_diff"] == (0.0, 6)
    # paired: the per-negative differences are 1, 0, 1, 0, so no resample can fall below 0 or above 1
    neg = rows[rows["metric"] == "neg_diff"].iloc[0]
    assert 0.0 <= neg["ci_low"] <= 0.5 <= neg["ci_high"] <= 1.0
    # a row one run could not score is dropped from both: without row (s2, n3) the negatives are n1, n2, n4, of
    # which a rejects n1 only and b none (p2 stays, through row (s2, n4))
    b_neg[2] = np.nan
    got = values(itm_accuracy_diff(ITEMS, (POS, NEG), (b_pos, b_neg), "a", "b", n_resamples=50))
    assert got["all", "pos_diff"] == (-0.5, 2) and got["all", "neg_diff"] == (pytest.approx(1 / 3), 3)


def test_average_weights_positives_and_negatives_equally():
    rows = table([("s", "p", f"n{i}", False, True, False, "v") for i in range(3)])
    got = values(itm_accuracy(rows, [0.9] * 3, [0.9, 0.9, 0.1], "m", n_resamples=50))
    assert got["all", "pos"] == (1.0, 1)  # one positive, not three
    assert got["all", "avg"][0] == pytest.approx((1.0 + 1 / 3) / 2)


def test_a_row_with_an_unscored_pair_is_dropped_whole_and_counted():
    # row 0 (subject) lost its positive score, row 3 (object) its negative score: both rows go, positives too
    pos, neg = [np.nan] + POS[1:], NEG[:3] + [np.nan, 0.1]
    got = values(itm_accuracy(ITEMS, pos, neg, "m", n_resamples=50))
    assert got["subject", "pos"] == (pytest.approx(np.nan, nan_ok=True), 0)
    assert got["object", "pos"][1] == 0  # p2's positive is still counted once, through row 2
    assert got["all", "pos"] == (0.5, 2) and got["all", "neg"] == (0.5, 2)  # n2 wrong, n3 right
    assert coverage(ITEMS, pos, neg) == {"rows": 5, "scored": 2, "missing_pos_image": 0, "missing_neg_image": 0,
                                         "unreadable_image": 2, "mixed_flags": 1}


def test_a_row_missing_its_negative_image_loses_its_positive_too():
    """The authors' notebook drops the row: verb positive accuracy 1.000 (probekit used to give 0.500)."""
    items = table([("s1", "p1", "n1", False, True, False, "run"), ("s2", "p2", "n2", False, True, False, "run"),
                   ("s3", "p3", "n3", True, False, False, "run")])
    items.loc[1, "neg_image"] = None  # s2's negative image is missing: its positive (rejected, 0.1) goes too
    items.loc[2, "pos_image"] = None
    scores = {("s1", "/p1"): 0.9, ("s1", "/n1"): 0.2, ("s2", "/p2"): 0.1, ("s2", "/n2"): 0.3, ("s3", "/n3"): 0.8}
    scorer = CountingScorer({"match"}, scores)
    pos, neg = score_pairs(scorer, items, "match")
    assert [pair for _, pairs in scorer.calls for pair in pairs] == [("/p1", "s1"), ("/n1", "s1")]
    got = values(itm_accuracy(items, pos, neg, "m", n_resamples=50))
    assert got["verb", "pos"] == (1.0, 1) and got["verb", "neg"] == (1.0, 1) and got["all", "avg"] == (1.0, 2)
    assert coverage(items, pos, neg) == {"rows": 3, "scored": 1, "missing_pos_image": 1, "missing_neg_image": 1,
                                         "unreadable_image": 0, "mixed_flags": 0}


def test_intervals_bracket_the_value_and_shrink_with_n():
    rng = np.random.default_rng(0)
    small = itm_accuracy(ITEMS, POS, NEG, "m", n_resamples=200)
    assert ((small.ci_low <= small.value + 1e-12) & (small.value <= small.ci_high + 1e-12)).all()
    big_items = table([(f"s{i}", f"p{i}", f"n{i}", False, True, False, "v") for i in range(2000)])
    big = itm_accuracy(big_items, rng.random(2000), rng.random(2000), "m", n_resamples=200).set_index(
        ["subset", "metric"])
    width = big.loc[("all", "neg"), "ci_high"] - big.loc[("all", "neg"), "ci_low"]
    assert 0.02 < width < 0.06  # about 2 * 1.96 * sqrt(.25 / 2000) = 0.044


def test_few_resamples_give_a_valid_row_whose_interval_holds_the_value():
    # five verb rows: positives 4/5 right, negatives 3/5 right, "avg" (4/5 + 3/5) / 2 = 0.7; the 3 resamples of
    # seed 1 (sentences drawn whole) each give 0.8, an interval [0.8, 0.8] above 0.7 (such an interval raised
    # SchemaError): its lower end moves to 0.7
    items = table([(f"s{i}", f"p{i}", f"n{i}", False, True, False, "v") for i in range(5)])
    rows = itm_accuracy(items, [0.9, 0.9, 0.9, 0.1, 0.9], [0.1, 0.9, 0.1, 0.9, 0.1], "m", n_resamples=3, seed=1)
    avg = rows.set_index(["subset", "metric"]).loc[("all", "avg")]
    assert avg["value"] == pytest.approx(0.7) and avg["ci_low"] == pytest.approx(0.7)
    assert avg["ci_high"] == pytest.approx(0.8)
    scored = rows[rows["subset"].isin(["all", "verb"])]           # subject and object have no rows here (NaN)
    assert len(scored) == 6 and ((scored.ci_low <= scored.value) & (scored.value <= scored.ci_high)).all()


def test_random_scorer_lands_near_chance():
    rng = np.random.default_rng(1)
    n = 3000
    flags = np.eye(3, dtype=bool)[rng.integers(0, 3, n)]
    items = pd.DataFrame(dict(sentence=[f"s{i // 3}" for i in range(n)], pos_image_id=[f"p{i // 3}" for i in range(n)],
                              neg_image_id=[f"n{i}" for i in range(n)], subj_neg=flags[:, 0], verb_neg=flags[:, 1],
                              obj_neg=flags[:, 2], verb=rng.choice(["a", "b", "c"], n), pos_triplet="x,a,y"))
    pos = np.repeat(rng.random(n // 3), 3)  # one score per (sentence, positive image)
    res = itm_accuracy(items, pos, rng.random(n), "random", n_resamples=200).set_index(["subset", "metric"])
    assert abs(res.loc[("all", "avg"), "value"] - 0.5) < 0.04
    assert abs(res.loc[("verb", "avg"), "value"] - 0.5) < 0.06
    pair = pairwise_accuracy(items, pos, rng.random(n), "random", n_resamples=200).set_index("subset")
    assert abs(pair.loc["all", "value"] - 0.5) < 0.04


def test_pairwise_accuracy_by_hand():
    rows = pairwise_accuracy(ITEMS, POS, NEG, "m", n_resamples=50)
    assert list(rows.columns) == [*COLUMNS, ROW_ITEMS] and set(rows["metric"]) == {"pairwise"} and set(rows["condition"]) == {""}
    assert set(rows["chance"]) == {0.5} and list(rows["subset"]) == ["all", "subject", "verb", "object"]
    got = values(rows)
    # pos > neg in rows 0, 1, 2 (0.9>0.2, 0.9>0.7, 0.4>0.1), not in row 3 (0.4<0.6); row 4 left out
    assert got["all", "pairwise"] == (0.75, 4) and got["verb", "pairwise"] == (1.0, 2)
    assert got["object", "pairwise"] == (0.0, 1)
    tie = values(pairwise_accuracy(ITEMS.iloc[:1], [0.5], [0.5], "m", n_resamples=50))
    assert tie["all", "pairwise"] == (0.5, 1)


def test_pairwise_by_groups_of_rows_by_hand():
    # rows 0 (0.9>0.2) and 3 (0.4<0.6) in "a", rows 1 (0.9>0.7) and 2 (0.4>0.1) in "b"; row 4 in no group (and
    # left out anyway: two flags)
    rows = pairwise_by(ITEMS, POS, NEG, pd.Series(["a", "b", "b", "a", None], index=ITEMS.index), "cue", "m",
                       n_resamples=50)
    assert list(rows.columns) == [*COLUMNS, ROW_ITEMS] and set(rows["probe"]) == {"cue"} and set(rows["metric"]) == {"pairwise"}
    assert list(rows["subset"]) == ["a", "b"] and values(rows) == {("a", "pairwise"): (0.5, 2),
                                                                  ("b", "pairwise"): (1.0, 2)}


def test_verb_accuracy_filters_on_triplets_and_ranks():
    items = ITEMS.assign(pos_triplet=["a,run,x", "a,run,x", "b,eat,y", "b,eat,y", "c,sit,z"])
    got = verb_accuracy(items, POS, NEG, "m", min_negatives=2, n_resamples=50)
    assert list(got.columns) == COLUMNS and set(got["probe"]) == {"svo-verbs"} and set(got["metric"]) == {"neg"}
    got = got.set_index("subset")
    assert list(got.index) == ["eat", "run"]  # "sit" has only a mixed-flag row
    assert got.loc["run", "value"] == 0.5 and got.loc["eat", "value"] == 0.5 and got.loc["eat", "n"] == 2
    assert triplet_negative_counts(items, POS, NEG).to_dict() == {"a,run,x": 2, "b,eat,y": 2}
    assert verb_accuracy(items, POS, NEG, "m", min_negatives=3, n_resamples=50).empty
    pair = verb_accuracy(items, POS, NEG, "m", metric="pairwise", min_negatives=2, n_resamples=50).set_index("subset")
    assert pair.loc["run", "value"] == 1.0 and pair.loc["eat", "value"] == 0.5
    assert set(pair["metric"]) == {"pairwise"} and set(pair["condition"]) == {""}
    # a missing negative score takes that row out of its triplet's count, and so out of the filter
    assert triplet_negative_counts(items, POS, [0.2, np.nan, 0.1, 0.6, 0.1]).to_dict() == {"a,run,x": 1,
                                                                                          "b,eat,y": 2}
    verbs = pd.DataFrame({"subset": list("abcde"), "value": [0.5, 0.1, 0.9, 0.1, 0.7]})
    assert ranked_verbs(verbs, k=2) == ["b", "d", "e", "c"]  # two hardest (ties by name), two easiest
    assert ranked_verbs(verbs, k=3) == ["b", "d", "a", "e", "c"]  # at most 2 k verbs: all of them


def test_table6_keeps_triplets_not_verbs():
    """A verb spread over triplets with 20 and 15 negatives (35 in all) is dropped; a 30-negative triplet stays."""
    rows = [("s1", "p1", f"a{i}", False, True, False, "hug") for i in range(20)]
    rows += [("s2", "p2", f"b{i}", False, True, False, "hug") for i in range(15)]
    rows += [("s3", "p3", f"c{i}", False, False, True, "ride") for i in range(30)]
    items = table(rows, ["man,hug,dog"] * 20 + ["girl,hug,cat"] * 15 + ["man,ride,horse"] * 30)
    pos, neg = np.full(65, 0.9), np.r_[np.full(35, 0.1), np.full(15, 0.1), np.full(15, 0.8)]
    assert triplet_negative_counts(items, pos, neg).to_dict() == {"girl,hug,cat": 15, "man,hug,dog": 20,
                                                                  "man,ride,horse": 30}
    kept = verb_accuracy(items, pos, neg, "m", min_negatives=30, n_resamples=50).set_index("subset")
    assert list(kept.index) == ["ride"] and kept.loc["ride", "value"] == 0.5 and kept.loc["ride", "n"] == 30
    both = verb_accuracy(items, pos, neg, "m", min_negatives=15, n_resamples=50).set_index("subset")
    assert both.loc["hug", "value"] == 1.0 and both.loc["hug", "n"] == 35


def test_verb_pairs_count_positives_plus_negatives_of_verb_negatives_with_both_images():
    items = table(ROWS + [("s4", "p4", "n6", False, True, False, "go")])
    items.loc[5, "neg_image"] = None  # not countable: no negative image
    # verb negatives with both images: (s1, p1, n2) and (s2, p2, n3): 2 positive + 2 negative pairs
    assert verb_pair_counts(items) == {"pos": 2, "neg": 2, "all": 4}


class CountingScorer:
    """Stands in for a loaded scorer: scores are a fixed function of (image, text) (or looked up in ``scores``
    by (text, image)); every call is recorded."""

    def __init__(self, capabilities, scores=None):
        self.name, self.capabilities, self.calls, self.scores = "counting", frozenset(capabilities), [], scores

    def match(self, images, texts):
        self.calls.append(("match", list(zip(images, texts))))
        if self.scores is not None:
            return np.array([self.scores[text, image] for image, text in zip(images, texts)])
        return np.array([0.9 if text.endswith(image[-1]) else 0.2 for image, text in zip(images, texts)])

    def choose_image(self, image_lists, texts, head=None):
        self.calls.append(("choose_image", [tuple(x) for x in image_lists], head))
        return np.array([[0.7, 0.3] for _ in image_lists])


def test_score_pairs_scores_each_distinct_pair_once_and_leaves_missing_images_nan():
    items = pd.DataFrame(dict(sentence=["s a", "s a", "s a", "t b"], pos_image=["/a", "/a", "/a", None],
                              neg_image=["/x", "/y", None, "/b"]))
    itm_scorer = CountingScorer({"match", "fill_mask"})
    pos, neg = score_pairs(itm_scorer, items, "match")
    assert len(itm_scorer.calls) == 1 and len(itm_scorer.calls[0][1]) == 3  # (s a,/a) once, /x, /y
    np.testing.assert_allclose(pos, [0.9, 0.9, np.nan, np.nan])  # rows 2, 3 lack an image: dropped whole
    np.testing.assert_allclose(neg, [0.2, 0.2, np.nan, np.nan])
    dual = CountingScorer({"similarity"})
    pos, neg = score_pairs(dual, items, "similarity")
    assert dual.calls == [("choose_image", [("/a", "/x"), ("/a", "/y")], "similarity")]
    np.testing.assert_allclose(pos, [0.7, 0.7, np.nan, np.nan])
    with pytest.raises(ValueError, match="fill_mask"):
        score_pairs(dual, items, "fill_mask")


def test_mirrored_verb_negatives_are_resampled_by_unit_not_row_by_row():
    # 200 verb negatives each with its mirror (the other sentence, the images swapped), scored by an image-only
    # model: exactly one row of each pair is right, so pairwise accuracy is exactly 1/2 whatever units are drawn
    rng = np.random.default_rng(5)
    rows, pos, neg = [], [], []
    for i, (a, b) in enumerate(rng.random((200, 2))):
        rows += [(f"s{i}", f"p{i}", f"q{i}", False, True, False, "run"), (f"t{i}", f"q{i}", f"p{i}", False, True,
                                                                         False, "eat")]
        pos, neg = pos + [a, b], neg + [b, a]
    mirrored = table(rows).assign(unit=np.repeat([f"u{i}" for i in range(200)], 2))
    by_unit = pairwise_accuracy(mirrored, pos, neg, "m").set_index("subset").loc["verb"]
    by_sentence = pairwise_accuracy(mirrored.drop(columns="unit"), pos, neg, "m").set_index("subset").loc["verb"]
    assert by_unit["value"] == by_sentence["value"] == 0.5 and by_unit["n"] == 400
    assert (by_unit["ci_low"], by_unit["ci_high"]) == (0.5, 0.5)
    # each sentence its own unit: rows one by one, about ± 1.96 sqrt(.25 / 400) = ± 4.9 points
    assert by_sentence["ci_high"] - by_sentence["ci_low"] == pytest.approx(2 * 1.96 * np.sqrt(0.25 / 400), rel=0.2)
