"""Guided masking: verb location, masking, lemma matching, patch ablation and the OWL-ViT detection step."""

import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from probekit.ablation import PatchGrid, condition_image, patches_under_box
from probekit.data.masking import DetectionCache, best_boxes, detect_subject_boxes, locate_verb, masking_items
from probekit.metrics.masking import (ablation_drops, accuracy_table, join_pieces, mask_span, predict_verbs,
                                      score_predictions, top_candidates, verb_lemmas)


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


def test_score_predictions_lemma_match_within_top_k():
    items = _items(["run", "sit", "jog", "ride"])
    preds = [
        [[("walks", .5), ("ran", .3), ("is", .1)]],                        # irregular form at rank 2
        [[("stands", .6), ("lies", .2), ("sitting", .1)]],                 # rank 3: outside top-2
        [[("run", .5), ("walk", .2)], [("##ning", .7), ("##ging", .2)]],   # two pieces, no "jog" anywhere
        [[("holds", .9), ("kicks", .1)]],                                  # absent
    ]
    out = score_predictions(items, preds, k=2)
    assert list(out["rank"].fillna(0)) == [2, 0, 0, 0]
    assert list(out["correct"]) == [True, False, False, False]
    assert out.loc[2, "predictions"] == ["running", "walkning"]       # 0.35, 0.14 (product of pieces)
    assert out.loc[2, "probs"] == pytest.approx([.35, .14])
    out3 = score_predictions(items, preds, k=3)
    assert list(out3["correct"]) == [True, True, False, False]
    # a multi-piece verb counts once its combination is among the k most probable combinations
    preds[2] = [[("run", .5), ("jog", .4)], [("##ning", .7), ("##ging", .2)]]
    # running .35, jogning .28, runging .10, jogging .08
    assert not score_predictions(items, preds, k=3).loc[2, "correct"]
    out = score_predictions(items, preds, k=4)
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
    preds = predict_verbs(fake, items, images=["a.png", "b.png"], k=3)
    assert fake.seen == (["A man [MASK] [MASK].", "A man [MASK]."], ["a.png", "b.png"], 3)
    assert [len(p) for p in preds] == [2, 1]


def test_accuracy_and_paired_drops():
    per_item = pd.DataFrame({
        "model": ["m"] * 8, "condition": ["full"] * 4 + ["ablated"] * 4,
        "item_id": ["a", "b", "c", "d"] * 2, "correct": [1, 1, 1, 0, 1, 0, 0, 0]})
    acc = accuracy_table(per_item)
    assert acc.set_index("condition")["accuracy"].to_dict() == {"full": .75, "ablated": .25}
    assert (acc["n"] == 4).all() and (acc["ci_low"] <= acc["accuracy"]).all()
    drops = ablation_drops(per_item, reference="full")
    assert drops.loc[0, "condition"] == "ablated" and drops.loc[0, "drop"] == pytest.approx(.5)
    assert 0 <= drops.loc[0, "ci_low"] <= .5 <= drops.loc[0, "ci_high"] <= 1


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


# ------------------------------------------------------------------------------------------- OWL-ViT step
def _tiny_owlvit(tmp_path):
    import torch
    from transformers import (CLIPTokenizer, OwlViTConfig, OwlViTForObjectDetection, OwlViTImageProcessor,
                              OwlViTProcessor)

    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {c: i for i, c in enumerate(letters)} | {c + "</w>": 26 + i for i, c in enumerate(letters)}
    vocab |= {"<|startoftext|>": 52, "<|endoftext|>": 53}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = CLIPTokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    layer = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
    config = OwlViTConfig(text_config=dict(vocab_size=54, max_position_embeddings=32, bos_token_id=52,
                                           eos_token_id=53, pad_token_id=53, **layer),
                          vision_config=dict(image_size=32, patch_size=8, **layer), projection_dim=32)
    torch.manual_seed(0)
    model = OwlViTForObjectDetection(config).eval()
    with torch.no_grad():   # boxes = the patch cells themselves (the head adds nothing to the grid prior)
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.zero_()
    size = {"height": 32, "width": 32}
    return model, OwlViTProcessor(image_processor=OwlViTImageProcessor(size=size, crop_size=size),
                                  tokenizer=tokenizer)


def test_owlvit_detection_step_boxes_cache_and_misses(tmp_path):
    model, processor = _tiny_owlvit(tmp_path)
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"{i}.png"))
        Image.fromarray(np.random.default_rng(i).integers(0, 256, (40, 60, 3), dtype=np.uint8)).save(paths[-1])
    boxes = best_boxes(model, processor, [Image.open(p) for p in paths], ["dog", "man"], threshold=0.0)
    # with a zero box head OWL-ViT's boxes are its prior: centres (i+1)/4, sides 1/4, clipped to the image
    spans = [(c - .125, min(c + .125, 1.0)) for c in (.25, .5, .75, 1.0)]
    cells = [[x0, y0, x1 - x0, y1 - y0] for y0, y1 in spans for x0, x1 in spans]
    for box in boxes:
        assert any(np.allclose(box, cell, atol=1e-3) for cell in cells), box
    assert best_boxes(model, processor, [Image.open(paths[0])], ["dog"], threshold=1.01) == [None]

    cache = tmp_path / "det.jsonl"
    found = detect_subject_boxes(paths + [None], ["dog", "man", "cat"], cache, detector=(model, processor),
                                 threshold=0.0)
    assert np.allclose(found[:2], boxes, atol=1e-5) and found[2] is None
    # everything is cached: no detector is loaded (the model id does not exist)
    again = detect_subject_boxes(paths, ["dog", "man"], cache, model_id="/nonexistent")
    assert again == found[:2]
    assert len(DetectionCache(cache).boxes) == 2
