"""V-COCO (Gupta & Malik 2015) as a guided-masking probe: COCO 2014 captions of images whose people V-COCO
annotates with a verb, the verb located in the caption and the person's COCO box as the subject box.

Files (downloaded once and cached under ``data_dir``; never part of the repository):

* ``data_dir/v-coco/vcoco_test.json`` from :data:`VCOCO_URL` (the annotations of github.com/s-gupta/v-coco): a
  list with one entry per action, each with ``action_name`` and the parallel lists ``image_id``, ``ann_id``
  (a COCO person annotation) and ``label`` (1 when that person does the action);
* ``data_dir/coco/annotations/captions_val2014.json`` (``images`` with ``id``/``width``/``height``,
  ``annotations`` with ``image_id``/``caption``) and ``instances_val2014.json`` (``annotations`` with ``id`` and
  ``bbox`` = [x, y, w, h] in pixels), extracted from COCO's annotation zip
  (``probekit.checksums.COCO_ANNOTATIONS_URL``) when absent;
* the images, ``data_dir/coco/val2014/COCO_val2014_<id:012d>.jpg`` (``probekit.data.conceptual.coco_images``).

V-COCO's test split annotates COCO val2014 images; it is the one read (``split="eval"``).  Every file is checked
against the structure above (:class:`probekit.data.conceptual.AnnotationError` names what is wrong).

**Items.**  One per (image, verb) with a person labelled 1: the verb is the action name's first word
("talk_on_phone" -> "talk"), the caption is the image's first COCO caption in which the verb is located
(:func:`probekit.data.masking.locate_verb`, without a subject word: captions name the person in many ways), and
the subject box is the first such person's box as fractions of the image.  A (image, verb) no caption of the
image contains is listed in ``attrs["unlocated"]`` (with the image's first caption).  ``limit`` draws items with ``seed`` before any image is
fetched.
"""

from __future__ import annotations

import math
import zipfile
from collections import defaultdict
from pathlib import Path

import pandas as pd

from probekit.checksums import COCO_ANNOTATIONS_URL, VCOCO_URL
from probekit.data.conceptual import (AnnotationError, coco_images, need_field, read_json,
                                      seeded_order)
from probekit.data.masking import locate_verb

SPLIT = "test"
COLUMNS = ["item_id", "image_id", "image", "sentence", "verb", "verb_start", "verb_end", "subject", "subject_box"]


def coco_annotation(data_dir, name: str) -> Path:
    """``data_dir/coco/annotations/<name>``, extracted from COCO's 2014 annotation zip when absent."""
    from probekit.data.download import fetch_file

    path = Path(data_dir) / "coco" / "annotations" / name
    if not path.exists():
        archive = fetch_file(COCO_ANNOTATIONS_URL, Path(data_dir) / "coco" / "annotations_trainval2014.zip",
                             what="COCO 2014 annotations")
        with zipfile.ZipFile(archive) as zf:
            zf.extract(f"annotations/{name}", Path(data_dir) / "coco")
    return path


def _read(path: Path):
    """The JSON of ``path``; an :class:`AnnotationError` naming the file when it is not JSON or not UTF-8."""
    try:
        return read_json(path)
    except UnicodeDecodeError as err:
        raise AnnotationError(f"{path}: not UTF-8 text (byte {err.start}: {err.reason})") from None


def _ints(values: list, key, field: str, path: Path) -> None:
    bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, int)), None)
    if bad is not None:
        raise AnnotationError(f"{path}: entry {key!r}, field {field!r} holds {bad!r}, expected integers")


def parse_vcoco(path: Path) -> list[dict]:
    """The V-COCO action entries, checked: each has a string ``action_name`` and equally long lists of integers
    ``image_id``, ``ann_id`` and ``label``."""
    actions = _read(path)
    if not isinstance(actions, list):
        raise AnnotationError(f"{path}: expected a list of action entries, got {type(actions).__name__}")
    for i, entry in enumerate(actions):
        need_field(entry, i, "action_name", str, path)
        lengths = {field: len(need_field(entry, i, field, list, path)) for field in ("image_id", "ann_id", "label")}
        if len(set(lengths.values())) != 1:
            raise AnnotationError(f"{path}: entry {i} ({entry['action_name']}) has lists of different lengths "
                                  f"{lengths}")
        for field in ("image_id", "ann_id", "label"):
            _ints(entry[field], i, field, path)
    return actions


