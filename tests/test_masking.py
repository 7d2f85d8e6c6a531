"""Guided masking: verb location, masking, lemma matching, rows of accuracy and paired drops, patch ablation, and
the paper's numbers.  (The detector is tested with its adapter, tests/test_owlvit.py.)"""

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from probekit.ablation import PatchGrid, condition_image, patches_under_box
from probekit import papers
from probekit.papers import guided_masking
from probekit.data.masking import locate_verb, masking_items, pair_subject_boxes, triplet_subjects
from probekit.metrics.masking import accuracy_rows, drop_rows, score_predictions, topk_chance
from probekit.studies.masking.scores import mask_span, predict_verbs
from probekit.metrics.verb_pieces import join_pieces, top_candidates, verb_lemmas
from probekit.results import COLUMNS, ITEMS, one


# ------------------------------------------------------------------------------------------- locating the verb
@pytest.mark.parametrize("sentence, lemma, surface", [
    ("A man jogs on the road.", "jog", "jogs"),
    ("Girl jogging in the forest.", "jog", "jogging"),
    ("The person ran on the trail.", "run", "ran"),
    ("Girl sitting in grass.", "sit", "sitting"),
    ("A woman lay on the beach.", "lie", "lay"),
    ("A child carries a box.", "carry", "carries"),
])
def test_locate_verb_finds_inflected_and_irregular_forms(sentence, lemma, surface):
    start, end = locate_verb(sentence, lemma)
    assert sentence[start:end] == surface


def test_locate_verb_does_not_guess():
    assert locate_verb("A dog in the grass.", "run") is None
    assert locate_verb("A man picks up a box.", "pick up") is None


def test_masking_items_dedupes_positives_and_lists_unlocated():
    pairs = pd.DataFrame({
        "sentence": ["A man jogs.", "A man jogs.", "A dog in the grass.", "A girl sat."],
        "pos_triplet": ["man,jog,road", "man,jog,road", "dog,run,grass", "girl,sit,chair"],
        "pos_image_id": ["1", "1", "2", "3"], "pos_image": ["/a.png", "/a.png", "/b.png", None],
        "verb": ["jog", "jog", "run", "sit"]})
    items = masking_items(pairs)
    assert list(items["sentence"]) == ["A man jogs.", "A girl sat."]
    assert list(items["verb"]) == ["jog", "sit"]
    assert [s[a:b] for s, a, b in zip(items.sentence, items.verb_start, items.verb_end)] == ["jogs", "sat"]
    assert items.attrs["unlocated"] == [{"sentence": "A dog in the grass.", "verb": "run"}]


# ------------------------------------------------------------------------------------------- masking & lemmas
def test_mask_span_inserts_one_mask_per_piece():
    s = "A man jogging on a trail."
    assert mask_span(s, 6, 13, 1) == "A man [MASK] on a trail."
    assert mask_span(s, 6, 13, 2) == "A man [MASK] [MASK] on a trail."
    with pytest.raises(ValueError, match="outside"):
        mask_span(s, 6, 99, 1)


def test_verb_lemmas_of_irregular_and_inflected_forms():
    assert "run" in verb_lemmas("ran") and "run" in verb_lemmas("running")
    assert verb_lemmas("sitting") == {"sit"} and verb_lemmas("Sits") == {"sit"}
    assert "see" in verb_lemmas("saw")


def test_join_pieces_wordpiece_and_bpe():
    assert join_pieces(["jog", "##ging"]) == "jogging"
    assert join_pieces(["Ġjog", "ging"]) == "jogging"
    assert join_pieces(["in", "the"]) == "in the"


def test_top_candidates_ranks_combinations_by_joint_probability():
    positions = [[("jog", .5), ("run", .4)], [("##ging", .6), ("##ning", .3)]]
    cands = top_candidates(positions, 3)
    assert [w for w, _ in cands] == ["jogging", "runging", "jogning"]
    assert cands[0][1] == pytest.approx(.30) and cands[1][1] == pytest.approx(.24)


def _items(verbs):
    return pd.DataFrame({"item_id": [f"i{i}" for i in range(len(verbs))], "verb": verbs})


