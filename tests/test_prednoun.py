"""Predicate–noun probe: loader of the authors' eval_set.json, cropping, pair metrics and confounds (as result
rows), the paper's numbers."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from probekit import papers
from probekit.papers import prednoun
from probekit.data.prednoun import EvalSetError, box_to_pixels, crop_image, crop_to_targets, load_eval_set, \
    select_pairs
from probekit.metrics import confounds, pairs
from probekit.studies.pair_scores import score_triplets
from probekit.results import one, select
from probekit.scorers.mlm import pseudo_perplexity
from probekit.stats import bootstrap_ci

pytestmark = pytest.mark.usefixtures("hand_made_annotations")


# ----------------------------------------------------------------------------------------- fixtures


def _entry(i, image, target, distractor, pos, subject, obj, word_t, word_d, box_t, box_d, split="train"):
    alt = {s: s.replace("a ", "the ", 1).replace(" is wearing", " wears").replace(" is holding", " holds")
           for s in (target, distractor)}
    return {"id": i, "img_filename": f"{image}.jpg", "sentence_target": target, "sentence_distractor": distractor,
            "relationship_target": {"id": f"r{i}t", "Label1": subject, "label": "wears", "Label2": obj,
                                    "bounding_box": box_t},
            "relationship_distractor": {"id": f"r{i}d", "Label1": "Woman", "label": "holds", "Label2": word_d,
                                        "bounding_box": box_d},
            "subject": subject, "predicate": "wears", "object": obj, "word_target": word_t,
            "word_distractor": word_d, "pos": pos, "open_images_split": split,
            "sentence_target_alt": alt[target], "sentence_distractor_alt": alt[distractor]}


def eval_entries():
    """Two made-up pairs in the release's schema (ids and boxes invented): a predicate swap and a noun swap."""
    return [
        _entry(0, "00000000000000a1", "a man is wearing glasses", "a man is holding a bottle", "object", "Man",
               "Glasses", "Glasses", "Bottle", [0.10, 0.05, 0.45, 0.95], [0.50, 0.20, 0.30, 0.80]),
        _entry(1, "00000000000000b2", "a man is holding a bottle", "a man is wearing glasses", "object", "Man",
               "Bottle", "Bottle", "Glasses", [0.45, 0.20, 0.55, 0.80], [0.0, 0.15, 0.35, 0.55]),
        _entry(2, "00000000000000c3", "a man is wearing glasses", "a woman is wearing glasses", "subject", "Man",
               "Glasses", "Man", "Woman", [0.25, 0.45, 0.40, 0.55], [0.70, 0.40, 0.20, 0.60],
               split="test"),
        _entry(3, "00000000000000d4", "a woman is wearing glasses", "a man is wearing glasses", "subject",
               "Woman", "Glasses", "Woman", "Man", [0.40, 0.40, 0.25, 0.60], [0.05, 0.45, 0.45, 0.55],
               split="test"),
    ]


@pytest.fixture
def eval_dir(tmp_path):
    """A data dir holding eval_set.json and its four photos (so nothing is downloaded)."""
    entries = eval_entries()
    (tmp_path / "eval_set.json").write_text(json.dumps(entries))
    for e in entries:
        folder = tmp_path / "openimages" / e["open_images_split"]
        folder.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (64, 48), (e["id"] * 40, 90, 160)).save(folder / e["img_filename"])
    return tmp_path


def write_entries(tmp_path, entries):
    (tmp_path / "eval_set.json").write_text(json.dumps(entries))
    return tmp_path


# ----------------------------------------------------------------------------------------- loader


def test_loader_reads_the_release_schema(eval_dir):
    from probekit.datasets import SCHEMAS, load_dataset

    items = load_dataset("prednoun", "eval-set", data_dir=eval_dir)
    assert list(items.columns[: len(SCHEMAS["prednoun"])]) == SCHEMAS["prednoun"]
    assert len(items) == 4 and items["pair_id"].nunique() == 2
    first = items.iloc[0]
    assert first["item_id"] == "0" and first["image_id"] == "00000000000000a1"
    assert first["target_box"] == [0.10, 0.05, 0.45, 0.95]
    assert first["pos"] == "object" and first["word_distractor"] == "Bottle"
    assert first["sentence_target_alt"] == "the man wears glasses"
    assert items.iloc[2]["image"].endswith("openimages/test/00000000000000c3.jpg")
    assert all(Image.open(p).size == (64, 48) for p in items["image"])
    # the pair's sentences are swapped and its images differ
    assert items.iloc[1]["sentence_target"] == first["sentence_distractor"]
    assert items.iloc[1]["image"] != first["image"]