def _box(ann: dict, path: Path) -> list:
    box = need_field(ann, ann["id"], "bbox", list, path)
    if len(box) != 4 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                for v in box):
        raise AnnotationError(f"{path}: entry {ann['id']!r}, field 'bbox' is {box!r}, expected [x, y, w, h]")
    return box


def _size(im: dict, path: Path) -> tuple[int, int]:
    size = tuple(need_field(im, im["id"], field, int, path) for field in ("width", "height"))
    if min(size) <= 0:
        raise AnnotationError(f"{path}: entry {im['id']!r}, image size {size} is not positive")
    return size


def _coco_tables(captions_path: Path, instances_path: Path):
    captions, instances = _read(captions_path), _read(instances_path)
    for path, data, field in ((captions_path, captions, "images"), (captions_path, captions, "annotations"),
                              (instances_path, instances, "annotations")):
        need_field(data, path.name, field, list, path)
    sizes = {int(need_field(im, "images", "id", int, captions_path)): _size(im, captions_path)
             for im in captions["images"]}
    texts = defaultdict(list)
    for ann in captions["annotations"]:
        texts[int(need_field(ann, "annotations", "image_id", int, captions_path))].append(
            need_field(ann, ann["image_id"], "caption", str, captions_path).strip())
    boxes = {int(need_field(ann, "annotations", "id", int, instances_path)): _box(ann, instances_path)
             for ann in instances["annotations"]}
    return sizes, texts, boxes


def vcoco_items(actions: list[dict], sizes: dict, texts: dict, boxes: dict) -> pd.DataFrame:
    """Items (without image paths) from V-COCO's actions and COCO's image sizes, captions and boxes."""
    people: dict[tuple[int, str], int] = {}
    for entry in actions:
        verb = entry["action_name"].split("_")[0].lower()
        for image_id, ann_id, label in zip(entry["image_id"], entry["ann_id"], entry["label"]):
            if int(label) == 1:
                people.setdefault((int(image_id), verb), int(ann_id))
    rows, unlocated = [], []
    for (image_id, verb), ann_id in sorted(people.items()):
        found = next(((c, span) for c in texts.get(image_id, []) if (span := locate_verb(c, verb)) is not None),
                     None)
        if found is None or image_id not in sizes or ann_id not in boxes:
            unlocated.append({"sentence": (texts.get(image_id) or [""])[0], "verb": verb, "image_id": image_id})
            continue
        (caption, (start, end)), (width, height) = found, sizes[image_id]
        x, y, w, h = (float(v) for v in boxes[ann_id])
        rows.append({"item_id": f"vcoco-{image_id}-{verb}", "image_id": str(image_id), "image": None,
                     "sentence": caption, "verb": verb, "verb_start": start, "verb_end": end, "subject": "person",
                     "subject_box": [x / width, y / height, w / width, h / height]})
    items = pd.DataFrame(rows, columns=COLUMNS)
    items.attrs["unlocated"] = unlocated
    return items


def load_vcoco_masking(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """The 'masking' probe on V-COCO's test split (see the module docstring)."""
    from probekit.data.download import fetch_file

    if split != "eval":
        raise ValueError(f"v-coco: the masking probe reads V-COCO's test split only (split='eval'), not {split!r}")
    actions = parse_vcoco(fetch_file(VCOCO_URL.format(split=SPLIT), Path(data_dir) / "v-coco" / f"vcoco_{SPLIT}.json",
                                     what="V-COCO annotations"))
    tables = _coco_tables(coco_annotation(data_dir, "captions_val2014.json"),
                          coco_annotation(data_dir, "instances_val2014.json"))
    items = vcoco_items(actions, *tables)
    unlocated = items.attrs["unlocated"]
    items = items.iloc[seeded_order(len(items), seed)[:limit]].reset_index(drop=True)
    paths = coco_images(data_dir, [int(i) for i in items["image_id"]])
    items["image"] = [paths.get(int(i)) for i in items["image_id"]]
    items.attrs["unlocated"] = unlocated
    return items
