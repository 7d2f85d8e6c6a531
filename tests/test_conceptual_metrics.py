import numpy as np
import pandas as pd
import pytest

from probekit.metrics.background import (average_precision, probe_b_rows, random_ranking_ap, relative_robustness,
                                        single_object_correct)
from probekit.metrics.conceptual import (log_odds, probe_c_rows, probe_r_item_metrics, probe_r_rows, winoground,
                                         zero_shot_rows)
from probekit.results import one
from probekit.studies.conceptual.scores import score_probe_b, zero_shot_scores


def test_winoground_scores_on_hand_made_groups():
    # s_ij = f(image_i, caption_j); caption_i describes image_i
    groups = {  # name: (s00, s01, s10, s11), expected (text, image, group)
        "all right": ((5, 1, 2, 6), (1, 1, 1)),
        "texts right, images wrong": ((5, 4, 6, 7), (1, 0, 0)),   # caption 0 prefers image 1: 6 > 5
        "images right, texts wrong": ((3, 4, 1, 5), (0, 1, 0)),   # image 0 prefers caption 1: 4 > 3
        "one image prefers the wrong caption": ((5, 1, 6, 2), (0, 0, 0)),
        "tie counts as wrong": ((1, 1, 0, 2), (0, 1, 0)),
    }
    s = np.array([v[0] for v in groups.values()], dtype=float)
    got = winoground(*s.T)
    expected = {name: v[1] for name, v in groups.items()}
    for k, name in enumerate(groups):
        assert (got["text"][k], got["image"][k], got["group"][k]) == expected[name], name
    # confidence: mean over the two images of the softmax of the right caption
    assert got["confidence"][0] == pytest.approx((1 / (1 + np.exp(-4)) + 1 / (1 + np.exp(-4))) / 2)
    assert got["confidence"][4] == pytest.approx((0.5 + 1 / (1 + np.exp(-2))) / 2)


def test_winoground_image_score_counts_both_captions():
    got = winoground([3.0], [0.0], [1.0], [2.0])      # texts: 3>0, 2>1; images: 3>1, 2>0
    assert (got["text"][0], got["image"][0], got["group"][0]) == (1, 1, 1)
    got = winoground([3.0], [2.5], [1.0], [2.0])      # images: caption 1 prefers image 0 (2.5 > 2)
    assert (got["text"][0], got["image"][0], got["group"][0]) == (1, 0, 0)


def test_probe_r_confidence_is_a_two_way_softmax_and_itm_probabilities_normalise():
    m = probe_r_item_metrics([2.0, 0.0, np.nan], [0.0, 1.0, 0.0])
    assert m["confidence"][0] == pytest.approx(np.exp(2) / (np.exp(2) + 1))
    assert list(m["correct"][:2]) == [1.0, 0.0] and np.isnan(m["correct"][2])
    p1, p2 = 0.9, 0.6  # match probabilities of an ITM model
    c = probe_r_item_metrics(log_odds([p1]), log_odds([p2]))["confidence"][0]
    assert c == pytest.approx(p1 * (1 - p2) / (p1 * (1 - p2) + p2 * (1 - p1)))


def test_probe_r_and_c_rows_per_model_and_kind_as_fractions_with_chance():
    scored = pd.DataFrame({"model": ["m"] * 4, "kind": ["predicate_swap"] * 2 + ["subject_swap"] * 2,
                           "confidence": [0.8, 0.4, 0.9, 0.7], "correct": [1.0, 0.0, 1.0, 1.0]})
    t = probe_r_rows(scored)
    assert set(t["study"]) == {"conceptual"} and set(t["probe"]) == {"probe-r"}
    mu = one(t, subset="predicate_swap", metric="mu_c")
    assert mu["value"] == pytest.approx(0.6) and mu["n"] == 2 and mu["chance"] == 0.5
    assert one(t, subset="predicate_swap", metric="acc")["value"] == pytest.approx(0.5)
    assert one(t, subset="subject_swap", metric="acc")[["value", "ci_low", "ci_high"]].tolist() == [1.0, 1.0, 1.0]
    c = pd.DataFrame({"model": "m", "split": "object", **winoground([5, 5], [1, 6], [2, 1], [6, 2])})
    tc = probe_c_rows(c)
    assert one(tc, metric="text")["value"] == 0.5 and one(tc, metric="group")["value"] == 0.5
    assert one(tc, metric="text")["chance"] == 0.25 and one(tc, metric="group")["chance"] == pytest.approx(1 / 6)
    assert one(tc, metric="image")["subset"] == "object"


