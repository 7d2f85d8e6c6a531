"""Scorers of every family, on tiny random models built from configs and loaded like a hub checkpoint."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from probekit.scorers import MASK, REGISTRY, CapabilityError, UnknownModelError, list_models, load_scorer
from probekit.scorers.testing import save_tiny

torch.set_num_threads(1)

FAMILIES = ["clip", "siglip", "open_clip", "vilt", "blip", "bridgetower", "flava", "bert"]

CONTRACT_NAMES = """toy-clip toy-vilt toy-bert clip-vit-b32 clip-vit-b16 clip-vit-l14 clip-vit-l14-336 siglip-b16
openclip-rn50-openai openclip-rn101-openai openclip-vit-b32-openai openclip-vit-l14-openai openclip-rn50-yfcc15m
openclip-rn50-cc12m openclip-vit-b32-laion400m openclip-vit-b32-laion2b openclip-vit-l14-laion2b openclip-rn50x4-openai
vilt-coco vilt-mlm blip-itm-base blip-itm-large bridgetower flava bert-base""".split()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {f: save_tiny(f, root / f) for f in FAMILIES}


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    root = tmp_path_factory.mktemp("img")
    rng = np.random.default_rng(0)
    paths = []
    for i in range(4):
        p = root / f"img{i}.png"
        Image.fromarray(rng.integers(0, 255, (32, 40 + 8 * i, 3), dtype=np.uint8)).save(p)
        paths.append(str(p))
    broken = root / "broken.png"
    broken.write_bytes(b"this is not a png")
    return {"ok": paths, "broken": str(broken), "missing": str(root / "nope.png")}


def scorer(tiny, family, **kw):
    kw.setdefault("cache_dir", False)
    return load_scorer(tiny[family], family=family, device="cpu", **kw)


TEXTS = ["a dog holding a ball", "a red cat on the car", "a man riding a horse", "the big tree in the park"]


def test_registry_has_every_contract_name_with_head_and_papers():
    assert set(CONTRACT_NAMES) <= set(REGISTRY)
    table = list_models()
    assert {"name", "family", "source", "capabilities", "head", "papers"} <= set(table.columns)
    assert table["head"].str.len().min() > 20
    assert REGISTRY["vilt-coco"].capabilities == ("match",) and REGISTRY["vilt-mlm"].capabilities == ("fill_mask",)
    assert REGISTRY["openclip-rn50-yfcc15m"].source == "RN50:yfcc15m"
    assert "prednoun" in REGISTRY["openclip-vit-b32-laion400m"].papers


def test_unknown_name_suggests_nearest():
    with pytest.raises(UnknownModelError, match="toy-clip"):
        load_scorer("toy-clipp")
    with pytest.raises(UnknownModelError, match="family"):
        load_scorer("some-org/some-model")
    with pytest.raises(UnknownModelError, match="'vilt'"):
        load_scorer("some-org/some-model", family="vlit")


def test_importing_scorers_imports_no_backend():
    code = ("import sys, probekit.scorers; bad = [m for m in ('transformers', 'open_clip') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("family", ["clip", "siglip", "open_clip", "flava"])
def test_similarity_and_choices(tiny, images, family):
    s = scorer(tiny, family)
    ims = images["ok"][:3]
    sim = s.similarity(ims, TEXTS)
    assert sim.shape == (3, 4) and np.isfinite(sim).all()
    choice = s.choose_text(ims, [TEXTS[:2], TEXTS[1:3], TEXTS[2:]], head="similarity")
    assert choice.shape == (3, 2) and np.allclose(choice.sum(1), 1)
    # the softmax over candidates is the softmax of the corresponding similarity entries
    expected = np.exp(sim[0, :2]) / np.exp(sim[0, :2]).sum()
    assert np.allclose(choice[0], expected, atol=1e-6)
    img_choice = s.choose_image([ims[:2], ims[1:]], TEXTS[:2], head="similarity")
    assert img_choice.shape == (2, 2) and np.allclose(img_choice.sum(1), 1)
    assert np.allclose(img_choice[1], np.exp(sim[1:, 1]) / np.exp(sim[1:, 1]).sum(), atol=1e-6)


@pytest.mark.parametrize("family", ["siglip", "vilt", "blip", "bridgetower", "flava"])
def test_match_probabilities_and_unreadable_images(tiny, images, family):
    s = scorer(tiny, family, batch_size=2)
    ims = images["ok"] + [images["broken"], images["missing"], None]
    with pytest.warns(UserWarning, match="cannot decode"):
        p = s.match(ims, TEXTS + TEXTS[:3])
    assert p.shape == (7,)
    assert ((p[:4] >= 0) & (p[:4] <= 1)).all()
    assert np.isnan(p[4:]).all()  # never a silent zero
    assert set(s.skipped) == {images["broken"], images["missing"], "<missing path>"}
    k = s.choose_text(images["ok"][:2], [TEXTS[:3], TEXTS[1:]], head="match")  # not renormalised
    assert k.shape == (2, 3) and np.allclose(k[0], s.match([images["ok"][0]] * 3, TEXTS[:3]))


@pytest.mark.parametrize("family", ["vilt", "bridgetower", "flava", "bert"])
def test_fill_mask_top_k(tiny, images, family):
    s = scorer(tiny, family)
    texts = [f"a dog {MASK} a ball", f"a {MASK} {MASK} on the car"]
    ims = None if family == "bert" else images["ok"][:2]
    out = s.fill_mask(texts, images=ims, k=4)
    assert [len(o) for o in out] == [1, 2]
    for positions in out:
        for top in positions:
            probs = [p for _, p in top]
            assert len(top) == 4 and all(isinstance(w, str) and w for w, _ in top)
            assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
    assert s.word_pieces("holding") == ["holding"]


@pytest.mark.parametrize("family", ["vilt", "bridgetower", "flava", "bert"])
def test_mask_logprobs_are_fill_masks_probabilities_of_each_texts_own_word(tiny, images, family):
    """Each text's own word, scored at its masks (one per piece), in one batch: the log of what fill_mask reports for
    the same word at the same masks; None where the image cannot be read."""
    s = scorer(tiny, family)
    texts = [f"a dog {MASK} a ball", f"a {MASK} {MASK} on the car", f"a {MASK} {MASK} on the car"]
    ims = None if family == "bert" else [images["ok"][0], images["ok"][1], images["ok"][1]]
    top = s.fill_mask(texts, images=ims, k=2)
    words = [top[0][0][1][0], f"{top[1][0][0][0]} {top[1][1][0][0]}", f"{top[2][0][1][0]} {top[2][1][0][0]}"]
    words = [w if len(s.word_pieces(w)) == texts[i].count(MASK) else None for i, w in enumerate(words)]
    kept = [i for i, w in enumerate(words) if w is not None]
    got = s.mask_logprobs([texts[i] for i in kept], [words[i] for i in kept], None if ims is None else
                          [ims[i] for i in kept])
    want = {0: [top[0][0][1][1]], 1: [top[1][0][0][1], top[1][1][0][1]], 2: [top[2][0][1][1], top[2][1][0][1]]}
    assert kept and all(np.allclose(g, np.log(want[i]), atol=1e-5) for i, g in zip(kept, got))
    if family != "bert":
        assert s.mask_logprobs([texts[0]], [words[kept[0]]], [images["broken"]]) == [None]
    with pytest.raises(ValueError, match="one mask per piece"):
        s.mask_logprobs([texts[0]], ["dog ball"], ims[:1] if ims else None)


def test_capability_errors_name_what_the_model_has(tiny, images):
    clip, bert = scorer(tiny, "clip"), scorer(tiny, "bert")
    with pytest.raises(CapabilityError, match="similarity"):
        clip.match(images["ok"][:1], TEXTS[:1])
    with pytest.raises(CapabilityError, match="fill_mask"):
        clip.fill_mask([f"a {MASK}"], images["ok"][:1])
    with pytest.raises(CapabilityError, match="sees no image"):
        bert.fill_mask([f"a {MASK}"], images=images["ok"][:1])
    with pytest.raises(CapabilityError, match="fill_mask"):
        bert.similarity(images["ok"][:1], TEXTS[:1])
    vilt_itm = load_scorer(tiny["vilt"], family="vilt", capabilities=["match"], cache_dir=False)
    with pytest.raises(CapabilityError, match="match"):
        vilt_itm.fill_mask([f"a {MASK}"], images["ok"][:1])
    with pytest.raises(ValueError, match="images="):
        scorer(tiny, "vilt").fill_mask([f"a {MASK}"])


def test_batched_deduplicated_scores_equal_one_pair_loop(tiny, images):
    ims = [images["ok"][i % 3] for i in range(9)]
    texts = [TEXTS[i % 2] for i in range(9)]  # duplicates of images, texts and whole pairs
    vilt = scorer(tiny, "vilt", batch_size=4)
    one = scorer(tiny, "vilt", batch_size=1)
    batched = vilt.match(ims, texts)
    loop = np.array([one.match([i], [t])[0] for i, t in zip(ims, texts)])
    assert np.allclose(batched, loop, atol=1e-5)
    workers = scorer(tiny, "vilt", batch_size=4, num_workers=1).match(ims, texts)
    assert np.allclose(workers, loop, atol=1e-5)
    clip, clip1 = scorer(tiny, "clip", batch_size=4), scorer(tiny, "clip", batch_size=1)
    sim = clip.similarity(ims, texts)
    loop = np.array([[clip1.similarity([i], [t])[0, 0] for t in texts] for i in ims])
    assert np.allclose(sim, loop, atol=1e-4)
    masked = [f"a dog {MASK} a ball", f"a {MASK} on the car", f"a dog {MASK} a ball"]
    bert, bert1 = scorer(tiny, "bert", batch_size=3), scorer(tiny, "bert", batch_size=1)
    together = bert.fill_mask(masked, k=3)
    for text, res in zip(masked, together):
        alone = bert1.fill_mask([text], k=3)[0]
        assert [w for w, _ in res[0]] == [w for w, _ in alone[0]]
        assert np.allclose([p for _, p in res[0]], [p for _, p in alone[0]], atol=1e-5)


def test_dual_encoder_embeds_each_unique_image_and_text_once(tiny, images, monkeypatch):
    s = scorer(tiny, "clip", batch_size=64)
    seen = {"images": 0, "texts": 0}
    emb_i, emb_t = s._embed_images, s._embed_texts

    def count_i(inputs):
        seen["images"] += len(inputs["pixel_values"])
        return emb_i(inputs)

    def count_t(inputs):
        seen["texts"] += len(inputs["input_ids"])
        return emb_t(inputs)

    monkeypatch.setattr(s, "_embed_images", count_i)
    monkeypatch.setattr(s, "_embed_texts", count_t)
    ims = [images["ok"][i % 3] for i in range(30)]
    s.choose_text(ims, [[TEXTS[i % 4], TEXTS[(i + 1) % 4]] for i in range(30)])
    assert seen == {"images": 3, "texts": 4}


def test_open_clip_weights_file_loads_offline_and_states_preprocessing(tiny, tmp_path, monkeypatch):
    import json

    import open_clip

    cfg = json.loads((tiny["open_clip"] / "open_clip_config.json").read_text())["model_cfg"]
    (tmp_path / "probekit-tiny.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(tmp_path / "probekit-tiny.json")
    weights = tmp_path / "weights.pt"
    weights.write_bytes((tiny["open_clip"] / "open_clip_pytorch_model.bin").read_bytes())

    def no_network(*a, **k):
        raise AssertionError("a download was attempted")

    import huggingface_hub
    monkeypatch.setattr(open_clip.pretrained, "download_pretrained", no_network)
    monkeypatch.setattr(open_clip.pretrained, "download_pretrained_from_hf", no_network)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_network)
    with pytest.raises(ValueError, match="arch="):
        load_scorer(weights, family="open_clip", cache_dir=False)
    with pytest.warns(UserWarning, match="default preprocessing"):
        s = load_scorer(weights, family="open_clip", arch="probekit-tiny", cache_dir=False)
    assert "mean" in s.preprocessing
    s2 = load_scorer(weights, family="open_clip", arch="probekit-tiny", cache_dir=False,
                     image_mean=(0.5, 0.5, 0.5), image_std=(0.25, 0.25, 0.25))
    assert "0.25" in s2.preprocessing
    local = load_scorer(tiny["open_clip"], family="open_clip", cache_dir=False)
    assert "0.25" in local.preprocessing
