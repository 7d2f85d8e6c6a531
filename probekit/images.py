"""Robust image loading and batched preprocessing for the scorers.

Images are given as paths (str / Path) or PIL images.  ``load_image`` returns an RGB PIL image, or None when the
file is missing or cannot be decoded (the caller records it in ``scorer.skipped`` and scores it NaN: never a
silent zero).  ``image_key`` is the identity an image is cached under: its absolute path, size and modification
time (so a file rewritten in place is scored again), or a hash of the pixels for an in-memory PIL image.
:class:`Loader` decodes and preprocesses a scorer's batches, in the calling process or in persistent worker
processes that run ahead of the model forward (started once per scorer, so each call pays no start-up), with
pinned memory for a CUDA device.  A batch carries each distinct image once (:func:`prepare_unique`); its rows are
lined up with the batch's items on the model's device (:func:`expand_rows`).  For preprocessing on the device,
:func:`load_encoded` hands a JPEG file over undecoded, as its bytes.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterator, Sequence

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


def image_keys(images: Sequence[Any]) -> list[str]:
    """``image_key`` of every image, each distinct path looked up once."""
    memo: dict = {}
    out = []
    for img in images:
        if isinstance(img, (str, os.PathLike)):
            if img not in memo:
                memo[img] = image_key(img)
            out.append(memo[img])
        else:
            out.append(image_key(img))
    return out


#: the key of a batch's index from its items to its distinct images' rows (see prepare_unique, expand_rows)
IMAGE_ROWS = "image_rows"


def prepare_unique(prepare, pils: list) -> dict:
    """``prepare(pils)`` with each distinct image object (one decode reused for several texts) preprocessed
    once: where images repeat, the result has one row per distinct image and ``IMAGE_ROWS``, the row of each of
    ``pils`` (:func:`expand_rows` lines them up again, on the model's device, so a batch carries each image once)."""
    slot: dict[int, int] = {}
    index = [slot.setdefault(id(p), len(slot)) for p in pils]
    if len(slot) == len(pils):
        return prepare(pils)
    return {**prepare(list({id(p): p for p in pils}.values())), IMAGE_ROWS: torch.tensor(index)}


def expand_rows(inputs: dict) -> dict:
    """A batch from :func:`prepare_unique` with every per-image tensor's rows repeated to one per item (the
    tensors whose first axis is the distinct images'); unchanged when it has no ``IMAGE_ROWS``."""
    if IMAGE_ROWS not in inputs:
        return inputs
    inputs = dict(inputs)
    at = inputs.pop(IMAGE_ROWS)
    distinct = int(at.max()) + 1
    return {k: (v[at] if isinstance(v, torch.Tensor) and v.dim() and v.shape[0] == distinct else v)
            for k, v in inputs.items()}


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
        im = Image.open(Path(img))
        try:
            im.load()
            if im.mode == "RGB" and getattr(im, "fp", None) is None and getattr(im, "map", None) is None:
                return im  # decoded into memory, file closed (not memory-mapped): no copy needed
            return im.convert("RGB")
        finally:
            if getattr(im, "fp", None) is not None:
                im.close()
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as err:
        if not isinstance(err, FileNotFoundError):
            warnings.warn(f"probekit: cannot decode image {img}: {err}", stacklevel=2)
        return None


def load_encoded(img: Any) -> Image.Image | torch.Tensor | None:
    """A JPEG file (RGB or greyscale, ending with its end-of-image marker) as its bytes, a 1-D uint8 tensor, for
    ``torchvision.io.decode_jpeg`` to decode on the model's device; anything else as :func:`load_image` gives it
    (a truncated JPEG, say, is decoded there, and skipped with a warning if it cannot be)."""
    if not isinstance(img, (str, os.PathLike)):
        return load_image(img)
    try:
        with Image.open(Path(img)) as im:
            jpeg = im.format == "JPEG" and im.mode in ("RGB", "L")
        data = Path(img).read_bytes() if jpeg else b""
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError):
        data = b""
    if not data.rstrip(b"\0").endswith(b"\xff\xd9"):
        return load_image(img)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