def test_limit_keeps_whole_pairs(eval_dir):
    items = load_eval_set(eval_dir, limit=3, seed=1, split="eval")
    assert len(items) == 2 and items["pair_id"].nunique() == 1
    assert items["pair_id"].iloc[0] in ("pair-00000", "pair-00001")  # the release's pair number, not renumbered
    assert items["item_id"].astype(int).diff().iloc[1] == 1
    assert list(select_pairs(10, 5, 0) % 2) == [0, 1, 0, 1]
    assert list(select_pairs(10, None, 0)) == list(range(10))
    with pytest.raises(ValueError, match="whole pairs"):
        load_eval_set(eval_dir, limit=1, seed=0, split="eval")
    with pytest.raises(ValueError, match="only the split 'eval'"):
        load_eval_set(eval_dir, limit=None, seed=0, split="train")


@pytest.mark.parametrize("mutate, index, field, problem", [
    (lambda e: e[2].pop("word_target"), 2, "word_target", "non-empty string"),
    (lambda e: e[1]["relationship_target"].update(bounding_box=[0.1, 0.2, 0.3]), 1,
     "relationship_target.bounding_box", "4 fractions"),
    (lambda e: e[3]["relationship_distractor"].update(bounding_box=[0.5, 0.2, 0.7, 0.3]), 3,
     "relationship_distractor.bounding_box", "not inside the image"),
    (lambda e: e[0]["relationship_target"].update(bounding_box=[0.1, 0.2, 0.0, 0.3]), 0,
     "relationship_target.bounding_box", "positive"),
    (lambda e: e[0]["relationship_target"].pop("Label1"), 0, "relationship_target.Label1", "non-empty string"),
    (lambda e: e[2].update(pos="verb"), 2, "pos", "'subject', 'object'"),
    (lambda e: e[1].update(open_images_split="val"), 1, "open_images_split", "'train', 'validation'"),
    (lambda e: e[0].update(img_filename="00000000000000a1.png"), 0, "img_filename", "Open Images id"),
    (lambda e: e[1].update(sentence_target="a man is sitting"), 1, "sentence_target", "must swap its sentences"),
])
def test_loader_refuses_malformed_entries_naming_entry_and_field(tmp_path, mutate, index, field, problem):
    entries = copy.deepcopy(eval_entries())
    mutate(entries)
    write_entries(tmp_path, entries)
    with pytest.raises(EvalSetError) as err:
        load_eval_set(tmp_path, limit=None, seed=0, split="eval")
    message = str(err.value)
    assert f"entry {index}, field {field!r}" in message and problem in message
    assert "eval_set.json" in message


def test_loader_refuses_files_that_are_not_lists_of_pairs(tmp_path):
    write_entries(tmp_path, eval_entries()[:3])
    with pytest.raises(EvalSetError, match="3 entries: entries 2k and 2k\\+1 must form pairs"):
        load_eval_set(tmp_path, limit=None, seed=0, split="eval")
    write_entries(tmp_path, {"entries": []})
    with pytest.raises(EvalSetError, match="expected a JSON list"):
        load_eval_set(tmp_path, limit=None, seed=0, split="eval")
    (tmp_path / "eval_set.json").write_text("[{")
    with pytest.raises(EvalSetError, match="not valid JSON"):
        load_eval_set(tmp_path, limit=None, seed=0, split="eval")


# ----------------------------------------------------------------------------------------- cropping


def test_box_to_pixels_converts_fractions():
    assert box_to_pixels([0.25, 0.5, 0.5, 0.25], 200, 100) == (50, 50, 150, 75)
    # fractions that are not whole pixels widen to the enclosing pixels
    assert box_to_pixels([0.101, 0.0, 0.2, 1.0], 100, 10) == (10, 0, 31, 10)
    # a box touching (or, by rounding, running past) the border is cut at the border
    assert box_to_pixels([0.6, 0.7, 0.4, 0.3], 640, 480) == (384, 336, 640, 480)
    assert box_to_pixels([0.9, -0.001, 0.2, 0.5], 100, 100) == (90, 0, 100, 50)
    # a tiny box keeps at least one pixel, also at the right/bottom edge
    assert box_to_pixels([0.5, 0.5, 0.0001, 0.0], 100, 100) == (50, 50, 51, 51)
    assert box_to_pixels([1.0, 1.0, 0.0, 0.0], 100, 80) == (99, 79, 100, 80)
    with pytest.raises(ValueError, match="4 finite"):
        box_to_pixels([0.1, float("nan"), 0.2, 0.2], 10, 10)