def test_score_predictions_whole_word_lemma_match_within_top_k():
    items = _items(["run", "sit", "jog", "ride"])
    preds = [
        [[("walks", .5), ("ran", .3), ("is", .1)]],                        # irregular form at rank 2
        [[("stands", .6), ("lies", .2), ("sitting", .1)]],                 # rank 3: outside top-2
        [[("run", .5), ("walk", .2)], [("##ning", .7), ("##ging", .2)]],   # two pieces, no "jog" anywhere
        [[("holds", .9), ("kicks", .1)]],                                  # absent
    ]
    pieces = [["runs"], ["sits"], ["jog", "##ging"], ["rides"]]
    out = score_predictions(items, preds, pieces, k=2)
    assert list(out["rank"].fillna(0)) == [2, 0, 0, 0]
    assert list(out["word_correct"]) == [True, False, False, False]
    assert out.loc[2, "predictions"] == ["running", "walkning"]       # 0.35, 0.14 (product of pieces)
    assert out.loc[2, "probs"] == pytest.approx([.35, .14])
    out3 = score_predictions(items, preds, pieces, k=3)
    assert list(out3["word_correct"]) == [True, True, False, False]
    # a multi-piece verb counts once its combination is among the k most probable combinations
    preds[2] = [[("run", .5), ("jog", .4)], [("##ning", .7), ("##ging", .2)]]
    # running .35, jogning .28, runging .10, jogging .08
    assert not score_predictions(items, preds, pieces, k=3).loc[2, "word_correct"]
    out = score_predictions(items, preds, pieces, k=4)
    assert out.loc[2, "rank"] == 4 and out.loc[2, "predictions"][3] == "jogging"


def test_predict_verbs_asks_for_as_many_masks_as_pieces():
    class Fake:
        def word_pieces(self, word):
            return ["jog", "##ging"] if word == "jogging" else [word]

        def fill_mask(self, texts, images=None, k=5):
            self.seen = (texts, images, k)
            return [[[("x", 1.0)]] * t.count("[MASK]") for t in texts]

    items = pd.DataFrame({"sentence": ["A man jogging.", "A man runs."], "verb_start": [6, 6],
                          "verb_end": [13, 10]})
    fake = Fake()
    preds = predict_verbs(fake, items, [fake.word_pieces("jogging"), fake.word_pieces("runs")],
                          images=["a.png", "b.png"], k=3)
    assert fake.seen == (["A man [MASK] [MASK].", "A man [MASK]."], ["a.png", "b.png"], 3)
    assert [len(p) for p in preds] == [2, 1]


def test_accuracy_and_paired_drop_rows():
    per_item = pd.DataFrame({
        "model": ["m"] * 12, "scored_by": ["m"] * 8 + ["bert"] * 4,
        "condition": ["full image"] * 4 + ["subject ablated"] * 4 + ["text only"] * 4,
        "item_id": ["a", "b", "c", "d"] * 3, "correct": [1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0]})
    per_item["word_correct"] = per_item["correct"] * 0            # the second metric: every caption wrong
    rows = accuracy_rows(per_item, chance=.25)
    assert (rows[rows["metric"] == "word_accuracy"]["value"] == 0).all()
    acc = rows[rows["metric"] == "accuracy"]
    assert list(acc.columns) == [*COLUMNS, ITEMS] and set(acc["study"]) == {"masking"} and set(acc["probe"]) == {"top-k"}
    assert one(acc, model="m", condition="full image")["value"] == .75
    assert one(acc, model="m", condition="subject ablated")["value"] == .25
    text = one(acc, condition="text only")            # the row belongs to the model that answered
    assert text["model"] == "bert" and text["value"] == .5 and text["n"] == 4 and text["chance"] == .25
    assert (acc["ci_low"] <= acc["value"]).all() and (acc["value"] <= acc["ci_high"]).all()

    drops = drop_rows(per_item)
    assert set(drops["metric"]) == {"accuracy_diff", "word_accuracy_diff"} and (drops["chance"] == 0).all()
    assert (drops[drops["metric"] == "word_accuracy_diff"]["value"] == 0).all()
    drops = drops[drops["metric"] == "accuracy_diff"]
    subj = one(drops, condition="full image − subject ablated")
    assert subj["model"] == "m" and subj["value"] == pytest.approx(.5) and subj["n"] == 4
    assert 0 <= subj["ci_low"] <= .5 <= subj["ci_high"] <= 1
    # item by item: a +1, b +1, c +1, d 0 → 0.75 - 0.25; text only: 0, 0, +1, 0
    assert one(drops, condition="full image − text only")["value"] == pytest.approx(.25)
    # a condition not scored (image ablated) gives no row
    assert "full image − image ablated" not in set(drops["condition"])


