import numpy as np
import pandas as pd
import pytest
from PIL import Image

from probekit.fillers import FILLERS, derive_probe_b, fill_background, patch_image, random_patch_box


@pytest.fixture
def scene_with_objects(tmp_path):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8)
    keep = np.zeros((48, 64), bool)
    keep[4:20, 6:30] = True       # two annotated objects
    keep[30:44, 40:60] = True
    Image.fromarray(img).save(tmp_path / "x0.png")
    Image.fromarray((keep * 255).astype(np.uint8)).save(tmp_path / "mask.png")
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    Image.fromarray(np.full((20, 20, 3), (10, 200, 30), np.uint8)).save(scenes / "meadow.png")
    return img, keep, tmp_path


@pytest.mark.parametrize("filler", FILLERS)
def test_filling_keeps_annotated_objects_pixel_exact(scene_with_objects, filler):
    img, keep, d = scene_with_objects
    out = np.asarray(fill_background(d / "x0.png", d / "mask.png", filler, seed=1, scene=d / "scenes" / "meadow.png"))
    assert np.array_equal(out[keep], img[keep])
    background = out[~keep]
    expected = {"black": (0, 0, 0), "gray": (128, 128, 128), "scene": (10, 200, 30)}
    if filler in expected:
        assert (background == expected[filler]).all()
    else:  # noise: centred on mid-gray, spread, and not the original pixels
        assert abs(background.mean() - 128) < 5 and background.std() > 40
        assert not np.array_equal(background, img[~keep])


def test_random_patch_occludes_no_object_and_is_deterministic(scene_with_objects):
    img, keep, d = scene_with_objects
    for seed in range(20):
        x, y, w, h = random_patch_box(keep, 0.25, seed)
        assert w == h >= 2 and not keep[y:y + h, x:x + w].any()
        assert 0 <= x and x + w <= 64 and 0 <= y and y + h <= 48
    assert random_patch_box(keep, 0.25, 3) == random_patch_box(keep, 0.25, 3)
    assert len({random_patch_box(keep, 0.25, s) for s in range(20)}) > 1
    out = np.asarray(patch_image(d / "x0.png", d / "mask.png", "black", seed=3))
    assert np.array_equal(out[keep], img[keep])
    changed = (out != img).any(-1)
    x, y, w, h = random_patch_box(keep, 0.25, 3)
    assert changed[y:y + h, x:x + w].mean() > 0.9 and not changed[~np.pad(np.ones((h, w), bool),
                                                                             ((y, 48 - y - h), (x, 64 - x - w)))].any()


def test_no_free_spot_means_no_patch():
    assert random_patch_box(np.ones((10, 10), bool)) is None


def test_derive_probe_b_writes_reusable_files(scene_with_objects):
    img, keep, d = scene_with_objects
    items = pd.DataFrame({"item_id": ["a", "b"], "image": [str(d / "x0.png"), None], "mask": [str(d / "mask.png"), None],
                          "labels": [["cat", "dog"], ["cat"]], "single_object": [False, True], "target": [None, "cat"]})
    items.attrs.update(classes=["cat", "dog"], scene_dir=str(d / "scenes"))
    out = derive_probe_b(items, ["gray", "scene"], d, seed=0, progress=False)
    assert list(out["filler"]) == ["gray", "scene"] and list(out["item_id"]) == ["a", "a"]  # unreadable b skipped
    for rec in out.to_dict("records"):
        assert rec["x0"] == str(d / "x0.png") and str(d / "derived" / "probe-b") in rec["x1_fill"]
        assert np.array_equal(np.asarray(Image.open(rec["x1_fill"]))[keep], img[keep])
    stamp = [(d / p).stat().st_mtime_ns for p in out["x1_fill"]]
    again = derive_probe_b(items, ["gray", "scene"], d, seed=0, progress=False)
    assert again["x1_fill"].tolist() == out["x1_fill"].tolist()
    assert [(d / p).stat().st_mtime_ns for p in again["x1_fill"]] == stamp
    with pytest.raises(ValueError, match="unknown filler"):
        derive_probe_b(items, ["purple"], d)