def test_crops_are_the_target_region_and_cached_by_image_and_box(tmp_path):
    img = np.zeros((40, 80, 3), dtype=np.uint8)
    img[10:30, 60:80] = (255, 0, 0)  # a red block touching the right border
    src = tmp_path / "photo.png"
    Image.fromarray(img).save(src)
    out = crop_image(src, [0.75, 0.25, 0.25, 0.5], tmp_path)
    assert out.parent == tmp_path / "derived" / "crop"
    crop = np.asarray(Image.open(out))
    assert crop.shape == (20, 20, 3) and (crop == (255, 0, 0)).all()
    mtime = out.stat().st_mtime_ns
    assert crop_image(src, [0.75, 0.25, 0.25, 0.5], tmp_path) == out and out.stat().st_mtime_ns == mtime
    other = crop_image(src, [0.0, 0.0, 0.001, 0.001], tmp_path)
    assert other != out and Image.open(other).size == (1, 1)
    items = pd.DataFrame({"image": [str(src), None, str(tmp_path / "missing.png")],
                          "target_box": [[0.75, 0.25, 0.25, 0.5]] * 3})
    paths = crop_to_targets(items, tmp_path)
    assert paths.iloc[0] == str(out) and paths.iloc[1] is None and paths.iloc[2] is None


# ----------------------------------------------------------------------------------------- pair metrics


def hand_made():
    """Three pairs. p0: both right; p1: only the first right (a model blind to the image); p2: the second
    triplet is a tie, which counts as wrong.  p0 is a noun swap, p1 and p2 predicate swaps."""
    rows = [("p0", "subject", "Man", "Woman", "Glasses", 0.9, 0.2), ("p0", "subject", "Woman", "Man", "Glasses", 0.7, 0.6),
            ("p1", "object", "Sit", "Stand", "Sit", 0.8, 0.3), ("p1", "object", "Stand", "Sit", "Stand", 0.3, 0.8),
            ("p2", "object", "Stand", "Sit", "Stand", 0.6, 0.1), ("p2", "object", "Sit", "Stand", "Sit", 0.5, 0.5)]
    items = pd.DataFrame(rows, columns=["pair_id", "pos", "word_target", "word_distractor", "object", "s_target",
                                        "s_distractor"])
    items["item_id"] = [str(i) for i in range(len(items))]
    items["subject"] = ["Man", "Woman", "Man", "Man", "Girl", "Girl"]
    sentences = {"Sit": "a man is sitting", "Stand": "a man is standing", "Man": "a man is wearing glasses",
                 "Woman": "a woman is wearing glasses"}
    items["sentence_target"] = items["word_target"].map(sentences)
    return items


def rows_of(items):
    return pairs.accuracy(items, model="m", probe="pairs", condition="full")


def test_pair_accuracy_on_hand_made_pairs():
    rows = rows_of(hand_made())
    overall = one(rows, subset="all", metric="pair_accuracy")
    assert overall["value"] == pytest.approx(1 / 3) and overall["n"] == 3 and overall["chance"] == 0.25
    triplets = one(rows, subset="all", metric="triplet_accuracy")
    assert triplets["value"] == pytest.approx(4 / 6) and triplets["n"] == 6 and triplets["chance"] == 0.5
    assert one(rows, subset="noun", metric="pair_accuracy")["value"] == 1.0
    assert one(rows, subset="predicate", metric="pair_accuracy")["value"] == 0.0
    assert one(rows, subset="predicate", metric="triplet_accuracy")["value"] == pytest.approx(2 / 4)
    assert set(rows["study"]) == {"prednoun"} and set(rows["condition"]) == {"full"}
    per_pair = pairs.pair_results(hand_made()).set_index("pair_id")
    assert per_pair.loc["p0", "nouns"] == ["Man", "Woman"] and per_pair.loc["p0", "predicates"] == ["Glasses"]
    assert per_pair.loc["p1", "nouns"] == ["Man"] and per_pair.loc["p1", "predicates"] == ["Sit", "Stand"]


