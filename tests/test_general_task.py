"""The CLIP fine-tuning's held-out general task on the toy world: which two objects are shown (66 classes)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from probekit.metrics import conceptual as mc
from probekit.scorers import load_scorer
from probekit.studies.patching import general_task_items
from probekit.toyworld.vocab import OBJECTS


def test_every_pair_of_objects_is_a_class_with_its_object_caption_as_prompt(tmp_path):
    items = general_task_items("toy", tmp_path, limit=70, seed=0)
    classes = items.attrs["classes"]
    assert len(classes) == len(set(classes)) == 66 == len(list(combinations(OBJECTS, 2)))
    assert items.attrs["prompts"]["ball+cup"] == "a ball and a cup"
    assert items["label"].tolist() == [classes[k % 66] for k in range(70)]   # classes in turn
    assert items["image"].nunique() == 70


def test_a_trained_dual_encoder_names_the_pair_and_a_wrong_label_scores_near_zero(tmp_path):
    items = general_task_items("toy", tmp_path, limit=66, seed=0)
    scorer = load_scorer("toy-clip", device="cpu", cache_dir=False)
    prompts = items.attrs["prompts"]
    right = mc.zero_shot_scores(scorer, items, prompts)
    assert right["top1"].mean() >= 0.8 and right.attrs["classes"] == 66
    # each image labelled with a pair that shares no object with its own: the model almost never agrees
    classes = items.attrs["classes"]
    disjoint = [next(c for c in np.roll(classes, 7) if not set(c.split("+")) & set(lbl.split("+")))
                for lbl in items["label"]]
    wrong = mc.zero_shot_scores(scorer, items.assign(label=disjoint), prompts)
    assert wrong["top1"].mean() <= 0.05
