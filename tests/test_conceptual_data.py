"""The loaders of the authors' Probe-R/C/B release, on small fixtures in the release's formats (no network:
every image is already where the loader looks)."""

import json

import numpy as np
import pytest
from PIL import Image

from probekit.data.background import load_probe_b
from probekit.data.conceptual import AnnotationError, load_probe_c, load_probe_r
from probekit.studies.conceptual.study import suite_sources
from probekit.datasets import SCHEMAS, load_dataset


def _image(path, size=(40, 30)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((size[1], size[0], 3), 90, np.uint8)).save(path)


def _release(tmp_path, name, data):
    path = tmp_path / "probe-rcb" / "annotations" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


R_ENTRY = {"positive_image_ids": [11, 12], "negative_image_ids": [13],
           "positive_prompt": "A photo of a snow covering ground.", "negative_prompt": "A photo of a cracker covering ground.",
           "negative_object": "cracker", "positive_object": "snow",
           "negative_predicate_prompt": "A photo of a snow flying in front of ground."}


@pytest.fixture
def vg(tmp_path):
    for i in (2317469, 11, 12):
        _image(tmp_path / "visual_genome" / "images" / f"{i}.jpg")
    return tmp_path


def test_probe_r_rows_per_comparison(vg):
    _release(vg, "relation_eval_subject.json", {"2317469": R_ENTRY})
    items = load_dataset("probe-r", "probe-r", data_dir=vg)
    assert set(SCHEMAS["probe-r"]) <= set(items.columns)
    by_kind = items.set_index("kind")
    assert by_kind.loc["predicate_swap", "wrong_prompt"] == R_ENTRY["negative_predicate_prompt"]
    assert by_kind.loc["subject_swap", "wrong_prompt"] == R_ENTRY["negative_prompt"]
    only = items[items["kind"] == "subject_only"]
    assert len(only) == 2 and set(only["correct_prompt"]) == {"A photo of snow."}
    assert set(only["wrong_prompt"]) == {R_ENTRY["positive_prompt"]}
    assert items["image"].str.endswith(("2317469.jpg", "11.jpg", "12.jpg")).all()
    assert items["group_id"].nunique() == 1
    assert len(load_probe_r(vg, 3, 0, "eval")) == 3
    with pytest.raises(ValueError, match="only an evaluation set"):
        load_probe_r(vg, None, 0, "train")


@pytest.mark.parametrize("broken, message", [
    ({"2317469": {k: v for k, v in R_ENTRY.items() if k != "negative_predicate_prompt"}},
     r"relation_eval_subject.json: entry '2317469' has no field 'negative_predicate_prompt'"),
    ({"2317469": {**R_ENTRY, "positive_image_ids": ["x"]}}, r"entry '2317469', field 'positive_image_ids'\[0\]"),
    ([R_ENTRY], "expected an object keyed by Visual Genome image id"),
    ("{not json", "not valid JSON"),
])
def test_probe_r_rejects_broken_files(vg, broken, message):
    _release(vg, "relation_eval_subject.json", broken)
    with pytest.raises(AnnotationError, match=message):
        load_probe_r(vg, None, 0, "eval")


def test_missing_release_says_where_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"relation_eval_subject.json not found .*crcv.ucf.edu"):
        load_probe_r(tmp_path, None, 0, "eval")


C_GROUP = {"img1_prompt": "A photo of a small dog.", "img1_id": "42", "img1_composition": "small", "img1_object": "dog",
           "img2_id": 371046, "img2_prompt": "A photo of a large dog.", "img2_composition": "large", "img2_object": "dog"}
O_GROUP = {**C_GROUP, "img2_id": 514990, "img2_prompt": "A photo of a small boy.", "img2_composition": "small",
           "img2_object": "boy"}


@pytest.fixture
def coco(tmp_path):
    for i in (42, 371046, 514990):
        _image(tmp_path / "coco" / "val2014" / f"COCO_val2014_{i:012d}.jpg")
    return tmp_path


