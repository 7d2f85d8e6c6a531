"""Toy images with their grid cells shuffled.  Each cell (one patch of the toy models) is kept whole and moved to a
place drawn at random, so every bust and every pose stays in view, but which bust stands on which limbs is lost.
The predicate–noun lab scores the zoo on them: a model that binds a noun to its predicate by relating the two
patches must fall to chance there, while a binding read inside one patch would survive."""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from .vocab import GRID


def shuffled_path(image: str | os.PathLike, seed: int, data_dir: str | os.PathLike) -> Path:
    return Path(data_dir) / "derived" / "shuffled" / f"{Path(image).stem}_s{seed}.png"


def shuffle_cells(image: str | os.PathLike, seed: int, data_dir: str | os.PathLike) -> Path:
    """Write (once) ``image`` with its GRID x GRID cells permuted, one permutation per image drawn under ``seed``
    and the image's name; return the new file's path."""
    out = shuffled_path(image, seed, data_dir)
    if out.is_file():
        return out
    with Image.open(image) as img:
        a = np.asarray(img.convert("RGB"))
    if a.shape[0] % GRID or a.shape[1] % GRID:
        raise ValueError(f"{image}: {a.shape[1]}x{a.shape[0]} pixels do not split into a {GRID}x{GRID} grid")
    h, w = a.shape[0] // GRID, a.shape[1] // GRID
    tag = int(hashlib.sha1(Path(image).stem.encode()).hexdigest()[:8], 16)
    order = np.random.default_rng([int(seed), tag]).permutation(GRID * GRID)
    cells = [a[r * h:(r + 1) * h, c * w:(c + 1) * w] for r in range(GRID) for c in range(GRID)]
    moved = np.concatenate([np.concatenate([cells[order[r * GRID + c]] for c in range(GRID)], 1)
                            for r in range(GRID)], 0)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.stem + ".part.png")
    Image.fromarray(moved).save(partial)
    partial.replace(out)   # atomic: an interrupted run never leaves half an image behind
    return out


def shuffle_items(items: pd.DataFrame, data_dir: str | os.PathLike, seed: int, image_column: str = "image"
                  ) -> pd.Series:
    """Paths of every item's image with its cells shuffled (:func:`shuffle_cells`); None where it has no image."""
    paths = [None if image is None or (isinstance(image, float) and math.isnan(image))
             else str(shuffle_cells(image, seed, data_dir)) for image in items[image_column]]
    return pd.Series(paths, index=items.index, name="shuffled", dtype=object)
