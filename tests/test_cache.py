"""The parquet score cache: identical scores on re-run, nothing recomputed, resume after an interruption."""

from __future__ import annotations

import json
import os
import shutil
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


def test_fingerprints_follow_file_contents(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "model.safetensors").write_bytes(b"1234")
    before = files_fingerprint(ckpt, memo=tmp_path / "memo")
    assert model_fingerprint("x", str(ckpt)) == model_fingerprint("x", str(ckpt))
    stat = (ckpt / "model.safetensors").stat()
    (ckpt / "model.safetensors").write_bytes(b"4321")  # same size, and the old mtime put back
    os.utime(ckpt / "model.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert files_fingerprint(ckpt, memo=tmp_path / "memo") != before
    (ckpt / ".cache").mkdir()  # hub download metadata is not what is scored
    (ckpt / ".cache" / "x.metadata").write_text("1")
    copy = shutil.copytree(ckpt, tmp_path / "copy", copy_function=shutil.copy)  # new inodes and times
    assert files_fingerprint(copy) == files_fingerprint(ckpt)
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


def _score(name, ims, texts, cache_dir):
    scorer = load_scorer(name, cache_dir=cache_dir)
    return scorer.similarity(ims, texts), scorer.fingerprint


def test_weights_overwritten_in_place_give_new_scores(pairs, tmp_path):
    """open_clip's ARCH:/path/weights.pt (a name that is no path, so the key once hashed the name): weights
    of another seed copied over the file are scored anew; a byte-identical copy elsewhere has the same key."""
    import open_clip

    ims, texts = pairs[0][:3], pairs[1][:3]
    seeds = [save_tiny("open_clip", tmp_path / f"seed{s}", seed=s) / "open_clip_pytorch_model.bin" for s in (0, 1)]
    arch = tmp_path / "probekit-tiny66.json"
    arch.write_text(json.dumps(json.loads((seeds[0].parent / "open_clip_config.json").read_text())["model_cfg"]))
    open_clip.add_model_config(arch)
    weights = tmp_path / "w" / "weights.pt"
    weights.parent.mkdir()
    shutil.copy(seeds[0], weights)
    name, scores = f"probekit-tiny66:{weights}", tmp_path / "scores"
    first, key = _score(name, ims, texts, scores)
    shutil.copy(seeds[1], weights)
    second, new_key = _score(name, ims, texts, scores)
    assert new_key != key and not np.allclose(first, second)
    assert np.allclose(second, _score(name, ims, texts, False)[0], atol=1e-6)
    copy = shutil.copy(weights, tmp_path / "elsewhere.pt")
    assert _score(f"probekit-tiny66:{copy}", ims, texts, False)[1].rsplit("-", 1)[1] == new_key.rsplit("-", 1)[1]


def test_checkpoint_directory_rewritten_in_place_is_scored_anew(pairs, tmp_path):
    ims, texts = pairs[0][:3], pairs[1][:3]
    ckpt = save_tiny("clip", tmp_path / "clip", seed=0)
    first = load_scorer(ckpt, cache_dir=tmp_path / "scores").similarity(ims, texts)
    times = {f: (f.stat().st_atime_ns, f.stat().st_mtime_ns) for f in ckpt.iterdir()}
    save_tiny("clip", ckpt, seed=1)
    for f, ns in times.items():  # every file with its old mtime (and size): only the bytes tell
        os.utime(f, ns=ns)
    again = load_scorer(ckpt, cache_dir=tmp_path / "scores").similarity(ims, texts)
    assert not np.allclose(first, again)
    assert np.allclose(again, load_scorer(ckpt, cache_dir=False).similarity(ims, texts), atol=1e-6)


def test_dual_encoder_embeddings_are_cached(pairs, tmp_path):
    clip_dir = save_tiny("clip", tmp_path / "clip")
    ims, texts = pairs
    a = load_scorer(clip_dir, family="clip", cache_dir=tmp_path / "scores").similarity(ims, texts)
    again = load_scorer(clip_dir, family="clip", cache_dir=tmp_path / "scores")
    again._embed_images = again._embed_texts = None  # any forward would fail
    assert np.array_equal(again.similarity(ims, texts), a)
