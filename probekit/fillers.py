"""Background removal for Probe-B: fill everything outside a keep-mask, or a random patch of background.

Two derived views of an image x0 with a binary mask of its annotated objects:

* x̃1, the filled image: the pixels outside the keep-mask replaced by a filler;
* x̃0, the patched image: one square of filler pasted on the background where it occludes no annotated
  object, to measure how much *any* small edit moves a model.

For the single-object split (the paper's Table 9) x0 is itself background-removed: every annotated object
kept, the rest filled, so that (x0, x̃1) differs only by the other objects; x̃0 is the original with a patch.

Fillers: ``black``, ``gray`` (RGB 128), ``noise`` (Gaussian, mean 128, sd 64, clipped) and ``scene`` (a
background picture without the probe's objects, resized to the image).  The scene is *unrelated*: drawn, under
the seed and the item id (never a file path), among the scenes other than the item's ``related_scenes`` (its own
background and its objects' typical scenes, when the item table knows them).  Everything is deterministic under
a seed, and :func:`derive_probe_b` writes the views as PNG files under ``data_dir/derived/probe-b/`` (reused
when present) so that score caches, which key on image paths, see stable files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from PIL import Image

from .files import save_png

FILLERS = ("black", "gray", "noise", "scene")
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".webp"}


def _rng(seed: int, *keys) -> np.random.Generator:
    digest = hashlib.sha256(repr((seed,) + keys).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def load_mask(mask, size: tuple[int, int] | None = None) -> np.ndarray:
    """A boolean (H, W) keep-mask from a path, PIL image or array (white / nonzero = keep)."""
    if isinstance(mask, np.ndarray):
        arr = mask
    else:
        img = mask if isinstance(mask, Image.Image) else Image.open(mask)
        if size is not None and img.size != size:
            img = img.resize(size, Image.Resampling.NEAREST)
        arr = np.asarray(img.convert("L"))
    return np.asarray(arr) > 0 if arr.dtype != bool else arr


def scene_images(scene_dir) -> dict[str, Path]:
    """The scene pictures of a folder by name (the file stem), in name order."""
    if scene_dir is None:
        return {}
    return {p.stem: p for p in sorted(Path(scene_dir).iterdir()) if p.suffix.lower() in IMAGE_SUFFIXES}


def unrelated_scene(item_id, scenes: dict, related=(), seed: int = 0) -> str | None:
    """The name of the scene behind item ``item_id``: drawn under ``seed`` and the item id among ``scenes`` (name ->
    picture) not in ``related``; None when every scene is related."""
    related = set(related) if isinstance(related, (list, tuple, set, np.ndarray)) else set()
    free = sorted(n for n in scenes if n not in related)
    return free[_rng(seed, "scene", str(item_id)).integers(len(free))] if free else None


def filler_pixels(filler: str, height: int, width: int, seed: int = 0, scene=None) -> np.ndarray:
    """An (H, W, 3) uint8 canvas of the filler.  ``scene``: path or PIL image, required for ``"scene"``."""
    if filler == "black":
        return np.zeros((height, width, 3), np.uint8)
    if filler == "gray":
        return np.full((height, width, 3), 128, np.uint8)
    if filler == "noise":
        noise = _rng(seed, "noise", height, width).normal(128, 64, size=(height, width, 3))
        return np.clip(np.rint(noise), 0, 255).astype(np.uint8)
    if filler == "scene":
        if scene is None:
            raise ValueError("the 'scene' filler needs a scene image (items.attrs['scene_dir'] is empty)")
        img = scene if isinstance(scene, Image.Image) else Image.open(scene)
        return np.asarray(img.convert("RGB").resize((width, height), Image.Resampling.BILINEAR))
    raise ValueError(f"unknown filler {filler!r}; valid: {', '.join(FILLERS)}")


def fill_background(image, keep_mask, filler: str, seed: int = 0, scene=None) -> Image.Image:
    """x̃1: the image with every pixel outside ``keep_mask`` replaced by the filler; kept pixels are
    copied unchanged."""
    img = np.asarray((image if isinstance(image, Image.Image) else Image.open(image)).convert("RGB"))
    h, w = img.shape[:2]
    keep = load_mask(keep_mask, (w, h))
    canvas = filler_pixels(filler, h, w, seed, scene)
    return Image.fromarray(np.where(keep[..., None], img, canvas))


def random_patch_box(avoid_mask, size_frac: float = 0.25, seed: int = 0, tries: int = 200):
    """A square (x, y, side, side) in pixels that overlaps no True pixel of ``avoid_mask``, placed at
    random (deterministically under ``seed``).  The side starts at ``size_frac`` of the shorter image side
    and halves until a free spot is found; None when no square of at least 2 pixels fits."""
    avoid = load_mask(avoid_mask)
    h, w = avoid.shape
    # summed-area table: the count of avoided pixels in any box in O(1)
    sat = np.pad(avoid.astype(np.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    rng = _rng(seed, "patch", h, w)
    side = max(2, int(round(size_frac * min(h, w))))
    while side >= 2:
        counts = sat[side:, side:] - sat[:-side, side:] - sat[side:, :-side] + sat[:-side, :-side]
        free = np.argwhere(counts == 0)  # top-left corners (y, x) of free squares
        if len(free):
            y, x = free[rng.integers(len(free))]
            return int(x), int(y), side, side
        side //= 2
    return None


def patch_image(image, avoid_mask, filler: str, seed: int = 0, scene=None,
                size_frac: float = 0.25) -> Image.Image:
    """x̃0: the image with one square of filler pasted where it occludes no annotated object (unchanged
    when no such square fits)."""
    img = np.asarray((image if isinstance(image, Image.Image) else Image.open(image)).convert("RGB")).copy()
    h, w = img.shape[:2]
    box = random_patch_box(load_mask(avoid_mask, (w, h)), size_frac, seed)
    if box is not None:
        x, y, s, _ = box
        img[y:y + s, x:x + s] = filler_pixels(filler, h, w, seed, scene)[y:y + s, x:x + s]
    return Image.fromarray(img)


def derive_probe_b(items: pd.DataFrame, fillers: Sequence[str], data_dir, seed: int = 0,
                   size_frac: float = 0.25, progress: bool = True) -> pd.DataFrame:
    """Write the views of every Probe-B item and filler; one row per item x filler with the item's columns plus
    ``filler``, ``original``, ``x0``, ``x0_patch``, ``x1_fill`` (paths) and ``scene_filler`` (the scene filler's
    picture name, "" for other fillers).  x0 is the original for multi-object items and, for single-object
    items, the original with every annotated object kept and the background filled.

    The patch and the single-object x0 use ``items["objects_mask"]`` (every annotated object) when that column
    exists, else the keep-mask.  Scene pictures: ``items.attrs["scenes"]`` (name -> path) or the files of
    ``items.attrs["scene_dir"]``; an item's optional ``related_scenes`` column names the ones it must not get.
    An item with no unrelated scene is left out of the "scene" filler and named in ``attrs["no_unrelated_scene"]``.
    Files live under ``data_dir/derived/probe-b/<filler>/`` named by a hash of the inputs and settings; existing
    files are reused, so an interrupted run resumes."""
    bad = [f for f in fillers if f not in FILLERS]
    if bad:
        raise ValueError(f"unknown filler(s) {bad}; valid: {', '.join(FILLERS)}")
    scenes = {k: Path(v) for k, v in (items.attrs.get("scenes") or scene_images(items.attrs.get("scene_dir"))).items()}
    if "scene" in fillers and not scenes:
        raise ValueError(f"filler 'scene' needs scene images, but scene_dir={items.attrs.get('scene_dir')!r} "
                         "holds none; drop 'scene' from fillers or provide the directory")
    root = Path(data_dir) / "derived" / "probe-b"
    rows, no_scene = [], []
    records = items.to_dict("records")
    try:
        from .progress import bar as tqdm
        bar = tqdm(total=len(records) * len(fillers), desc="Probe-B fillers", disable=not progress)
    except ImportError:  # pragma: no cover
        bar = None
    for rec in records:
        if not (_present(rec["image"]) and _present(rec["mask"])):  # unreadable real image: skipped
            if bar is not None:
                bar.update(len(fillers))
            continue
        avoid = rec["objects_mask"] if _present(rec.get("objects_mask")) else rec["mask"]
        single = bool(rec.get("single_object"))
        for filler in fillers:
            name = unrelated_scene(rec["item_id"], scenes, rec.get("related_scenes"), seed) if filler == "scene" else ""
            if name is None:  # every scene picture is related to this item: no unrelated scene to put behind it
                no_scene.append(rec["item_id"])
                bar.update(1) if bar is not None else None
                continue
            scene = scenes[name] if name else None
            key = hashlib.sha256(repr((str(rec["image"]), str(rec["mask"]), str(avoid), filler, seed, size_frac,
                                       name, single)).encode()).hexdigest()[:16]
            out = root / filler
            patched, filled, alone = out / f"{key}_patch.png", out / f"{key}_fill.png", out / f"{key}_x0.png"
            if not (patched.exists() and filled.exists() and (alone.exists() or not single)):
                out.mkdir(parents=True, exist_ok=True)
                image = Image.open(rec["image"]).convert("RGB")
                save_png(fill_background(image, rec["mask"], filler, seed, scene), filled)
                save_png(patch_image(image, avoid, filler, seed, scene, size_frac), patched)
                if single:
                    save_png(fill_background(image, avoid, filler, seed, scene), alone)
            rows.append({**rec, "filler": filler, "original": str(rec["image"]),
                         "x0": str(alone) if single else str(rec["image"]), "x0_patch": str(patched),
                         "x1_fill": str(filled), "scene_filler": name})
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    out = pd.DataFrame(rows)
    out.attrs.update(items.attrs)
    out.attrs["no_unrelated_scene"] = no_scene  # items left out of the "scene" filler
    return out


def _present(path) -> bool:
    return isinstance(path, (str, Path)) and str(path) != ""
