"""The parquet score cache: identical scores on re-run, nothing recomputed, resume after an interruption."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import torch
from PIL import Image

from pictures import random_pngs
from probekit.cache import ScoreCache, files_fingerprint, model_fingerprint
from probekit.images import image_key
from probekit.scorers import load_scorer
from probekit.scorers.testing import save_tiny

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def vilt_dir(tmp_path_factory):
    return save_tiny("vilt", tmp_path_factory.mktemp("tiny") / "vilt")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    ims = random_pngs(tmp_path_factory.mktemp("img"), 6, seed=1)
    texts = ["a dog holding a ball", "a cat on the car", "a man riding a horse"]
    return [ims[i % 6] for i in range(24)], [texts[i % 3] for i in range(24)]


def test_shards_roundtrip_and_flush_every(tmp_path):
    c = ScoreCache(tmp_path, "m-1", "match", 1, flush_every=3)
    for i in range(7):
        c.put_array(f"k{i}", np.array([i / 10]))
    assert len(list(c.dir.glob("part-*.parquet"))) == 2  # two full shards flushed, one entry pending
    c.flush()
    again = ScoreCache(tmp_path, "m-1", "match", 1)
    assert len(again) == 7 and again.get_array("k6")[0] == np.float32(0.6)
    assert len(ScoreCache(tmp_path, "m-1", "match", 2)) == 0  # a new recipe version recomputes
    assert not list(c.dir.glob(".*tmp"))


def test_fingerprints_follow_files(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "model.safetensors").write_bytes(b"1234")
    before = files_fingerprint(ckpt)
    assert model_fingerprint("x", str(ckpt)) == model_fingerprint("x", str(ckpt))
    (ckpt / "model.safetensors").write_bytes(b"12345")
    assert files_fingerprint(ckpt) != before
    assert model_fingerprint("a/b", "a/b", "rev1") != model_fingerprint("a/b", "a/b", "rev2")
    img = tmp_path / "i.png"
    Image.new("RGB", (4, 4)).save(img)
    k = image_key(img)
    time.sleep(0.01)
    Image.new("RGB", (5, 4)).save(img)
    os.utime(img, ns=(time.time_ns(), time.time_ns()))
    assert image_key(img) != k and image_key(Image.new("RGB", (4, 4))).startswith("pil:")


def _count_forwards(scorer):
    calls = {"n": 0}
    fn = scorer._match_probs

    def counted(inputs):
        calls["n"] += 1
        return fn(inputs)

    scorer._match_probs = counted
    return calls


def test_rerun_recomputes_nothing_and_returns_identical_scores(vilt_dir, pairs, tmp_path):
    ims, texts = pairs
    first = load_scorer(vilt_dir, family="vilt", cache_dir=tmp_path, batch_size=4)
    a = first.match(ims, texts)
    fresh = load_scorer(vilt_dir, family="vilt", cache_dir=tmp_path, batch_size=4)
    calls = _count_forwards(fresh)
    b = fresh.match(ims, texts)
    assert calls["n"] == 0 and np.array_equal(a, b)
    mlm = fresh.fill_mask(["a dog [MASK] a ball"], ims[:1], k=3)
    assert load_scorer(vilt_dir, family="vilt", cache_dir=tmp_path).fill_mask(["a dog [MASK] a ball"], ims[:1],
                                                                               k=3) == mlm


def test_interrupted_run_resumes_where_it_stopped(vilt_dir, pairs, tmp_path):
    ims, texts = pairs
    texts = [f"{t} {'and the tree ' * (i // 6)}".strip() for i, t in enumerate(texts)]  # 24 unique pairs
    s = load_scorer(vilt_dir, family="vilt", cache_dir=tmp_path, batch_size=4)
    s.match(ims[:1], texts[:1])  # warm the scorer (one pair cached)
    fn = s._match_probs
    calls = {"n": 0}

    def dies_on_third_batch(inputs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return fn(inputs)

    s._match_probs = dies_on_third_batch
    with pytest.raises(KeyboardInterrupt):
        s.match(ims, texts)
    resumed = load_scorer(vilt_dir, family="vilt", cache_dir=tmp_path, batch_size=4)
    counter = _count_forwards(resumed)
    out = resumed.match(ims, texts)
    # 24 unique pairs, 1 cached before, 8 done in two batches before the interruption: 15 left = 4 batches
    assert counter["n"] == 4
    reference = load_scorer(vilt_dir, family="vilt", cache_dir=False, batch_size=4).match(ims, texts)
    assert np.allclose(out, reference, atol=1e-6)


def test_dual_encoder_embeddings_are_cached(pairs, tmp_path):
    clip_dir = save_tiny("clip", tmp_path / "clip")
    ims, texts = pairs
    a = load_scorer(clip_dir, family="clip", cache_dir=tmp_path / "scores").similarity(ims, texts)
    again = load_scorer(clip_dir, family="clip", cache_dir=tmp_path / "scores")
    again._embed_images = again._embed_texts = None  # any forward would fail
    assert np.array_equal(again.similarity(ims, texts), a)
