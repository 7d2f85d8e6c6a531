"""The OWL-ViT detector behind the registry (``detect``), offline on a tiny OwlViTForObjectDetection."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from probekit.scorers import REGISTRY, CapabilityError, load_scorer
from probekit.scorers.testing import save_tiny

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny("owlvit", tmp_path_factory.mktemp("owlvit"))


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("img")
    out = []
    for i in range(3):
        out.append(str(root / f"{i}.png"))
        Image.fromarray(np.random.default_rng(i).integers(0, 256, (40, 60, 3), dtype=np.uint8)).save(out[-1])
    return out


def raw_box(path, query, threshold=0.1):
    """The detection as data/masking.py computed it: processor + model + post-processing, best box as x, y, w, h."""
    from transformers import OwlViTForObjectDetection, OwlViTProcessor

    model, processor = OwlViTForObjectDetection.from_pretrained(raw_box.dir).eval(), \
        OwlViTProcessor.from_pretrained(raw_box.dir)
    inputs = processor(text=[[f"a photo of a {query}"]], images=[Image.open(path).convert("RGB")],
                       return_tensors="pt", padding=True, truncation=True)
    with torch.no_grad():
        outputs = model(**inputs)
    res = processor.post_process_grounded_object_detection(outputs, threshold=threshold)[0]
    if len(res["scores"]) == 0:
        return None
    x0, y0, x1, y1 = res["boxes"][int(res["scores"].argmax())].clamp(0, 1).tolist()
    return [x0, y0, x1 - x0, y1 - y0] if x1 > x0 and y1 > y0 else None


def test_registry_entry():
    spec = REGISTRY["owlvit-b32"]
    assert (spec.family, spec.source, spec.capabilities) == ("owlvit", "google/owlvit-base-patch32", ("detect",))


def test_boxes_equal_the_raw_model_and_are_grid_cells(tiny, paths, tmp_path):
    raw_box.dir = tiny
    # queries of different lengths in one batch; a repeated pair is detected once
    images, queries = paths + [paths[0]], ["dog", "young woman", "man", "dog"]
    scorer = load_scorer(tiny, family="owlvit", device="cpu", cache_dir=tmp_path, threshold=0.0, batch_size=2)
    boxes = scorer.detect(images, queries)
    assert all(isinstance(b, tuple) and len(b) == 4 and all(isinstance(v, float) for v in b) for b in boxes)
    for box, path, query in zip(boxes, images, queries):
        np.testing.assert_allclose(box, raw_box(path, query, threshold=0.0), atol=1e-5)
    # with a zero box head OWL-ViT's boxes are its prior: centres (i+1)/4, sides 1/4, clipped to the image
    spans = [(c - .125, min(c + .125, 1.0)) for c in (.25, .5, .75, 1.0)]
    cells = [[x0, y0, x1 - x0, y1 - y0] for y0, y1 in spans for x0, x1 in spans]
    assert all(any(np.allclose(b, cell, atol=1e-3) for cell in cells) for b in boxes)
    assert boxes[3] == boxes[0]
    # cached: a new scorer reads the boxes back without running the model
    again = load_scorer(tiny, family="owlvit", device="cpu", cache_dir=tmp_path, threshold=0.0)
    assert again.detect(images[:2], queries[:2]) == boxes[:2] and again.forward_seconds == 0.0


def test_nothing_above_threshold_and_unreadable_images_are_none(tiny, paths, tmp_path):
    raw_box.dir = tiny
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    strict = load_scorer(tiny, family="owlvit", device="cpu", cache_dir=tmp_path, threshold=1.01)
    assert strict.detect(paths[:2], ["dog", "man"]) == [None, None] and strict.skipped == []
    assert raw_box(paths[0], "dog", threshold=1.01) is None
    default = load_scorer(tiny, family="owlvit", device="cpu", cache_dir=False)
    assert default.threshold == 0.1
    got = default.detect([paths[0], str(broken), None], ["dog", "dog", "dog"])
    assert got[1] is None and got[2] is None and str(broken) in default.skipped
    assert got[0] == (None if raw_box(paths[0], "dog") is None else pytest.approx(tuple(raw_box(paths[0], "dog"))))
    with pytest.raises(ValueError, match="one query per image"):
        default.detect(paths, ["dog"])


def test_other_models_cannot_detect(tmp_path):
    bert = load_scorer(save_tiny("bert", tmp_path / "bert"), family="bert", cache_dir=False)
    with pytest.raises(CapabilityError, match="detect"):
        bert.detect(["x.png"], ["dog"])