def test_average_precision_hand_computed():
    # ranking: pos, neg, pos, neg -> precision at the positives 1/1 and 2/3
    assert average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([0, 0, 1], [0.9, 0.8, 0.7]) == pytest.approx(1 / 3)
    assert average_precision([1, 1, 0], [0.2, 0.9, 0.1]) == 1.0
    # ties: the later class first by default, as the authors' argsort()[::-1] ranks [0.5, 0.5] (class 1, then 0)
    assert average_precision([1, 0], [0.5, 0.5]) == 0.5 and average_precision([0, 1], [0.5, 0.5]) == 1.0
    # three tied classes rank 2, 1, 0: positives at ranks 1 and 3; a tie below a higher score keeps that order
    assert average_precision([1, 0, 1], [0.7, 0.7, 0.7]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([1, 0, 0], [0.9, 0.2, 0.2]) == 1.0
    assert average_precision([0, 1, 0, 1], [0.9, 0.2, 0.2, 0.1]) == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert average_precision([1, 0], [0.5, 0.5], ties="pessimistic") == pytest.approx(0.5)
    assert average_precision([0, 1, 1], [0.7, 0.7, 0.7], ties="pessimistic") == pytest.approx((1 / 2 + 2 / 3) / 2)
    with pytest.raises(ValueError, match="ties"):
        average_precision([1, 0], [0.5, 0.5], ties="optimistic")
    assert np.isnan(average_precision([0, 0], [1, 2]))


def test_single_object_accuracy_is_argmax_and_the_first_of_tied_maxima_wins():
    # classes [bird, dog, car], logits [0, 3, 3]: argmax is dog (index 1), the first of the two maxima
    assert single_object_correct([0, 3, 3], 1) == 1.0           # target dog: right (a strict rule gave 0)
    assert single_object_correct([0, 3, 3], 2) == 0.0           # target car: wrong
    assert single_object_correct([0, 3, 3], 0) == 0.0
    assert np.isnan(single_object_correct([0, np.nan, 3], 1))


class _Fixed:
    """Every image scores the class prompts [bird, dog, car] at [0, 3, 3]."""
    name, capabilities = "fixed", {"similarity"}

    def similarity(self, images, texts):
        return np.array([[{"a bird": 0.0, "a dog": 3.0, "a car": 3.0}[t] for t in texts] for _ in images])


def test_score_probe_b_scores_single_object_ties_in_the_classes_order():
    classes = ["bird", "dog", "car"]
    prompts = {c: f"a {c}" for c in classes}
    derived = pd.DataFrame({"item_id": ["i1", "i2"], "filler": "black", "single_object": True,
                            "labels": [["dog"], ["car"]], "target": ["dog", "car"],
                            "x0": ["a.png", "b.png"], "x0_patch": ["c.png", "d.png"], "x1_fill": ["e.png", "f.png"]})
    scored = score_probe_b(_Fixed(), derived, classes, prompts)
    # dog ties car at 3 and comes first among the classes: right; car ties dog and comes after it: wrong
    assert scored["h_x0"].tolist() == [1.0, 0.0] and scored["h_x1_fill"].tolist() == [1.0, 0.0]
    assert scored["conf_x0"].tolist() == pytest.approx([np.exp(3) / (1 + 2 * np.exp(3))] * 2)


def test_relative_robustness_hand_computed():
    h, h_tilde = np.array([0.5, 1.0]), np.array([0.25, 1.0])
    assert relative_robustness(h, h_tilde) == pytest.approx((0.5 + 1.0) / 2)          # mean of ratios, not 1.25 / 1.5
    assert relative_robustness([0.5, 0.0], [1.0, 1.0]) == pytest.approx(2.0)  # h(x) = 0 left out; improvement > 1


def test_probe_b_rows_compute_map_gamma_and_confidence_change():
    scored = pd.DataFrame({"model": "m", "filler": "black", "single_object": False,
                           "h_x0": [1.0, 0.5], "h_x0_patch": [1.0, 0.5], "h_x1_fill": [0.5, 0.5],
                           "conf_x0": [0.6, 0.4], "conf_x0_patch": [0.5, 0.4], "conf_x1_fill": [0.2, 0.2]})
    t = probe_b_rows(scored)
    assert set(t["probe"]) == {"probe-b"} and set(t["condition"]) == {"black"}
    assert one(t, metric="map", subset="x0")["value"] == pytest.approx(0.75)
    assert one(t, metric="map", subset="x̃1")["value"] == pytest.approx(0.5)
    assert one(t, metric="gamma", subset="(x0, x̃1)")["value"] == pytest.approx((0.5 + 1.0) / 2)
    assert one(t, metric="delta_c_pts", subset="(x0, x̃0)")["value"] == pytest.approx(5.0)   # points
    assert one(t, metric="delta_c_pts", subset="(x0, x̃1)")["value"] == pytest.approx(30.0)
    single = scored.assign(single_object=True, h_x0=[1.0, 0.0], h_x1_fill=[1.0, 1.0])
    ts = probe_b_rows(single)
    assert set(ts["probe"]) == {"probe-b-single"}
    assert one(ts, metric="acc", subset="x0")["value"] == 0.5
    # Table 9's γ: the per-item ratio of the target's confidence, mean(0.2 / 0.6, 0.2 / 0.4), not acc 1.0 / 0.5
    assert one(ts, metric="gamma", subset="(x0, x̃1)")["value"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert one(ts, metric="gamma", subset="(x0, x̃0)")["value"] == pytest.approx((0.5 / 0.6 + 1) / 2)


def test_a_random_rankings_expected_ap_is_the_mean_over_every_order():
    from itertools import permutations
    for n, k in [(2, 1), (3, 2), (5, 2), (6, 3), (4, 4)]:
        positive = [True] * k + [False] * (n - k)
        orders = list(permutations(range(n)))
        every = np.mean([average_precision(positive, -np.array(order, float)) for order in orders])
        assert random_ranking_ap(n, k) == pytest.approx(every)
    assert random_ranking_ap(3, 2) == pytest.approx(29 / 36)    # AP 1, 5/6, 7/12 for positives at {1,2}, {1,3}, {2,3}


def test_probe_b_rows_carry_the_chance_level_of_their_own_items():
    scored = pd.DataFrame({"model": "m", "filler": "black", "single_object": False, "h_x0": [1.0, 0.5],
                           "h_x0_patch": [1.0, np.nan], "h_x1_fill": [0.5, 0.5], "conf_x0": 0.5, "conf_x0_patch": 0.5,
                           "conf_x1_fill": 0.5, "candidates": [["a", "b"], ["a", "b", "c"]],
                           "positive": [[True, False], [True, True, False]]})
    t = probe_b_rows(scored)
    # two classes, one positive: 3/4; three classes, two positives: 29/36; the item without x̃0 is left out there
    assert one(t, metric="map", subset="x0")["chance"] == pytest.approx((3 / 4 + 29 / 36) / 2)
    assert one(t, metric="map", subset="x̃0")["chance"] == pytest.approx(3 / 4)
    assert np.isnan(one(t, metric="gamma", subset="(x0, x̃1)")["chance"])
    single = probe_b_rows(scored.assign(single_object=True, positive=[[True, False], [False, True, False]]))
    assert one(single, metric="acc", subset="x0")["chance"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    # without the items' candidates there is no chance level
    assert np.isnan(one(probe_b_rows(scored.drop(columns=["candidates", "positive"])), metric="map",
                        subset="x0")["chance"])


def test_zero_shot_top_k_with_chance_per_class_count():
    class Fixed:
        name, capabilities = "fixed", {"similarity"}

        def similarity(self, images, texts):   # image "i<k>" scores class k highest, then k+1, ...
            return np.array([[-((j - int(i[1:])) % len(texts)) for j in range(len(texts))] for i in images], float)

    items = pd.DataFrame({"item_id": ["a", "b", "c"], "image": ["i0", "i1", "i2"], "label": ["x0", "x0", "x0"]})
    prompts = {f"x{k}": f"p{k}" for k in range(6)}
    scored = zero_shot_scores(Fixed(), items, prompts)
    # the gold class x0 ranks 1st for i0, 6th for i1 (every other class above it), 5th for i2
    assert scored["top1"].tolist() == [1.0, 0.0, 0.0] and scored["top5"].tolist() == [1.0, 0.0, 1.0]
    rows = zero_shot_rows(scored, probe="patching", model="fixed")
    assert one(rows, metric="top1")["value"] == pytest.approx(1 / 3) and one(rows, metric="top1")["chance"] == 1 / 6
    assert one(rows, metric="top5")["chance"] == pytest.approx(5 / 6) and set(rows["subset"]) == {"general"}


class _Dual:
    """A dual encoder over 1-D 'embeddings': similarity = image value x text length (records its calls)."""
    name, capabilities = "dual", {"similarity"}

    def __init__(self):
        self.calls = []

    def similarity(self, images, texts):
        self.calls.append((list(images), list(texts)))
        return np.array([[float(i[-1]) * len(t) for t in texts] for i in images])


class _Itm:
    name, capabilities = "itm", {"match"}

    def match(self, images, texts):
        return np.array([0.8 if t == "right" else 0.2 for t in texts])


def test_pair_logits_dedups_images_and_texts_and_skips_missing_images():
    from probekit.studies.conceptual.scores import pair_logits

    s = _Dual()
    got = pair_logits(s, ["a1", "a1", None, "b2"], ["xx", "xxx", "xx", "xx"])
    assert got[0] == 2 and got[1] == 3 and np.isnan(got[2]) and got[3] == 4
    assert s.calls == [(["a1", "b2"], ["xx", "xxx"])]        # each unique image and text encoded once
    itm = pair_logits(_Itm(), ["p", "p"], ["right", "wrong"])
    assert itm[0] == pytest.approx(np.log(4)) and itm[1] == pytest.approx(-np.log(4))


def test_single_object_rows_give_the_median_ratio_beside_the_mean_that_one_near_zero_confidence_blows_up():
    scored = pd.DataFrame({"model": "m", "filler": "black", "single_object": True, "h_x0": 1.0, "h_x0_patch": 1.0,
                           "h_x1_fill": 1.0, "conf_x0": [0.5, 0.5, 1e-4], "conf_x0_patch": [0.5, 0.5, 0.5],
                           "conf_x1_fill": [0.5, 0.25, 0.5]})
    t = probe_b_rows(scored)
    assert one(t, metric="gamma", subset="(x0, x̃1)")["value"] == pytest.approx((1 + 0.5 + 5000) / 3)
    assert one(t, metric="gamma_median", subset="(x0, x̃1)")["value"] == pytest.approx(1.0)
    assert one(t, metric="gamma_median", subset="(x̃0, x̃1)")["value"] == pytest.approx(1.0)    # 1, 0.5, 1
    assert relative_robustness([0.5, 0.5, 1e-4], [0.5, 0.25, 0.5], np.median) == pytest.approx(1.0)
    multi = probe_b_rows(scored.assign(single_object=False))
    assert "gamma_median" not in set(multi["metric"])         # AP ≥ 1 / classes: the authors' mean is bounded