class _Tasks(Dataset):
    """Decodes one task ``(i, image, extra, prepare)`` (the sampler hands tasks, not indices, so one persistent
    set of workers serves every call).  Decoded files are kept in a least-recently-used cache keyed by
    :func:`image_key` (path, size, mtime; up to ``budget`` bytes of pixels per process), so an image scored
    with several texts, in one call or across calls, is decoded once; a repeated in-memory image is converted
    once.  ``load`` is :func:`load_image` (the default) or :func:`load_encoded`."""

    def __init__(self, budget: int = 64 << 20, load=None):
        self.load = load or load_image
        self._last: tuple[Any, Any] = (object(), None)
        self._decoded: OrderedDict[str, Image.Image | torch.Tensor] = OrderedDict()
        self._bytes, self.budget = 0, budget

    def __getitem__(self, task):
        i, src, extra, prepare = task
        if not isinstance(src, (str, os.PathLike)):
            if src is not self._last[0]:
                self._last = (src, self.load(src))
            return i, self._last[1], extra, prepare
        key = image_key(src)
        pil = self._decoded.get(key)
        if pil is not None:
            self._decoded.move_to_end(key)
        else:
            pil = self.load(src)
            if pil is not None:
                self._keep(key, pil)
        return i, pil, extra, prepare

    def _keep(self, key: str, pil: Image.Image | torch.Tensor) -> None:
        size = _bytes(pil)
        if size > self.budget:
            return
        self._decoded[key], self._bytes = pil, self._bytes + size
        while self._bytes > self.budget:
            self._bytes -= _bytes(self._decoded.popitem(last=False)[1])


def _bytes(image: Image.Image | torch.Tensor) -> int:
    """Memory held by a decoded image (PIL keeps RGB as 4 bytes a pixel) or a JPEG's bytes."""
    return image.numel() if isinstance(image, torch.Tensor) else image.width * image.height * 4


class _Collate:
    """Drops unreadable images and calls ``owner.<prepare>(pils, extras)`` on the rest (the owner, a scorer, is
    inherited by forked workers, never pickled)."""

    def __init__(self, owner):
        self.owner = owner

    def __call__(self, rows):
        ok = [r for r in rows if r[1] is not None]
        bad = [r[0] for r in rows if r[1] is None]
        inputs = getattr(self.owner, rows[0][3])([r[1] for r in ok], [r[2] for r in ok]) if ok else None
        return [r[0] for r in ok], inputs, bad


class _Plan:
    """Batch sampler of a persistent DataLoader: yields the batches of tasks of the current call."""

    def __init__(self):
        self.batches: list[list] = []

    def __iter__(self):
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


class Loader:
    """Batches of decoded, preprocessed images for one scorer (``owner``), each ``(ok_idx, inputs, bad_idx)``.

    With ``num_workers == 0`` everything runs in the calling process.  Otherwise ``num_workers`` worker
    processes, forked once at the first call and kept for the scorer's lifetime, decode images and run
    ``owner.<prepare>`` up to ``4 * num_workers`` batches ahead of the consumer (the model forward), returning
    tensors through shared memory; ``pin_memory`` (for a CUDA device) pins them so that ``to_device`` copies
    without blocking.  Workers see the scorer as it was when they started.  ``load`` reads a task's image:
    :func:`load_image`, or :func:`load_encoded` where JPEGs are decoded on the model's device.
    """

    def __init__(self, owner, num_workers: int = 0, pin_memory: bool = False, load=None):
        self.num_workers = int(num_workers)
        self._collate = _Collate(owner)
        self._tasks = _Tasks(load=load)  # its decode cache lives as long as the scorer (forked into each worker)
        self._plan = _Plan()
        self._loader: DataLoader | None = None
        self.pin_memory = pin_memory

    def _dataloader(self) -> DataLoader:
        if self._loader is None:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # no tokenizer threads in forked workers
            fork = "fork" in multiprocessing.get_all_start_methods()
            self._loader = DataLoader(self._tasks, batch_sampler=self._plan, num_workers=self.num_workers,
                                      collate_fn=self._collate, prefetch_factor=4, persistent_workers=True,
                                      pin_memory=self.pin_memory,
                                      multiprocessing_context=multiprocessing.get_context("fork") if fork else None)
        return self._loader

    def batches(self, prepare: str, images: Sequence[Any], extras: Sequence[Any] | None = None,
                batch_size: int = 32) -> Iterator[tuple[list, dict | None, list]]:
        """Batches of ``batch_size`` items ``(images[i], extras[i])``, prepared by ``owner.<prepare>``."""
        tasks = [(i, src, extras[i] if extras is not None else None, prepare) for i, src in enumerate(images)]
        plan = [tasks[s:s + batch_size] for s in range(0, len(tasks), batch_size)]
        if self.num_workers == 0:
            return (self._collate([self._tasks[t] for t in batch]) for batch in plan)
        self._plan.batches = plan
        return iter(self._dataloader())


def to_device(inputs: dict, device: torch.device) -> dict:
    """Tensors moved to ``device``; copies from pinned memory do not block (the forward waits for them)."""
    return {k: (v.to(device, non_blocking=device.type == "cuda" and v.is_pinned()) if isinstance(v, torch.Tensor)
                else v) for k, v in inputs.items()}