def test_accuracy_by_groups_of_pairs():
    # p0 (both right) and p2 (one right, one tie) in "a"; p1 (one right) in "b"
    items = hand_made()
    rows = pairs.accuracy_by(items, pd.Series(["a", "a", "b", "b", "a", "a"], index=items.index), model="m",
                             probe="pairs-x", condition="full")
    assert list(rows["subset"]) == ["a", "a", "b", "b"] and set(rows["probe"]) == {"pairs-x"}
    got = {(r.subset, r.metric): (r.value, r.n) for r in rows.itertuples()}
    assert got == {("a", "pair_accuracy"): (0.5, 2), ("a", "triplet_accuracy"): (0.75, 4),
                   ("b", "pair_accuracy"): (0.0, 1), ("b", "triplet_accuracy"): (0.5, 2)}


def test_unscored_triplets_drop_their_pair_and_are_counted():
    items = hand_made()
    items.loc[2, "s_target"] = np.nan
    rows = rows_of(items)
    overall = one(rows, subset="all", metric="pair_accuracy")
    assert overall["n"] == 2 and overall["value"] == pytest.approx(1 / 2)
    assert one(rows, subset="all", metric="triplet_accuracy")["n"] == 5
    with pytest.raises(ValueError, match="exactly two"):
        rows_of(items.iloc[:5])


def test_intervals_are_bootstrap_over_pairs():
    rows = rows_of(hand_made())
    a = one(rows, subset="all", metric="pair_accuracy")
    assert a["ci_low"] <= 1 / 3 <= a["ci_high"] and a["ci_low"] < 0.34 and a["ci_high"] > 0.5
    b = one(rows_of(hand_made().assign(s_distractor=0.0)), subset="all", metric="pair_accuracy")
    assert b["value"] == b["ci_low"] == b["ci_high"] == 1.0


def test_paired_difference_of_two_runs_on_the_same_pairs():
    # all right (b) minus only p0 right (a): per pair 0, -1, -1
    diff = pairs.accuracy_diff(hand_made(), hand_made().assign(s_distractor=0.0), model="m", probe="pairs",
                               condition="cropped − full")
    d = one(diff, metric="pair_accuracy_diff")
    assert d["value"] == pytest.approx(-2 / 3) and d["n"] == 3 and d["chance"] == 0.0
    assert d["ci_high"] <= 0 and d["ci_low"] >= -1 and d["condition"] == "cropped − full"
    unscored = hand_made()
    unscored.loc[4, "s_target"] = np.nan  # p2 drops out of the paired difference
    assert one(pairs.accuracy_diff(unscored, hand_made(), model="m", probe="pairs", condition="x"),
               metric="pair_accuracy_diff")["n"] == 2


def test_concepts_and_tuples():
    items = hand_made()
    concepts = pairs.concept_accuracy(items, min_count=4, n_resamples=50).set_index("concept")
    # Sit and Stand are in p1 and p2 (4 triplets, 0 of 2 pairs right); Man in p0 and p1 (1 of 2)
    assert concepts.loc["Sit", "accuracy"] == 0.0 and concepts.loc["Sit", "n_triplets"] == 4
    assert concepts.loc["Sit", "label"] == "sitting" and concepts.loc["Sit", "kind"] == "predicate"
    assert concepts.loc["Man", "accuracy"] == 0.5 and concepts.loc["Man", "kind"] == "noun"
    assert concepts.loc["Man", "std"] > 0 and concepts.loc["Sit", "std"] == 0
    assert concepts.loc["Man", "ci_low"] == 0.0 and concepts.loc["Man", "ci_high"] == 1.0
    assert "Woman" not in concepts.index and "Girl" not in concepts.index  # only 2 triplets each
    rows = pairs.concept_rows(concepts.reset_index(), model="m")
    sitting = one(rows, probe="predicates", subset="sitting")
    assert sitting["value"] == 0.0 and sitting["n"] == 2 and sitting["chance"] == 0.25
    assert one(rows, probe="nouns", subset="Man")["value"] == 0.5
    tuples = pairs.tuple_accuracy(items, min_count=2)
    assert len(tuples) == 2  # Man/Woman tuples have 1 triplet each
    rows = pairs.tuple_rows(tuples, model="m")
    stand_sit = one(rows, probe="predicate tuples", subset="Stand → Sit")
    assert stand_sit["value"] == 0.5 and stand_sit["n"] == 2 and stand_sit["chance"] == 0.5
    assert one(rows, subset="Sit → Stand")["value"] == 0.5


class RandomScorer:
    """Scores each candidate sentence with an independent uniform draw (an image-blind coin)."""

    capabilities, choice_head = ("similarity",), "similarity"

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def choose_text(self, images, candidates, head=None):
        assert len(images) == len(candidates) and head == "similarity"
        return self.rng.random((len(images), len(candidates[0])))


