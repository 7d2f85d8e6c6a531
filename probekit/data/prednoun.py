"""The predicate–noun evaluation set of Nikolaus et al. (2022) and its conditions: full image, cropped to the target.

``eval_set.json`` (the authors' release, ``data/sentence-semantics/`` of their repository) is a list of triplets
(image, target sentence, distractor sentence); entries ``2k`` and ``2k+1`` are an example and its counter-example
(sentences swapped, images differ).  :func:`load_eval_set` validates every entry, refusing a malformed file with
the index and field at fault, and returns the ``prednoun`` item table of ``probekit.datasets.SCHEMAS``.  Photos come
from Open Images (:mod:`probekit.data.openimages`).

:func:`crop_to_targets` writes the topline condition's crops (the image reduced to the target's box) under
``<data_dir>/derived/crop/``.  Scoring and metrics live in :mod:`probekit.metrics.pairs`, the paper's numbers in
:mod:`probekit.papers.prednoun`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, NoReturn, Sequence

import numpy as np
import pandas as pd
from PIL import Image

EVAL_SET_URL = ("https://raw.githubusercontent.com/mitjanikolaus/multimodal-predicate-noun-dependencies/"
                "main/data/sentence-semantics/eval_set.json")
EVAL_SET_NAME = "eval_set.json"
POS_VALUES = ("subject", "object")
SENTENCE_FIELDS = ("sentence_target", "sentence_distractor", "sentence_target_alt", "sentence_distractor_alt")
WORD_FIELDS = ("subject", "predicate", "object", "word_target", "word_distractor")
RELATION_FIELDS = ("id", "Label1", "label", "Label2")
_BOX_TOLERANCE = 1e-3


class EvalSetError(ValueError):
    """A malformed ``eval_set.json``; the message names the file, the entry index and the field at fault."""


# --------------------------------------------------------------------------------------------- validation


def _fail(source: str, index: int | None, field: str | None, problem: str) -> NoReturn:
    where = source if index is None else f"{source}: entry {index}"
    if field:
        where += f", field {field!r}"
    raise EvalSetError(f"{where}: {problem}")


def _check_box(box: Any, source: str, index: int, field: str) -> list[float]:
    if not isinstance(box, (list, tuple)) or len(box) != 4:
        _fail(source, index, field, f"expected [x, y, w, h] (4 fractions of the image size), got {box!r}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box):
        _fail(source, index, field, f"expected 4 finite numbers, got {box!r}")
    x, y, w, h = (float(v) for v in box)
    if w <= 0 or h <= 0:
        _fail(source, index, field, f"width and height must be positive, got {box!r}")
    if x < -_BOX_TOLERANCE or y < -_BOX_TOLERANCE or x + w > 1 + _BOX_TOLERANCE or y + h > 1 + _BOX_TOLERANCE:
        _fail(source, index, field, f"box {box!r} is not inside the image (fractions in [0, 1] expected)")
    return [x, y, w, h]


def _check_str(entry: dict, key: str, source: str, index: int, prefix: str = "") -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        _fail(source, index, prefix + key, f"expected a non-empty string, got {value!r}")
    return value


def validate_entries(entries: Any, source: str = EVAL_SET_NAME) -> None:
    """Raise :class:`EvalSetError` naming the first entry and field that break the release's schema."""
    if not isinstance(entries, list):
        _fail(source, None, None, f"expected a JSON list of triplets, got {type(entries).__name__}")
    if not entries:
        _fail(source, None, None, "the list of triplets is empty")
    if len(entries) % 2:
        _fail(source, None, None, f"{len(entries)} entries: entries 2k and 2k+1 must form pairs, so the count "
                                  "must be even")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            _fail(source, index, None, f"expected a JSON object, got {type(entry).__name__}")
        if not isinstance(entry.get("id"), (int, str)) or isinstance(entry.get("id"), bool):
            _fail(source, index, "id", f"expected an integer or string id, got {entry.get('id')!r}")
        filename = _check_str(entry, "img_filename", source, index)
        if not filename.lower().endswith(".jpg") or "/" in filename:
            _fail(source, index, "img_filename", f"expected '<Open Images id>.jpg', got {filename!r}")
        for key in SENTENCE_FIELDS + WORD_FIELDS:
            _check_str(entry, key, source, index)
        if entry["pos"] not in POS_VALUES:
            _fail(source, index, "pos", f"expected one of {POS_VALUES}, got {entry['pos']!r}")
        if entry.get("open_images_split") not in ("train", "validation", "test"):
            _fail(source, index, "open_images_split",
                  f"expected 'train', 'validation' or 'test', got {entry.get('open_images_split')!r}")
        for rel in ("relationship_target", "relationship_distractor"):
            value = entry.get(rel)
            if not isinstance(value, dict):
                _fail(source, index, rel, f"expected an object with {RELATION_FIELDS + ('bounding_box',)}, "
                                          f"got {value!r}")
            for key in RELATION_FIELDS:
                _check_str(value, key, source, index, prefix=rel + ".")
            _check_box(value.get("bounding_box"), source, index, rel + ".bounding_box")
        if entry["sentence_target"] == entry["sentence_distractor"]:
            _fail(source, index, "sentence_distractor", "identical to sentence_target")
    for first in range(0, len(entries), 2):
        a, b = entries[first], entries[first + 1]
        for key, other in (("sentence_target", "sentence_distractor"), ("sentence_distractor", "sentence_target"),
                           ("sentence_target_alt", "sentence_distractor_alt"),
                           ("sentence_distractor_alt", "sentence_target_alt")):
            if b[key] != a[other]:
                _fail(source, first + 1, key,
                      f"the counter-example of entry {first} must swap its sentences: expected {a[other]!r} "
                      f"(entry {first}'s {other}), got {b[key]!r}")
        if a["pos"] != b["pos"]:
            _fail(source, first + 1, "pos", f"{b['pos']!r} differs from entry {first}'s {a['pos']!r}")