def test_probe_c_groups_and_categories(coco):
    _release(coco, "data_compositional_switch.json", [C_GROUP])
    _release(coco, "data_object_switch.json", [O_GROUP])
    items = load_dataset("probe-c", "probe-c", data_dir=coco)
    assert set(SCHEMAS["probe-c"]) <= set(items.columns)
    comp, obj = items.iloc[0], items.iloc[1]
    assert (comp["split"], comp["category"], obj["split"], obj["category"]) == ("composition", "size", "object", "dog")
    assert comp["caption_0"] == "A photo of a small dog." and comp["image_0"].endswith("COCO_val2014_000000000042.jpg")
    assert obj["image_1"].endswith("COCO_val2014_000000514990.jpg")


def test_probe_c_rejects_a_group_without_its_second_prompt(coco):
    _release(coco, "data_compositional_switch.json", [C_GROUP, {k: v for k, v in C_GROUP.items() if k != "img2_prompt"}])
    _release(coco, "data_object_switch.json", [O_GROUP])
    with pytest.raises(AnnotationError, match=r"data_compositional_switch.json: entry 1 has no field 'img2_prompt'"):
        load_probe_c(coco, None, 0, "eval")


def _polygon(x, y, w, h):
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def test_probe_b_masks_from_coco_segmentations(coco):
    _release(coco, "prompt_classes.csv", "class,prompt\ndog,a photo of a dog.\nperson,a photo of a person.\ncat,a photo of a cat.\n")
    _release(coco, "background_context_dataset.json", [
        {"image": "COCO_val2014_000000000042.jpg", "image_id": 42,
         "annotations": {"dog": [{"segmentation": _polygon(5, 5, 10, 8), "iscrowd": 0, "bbox": [5, 5, 10, 8]}]}}])
    _release(coco, "object_context_dataset.json", [
        {"image_id": 371046, "object": "person", "other_objects": ["dog"], "path": "person_COCO_val2014_000000371046.jpg"}])
    instances = {"images": [{"id": 371046, "width": 40, "height": 30, "file_name": "COCO_val2014_000000371046.jpg"}],
                 "categories": [{"id": 1, "name": "person"}, {"id": 18, "name": "dog"}],
                 "annotations": [{"id": 1, "image_id": 371046, "category_id": 1, "segmentation": _polygon(2, 2, 6, 6),
                                  "area": 36, "bbox": [2, 2, 6, 6], "iscrowd": 0},
                                 {"id": 2, "image_id": 371046, "category_id": 18, "segmentation": _polygon(20, 10, 8, 8),
                                  "area": 64, "bbox": [20, 10, 8, 8], "iscrowd": 0}]}
    (coco / "coco" / "annotations").mkdir(parents=True)
    (coco / "coco" / "annotations" / "instances_val2014.json").write_text(json.dumps(instances))
    items = load_dataset("probe-b", "probe-b", data_dir=coco)
    assert set(SCHEMAS["probe-b"]) <= set(items.columns)
    assert items.attrs["classes"] == ["dog", "person", "cat"] and items.attrs["prompts"]["cat"] == "a photo of a cat."
    multi, single = items.iloc[0], items.iloc[1]
    assert (multi["labels"], multi["single_object"], multi["target"]) == (["dog"], False, None)
    assert (single["labels"], single["single_object"], single["target"]) == (["dog", "person"], True, "person")
    m = np.asarray(Image.open(multi["mask"])) > 0
    assert m.shape == (30, 40) and m[8, 10] and not m[20, 30] and 60 <= m.sum() <= 120
    keep, every = (np.asarray(Image.open(single[c])) > 0 for c in ("mask", "objects_mask"))
    assert keep[4, 4] and not keep[14, 24]          # only the person is kept
    assert every[4, 4] and every[14, 24]            # the patch must avoid the dog as well


def test_probe_b_rejects_unknown_class(coco):
    _release(coco, "prompt_classes.csv", "class,prompt\ndog,a photo of a dog.\n")
    _release(coco, "background_context_dataset.json", [
        {"image_id": 42, "annotations": {"unicorn": [{"segmentation": _polygon(1, 1, 2, 2)}]}}])
    with pytest.raises(AnnotationError, match="names class 'unicorn'"):
        load_probe_b(coco, None, 0, "eval")


def test_suite_names():
    assert suite_sources("paper") == {"probe-r": "probe-r", "probe-c": "probe-c", "probe-b": "probe-b"}
    with pytest.raises(ValueError, match="valid: toy, paper"):
        suite_sources("coco")