def test_random_scorer_is_at_chance():
    n_pairs = 4000
    items = pd.DataFrame({"item_id": [str(i) for i in range(2 * n_pairs)],
                          "pair_id": np.repeat(np.arange(n_pairs), 2), "image": "x.png",
                          "sentence_target": "a", "sentence_distractor": "b", "pos": "object",
                          "subject": "Man", "object": "Sit", "word_target": "Sit", "word_distractor": "Stand"})
    items = items.join(score_triplets(RandomScorer(0), items).drop(columns="item_id"))
    rows = rows_of(items)
    assert one(rows, subset="all", metric="pair_accuracy")["value"] == pytest.approx(pairs.PAIR_CHANCE, abs=0.025)
    assert one(rows, subset="all", metric="triplet_accuracy")["value"] == pytest.approx(pairs.TRIPLET_CHANCE,
                                                                                         abs=0.025)


def test_score_triplets_asks_the_choice_head_and_skips_missing_images():
    seen = {}

    class Recorder:
        capabilities, choice_head = ("match",), "match"

        def choose_text(self, images, candidates, head=None):
            seen["images"], seen["candidates"], seen["head"] = images, candidates, head
            return np.array([[0.7, 0.3]] * len(images))

    items = pd.DataFrame({"item_id": ["a", "b"], "image": ["i.png", None],
                          "sentence_target": ["t1", "t2"], "sentence_distractor": ["d1", "d2"],
                          "sentence_target_alt": ["T1", "T2"], "sentence_distractor_alt": ["D1", "D2"]})
    scores = score_triplets(Recorder(), items, template="alt")
    assert seen == {"images": ["i.png"], "candidates": [["T1", "D1"]], "head": "match"}
    assert scores["s_target"].iloc[0] == 0.7 and np.isnan(scores["s_target"].iloc[1])
    score_triplets(Recorder(), items, images=["crop.png", "crop2.png"])
    assert seen["images"] == ["crop.png", "crop2.png"] and seen["candidates"][1] == ["t2", "d2"]


def test_an_image_blind_scorer_gets_no_pair_right(eval_dir):
    """Counter-balancing: a model that scores sentences without looking wins one triplet of a pair, never both."""

    class Blind:
        capabilities, choice_head = ("match",), "match"

        def choose_text(self, images, candidates, head=None):
            return np.array([[len(t) + 0.01 * sum(map(ord, t)) for t in c] for c in candidates])

    items = load_eval_set(eval_dir, limit=None, seed=0, split="eval")
    rows = rows_of(items.join(score_triplets(Blind(), items).drop(columns="item_id")))
    assert one(rows, subset="all", metric="pair_accuracy")["value"] == 0.0
    assert one(rows, subset="all", metric="triplet_accuracy")["value"] == 0.5


# ----------------------------------------------------------------------------------------- confounds


def test_box_geometry():
    assert confounds.box_size([0.0, 0.0, 0.5, 0.4]) == pytest.approx(0.2)
    assert confounds.centre_distance([0.25, 0.25, 0.5, 0.5]) == 0.0
    assert confounds.centre_distance([0.0, 0.0, 0.2, 0.2]) == pytest.approx(math.hypot(0.4, 0.4))
    assert pseudo_perplexity([math.log(0.5), math.log(0.5)]) == pytest.approx(2.0)


def _confound_items(w_t, w_d, s_target, pair_ids):
    n = len(w_t)
    return pd.DataFrame({"item_id": [str(i) for i in range(n)], "pair_id": pair_ids,
                         "target_box": [[0.1, 0.1, w, 0.5] for w in w_t],
                         "distractor_box": [[0.4, 0.3, w, 0.5] for w in w_d],
                         "sentence_target": [f"t{i}" for i in range(n)],
                         "sentence_distractor": [f"d{i}" for i in range(n)], "s_target": s_target,
                         "s_distractor": 0.5})


