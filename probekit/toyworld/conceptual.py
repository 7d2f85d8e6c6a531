"""Toy conceptual understanding: Probe-R (unlikely predicate and subject swaps, subject-only images), Probe-C
(attribute-antonym and object swaps as 2x2 groups) and Probe-B (scenes whose background can be replaced)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .items import frame, target_size
from .sample import (agents_scene, choice, in_split, np_, object_caption, objects_scene, random_object, rng_for,
                     sample_svo, svo_caption, svo_scene, toy_dir)
from .scene import Scene, image_path, mask_path
from .vocab import AGENTS, ANTONYMS, ATTRIBUTES, OBJECTS, POSES, SCENES, TYPICAL_SCENE, VERBS, plausible

SUBJECT_ONLY_IMAGES = 2  # subject-only images per Probe-R group (the paper uses 10)


def make_probe_r(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    n = target_size("probe-r", limit)
    rng = rng_for("probe-r", seed, split)
    folder = toy_dir(data_dir, "probe-r")
    rows: list[dict[str, Any]] = []
    g = 0
    while len(rows) < n:
        s, v, o = sample_svo(rng)
        group = f"probe-r-{split}-{seed}-{g:05d}"
        relation = svo_caption(s, v, o)
        anchor = in_split(lambda r: svo_scene(r, s, v, o, distractor=True), rng, split)
        anchor_path = str(image_path(anchor, folder))
        swaps = {"predicate_swap": [svo_caption(s, w, o) for w in VERBS if not plausible(s, w, o)],
                 "subject_swap": [svo_caption(t, v, o) for t in AGENTS if not plausible(t, v, o)]}
        for kind, wrong in swaps.items():
            if wrong:
                rows.append(dict(item_id=f"{group}-{kind}", group_id=group, image=anchor_path,
                                 correct_prompt=relation, wrong_prompt=choice(rng, wrong), kind=kind,
                                 subject=s, predicate=v, object=o))
        for j in range(SUBJECT_ONLY_IMAGES):
            alone = in_split(lambda r: agents_scene(r, [(s, choice(r, POSES))]), rng, split)
            rows.append(dict(item_id=f"{group}-subject_only-{j}", group_id=group, image=str(image_path(alone, folder)),
                             correct_prompt=np_(s), wrong_prompt=relation, kind="subject_only",
                             subject=s, predicate=v, object=o))
        g += 1
    return frame(rows, n)


def make_probe_c(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    n = target_size("probe-c", limit)
    rng = rng_for("probe-c", seed, split)
    folder = toy_dir(data_dir, "probe-c")
    rows = []
    for k in range(n):
        first = random_object(rng)
        if k % 2 == 0:  # composition swap: the same object with an attribute and its antonym
            category = choice(rng, ATTRIBUTES)
            value = getattr(first, category)
            second = first.__class__(**{**first.__dict__, category: ANTONYMS[value]})
            split_name, which = "composition", (category,)
        else:           # object swap: two objects sharing the attribute
            second = first.__class__(**{**first.__dict__, "name": choice(rng, [o for o in OBJECTS if o != first.name])})
            category, split_name, which = first.name, "object", ("colour",)
        images = []
        for e in (first, second):
            scene = in_split(lambda r: objects_scene(r, [e]), rng, split)
            images.append(str(image_path(scene, folder)))
        rows.append(dict(group_id=f"probe-c-{split}-{seed}-{k:05d}", split=split_name, category=category,
                         image_0=images[0], image_1=images[1], caption_0=object_caption(first, which),
                         caption_1=object_caption(second, which)))
    return frame(rows, n)


def make_probe_b(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    n = target_size("probe-b", limit)
    rng = rng_for("probe-b", seed, split)
    folder = toy_dir(data_dir, "probe-b")
    rows = []
    for k in range(n):
        single = k % 2 == 0   # single-object items keep one target among 2-3 objects (the others are background)
        names = list(rng.choice(OBJECTS, int(rng.integers(2, 4)), replace=False))
        scene = in_split(lambda r: objects_scene(r, names), rng, split)
        everything = str(mask_path(scene, folder))
        rows.append(dict(item_id=f"probe-b-{split}-{seed}-{k:05d}", image=str(image_path(scene, folder)),
                         mask=str(mask_path(scene, folder, [0])) if single else everything, objects_mask=everything,
                         labels=[str(x) for x in names], single_object=single,
                         target=str(names[0]) if single else None, scene=scene.background,
                         typical_scene=scene.background == TYPICAL_SCENE[names[0]]))
    items = frame(rows, n)
    items["target"] = pd.Series([r["target"] for r in rows[:n]], dtype=object)   # None, not NaN, when no single target
    scene_dir = folder / "scenes"
    for name in SCENES:   # empty backgrounds: the "scene" filler draws from these
        image_path(Scene(name), scene_dir)
    items.attrs["classes"] = list(OBJECTS)
    items.attrs["scene_dir"] = str(scene_dir.resolve())
    return items
