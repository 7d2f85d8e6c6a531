"""Image conditions for ablation studies on patch models: the full image, a box's patches blanked, all blanked.

A patch model (ViT-style) sees the image resized to ``image_size`` and cut into ``patch_size`` squares.  Every
condition writes the image *at the model's input size* (``image_size`` x ``image_size``, the full image too),
so the model's own processor resizes nothing and the patch grid on file is the grid the model sees.  Blanking a
patch sets its pixels to the processor's mean pixel (``round(255 * image_mean)``), which normalises to (about)
zero: the ablated patch carries no signal beyond its position.  A patch is blanked when it overlaps the box
with positive area (a box edge that only touches a patch border does not take it).

Derived images go to ``data_dir/derived/ablation/<condition>/<grid>/`` under a name keyed by the source image,
the box and the grid, so score caches (keyed by path) stay valid and a re-run writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

CONDITIONS = ("full image", "subject ablated", "image ablated")


@dataclass(frozen=True)
class PatchGrid:
    """How a patch model sees an image: side of the (square) input, side of a patch, blank RGB value."""

    image_size: int
    patch_size: int
    blank: tuple[int, int, int]

    def __post_init__(self):
        if self.image_size % self.patch_size:
            raise ValueError(f"image_size {self.image_size} is not a multiple of patch_size {self.patch_size}")

    @property
    def cells(self) -> int:
        return self.image_size // self.patch_size

    @property
    def key(self) -> str:
        return f"{self.image_size}px-p{self.patch_size}-blank{'_'.join(map(str, self.blank))}"

    @classmethod
    def of(cls, scorer) -> "PatchGrid":
        """The grid of a loaded scorer: its ``patch_size``, ``image_size`` and its image processor's mean."""
        mean = image_mean(scorer)
        if scorer.patch_size is None or scorer.image_size is None or mean is None:
            raise ValueError(f"model {scorer.name!r} has no patch grid (patch_size={scorer.patch_size}, "
                             f"image_size={scorer.image_size}, image mean={mean}): patch ablation needs a "
                             "patch-based model such as ViLT")
        red, green, blue = (int(round(255 * float(m))) for m in mean)
        return cls(int(scorer.image_size), int(scorer.patch_size), (red, green, blue))


def image_mean(scorer):
    """The per-channel mean (0..1) the scorer's image processor subtracts, or None if it has none."""
    for owner in (scorer, getattr(scorer, "image_processor", None),
                  getattr(getattr(scorer, "processor", None), "image_processor", None)):
        mean = getattr(owner, "image_mean", None)
        if mean is not None:
            return list(mean)
    return None


def patches_under_box(box, grid: PatchGrid) -> list[tuple[int, int]]:
    """(row, col) of every patch that overlaps ``box`` = [x, y, w, h] in fractions of the image."""
    x, y, w, h = (float(v) * grid.image_size for v in box)
    p = grid.patch_size
    rows = [r for r in range(grid.cells) if r * p < y + h and (r + 1) * p > y]
    cols = [c for c in range(grid.cells) if c * p < x + w and (c + 1) * p > x]
    return [(r, c) for r in rows for c in cols] if w > 0 and h > 0 else []


def model_input(image, grid: PatchGrid) -> Image.Image:
    """The image as the model will see it: RGB, resized (bicubic) to image_size x image_size."""
    img = Image.open(image) if isinstance(image, (str, os.PathLike)) else image
    img = img.convert("RGB")
    size = (grid.image_size, grid.image_size)
    return img if img.size == size else img.resize(size, Image.Resampling.BICUBIC)


def blank_patches(image: Image.Image, patches, grid: PatchGrid) -> Image.Image:
    """A copy of a model-input-sized ``image`` with ``patches`` set to the grid's blank value."""
    arr = np.array(image.convert("RGB"))
    p = grid.patch_size
    for r, c in patches:
        arr[r * p:(r + 1) * p, c * p:(c + 1) * p] = grid.blank
    return Image.fromarray(arr)


def _save(img: Image.Image, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    img.save(tmp, format="PNG")
    os.replace(tmp, path)  # atomic: an interrupted run never leaves a half-written image
    return path


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def condition_image(image, condition: str, grid: PatchGrid, data_dir, box=None) -> Path | None:
    """Path of ``image`` under ``condition`` for ``grid``, written once under ``data_dir/derived/ablation``.

    ``subject ablated`` needs ``box``; with ``box=None`` (no detection) it returns None, for the caller to count.
    A missing or unreadable source image also gives None.
    """
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}; valid: {', '.join(CONDITIONS)}")
    root = Path(data_dir) / "derived" / "ablation" / condition.replace(" ", "-") / grid.key
    if condition == "image ablated":
        path = root / "blank.png"
        if not path.exists():
            _save(Image.new("RGB", (grid.image_size,) * 2, grid.blank), path)
        return path
    if _missing(image) or (condition == "subject ablated" and _missing(box)):
        return None
    box_key = "" if condition == "full image" else ",".join(f"{float(v):.6f}" for v in box)
    digest = hashlib.sha1(f"{Path(image).resolve()}|{box_key}".encode()).hexdigest()[:16]
    path = root / f"{Path(image).stem}-{digest}.png"
    if path.exists():
        return path
    try:
        img = model_input(image, grid)
    except (OSError, ValueError):
        return None
    if condition == "subject ablated":
        img = blank_patches(img, patches_under_box(box, grid), grid)
    return _save(img, path)


def condition_images(images, condition: str, grid: PatchGrid, data_dir, boxes=None) -> list[Path | None]:
    """:func:`condition_image` for each image (and its box)."""
    boxes = [None] * len(images) if boxes is None else list(boxes)
    return [condition_image(im, condition, grid, data_dir, box=b) for im, b in zip(images, boxes)]
