"""Toy single-object classification: the held-out general task the CLIP fine-tuning must not forget."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .items import frame, target_size
from .sample import in_split, objects_scene, random_object, rng_for, toy_dir
from .scene import image_path
from .vocab import OBJECTS


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