# --------------------------------------------------------------------------------------------- loading


def eval_set_path(data_dir: Path) -> Path:
    """The evaluation set under ``data_dir`` (``eval_set.json`` or ``prednoun/eval_set.json``), downloaded to
    the latter the first time."""
    from probekit.checksums import verify_file
    from probekit.data.download import fetch_file

    for candidate in (data_dir / EVAL_SET_NAME, data_dir / "prednoun" / EVAL_SET_NAME):
        if candidate.is_file():
            return verify_file(candidate, EVAL_SET_URL, EVAL_SET_NAME)

    return fetch_file(EVAL_SET_URL, data_dir / "prednoun" / EVAL_SET_NAME, what=EVAL_SET_NAME)


def read_eval_set(path: str | os.PathLike) -> list[dict]:
    """Parse and validate one ``eval_set.json``."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise EvalSetError(f"{path}: not valid JSON ({err})") from None
    except UnicodeDecodeError as err:
        raise EvalSetError(f"{path}: not UTF-8 text (byte {err.start}: {err.reason})") from None
    validate_entries(entries, str(path))
    return entries


def select_pairs(n_items: int, limit: int | None, seed: int) -> np.ndarray:
    """Row indices of at most ``limit`` items made of whole pairs (rows 2k, 2k+1), drawn under ``seed``, in order."""
    n_pairs = n_items // 2
    if limit is None or limit >= n_items:
        chosen = np.arange(n_pairs)
    else:
        if limit < 2:
            raise ValueError(f"limit={limit}: the predicate-noun probe needs whole pairs, so limit must be >= 2")
        rng = np.random.default_rng(seed)
        chosen = np.sort(rng.choice(n_pairs, size=limit // 2, replace=False))
    return np.stack([2 * chosen, 2 * chosen + 1], axis=1).ravel()


def items_from_entries(entries: Sequence[dict], positions: Sequence[int] | np.ndarray | None = None) -> pd.DataFrame:
    """The ``prednoun`` item table (image column still empty) of the validated entries at ``positions`` (default:
    all) of the release; ``pair_id`` follows the release's order (entries 2k, 2k+1 are pair k)."""
    rows = []
    for index in (range(len(entries)) if positions is None else positions):
        e = entries[index]
        rows.append({
            "item_id": str(e["id"]), "pair_id": f"pair-{index // 2:05d}",
            "image_id": e["img_filename"][:-4], "image": None,
            **{key: e[key] for key in SENTENCE_FIELDS},
            "target_box": [float(v) for v in e["relationship_target"]["bounding_box"]],
            "distractor_box": [float(v) for v in e["relationship_distractor"]["bounding_box"]],
            **{key: e[key] for key in WORD_FIELDS},
            "pos": e["pos"], "open_images_split": e["open_images_split"],
        })
    return pd.DataFrame(rows)


