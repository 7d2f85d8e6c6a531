"""Toy zero-shot classification: one object in view (12 classes: the single-object control the zoo's record and the
predicate–noun lab score) and two objects in view (which pair of the 12 objects, 66 classes: the held-out general task
that the CLIP fine-tuning of the conceptual chapter must not forget)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pandas as pd

from .items import frame, target_size
from .sample import in_split, np_, objects_scene, random_object, rng_for, toy_dir
from .scene import image_path
from .vocab import OBJECTS

#: the two-object task's classes, "<a>+<b>" with a before b in ``OBJECTS``, and their prompts ("a ball and a cup")
PAIRS = {f"{a}+{b}": f"{np_(a)} and {np_(b)}" for a, b in combinations(OBJECTS, 2)}


def make_items(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    n = target_size("classify", limit)
    rng = rng_for("classify", seed, split)
    folder = toy_dir(data_dir, "classify")
    rows = []
    for k in range(n):
        label = OBJECTS[k % len(OBJECTS)]
        scene = in_split(lambda r: objects_scene(r, [random_object(r, label)]), rng, split)
        rows.append(dict(item_id=f"classify-{split}-{seed}-{k:05d}", image=str(image_path(scene, folder)),
                         label=label))
    items = frame(rows, n)
    items.attrs["classes"] = list(OBJECTS)
    return items


def make_pair_items(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """Two objects of random colour, size and pattern in free cells of a scene (the first object's typical scene
    80% of the time); the label is the pair, classes taken in turn.  The words are the toy world's object captions
    ("a ball and a cup"), which the zoo saw in training; no attribute or predicate is named, so the task shares
    nothing with the swap negatives the conceptual chapter fine-tunes on."""
    n = target_size("classify-pairs", limit)
    rng = rng_for("classify-pairs", seed, split)
    folder = toy_dir(data_dir, "classify-pairs")
    classes = list(PAIRS)
    rows = []
    for k in range(n):
        label = classes[k % len(classes)]
        names = label.split("+")
        if rng.random() < 0.5:
            names.reverse()   # either object may set the scene
        scene = in_split(lambda r: objects_scene(r, names), rng, split)
        rows.append(dict(item_id=f"classify-pairs-{split}-{seed}-{k:05d}", image=str(image_path(scene, folder)),
                         label=label))
    items = frame(rows, n)
    items.attrs["classes"] = classes
    items.attrs["prompts"] = dict(PAIRS)
    return items