def test_confound_interval_resamples_pairs_not_triplets():
    # 100 pairs whose two triplets carry the same covariate and score: one observation counted twice.  r is that
    # of the 100 distinct triplets, and so is its interval (pairs drawn whole are the 100 triplets drawn one by
    # one: same draws); with each triplet its own pair the interval is narrower, about 1 / sqrt(2) as wide
    rng = np.random.default_rng(4)
    w_t, w_d = rng.uniform(0.2, 0.5, 100), rng.uniform(0.2, 0.5, 100)
    s_target = 0.5 + (w_t - w_d) * 0.5 + rng.normal(0, 0.05, 100)
    twice = _confound_items(np.repeat(w_t, 2), np.repeat(w_d, 2), np.repeat(s_target, 2), np.repeat(np.arange(100), 2))
    r = one(confounds.confound_rows(twice, model="m"), subset="bounding box size", metric="r")
    diffs = np.column_stack([s_target - 0.5, w_t * 0.5 - w_d * 0.5])
    assert r["value"] == pytest.approx(confounds.pearson_r(diffs)) and r["n"] == 200
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(bootstrap_ci(diffs, confounds.pearson_r))
    by_triplet = one(confounds.confound_rows(twice.assign(pair_id=np.arange(200)), model="m"),
                     subset="bounding box size", metric="r")
    width = (r["ci_high"] - r["ci_low"]) / (by_triplet["ci_high"] - by_triplet["ci_low"])
    assert width == pytest.approx(np.sqrt(2), rel=0.2)


def test_confound_rows_recover_a_built_in_size_preference():
    rng = np.random.default_rng(0)
    n = 300
    w_t, w_d = rng.uniform(0.2, 0.5, n), rng.uniform(0.2, 0.5, n)
    # the model's preference follows the difference in box area, and nothing else; each triplet its own pair
    items = _confound_items(w_t, w_d, 0.5 + (w_t - w_d) * 0.5 + rng.normal(0, 0.01, n), np.arange(n))
    perplexity = {**{f"t{i}": v for i, v in enumerate(rng.uniform(5, 50, n))},
                  **{f"d{i}": v for i, v in enumerate(rng.uniform(5, 50, n))}}
    rows = confounds.confound_rows(items, perplexity, model="m")
    size = one(rows, subset="bounding box size", metric="r")
    assert size["value"] > 0.9 and size["ci_low"] > 0.85 and size["chance"] == 0 and size["n"] == n
    assert one(rows, subset="bounding box size", metric="p")["value"] < 1e-6
    ppl = one(rows, subset="perplexity", metric="r")
    assert abs(ppl["value"]) < 0.2 and ppl["ci_low"] < 0 < ppl["ci_high"] and ppl["n"] == n
    assert list(select(rows, metric="r")["subset"]) == ["bounding box size", "distance from centre", "perplexity"]
    assert set(rows["probe"]) == {"confounds"}
    assert math.isnan(confounds.pearson([1, 1, 1, 1], [1, 2, 3, 4])[0])
    without = confounds.confound_rows(items.assign(target_box=[[0.1, 0.1, 0.3, 0.5]] * n,
                                                   distractor_box=[[0.4, 0.3, 0.3, 0.5]] * n), model="m")
    constant = one(without, subset="bounding box size", metric="r")  # no perplexity given: no perplexity row
    assert math.isnan(constant["value"]) and "perplexity" not in set(without["subset"])


# ----------------------------------------------------------------------------------------- the paper's numbers


def test_paper_tables_are_rows_in_the_studys_vocabulary():
    rows = papers.reported(prednoun)
    t1 = papers.reported(prednoun, "Table 1")
    assert one(t1, model="CLIP", condition="full")["value"] == 0.20
    assert one(t1, model="ViLT", condition="cropped")["value"] == 0.75
    assert set(t1["probe"]) == {"pairs"} and set(t1["chance"]) == {0.25} and t1["ci_low"].isna().all()
    t8 = papers.reported(prednoun, "Table 8")
    assert one(t8, model="LXMERT", condition="full", subset="noun")["value"] == 0.60
    assert one(papers.reported(prednoun, "Table 7"), model="VinVL", condition="cropped")["value"] == 0.74
    assert set(papers.reported(prednoun, "Table 7")["probe"]) == {"pairs-alt"}
    t6 = papers.reported(prednoun, "Table 6")
    assert len(t6) == 10 and t6["value"].max() == 0.21
    from probekit.papers.prednoun import TABLE6_MODELS
    assert TABLE6_MODELS["CLIP ViT-B-32 laion400m_e32"] == ("ViT-B-32", "laion400m_e32")
    t9 = papers.reported(prednoun, "Table 9")
    assert one(t9, model="CLIP", subset="distance from centre", metric="r")["value"] == -0.24
    assert one(t9, model="VinVL", subset="object detector confidence", metric="p")["value"] == 0.05
    assert set(rows["study"]) == {"prednoun"}
    with pytest.raises(KeyError, match="Table 2"):
        papers.reported(prednoun, "Table 2")
