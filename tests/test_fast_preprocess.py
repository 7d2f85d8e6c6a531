"""The preprocessing fast path (``probekit.scorers.hf.fast_pixels``) and the loader's decode cache.

The fast path must give the image processor's own output (bit for bit here; the contract is max |diff| <= 1e-6)
wherever it applies, and must stand aside (None: the processor runs) wherever it does not.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from probekit import images as imgs
from probekit.scorers import hf, load_scorer

T = pytest.importorskip("transformers")
RNG = np.random.default_rng(7)


def pictures(n, h=64, w=64, mode="RGB"):
    return [Image.fromarray(RNG.integers(0, 256, (h, w, 3), dtype=np.uint8)).convert(mode) for _ in range(n)]


def same_as_processor(proc, pils):
    fast = hf.fast_pixels(proc, pils)
    assert fast is not None, f"the fast path should apply to {type(proc).__name__}"
    ref = proc(images=pils, return_tensors="pt")
    assert sorted(fast) == sorted(k for k in ref if isinstance(ref[k], torch.Tensor))
    for k, v in fast.items():
        assert v.dtype == ref[k].dtype and v.shape == ref[k].shape and v.is_contiguous()
        assert float((v.double() - ref[k].double()).abs().max()) <= 1e-6, k


@pytest.mark.parametrize("name", ["toy-clip", "toy-vilt"])
def test_toy_scorers_processors_take_the_fast_path_with_the_processors_output(name):
    s = load_scorer(name, device="cpu", cache_dir=False)
    same_as_processor(s.image_processor, pictures(5))
    same_as_processor(s.image_processor, pictures(1))


@pytest.mark.parametrize("proc", [
    T.CLIPImageProcessor(size={"shortest_edge": 48}, crop_size={"height": 48, "width": 48}),  # OpenAI mean/std
    T.SiglipImageProcessor(size={"height": 48, "width": 48}),
    T.BlipImageProcessor(size={"height": 48, "width": 48}),
    T.ViltImageProcessor(size={"shortest_edge": 48}, size_divisor=16),
    T.ViltImageProcessor(size={"shortest_edge": 48}, size_divisor=16, do_pad=False),
], ids=lambda p: type(p).__name__)
def test_other_replicated_processors_match_too(proc):
    same_as_processor(proc, pictures(4, 48, 48))


@pytest.mark.parametrize("proc, pils", [
    (T.CLIPImageProcessor(size={"shortest_edge": 64}, crop_size={"height": 64, "width": 64}), pictures(2, 48, 80)),
    (T.CLIPImageProcessor(size={"shortest_edge": 64}, crop_size={"height": 56, "width": 56}), pictures(2)),
    (T.CLIPImageProcessor(size={"shortest_edge": 64}, crop_size={"height": 64, "width": 64}, do_normalize=False),
     pictures(2)),
    (T.ViltImageProcessor(size={"shortest_edge": 64}, size_divisor=24), pictures(2)),
    (T.ViltImageProcessor(size={"shortest_edge": 64}, size_divisor=16), pictures(2) + pictures(1, 48, 80)),
    (T.SiglipImageProcessor(size={"height": 64, "width": 64}), pictures(2, 64, 64, "L")),
    (T.FlavaImageProcessor(size={"height": 64, "width": 64}, crop_size={"height": 64, "width": 64}), pictures(2)),
    (T.BridgeTowerImageProcessor(size={"shortest_edge": 64}, crop_size={"shortest_edge": 64}, size_divisor=16),
     pictures(2)),
], ids=["other-size", "crop", "no-normalize", "size-divisor", "mixed-sizes", "not-RGB", "flava", "bridgetower"])
def test_the_fast_path_stands_aside_where_it_does_not_replicate_the_processor(proc, pils):
    assert hf.fast_pixels(proc, pils) is None
    out = hf.pixel_inputs(proc, pils, keep=("pixel_values",))  # the processor's own path still runs
    assert out["pixel_values"].shape[0] == len(pils)


def test_decoded_images_are_cached_by_path_size_and_mtime(tmp_path, monkeypatch):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    first, second = pictures(2)
    first.save(a)
    second.save(b)
    calls = []
    real = imgs.load_image
    monkeypatch.setattr(imgs, "load_image", lambda src: calls.append(src) or real(src))
    tasks = imgs._Tasks()
    got = [tasks[(i, str(p), None, "prep")][1] for i, p in enumerate([a, b, a, b, a])]
    assert len(calls) == 2 and got[0] is got[2] is got[4]
    assert np.array_equal(np.asarray(got[1]), np.asarray(second))
    pictures(1, 32, 32)[0].save(a)  # rewritten in place: another size, so another key
    assert tasks[(0, str(a), None, "prep")][1].size == (32, 32) and len(calls) == 3
    small = imgs._Tasks(budget=64 * 64 * 4)  # room for one 64 px image: the older one is dropped
    small[(0, str(b), None, "prep")], small[(1, str(a), None, "prep")]
    assert list(small._decoded) == [imgs.image_key(str(a))]


def test_a_decoded_png_is_the_same_rgb_image_as_pillows_conversion(tmp_path):
    for mode in ("RGB", "L", "RGBA", "P"):
        p = tmp_path / f"{mode}.png"
        pictures(1, 20, 30, mode)[0].save(p)
        with Image.open(p) as im:
            ref = np.asarray(im.convert("RGB"))
        got = imgs.load_image(str(p))
        assert got.mode == "RGB" and np.array_equal(np.asarray(got), ref)


@pytest.mark.parametrize("name, call", [("toy-clip", lambda s, ps: s.similarity(ps, ["a dog holds a ball"])),
                                        ("toy-vilt", lambda s, ps: s.match(ps, ["a dog holds a ball"] * len(ps)))])
def test_scoring_64px_files_goes_through_the_fast_path(tmp_path, monkeypatch, name, call):
    paths = []
    for i, pil in enumerate(pictures(3)):
        pil.save(tmp_path / f"{i}.png")
        paths.append(str(tmp_path / f"{i}.png"))
    taken, real = [], hf.fast_pixels
    monkeypatch.setattr(hf, "fast_pixels", lambda proc, pils: taken.append(real(proc, pils)) or taken[-1])
    assert np.isfinite(call(load_scorer(name, device="cpu", cache_dir=False), paths)).all()
    assert taken and all(t is not None for t in taken)


def test_a_dual_encoder_embeds_its_texts_while_the_workers_decode_the_images(tmp_path, monkeypatch):
    paths = []
    for i, pil in enumerate(pictures(5)):
        pil.save(tmp_path / f"{i}.png")
        paths.append(str(tmp_path / f"{i}.png"))
    s = load_scorer("toy-clip", device="cpu", cache_dir=False, batch_size=2, num_workers=1)
    inline = load_scorer("toy-clip", device="cpu", cache_dir=False, batch_size=2)
    events = []
    batches, texts, embed = imgs.Loader.batches, type(s)._text_embeddings, type(s)._embed_images
    monkeypatch.setattr(imgs.Loader, "batches",
                        lambda *a, **k: events.append("workers handed images") or batches(*a, **k))
    monkeypatch.setattr(type(s), "_text_embeddings", lambda self, t: events.append("texts") or texts(self, t))
    monkeypatch.setattr(type(s), "_embed_images", lambda self, x: events.append("image forward") or embed(self, x))
    lists, sentences = [paths[:2], paths[2:4], paths[3:]], ["a dog", "a cat", "a red ball"]
    got = s.choose_image(lists, sentences)
    assert events[:3] == ["workers handed images", "texts", "image forward"]
    events.clear()
    again = s.similarity(paths, ["a dog", "a bird"])  # images cached: no loader, texts still embedded
    assert "workers handed images" not in events and events.count("texts") == 1
    assert np.array_equal(got, inline.choose_image(lists, sentences))
    assert np.array_equal(again, inline.similarity(paths, ["a dog", "a bird"]))
