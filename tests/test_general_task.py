"""The CLIP fine-tuning's held-out general task on the toy world: which two objects are shown, and in which scene
(396 classes)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from probekit.studies.conceptual import scores as cs
from probekit.scorers import load_scorer
from probekit.studies.conceptual.patching import general_task_items
from probekit.toyworld.vocab import OBJECTS, SCENES


def test_every_pair_of_objects_in_every_scene_is_a_class_with_its_object_caption_as_prompt(tmp_path):
    items = general_task_items("toy", tmp_path, limit=400, seed=0)
    classes = items.attrs["classes"]
    assert len(classes) == len(set(classes)) == 396 == len(list(combinations(OBJECTS, 2))) * len(SCENES)
    assert items.attrs["prompts"]["ball+cup@park"] == "a ball and a cup in the park"
    assert items["label"].tolist() == [classes[k % 396] for k in range(400)]   # classes in turn
    assert items["image"].nunique() == 400


def _relabel(items, wrong):
    return items.assign(label=[wrong(label) for label in items["label"]])


def test_a_trained_dual_encoder_names_pair_and_scene_and_each_half_of_a_label_matters(tmp_path):
    items = general_task_items("toy", tmp_path, limit=396, seed=0)
    scorer = load_scorer("toy-clip", device="cpu", cache_dir=False)
    prompts = items.attrs["prompts"]
    right = cs.zero_shot_scores(scorer, items, prompts)
    assert right["top1"].mean() >= 0.5 and right.attrs["classes"] == 396   # chance 1/396
    # each image labelled with its own scene and a pair that shares no object with its own: almost never agreed
    pairs = [c.split("@")[0] for c in items.attrs["classes"][::len(SCENES)]]

    def other_pair(label):
        pair, scene = label.split("@")
        return next(p for p in np.roll(pairs, 7) if not set(p.split("+")) & set(pair.split("+"))) + "@" + scene

    def other_scene(label):
        pair, scene = label.split("@")
        return f"{pair}@{SCENES[(SCENES.index(scene) + 1) % len(SCENES)]}"

    for wrong in (other_pair, other_scene):
        assert cs.zero_shot_scores(scorer, _relabel(items, wrong), prompts)["top1"].mean() <= 0.05, wrong.__name__
