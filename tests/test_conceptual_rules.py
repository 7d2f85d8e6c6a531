"""The conceptual paper's definitions (issue 14) on hand-made cases: the unrelated scene filler, Table 9's x0 and
per-item γ, Probe-R's subject-only aggregation and X_O1 column, the object-swap file, the loaders' counted skips,
log-odds without clipping ties, BridgeTower's confidence, and the two readings of the authors' code."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from probekit.data import download
from probekit.data.background import load_probe_b, with_toy_scenes
from probekit.data.conceptual import load_probe_r
from probekit.datasets import load_dataset
from probekit.fillers import derive_probe_b, fill_background, patch_image, unrelated_scene
from probekit.metrics import authors_code
from probekit.metrics.conceptual import group_means, log_odds, sigmoid, softmax, winoground
from probekit.papers.conceptual import rows as paper_rows, undo_readings
from probekit.results import one
from probekit.studies.conceptual.claims import corrected_paper, readings_claims
from probekit.papers.conceptual import count


def _png(path, array):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path)
    return str(path)


# ------------------------------------------------------------------------------------------- scene filler
def test_unrelated_scene_excludes_related_and_keys_on_item_id_not_path(tmp_path):
    scenes = {n: f"/x/{n}.png" for n in ("park", "beach", "street", "kitchen")}
    for item in range(40):
        assert unrelated_scene(f"i{item}", scenes, ["park", "street"], seed=3) in {"beach", "kitchen"}
    assert unrelated_scene("a", scenes, list(scenes)) is None
    picks = {unrelated_scene(f"i{k}", scenes, [], seed=0) for k in range(40)}
    assert len(picks) > 2   # a draw, not a constant
    # the same items under two data_dirs get the same scenes (the draw keys on item id and seed, not on paths)
    img = np.random.default_rng(0).integers(0, 256, (24, 32, 3), dtype=np.uint8)
    keep = np.zeros((24, 32), np.uint8)
    keep[4:12, 4:12] = 255
    chosen = []
    for where in ("one", "two/deeper"):
        root = tmp_path / where
        for k, name in enumerate(scenes):
            _png(root / "scenes" / f"{name}.png", np.full((8, 8, 3), 40 * k, np.uint8))
        items = pd.DataFrame({"item_id": [f"i{k}" for k in range(12)],
                              "image": [_png(root / "x.png", img)] * 12, "mask": [_png(root / "m.png", keep)] * 12,
                              "labels": [["cup"]] * 12, "single_object": False, "target": None,
                              "related_scenes": [["kitchen"]] * 12})
        items.attrs["scene_dir"] = str(root / "scenes")
        out = derive_probe_b(items, ["scene"], root, seed=1, progress=False)
        chosen.append(out["scene_filler"].tolist())
        assert "kitchen" not in set(out["scene_filler"])
    assert chosen[0] == chosen[1]


def test_toy_items_never_get_their_own_or_typical_scene(tmp_path):
    from probekit.toyworld.vocab import TYPICAL_SCENE

    items = with_toy_scenes(load_dataset("probe-b", "toy", data_dir=tmp_path, limit=24))
    out = derive_probe_b(items, ["scene"], tmp_path, seed=0, progress=False)
    assert len(out) + len(out.attrs["no_unrelated_scene"]) == 24
    for rec in out.to_dict("records"):
        assert rec["scene_filler"] != rec["scene"]
        assert rec["scene_filler"] not in {TYPICAL_SCENE[o] for o in rec["labels"]}


# ------------------------------------------------------------------------------------ Table 9: x0 and γ
def test_single_object_x0_is_background_removed_with_every_object(tmp_path):
    img = np.random.default_rng(1).integers(0, 256, (30, 40, 3), dtype=np.uint8)
    target, every = np.zeros((30, 40), np.uint8), np.zeros((30, 40), np.uint8)
    target[2:10, 2:10] = 255
    every[2:10, 2:10] = every[15:25, 25:35] = 255
    items = pd.DataFrame({"item_id": ["s"], "image": [_png(tmp_path / "x.png", img)],
                          "mask": [_png(tmp_path / "t.png", target)], "objects_mask": [_png(tmp_path / "a.png", every)],
                          "labels": [["cat", "dog"]], "single_object": [True], "target": ["cat"]})
    rec = derive_probe_b(items, ["gray"], tmp_path, progress=False).iloc[0]
    x0, patched, filled = (np.asarray(Image.open(rec[c])) for c in ("x0", "x0_patch", "x1_fill"))
    assert rec["original"] == str(tmp_path / "x.png")
    assert np.array_equal(x0, np.asarray(fill_background(img_pil := Image.fromarray(img), every > 0, "gray")))
    assert np.array_equal(filled, np.asarray(fill_background(img_pil, target > 0, "gray")))
    assert np.array_equal(patched, np.asarray(patch_image(img_pil, every > 0, "gray")))  # x̃0: original + patch
    assert (x0[20, 30] == img[20, 30]).all() and (filled[20, 30] == 128).all()   # the dog: in x0, not in x̃1


def test_toy_single_object_items_keep_other_objects_so_x0_and_x1_differ(tmp_path):
    items = load_dataset("probe-b", "toy", data_dir=tmp_path, limit=8)
    single = items[items["single_object"]]
    assert len(single) and (single["labels"].map(len) >= 2).all() and (single["mask"] != single["objects_mask"]).all()
    out = derive_probe_b(single, ["gray"], tmp_path, progress=False)
    for rec in out.to_dict("records"):
        x0, filled = (np.asarray(Image.open(rec[c])) for c in ("x0", "x1_fill"))
        assert not np.array_equal(x0, filled), rec["item_id"]   # x̃1 loses the other objects x0 keeps


# ---------------------------------------------------------------------------------------------- Probe-R
def test_subject_only_averages_a_groups_logits_before_the_softmax():
    d = np.array([4.0, 0.52, -2.02])          # logit(correct) - logit(wrong) on the group's three images
    per_image_conf, per_image_acc = sigmoid(d).mean(), (d > 0).mean()
    assert per_image_conf == pytest.approx(0.575, abs=5e-4) and per_image_acc == pytest.approx(2 / 3)
    scored = pd.DataFrame({"item_id": ["g-0", "g-1", "g-2", "g-swap"], "group_id": "g", "model": "m",
                           "kind": ["subject_only"] * 3 + ["subject_swap"],
                           "logit_correct": [*(d + 1.0), 2.0], "logit_wrong": [1.0, 1.0, 1.0, 3.0]})
    out = group_means(scored).set_index("kind")
    assert out.loc["subject_only", "confidence"] == pytest.approx(0.697, abs=5e-4)   # sigmoid(mean d)
    assert out.loc["subject_only", "correct"] == 1.0 and out.loc["subject_only", "n_images"] == 3
    assert out.loc["subject_swap", "confidence"] == pytest.approx(sigmoid(-1.0)) and len(out) == 2


R_ENTRY = {"positive_image_ids": [11, 12], "negative_image_ids": [13],
           "positive_prompt": "A photo of a snow covering ground.", "negative_prompt": "A photo of a cracker covering ground.",
           "negative_object": "cracker", "positive_object": "snow",
           "negative_predicate_prompt": "A photo of a snow flying in front of ground."}
O_ENTRY = {"positive_image_ids": [21], "negative_image_ids": [],
           "positive_prompt": "A photo of a man riding horse.", "negative_prompt": "A photo of a man riding cloud.",
           "negative_object": "cloud", "positive_object": "horse",
           "negative_predicate_prompt": "A photo of a man eating horse."}


def _vg_release(tmp_path, ids, files):
    for i in ids:
        _png(tmp_path / "visual_genome" / "images" / f"{i}.jpg", np.full((10, 10, 3), 90, np.uint8))
    for name, data in files.items():
        path = tmp_path / "probe-rcb" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))


def test_x_o1_relations_column_and_the_object_swap_file(tmp_path):
    _vg_release(tmp_path, (1, 11, 12, 2, 21), {"relation_eval_subject.json": {"1": R_ENTRY},
                                                 "relation_eval_object.json": {"2": O_ENTRY}})
    items = load_probe_r(tmp_path, None, 0, "eval").set_index("item_id")
    rel = items[items["kind"] == "subject_only_relations"]
    assert len(rel) == 2 and set(rel["correct_prompt"]) == {R_ENTRY["positive_prompt"]}   # P_R1 vs P_R2 on X_O1
    assert set(rel["wrong_prompt"]) == {R_ENTRY["negative_prompt"]}
    assert items.loc["ro-2-object", "kind"] == "object_swap"
    assert items.loc["ro-2-object", "wrong_prompt"] == O_ENTRY["negative_prompt"]
    assert items.loc["ro-2-predicate", "kind"] == "object_predicate_swap"
    assert items.loc["ro-2-only-21", "correct_prompt"] == "A photo of horse."
    assert items.loc["ro-2-only-relations-21", "kind"] == "object_only_relations"


def _offline_fetch(urls, dest_dir, **_):
    """fetch_images without a network: files already in dest_dir are found, the others are missing, and an
    OfflineError when none of the requested ids is there (as the real one does offline)."""
    rows = []
    for stem, url in urls.items():
        hit = next(iter(sorted(download.Path(dest_dir).glob(f"{stem}.*"))), None)
        rows.append(dict(id=stem, url=url, path=str(hit) if hit else None, ok=hit is not None))
    table = pd.DataFrame(rows)
    if not table["ok"].any():
        raise download.OfflineError("offline")
    return table


def test_a_missing_visual_genome_image_is_counted_not_fatal(tmp_path, monkeypatch):
    monkeypatch.setattr(download, "fetch_images", _offline_fetch)
    _vg_release(tmp_path, (1, 11), {"relation_eval_subject.json": {"1": R_ENTRY}})   # image 12 missing
    items = load_probe_r(tmp_path, None, 0, "eval")
    missing = items[items["image"].isna()]
    assert set(missing["image_id"]) == {"12"} and items["image"].notna().sum() == len(items) - 2
    shutil.rmtree(tmp_path / "visual_genome")
    with pytest.raises(download.OfflineError):      # not one image: the load fails and says so
        load_probe_r(tmp_path, None, 0, "eval")


# ---------------------------------------------------------------------------------------------- Probe-B
def _b_release(tmp_path, annotations):
    _png(tmp_path / "coco" / "val2014" / "COCO_val2014_000000000042.jpg", np.full((30, 40, 3), 90, np.uint8))
    root = tmp_path / "probe-rcb"
    root.mkdir(exist_ok=True)
    (root / "prompt_classes.csv").write_text("class,prompt\ndog,a dog.\ncat,a cat.\n")
    (root / "background_context_dataset.json").write_text(json.dumps(annotations))


def _poly(x, y, w, h):
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def test_an_edited_annotation_gets_a_new_mask(tmp_path):
    _b_release(tmp_path, [{"image_id": 42, "annotations": {"dog": [{"segmentation": _poly(2, 2, 6, 6)}]}}])
    first = load_probe_b(tmp_path, None, 0, "eval").iloc[0]["mask"]
    _b_release(tmp_path, [{"image_id": 42, "annotations": {"dog": [{"segmentation": _poly(20, 10, 8, 8)}]}}])
    second = load_probe_b(tmp_path, None, 0, "eval").iloc[0]["mask"]
    assert first != second
    m = np.asarray(Image.open(second)) > 0
    assert m[14, 24] and not m[4, 4]


def test_an_empty_mask_is_a_named_skip(tmp_path):
    _b_release(tmp_path, [{"image_id": 42, "annotations": {"dog": [{"segmentation": [[1, 2, 3, 4, 5]]}]}},
                          {"image_id": 42, "annotations": {"cat": [{"segmentation": _poly(2, 2, 6, 6)}]}}])
    items = load_probe_b(tmp_path, None, 0, "eval")
    assert len(items) == 1 and items.iloc[0]["labels"] == ["cat"]
    assert items.attrs["empty_masks"] == ["b-42"]


# -------------------------------------------------------------------------------------- scores and ties
def test_log_odds_create_no_ties_between_probabilities_the_model_tells_apart():
    p = np.array([1 - 1e-7, 1 - 5e-7, 1 - 2e-6], dtype=np.float32)   # the old 1e-6 clip tied the first two
    z = log_odds(p)
    assert z[0] > z[1] > z[2] and np.isfinite(log_odds([0.0, 1.0])).all()
    assert log_odds([0.0])[0] < log_odds(np.array([1e-44], np.float32))[0] and log_odds([1.0])[0] > z[0]


def test_bridgetower_confidence_differs_from_the_authors_softmax_of_the_match_logit():
    # BridgeTower's two-way ITM logits (no match, match) for the correct and the wrong prompt
    correct, wrong = np.array([-1.0, 2.0]), np.array([-4.0, 1.5])
    p = softmax(np.stack([correct, wrong]))[:, 1]
    ours = sigmoid(log_odds(p)[0] - log_odds(p)[1])               # probekit: log-odds of the ITM probability
    authors = softmax([correct[1], wrong[1]])[0]                   # the authors: softmax of the match logit
    assert ours == pytest.approx(sigmoid((2 + 1) - (1.5 + 4)))     # = sigmoid(-2.5): the wrong prompt wins
    assert authors == pytest.approx(sigmoid(0.5))                  # the correct one wins
    assert (ours > 0.5) != (authors > 0.5)


# ------------------------------------------------------------------------------------ the authors' code
def test_the_two_readings_of_the_authors_code_on_hand_cases():
    # s_ij = f(image_i, caption_j), caption_i describes image_i; group 1 (5, 4, 6, 7): each image prefers its own
    # caption (text 1), caption 0 prefers image 1 (image 0)
    s = dict(s00=[2.0, 5.0], s01=[1.0, 4.0], s10=[0.0, 6.0], s11=[0.0, 7.0])
    c = pd.DataFrame({"model": ["flava"] * 2, **s, **winoground(*s.values())})
    assert c["confidence"][0] == pytest.approx(0.6155, abs=5e-5)   # ours: softmax over the two captions per image
    swapped = authors_code.swap_text_image(c)
    # the authors' μ(c): rows of contrastive_logits_per_text, a softmax over the two images per caption,
    # (σ(s00 − s10) + σ(s11 − s01)) / 2 = (σ(2) + σ(-1)) / 2
    assert swapped["confidence"][0] == pytest.approx(0.5749, abs=5e-5)
    assert swapped["confidence"][0] == pytest.approx((sigmoid(2.0) + sigmoid(-1.0)) / 2)
    assert swapped["text"].tolist() == c["image"].tolist() and swapped["image"].tolist() == c["text"].tolist()
    assert (c["text"][1], c["image"][1]) == (1, 0) and (swapped["text"][1], swapped["image"][1]) == (0, 1)
    assert swapped["group"].tolist() == c["group"].tolist()
    assert list(swapped.columns) == list(c.columns) and authors_code.swap_text_image(swapped).equals(c)
    b = pd.DataFrame({"h_x0": [0.9], "h_x0_patch": [0.8], "h_x1_fill": [0.5],
                      "conf_x0": [0.7], "conf_x0_patch": [0.6], "conf_x1_fill": [0.3]})
    v = authors_code.swap_views(b)
    assert (v["h_x0_patch"][0], v["h_x1_fill"][0], v["conf_x0_patch"][0], v["h_x0"][0]) == (0.5, 0.8, 0.3, 0.9)


def test_undoing_the_readings_in_the_papers_tables():
    printed = paper_rows()
    fixed = undo_readings(printed)
    vilt = dict(probe="probe-b", model="ViLT", condition="all fillers")
    assert one(fixed, metric="map", subset="x̃0", **vilt)["value"] == pytest.approx(0.8326)      # printed as x̃1
    assert one(fixed, metric="gamma", subset="(x0, x̃0)", **vilt)["value"] == pytest.approx(1.00)
    assert one(fixed, metric="delta_c_pts", subset="(x̃0, x̃1)", **vilt)["value"] == pytest.approx(6.61)  # -(-6.61)
    assert one(fixed, model="FLAVA", probe="probe-c", subset="composition", metric="text")["value"] == 0.6093
    t4 = corrected_paper(printed[printed["source"] == "Schiappa et al. 2023, Table 4"])
    assert count(t4, dict(subset="composition", metric="text"), dict(subset="composition", metric="image")) == (15, 15)
    assert len(readings_claims(printed)) == 2