def test_paired_drop_uses_only_captions_scored_in_both():
    per_item = pd.DataFrame({"model": ["m"] * 5, "scored_by": ["m"] * 5,
                             "condition": ["full image"] * 3 + ["subject ablated"] * 2,
                             "item_id": ["a", "b", "c", "a", "b"], "correct": [1, 1, 1, 0, 1]})
    drop = one(drop_rows(per_item.assign(word_correct=per_item["correct"])), condition="full image − subject ablated",
               metric="accuracy_diff")
    assert drop["n"] == 2 and drop["value"] == pytest.approx(.5)


def test_topk_chance_is_k_over_distinct_verbs():
    assert topk_chance(["run", "sit", "Run", "jog"], 2) == pytest.approx(2 / 3)
    assert topk_chance(["run", "sit"], 5) == 1.0
    assert np.isnan(topk_chance([], 5))


def test_pair_boxes_from_the_generator_or_none():
    pairs = pd.DataFrame({"pos_triplet": ["man,jog,road", " dog , run,grass"], "neg_triplet": ["woman,jog,road"] * 2})
    assert pair_subject_boxes(pairs) == ([None, None], [None, None])
    boxed = pairs.assign(pos_subject_box=[[0, 0, .5, .5], None], neg_subject_box=[None, [.1, .1, .2, .2]])
    assert pair_subject_boxes(boxed) == ([[0, 0, .5, .5], None], [None, [.1, .1, .2, .2]])
    assert triplet_subjects(pairs["pos_triplet"]) == ["man", "dog"]


def test_paper_rows_and_the_drops_they_imply():
    rows = papers.reported(guided_masking)
    vilbert = one(rows, model="ViLBERT", probe="top-k", subset="SVO-Probes", condition="full image",
                  metric="accuracy")
    assert vilbert["value"] == .739 and vilbert["source"] == "Beňová et al. 2024, Table 2"
    assert one(rows, model="BERT", subset="V-COCO", condition="text only")["value"] == .585
    assert one(rows, model="ViLBERT", probe="itm", condition="image ablated", metric="neg")["value"] == .947
    drop = one(rows, model="LXMERT", subset="SVO-Probes", condition="full image − image ablated")
    assert drop["value"] == pytest.approx(.746 - .596) and drop["metric"] == "accuracy_diff"
    assert one(rows, model="UNITER", subset="V-COCO", condition="full image − text only")["value"] == \
        pytest.approx(.813 - .585)
    assert len(papers.reported(guided_masking, "Table 1")) == 4 * 3 * 3


# ------------------------------------------------------------------------------------------- patch ablation
def test_patches_under_box_overlap_not_touch():
    grid = PatchGrid(64, 16, (128, 128, 128))
    assert patches_under_box([.25, .25, .25, .25], grid) == [(1, 1)]                 # exactly one cell
    assert patches_under_box([.2, .25, .1, .25], grid) == [(1, 0), (1, 1)]          # straddles a border
    assert len(patches_under_box([0, 0, 1, 1], grid)) == 16


def test_subject_ablation_blanks_exactly_the_patches_under_the_box(tmp_path):
    rng = np.random.default_rng(0)
    src = tmp_path / "img.png"
    Image.fromarray(rng.integers(0, 256, (96, 96, 3), dtype=np.uint8)).save(src)  # resized to 64 by the grid
    grid = PatchGrid(64, 16, (128, 122, 104))
    box = [0.30, 0.05, 0.25, 0.30]   # x 19.2..35.2 px -> cols 1, 2; y 3.2..22.4 px -> rows 0, 1
    full = np.asarray(Image.open(condition_image(src, "full image", grid, tmp_path)))
    path = condition_image(src, "subject ablated", grid, tmp_path, box=box)
    ablated = np.asarray(Image.open(path))
    assert ablated.shape == (64, 64, 3)
    for r in range(4):
        for c in range(4):
            patch = ablated[r * 16:(r + 1) * 16, c * 16:(c + 1) * 16]
            if (r, c) in {(0, 1), (0, 2), (1, 1), (1, 2)}:
                assert (patch == grid.blank).all(), (r, c)
            else:
                assert (patch == full[r * 16:(r + 1) * 16, c * 16:(c + 1) * 16]).all(), (r, c)
    assert condition_image(src, "subject ablated", grid, tmp_path, box=box) == path   # cached by path
    assert "derived" in path.parts and grid.key in path.parts
    other = condition_image(src, "subject ablated", grid, tmp_path, box=[0, 0, .1, .1])
    assert other != path
    blank = np.asarray(Image.open(condition_image(src, "image ablated", grid, tmp_path)))
    assert (blank == grid.blank).all()
    assert condition_image(src, "subject ablated", grid, tmp_path, box=None) is None