def load_eval_set(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """Registry loader of the ``("prednoun", "eval-set")`` dataset; see the module docstring."""
    from probekit.data.openimages import open_images

    if split != "eval":
        raise ValueError(f"the predicate-noun evaluation set has only the split 'eval' (got {split!r}); it is a "
                         "zero-shot probe without training items")
    data_dir = Path(data_dir)
    entries = read_eval_set(eval_set_path(data_dir))
    items = items_from_entries(entries, select_pairs(len(entries), limit, seed))
    found = open_images(items["image_id"], items["open_images_split"], data_dir)
    paths = dict(zip(zip(found["image_id"], found["split"]), found["path"]))
    items["image"] = [paths[(i, s)] for i, s in zip(items["image_id"], items["open_images_split"])]
    items.attrs["missing_images"] = int(items["image"].isna().sum())
    return items


# --------------------------------------------------------------------------------------------- cropping


def box_to_pixels(box: Sequence[float], width: int, height: int) -> tuple[int, int, int, int]:
    """``[x, y, w, h]`` fractions -> pixel ``(left, top, right, bottom)``, clamped to the image, at least 1 px.

    The box is widened to whole pixels (floor of the start, ceiling of the end); a box running past the border is
    cut at the border, and a box thinner than a pixel still keeps one.
    """
    if len(box) != 4 or not all(math.isfinite(float(v)) for v in box):
        raise ValueError(f"expected a box [x, y, w, h] of 4 finite fractions, got {box!r}")
    x, y, w, h = (float(v) for v in box)
    if w < 0 or h < 0:
        raise ValueError(f"box {box!r} has a negative width or height")

    def span(start: float, extent: float, size: int) -> tuple[int, int]:
        lo = min(max(math.floor(round(start * size, 6)), 0), size - 1)
        hi = min(max(math.ceil(round((start + extent) * size, 6)), 0), size)
        return lo, max(hi, lo + 1)

    left, right = span(x, w, width)
    top, bottom = span(y, h, height)
    return left, top, right, bottom


def crop_path(image: str | os.PathLike, box: Sequence[float], data_dir: str | os.PathLike) -> Path:
    """Where the crop of ``image`` to ``box`` is cached: keyed by the image's path and the box."""
    image = Path(image).resolve()
    key = hashlib.sha1(f"{image}|{','.join(f'{float(v):.6f}' for v in box)}".encode()).hexdigest()[:16]
    suffix = ".jpg" if image.suffix.lower() in (".jpg", ".jpeg") else ".png"  # photos stay JPEG (size), toys PNG
    return Path(data_dir) / "derived" / "crop" / f"{image.stem}-{key}{suffix}"


def crop_image(image: str | os.PathLike, box: Sequence[float], data_dir: str | os.PathLike) -> Path:
    """Crop one image to a fractional box, writing it (once) under ``<data_dir>/derived/crop/``: JPEG (quality 95)
    for JPEG photos, PNG otherwise."""
    out = crop_path(image, box, data_dir)
    if out.is_file():
        return out
    img: Image.Image
    with Image.open(image) as img:
        img = img.convert("RGB")
        crop = img.crop(box_to_pixels(box, *img.size))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.stem + ".part" + out.suffix)
    crop.save(partial, quality=95) if out.suffix == ".jpg" else crop.save(partial)
    partial.replace(out)  # atomic: an interrupted run never leaves a half-written crop behind
    return out


def crop_to_targets(items: pd.DataFrame, data_dir: str | os.PathLike, box_column: str = "target_box",
                    image_column: str = "image") -> pd.Series:
    """Paths of every item's image cropped to its target box (the paper's topline); None where the image is
    missing or unreadable."""
    paths: list[str | None] = []
    for image, box in zip(items[image_column], items[box_column]):
        if image is None or (isinstance(image, float) and math.isnan(image)):
            paths.append(None)
            continue
        try:
            paths.append(str(crop_image(image, box, data_dir)))
        except (OSError, ValueError):
            paths.append(None)
    return pd.Series(paths, index=items.index, name="crop", dtype=object)
