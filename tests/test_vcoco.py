"""The V-COCO loader of the masking probe on a small fixture in V-COCO's and COCO's annotation layout, read from a
local data_dir (every file already in place, so nothing is downloaded)."""

import json

import pytest
from PIL import Image

from probekit.data.conceptual import AnnotationError
from probekit.data.vcoco import load_vcoco_masking
from probekit.datasets import SCHEMAS, load_dataset

pytestmark = pytest.mark.usefixtures("hand_made_annotations")

ACTIONS = [  # V-COCO: one entry per action, parallel lists over person annotations
    {"action_name": "ride", "role_name": ["agent", "instr"], "image_id": [1, 2, 1], "ann_id": [10, 20, 11],
     "label": [1, 0, 1], "role_object_id": [[10, 30], [20, 0], [11, 30]], "include": [["horse"]]},
    {"action_name": "talk_on_phone", "role_name": ["agent", "instr"], "image_id": [2], "ann_id": [20],
     "label": [1], "role_object_id": [[20, 0]], "include": [["cell phone"]]},
    {"action_name": "kick", "role_name": ["agent", "obj"], "image_id": [3], "ann_id": [40], "label": [1],
     "role_object_id": [[40, 0]], "include": [["sports ball"]]},
]
CAPTIONS = {"images": [{"id": 1, "width": 100, "height": 200, "file_name": "COCO_val2014_000000000001.jpg"},
                       {"id": 2, "width": 50, "height": 50, "file_name": "COCO_val2014_000000000002.jpg"},
                       {"id": 3, "width": 80, "height": 80, "file_name": "COCO_val2014_000000000003.jpg"}],
            "annotations": [{"id": 1, "image_id": 1, "caption": "A horse in a field."},
                            {"id": 2, "image_id": 1, "caption": "A man rides a horse down a ride path."},
                            {"id": 3, "image_id": 2, "caption": "A woman talking on her phone. "},
                            {"id": 4, "image_id": 3, "caption": "Boys on a soccer field."}]}
INSTANCES = {"annotations": [{"id": 10, "image_id": 1, "bbox": [10, 20, 30, 40], "category_id": 1},
                             {"id": 11, "image_id": 1, "bbox": [0, 0, 1, 1], "category_id": 1},
                             {"id": 20, "image_id": 2, "bbox": [5, 5, 25, 45], "category_id": 1},
                             {"id": 40, "image_id": 3, "bbox": [1, 1, 2, 2], "category_id": 1}]}


def _release(root, actions=ACTIONS):
    (root / "v-coco").mkdir(parents=True)
    (root / "v-coco" / "vcoco_test.json").write_text(json.dumps(actions))
    (root / "coco" / "annotations").mkdir(parents=True)
    (root / "coco" / "annotations" / "captions_val2014.json").write_text(json.dumps(CAPTIONS))
    (root / "coco" / "annotations" / "instances_val2014.json").write_text(json.dumps(INSTANCES))
    (root / "coco" / "val2014").mkdir(parents=True)
    for i in (1, 2, 3):
        Image.new("RGB", (8, 8), (i, 0, 0)).save(root / "coco" / "val2014" / f"COCO_val2014_{i:012d}.jpg")
    return root


def test_vcoco_items_from_a_local_release(tmp_path):
    items = load_dataset("masking", "v-coco", data_dir=_release(tmp_path))
    assert set(SCHEMAS["masking"]) <= set(items.columns)
    items = items.set_index("item_id")
    assert sorted(items.index) == ["vcoco-1-ride", "vcoco-2-talk"]
    ride = items.loc["vcoco-1-ride"]
    # the first caption with the verb, and in it the inflected "rides", not the noun "ride" further on
    assert ride["sentence"] == "A man rides a horse down a ride path."
    assert ride["sentence"][ride["verb_start"]:ride["verb_end"]] == "rides" and ride["verb_start"] == 6
    assert ride["subject_box"] == pytest.approx([.1, .1, .3, .2])       # the first agent, ann 10, in fractions
    talk = items.loc["vcoco-2-talk"]
    assert talk["sentence"][talk["verb_start"]:talk["verb_end"]] == "talking"
    assert talk["image"].endswith("COCO_val2014_000000000002.jpg")
    unlocated = load_dataset("masking", "v-coco", data_dir=tmp_path).attrs["unlocated"]
    assert unlocated == [{"sentence": "Boys on a soccer field.", "verb": "kick", "image_id": 3}]


def test_vcoco_limit_draws_items_reproducibly(tmp_path):
    root = _release(tmp_path)
    one = load_vcoco_masking(root, 1, 0, "eval")
    assert len(one) == 1 and one.equals(load_vcoco_masking(root, 1, 0, "eval"))
    assert {load_vcoco_masking(root, 1, s, "eval")["item_id"].iloc[0] for s in range(8)} == \
        {"vcoco-1-ride", "vcoco-2-talk"}


def test_vcoco_schema_check_names_the_problem(tmp_path):
    broken = [dict(ACTIONS[0], label=[1, 0])]                            # lists of different lengths
    with pytest.raises(AnnotationError, match="different lengths"):
        load_vcoco_masking(_release(tmp_path / "a", broken), None, 0, "eval")
    no_label = [{k: v for k, v in ACTIONS[0].items() if k != "label"}]
    with pytest.raises(AnnotationError, match="label"):
        load_vcoco_masking(_release(tmp_path / "b", no_label), None, 0, "eval")
    with pytest.raises(ValueError, match="test split"):
        load_vcoco_masking(tmp_path / "a", None, 0, "train")
