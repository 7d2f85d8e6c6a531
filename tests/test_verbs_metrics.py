"""ITM metrics of the verbs chapter on hand-computed cases, as rows of the one result schema."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from probekit.metrics.itm import (coverage, itm_accuracy, negative_type, pairwise_accuracy, ranked_verbs,
                                  score_pairs, verb_accuracy, verb_image_counts)
from probekit.results import COLUMNS


def table(rows):
    return pd.DataFrame(rows, columns=["sentence", "pos_image_id", "neg_image_id", "subj_neg", "verb_neg",
                                       "obj_neg", "verb"])


# s1 has two negatives sharing its positive p1 (counted once); s3's row has two flags set (left out everywhere).
ITEMS = table([
    ("s1", "p1", "n1", True, False, False, "run"),
    ("s1", "p1", "n2", False, True, False, "run"),
    ("s2", "p2", "n3", False, True, False, "eat"),
    ("s2", "p2", "n4", False, False, True, "eat"),
    ("s3", "p3", "n5", True, True, False, "sit"),
])
POS = [0.9, 0.9, 0.4, 0.4, 0.8]
NEG = [0.2, 0.7, 0.1, 0.6, 0.1]


def values(results):
    return {(r.subset, r.metric): (r.value, r.n) for r in results.itertuples()}


def test_exactly_one_flag_decides_the_negative_type():
    assert negative_type(ITEMS).tolist() == ["subject", "verb", "verb", "object", None]


def test_itm_accuracy_by_hand():
    rows = itm_accuracy(ITEMS, POS, NEG, "m", threshold=0.5, n_resamples=50)
    assert list(rows.columns) == COLUMNS and set(rows["study"]) == {"verbs"} and set(rows["probe"]) == {"svo"}
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


def test_average_weights_positives_and_negatives_equally():
    rows = table([("s", "p", f"n{i}", False, True, False, "v") for i in range(3)])
    got = values(itm_accuracy(rows, [0.9] * 3, [0.9, 0.9, 0.1], "m", n_resamples=50))
    assert got["all", "pos"] == (1.0, 1)  # one positive, not three
    assert got["all", "avg"][0] == pytest.approx((1.0 + 1 / 3) / 2)


def test_unscored_pairs_are_left_out_and_counted():
    got = values(itm_accuracy(ITEMS, [np.nan] + POS[1:], NEG[:3] + [np.nan, 0.1], "m", n_resamples=50))
    assert got["subject", "pos"] == (pytest.approx(np.nan, nan_ok=True), 0)
    assert got["all", "neg"] == (pytest.approx(2 / 3), 3)
    assert coverage(ITEMS, [np.nan] + POS[1:], NEG[:3] + [np.nan, 0.1]) == \
        {"rows": 5, "scored": 2, "missing_image": 2, "mixed_flags": 1}


def test_intervals_bracket_the_value_and_shrink_with_n():
    rng = np.random.default_rng(0)
    small = itm_accuracy(ITEMS, POS, NEG, "m", n_resamples=200)
    assert ((small.ci_low <= small.value + 1e-12) & (small.value <= small.ci_high + 1e-12)).all()
    big_items = table([(f"s{i}", f"p{i}", f"n{i}", False, True, False, "v") for i in range(2000)])
    big = itm_accuracy(big_items, rng.random(2000), rng.random(2000), "m", n_resamples=200).set_index(
        ["subset", "metric"])
    width = big.loc[("all", "neg"), "ci_high"] - big.loc[("all", "neg"), "ci_low"]
    assert 0.02 < width < 0.06  # about 2 * 1.96 * sqrt(.25 / 2000) = 0.044


def test_random_scorer_lands_near_chance():
    rng = np.random.default_rng(1)
    n = 3000
    flags = np.eye(3, dtype=bool)[rng.integers(0, 3, n)]
    items = pd.DataFrame(dict(sentence=[f"s{i // 3}" for i in range(n)], pos_image_id=[f"p{i // 3}" for i in range(n)],
                              neg_image_id=[f"n{i}" for i in range(n)], subj_neg=flags[:, 0], verb_neg=flags[:, 1],
                              obj_neg=flags[:, 2], verb=rng.choice(["a", "b", "c"], n)))
    pos = np.repeat(rng.random(n // 3), 3)  # one score per (sentence, positive image)
    res = itm_accuracy(items, pos, rng.random(n), "random", n_resamples=200).set_index(["subset", "metric"])
    assert abs(res.loc[("all", "avg"), "value"] - 0.5) < 0.04
    assert abs(res.loc[("verb", "avg"), "value"] - 0.5) < 0.06
    pair = pairwise_accuracy(items, pos, rng.random(n), "random", n_resamples=200).set_index("subset")
    assert abs(pair.loc["all", "value"] - 0.5) < 0.04


def test_pairwise_accuracy_by_hand():
    rows = pairwise_accuracy(ITEMS, POS, NEG, "m", n_resamples=50)
    assert list(rows.columns) == COLUMNS and set(rows["metric"]) == {"pairwise"} and set(rows["condition"]) == {""}
    assert set(rows["chance"]) == {0.5} and list(rows["subset"]) == ["all", "subject", "verb", "object"]
    got = values(rows)
    # pos > neg in rows 0, 1, 2 (0.9>0.2, 0.9>0.7, 0.4>0.1), not in row 3 (0.4<0.6); row 4 left out
    assert got["all", "pairwise"] == (0.75, 4) and got["verb", "pairwise"] == (1.0, 2)
    assert got["object", "pairwise"] == (0.0, 1)
    tie = values(pairwise_accuracy(ITEMS.iloc[:1], [0.5], [0.5], "m", n_resamples=50))
    assert tie["all", "pairwise"] == (0.5, 1)


def test_verb_accuracy_filters_on_distinct_negative_images_and_ranks():
    got = verb_accuracy(ITEMS, POS, NEG, "m", min_count=2, n_resamples=50)
    assert list(got.columns) == COLUMNS and set(got["probe"]) == {"svo-verbs"} and set(got["metric"]) == {"neg"}
    got = got.set_index("subset")
    assert list(got.index) == ["eat", "run"]  # "sit" has only a mixed-flag row
    assert got.loc["run", "value"] == 0.5 and got.loc["eat", "value"] == 0.5 and got.loc["eat", "n"] == 2
    assert verb_image_counts(ITEMS, POS, NEG).to_dict() == {"eat": 2, "run": 2}
    assert verb_accuracy(ITEMS, POS, NEG, "m", min_count=3, n_resamples=50).empty
    pair = verb_accuracy(ITEMS, POS, NEG, "m", metric="pairwise", min_count=2, n_resamples=50).set_index("subset")
    assert pair.loc["run", "value"] == 1.0 and pair.loc["eat", "value"] == 0.5
    assert set(pair["metric"]) == {"pairwise"} and set(pair["condition"]) == {""}
    # a missing negative score takes that image out of the verb's count, and so out of the filter
    assert verb_image_counts(ITEMS, POS, [0.2, np.nan, 0.1, 0.6, 0.1]).to_dict() == {"eat": 2, "run": 1}
    verbs = pd.DataFrame({"subset": list("abcde"), "value": [0.5, 0.1, 0.9, 0.1, 0.7]})
    assert ranked_verbs(verbs, k=2) == ["b", "d", "e", "c"]  # two hardest (ties by name), two easiest
    assert ranked_verbs(verbs, k=3) == ["b", "d", "a", "e", "c"]  # at most 2 k verbs: all of them


class CountingScorer:
    """Stands in for a loaded scorer: scores are a fixed function of (image, text); every call is recorded."""

    def __init__(self, capabilities):
        self.name, self.capabilities, self.calls = "counting", frozenset(capabilities), []

    def match(self, images, texts):
        self.calls.append(("match", list(zip(images, texts))))
        return np.array([0.9 if text.endswith(image[-1]) else 0.2 for image, text in zip(images, texts)])

    def choose_image(self, image_lists, texts, head=None):
        self.calls.append(("choose_image", [tuple(x) for x in image_lists], head))
        return np.array([[0.7, 0.3] for _ in image_lists])


def test_score_pairs_scores_each_distinct_pair_once_and_leaves_missing_images_nan():
    items = pd.DataFrame(dict(sentence=["s a", "s a", "s a", "t b"], pos_image=["/a", "/a", "/a", None],
                              neg_image=["/x", "/y", None, "/b"]))
    itm_scorer = CountingScorer({"match", "fill_mask"})
    pos, neg = score_pairs(itm_scorer, items, "match")
    assert len(itm_scorer.calls) == 1 and len(itm_scorer.calls[0][1]) == 4  # (s a,/a) once, /x, /y, /b
    np.testing.assert_allclose(pos, [0.9, 0.9, 0.9, np.nan])
    np.testing.assert_allclose(neg, [0.2, 0.2, np.nan, 0.9])
    dual = CountingScorer({"similarity"})
    pos, neg = score_pairs(dual, items, "similarity")
    assert dual.calls == [("choose_image", [("/a", "/x"), ("/a", "/y")], "similarity")]
    np.testing.assert_allclose(pos, [0.7, 0.7, np.nan, np.nan])
    with pytest.raises(ValueError, match="fill_mask"):
        score_pairs(dual, items, "fill_mask")
