"""Robust image loading and batched preprocessing for the scorers.

Images are given as paths (str / Path) or PIL images.  ``load_image`` returns an RGB PIL image, or None when the
file is missing or cannot be decoded (the caller records it in ``scorer.skipped`` and scores it NaN: never a
silent zero).  ``image_key`` is the identity an image is cached under: its absolute path, size and modification
time (so a file rewritten in place is scored again), or a hash of the pixels for an in-memory PIL image.
``batches`` decodes and preprocesses images in a torch DataLoader (optionally with worker processes).
"""

from __future__ import annotations

import hashlib
import math
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
from PIL import Image, UnidentifiedImageError
from torch.utils.data import DataLoader, Dataset



def is_missing(img: Any) -> bool:
    """True for None / NaN placeholders (a real image that could not be fetched has path None or NaN)."""
    return img is None or (isinstance(img, float) and math.isnan(img))


def image_key(img: Any) -> str:
    """Cache identity of an image: ``path|size|mtime_ns`` for a file, ``pil:<md5>`` for an in-memory image."""
    if isinstance(img, Image.Image):
        h = hashlib.md5(img.tobytes())
        h.update(f"{img.mode}{img.size}".encode())
        return "pil:" + h.hexdigest()
    if is_missing(img):
        return "missing:"
    path = os.path.abspath(os.fspath(img))
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}|missing"
    return f"{path}|{st.st_size}|{st.st_mtime_ns}"


def describe(img: Any) -> str:
    """How a skipped image is reported: its path, or a short tag for in-memory/missing ones."""
    if isinstance(img, Image.Image):
        return f"<PIL image {img.size}>"
    if is_missing(img):
        return "<missing path>"
    return os.fspath(img)


def load_image(img: Any) -> Image.Image | None:
    """Return ``img`` as an RGB PIL image, or None if it is missing or undecodable."""
    if isinstance(img, Image.Image):
        return img if img.mode == "RGB" else img.convert("RGB")
    if is_missing(img):
        return None
    try:
        with Image.open(Path(img)) as im:
            im.load()
            return im.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as err:
        if not isinstance(err, FileNotFoundError):
            warnings.warn(f"probekit: cannot decode image {img}: {err}", stacklevel=2)
        return None


class _Items(Dataset):
    """Items ``(image, extra)``; decodes each image, reusing the previous decode when an image repeats."""

    def __init__(self, images: Sequence[Any], extras: Sequence[Any] | None = None):
        self.images = images
        self.extras = extras
        self._last: tuple[Any, Any] = (object(), None)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int):
        src = self.images[i]
        if src is self._last[0] or (isinstance(src, (str, os.PathLike)) and src == self._last[0]):
            pil = self._last[1]
        else:
            pil = load_image(src)
            self._last = (src, pil)
        return i, pil, (self.extras[i] if self.extras is not None else None)


class _Collate:
    """Picklable collate: drops unreadable images and calls ``prepare(pils, extras)`` on the rest."""

    def __init__(self, prepare: Callable[[list, list], dict]):
        self.prepare = prepare

    def __call__(self, rows):
        ok = [r for r in rows if r[1] is not None]
        bad = [r[0] for r in rows if r[1] is None]
        inputs = self.prepare([r[1] for r in ok], [r[2] for r in ok]) if ok else None
        return [r[0] for r in ok], inputs, bad


def batches(images: Sequence[Any], prepare: Callable[[list, list], dict], *, extras: Sequence[Any] | None = None,
            batch_size: int = 32, num_workers: int = 0) -> DataLoader:
    """A DataLoader over ``images`` (with per-item ``extras``, e.g. texts) yielding ``(ok_idx, inputs, bad_idx)``.

    ``prepare(pils, extras) -> dict of tensors`` runs inside the loader (in workers when ``num_workers > 0``);
    ``ok_idx`` index the rows ``inputs`` hold, ``bad_idx`` the unreadable images of the batch.
    """
    if num_workers > 0:  # fast tokenizers must not use their own threads inside forked workers
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return DataLoader(_Items(images, extras), batch_size=batch_size, shuffle=False, num_workers=num_workers,
                      collate_fn=_Collate(prepare), prefetch_factor=4 if num_workers > 0 else None)


def to_device(inputs: dict, device: torch.device) -> dict:
    return {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}
