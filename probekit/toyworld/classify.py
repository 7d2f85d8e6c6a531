"""Toy zero-shot classification: one object in view (12 classes: the single-object control the zoo's record and the
predicate–noun lab score) and two objects in a scene (which pair of the 12 objects, in which of the 6 scenes, 396
classes: the held-out general task that the CLIP fine-tuning of the conceptual chapter must not forget)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pandas as pd

from .items import frame, target_size
from .sample import in_split, np_, objects_scene, random_object, rng_for, toy_dir
from .scene import image_path
from .vocab import OBJECTS, SCENES

#: the two-object task's classes, "<a>+<b>@<scene>" with a before b in ``OBJECTS``, and their prompts: the toy
#: world's object caption with its scene ("a ball and a cup in the park")
SCENE_PAIRS = {f"{a}+{b}@{s}": f"{np_(a)} and {np_(b)} in the {s}" for a, b in combinations(OBJECTS, 2) for s in SCENES}
#: the task as the conceptual chapter names it
GENERAL_TASK = f"toy classification of two objects and their scene ({len(SCENE_PAIRS)} classes)"


def _table(probe: str, classes: list[str], scene_of, data_dir: Path, limit: int | None, seed: int,
           split: str) -> pd.DataFrame:
    """A classification table: the classes taken in turn, each image drawn by ``scene_of(rng, label)``."""
    n = target_size(probe, limit)
    rng = rng_for(probe, seed, split)
    folder = toy_dir(data_dir, probe)
    rows = []
    for k in range(n):
        label = classes[k % len(classes)]
        rows.append(dict(item_id=f"{probe}-{split}-{seed}-{k:05d}", image=str(image_path(scene_of(rng, label), folder)),
                         label=label))
    items = frame(rows, n)
    items.attrs["classes"] = list(classes)
    return items


def make_items(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """One object of random colour, size and pattern in a scene; the label is the object, classes taken in turn."""
    def scene_of(rng, label):
        return in_split(lambda r: objects_scene(r, [random_object(r, label)]), rng, split)
    return _table("classify", list(OBJECTS), scene_of, data_dir, limit, seed, split)


def make_pair_items(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """Two objects of random colour, size and pattern in free cells of the labelled scene; the label is the pair and
    the scene, classes taken in turn (so every scene is as frequent, whatever the objects' typical scenes).  The
    words are the toy world's object captions with their scene ("a ball and a cup in the park"), the form of 40% of
    the zoo's two-object training captions; no attribute or predicate is named, so the task shares nothing with the
    swap negatives the conceptual chapter fine-tunes on.  The scene keeps it off the ceiling: the pair alone
    (66 classes) was named right by the shipped ``toy-clip`` (seed 0) on 97.1% of 660 images."""
    def scene_of(rng, label):
        pair, background = label.split("@")
        names = pair.split("+")
        if rng.random() < 0.5:
            names.reverse()   # either object may be drawn first
        return in_split(lambda r: objects_scene(r, names, background), rng, split)
    items = _table("classify-pairs", list(SCENE_PAIRS), scene_of, data_dir, limit, seed, split)
    items.attrs["prompts"] = dict(SCENE_PAIRS)
    return items
