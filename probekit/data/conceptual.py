"""Loaders for the authors' release of Probe-R and Probe-C (Schiappa et al. 2023), and the file and image helpers
they share with the Probe-B loader (:mod:`probekit.data.background`).

The annotation files (https://www.crcv.ucf.edu/data1/probe_rcb/) go anywhere under
``data_dir/probe-rcb/`` and are found by name:

* Probe-R: ``relation_eval_subject.json`` -- a dict keyed by Visual Genome image id, each entry holding
  ``positive_image_ids`` (images of the subject alone), ``negative_image_ids``, ``positive_prompt`` (the true
  relation), ``negative_prompt`` (subject swapped), ``negative_predicate_prompt`` (predicate swapped),
  ``positive_object`` and ``negative_object``; and, when present, ``relation_eval_object.json`` in the same
  schema with the object swapped.
* Probe-C: ``data_compositional_switch.json`` and ``data_object_switch.json`` -- lists of groups with
  ``img1_prompt``, ``img1_id``, ``img1_composition``, ``img1_object`` and the same for ``img2``
  (COCO val2014 ids).
* Probe-B: ``background_context_dataset.json`` (per COCO image: ``image_id`` and ``annotations``, a dict
  from class name to COCO instance annotations with ``segmentation``), ``object_context_dataset.json``
  (per single-object item: ``image_id``, ``object``, ``other_objects``; its masks come from COCO's
  ``instances_val2014.json``, looked for under ``data_dir/coco/``), ``prompt_classes.csv`` (``class``,
  ``prompt``), and optionally a ``scenes/`` folder of background pictures for the "scene" filler.

Images are read from ``data_dir/visual_genome/images/<id>.<ext>`` and
``data_dir/coco/val2014/COCO_val2014_<id:012d>.<ext>`` (a local copy can be linked there); missing ones are
downloaded into those folders by :func:`probekit.data.download.fetch_images`.  An image that could not be
fetched has path None and the chapter counts it (only when not one image of a probe can be had does the load
fail with :class:`~probekit.data.download.OfflineError`).  Probe-B masks are decoded with ``pycocotools`` and written
as binary PNGs under ``data_dir/derived/probe-b/masks/``.  The release has one evaluation set: ``split``
must be ``"eval"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterable, Literal, Sequence, overload

import numpy as np
import pandas as pd

RELEASE_URL = "https://www.crcv.ucf.edu/data1/probe_rcb/"
VG_URLS = ("https://cs.stanford.edu/people/rak248/VG_100K/{id}.jpg",
           "https://cs.stanford.edu/people/rak248/VG_100K_2/{id}.jpg")
COCO_URL = "http://images.cocodataset.org/val2014/COCO_val2014_{id:012d}.jpg"

# Table 5 of the paper: which attribute belongs to which category (Probe-C composition swaps).
ATTRIBUTE_CATEGORIES = {
    "age": ["young", "old", "new"],
    "color": ["greyscale", "coloured", "sepia", "reddish", "bronze", "greenish", "green", "turquoise", "blue",
              "tan", "red", "white", "silver", "purple", "gold", "pink", "navy", "brown", "teal", "gray",
              "black", "yellow", "grey", "golden", "camo", "pinkish", "beige", "orange", "blonde"],
    "expression": ["happy", "unhappy", "smiling", "laughing", "smiley", "sad"],
    "gender": ["male", "female"],
    "material": ["tin", "aluminum", "cloth", "gravel", "unpaved", "wooden", "stainless", "marble", "metallic",
                 "metal", "grassy", "porcelain", "wooded", "pebbled"],
    "pattern": ["checkered", "patterned", "striped", "spotted", "plaid", "stripped", "checkerboard"],
    "shape": ["triangular", "flat", "circular", "triangle", "oval", "round", "dotted", "rectangular", "square"],
    "size": ["bulky", "long", "thin", "large", "big", "tall", "short", "small", "huge", "tiny", "giant",
             "little", "chubby", "pudgy"],
    "texture": ["smooth", "fluffy", "fuzzy", "dry", "wet", "rusty", "bald", "hairy", "stony"],
    "visibility": ["shiny", "unclear", "sun", "nighttime", "blurry", "shadowy", "lit", "shady", "light",
                   "darkened", "hazy", "dark", "barren", "cloudy", "clear", "sunlit", "bright", "foggy",
                   "rainy", "sparkling"],
}
CATEGORY_OF_ATTRIBUTE = {a: c for c, attrs in ATTRIBUTE_CATEGORIES.items() for a in attrs}


class AnnotationError(ValueError):
    """An annotation file of the release does not have the documented structure."""


# ----------------------------------------------------------------------------------------------- files
def release_dir(data_dir) -> Path:
    return Path(data_dir) / "probe-rcb"


@overload
def find_file(data_dir: Path, name: str, required: Literal[True] = True) -> Path: ...
@overload
def find_file(data_dir: Path, name: str, required: bool) -> Path | None: ...
def find_file(data_dir: Path, name: str, required: bool = True) -> Path | None:
    """The first file called ``name`` under ``data_dir/probe-rcb`` (any depth)."""
    root = release_dir(data_dir)
    hits = sorted(root.rglob(name)) if root.is_dir() else []
    if hits:
        return hits[0]
    if required:
        raise FileNotFoundError(f"{name} not found under {root}: download the Probe-R/C/B annotations from "
                                f"{RELEASE_URL} and unpack them there (any sub-folder works)")
    return None


def read_json(path: Path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise AnnotationError(f"{path}: not UTF-8 text (byte {err.start}); re-download the file") from None
    except json.JSONDecodeError as err:
        raise AnnotationError(f"{path}: not valid JSON ({err})") from err


def need_field(entry, key, field: str, kind: type | tuple, path: Path):
    if not isinstance(entry, dict):
        raise AnnotationError(f"{path}: entry {key!r} is a {type(entry).__name__}, expected an object")
    if field not in entry:
        raise AnnotationError(f"{path}: entry {key!r} has no field {field!r} (fields: {sorted(entry)})")
    value = entry[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise AnnotationError(f"{path}: entry {key!r}, field {field!r} is {value!r}, expected {names}")
    return value


def image_id_field(entry, key, field: str, path: Path) -> int:
    value = need_field(entry, key, field, (int, str), path)
    try:
        return int(value)
    except ValueError:
        raise AnnotationError(f"{path}: entry {key!r}, field {field!r} is {value!r}, not an image id") from None


def check_split(split: str, probe: str) -> None:
    if split != "eval":
        raise ValueError(f"{probe}: the authors' release has only an evaluation set; split={split!r} is not "
                         "available (train on the toy world or your own data instead)")


def seeded_order(n: int, seed: int) -> np.ndarray:
    """A seeded order of n entries, so that ``limit`` takes a reproducible random subset."""
    return np.random.default_rng(seed).permutation(n)


# ---------------------------------------------------------------------------------------------- images
def vg_dir(data_dir) -> Path:
    return Path(data_dir) / "visual_genome" / "images"


def coco_dir(data_dir) -> Path:
    return Path(data_dir) / "coco" / "val2014"


def coco_stem(image_id: int) -> str:
    return f"COCO_val2014_{int(image_id):012d}"


def resolve_images(ids: Iterable[int], dest_dir: Path, stem_of: Callable[[int], str],
                   urls_of: Callable[[int], Sequence[str]], desc: str) -> dict[int, str | None]:
    """Local path of each image id in ``dest_dir`` (a file named ``<stem>.<ext>``); missing ones are
    downloaded there, trying each URL of ``urls_of(id)`` in turn.  Ids that could not be had map to None."""
    from probekit.data.download import OfflineError, fetch_images  # images in dest_dir are used without a download

    ids = list(dict.fromkeys(int(i) for i in ids))
    by_stem = {stem_of(i): i for i in ids}
    found: dict[int, str] = {}
    for attempt in range(max((len(urls_of(i)) for i in ids), default=0)):
        todo = {stem_of(i): urls_of(i)[attempt] for i in ids if i not in found and attempt < len(urls_of(i))}
        if not todo:
            break
        try:
            got = fetch_images(todo, dest_dir, desc=desc)
        except OfflineError:  # none of *these* could be had: they stay missing (None), unless none at all can
            if found:
                break
            raise
        for rec in got.to_dict("records"):
            if rec["ok"]:
                found[by_stem[str(rec["id"])]] = str(rec["path"])
    return {i: found.get(i) for i in ids}


def _vg_images(data_dir, ids) -> dict[int, str | None]:
    return resolve_images(ids, vg_dir(data_dir), str, lambda i: [u.format(id=i) for u in VG_URLS],
                          "Visual Genome images")


def coco_images(data_dir, ids) -> dict[int, str | None]:
    return resolve_images(ids, coco_dir(data_dir), coco_stem, lambda i: [COCO_URL.format(id=i)],
                          "COCO val2014 images")


# --------------------------------------------------------------------------------------------- Probe-R
R_FIELDS = {"positive_image_ids": list, "negative_image_ids": list, "positive_prompt": str,
            "negative_prompt": str, "negative_predicate_prompt": str, "positive_object": str,
            "negative_object": str}


def subject_prompt(subject: str) -> str:
    """The subject-only prompt P_O1, as the authors build it."""
    return f"A photo of {subject}."


#: the two Probe-R files: the swapped role, the group-id prefix and the kind of each comparison
R_FILES = {"relation_eval_subject.json": ("subject", "r", {"swap": "subject_swap", "predicate": "predicate_swap"}),
           "relation_eval_object.json": ("object", "ro", {"swap": "object_swap", "predicate": "object_predicate_swap"})}
#: kinds scored on a group's images of the swapped role alone (X_O1); the authors average their logits per group
GROUPED_KINDS = ("subject_only", "subject_only_relations", "object_only", "object_only_relations")


def parse_probe_r(path: Path) -> pd.DataFrame:
    """Rows of Probe-R (without image paths: column ``image_id``) from ``relation_eval_subject.json`` or
    ``relation_eval_object.json`` (same schema, the object swapped).  Per entry: the anchor image with the true
    relation P_R1 against the role swap P_R2 and against the predicate swap; and each image of the role alone
    (X_O1) with the role-only prompt P_O1 against P_R1 (``<role>_only``) and with P_R1 against P_R2
    (``<role>_only_relations``, the fourth column of the paper's Table 3)."""
    role, prefix, kinds = R_FILES.get(Path(path).name, R_FILES["relation_eval_subject.json"])
    data = read_json(path)
    if not isinstance(data, dict):
        raise AnnotationError(f"{path}: expected an object keyed by Visual Genome image id, "
                              f"got a {type(data).__name__}")
    rows = []
    for key, entry in data.items():
        for field, kind in R_FIELDS.items():
            need_field(entry, key, field, kind, path)
        anchor = image_id_field({"id": key}, key, "id", path)
        group = f"{prefix}-{anchor}"
        base = {"group_id": group, "correct_prompt": entry["positive_prompt"]}
        rows.append({**base, "item_id": f"{group}-{role}", "image_id": anchor, "kind": kinds["swap"],
                     "wrong_prompt": entry["negative_prompt"]})
        rows.append({**base, "item_id": f"{group}-predicate", "image_id": anchor, "kind": kinds["predicate"],
                     "wrong_prompt": entry["negative_predicate_prompt"]})
        for j, value in enumerate(entry["positive_image_ids"]):
            if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
                raise AnnotationError(f"{path}: entry {key!r}, field 'positive_image_ids'[{j}] is {value!r}, "
                                      "expected an image id")
            pid = int(value)
            rows.append({"group_id": group, "item_id": f"{group}-only-{pid}", "image_id": pid,
                         "kind": f"{role}_only", "correct_prompt": subject_prompt(entry["positive_object"]),
                         "wrong_prompt": entry["positive_prompt"]})
            rows.append({"group_id": group, "item_id": f"{group}-only-relations-{pid}", "image_id": pid,
                         "kind": f"{role}_only_relations", "correct_prompt": entry["positive_prompt"],
                         "wrong_prompt": entry["negative_prompt"]})
    return pd.DataFrame(rows, columns=["item_id", "group_id", "image_id", "correct_prompt", "wrong_prompt",
                                       "kind"])


def _limit_groups(rows: pd.DataFrame, limit: int | None, seed: int, group: str = "group_id") -> pd.DataFrame:
    """Whole groups in a seeded random order until ``limit`` rows are reached (then cut at ``limit``)."""
    if limit is None:
        return rows.reset_index(drop=True)
    groups = rows[group].unique()
    order = groups[seeded_order(len(groups), seed)]
    sizes = rows.groupby(group).size()
    keep = order[: int(np.searchsorted(np.cumsum(sizes[order].to_numpy()), limit) + 1)]
    picked = rows[rows[group].isin(set(keep))]
    rank = {g: k for k, g in enumerate(keep)}
    picked = picked.iloc[np.argsort([rank[g] for g in picked[group]], kind="stable")]
    return picked.head(limit).reset_index(drop=True)


def load_probe_r(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    check_split(split, "probe-r")
    files = [find_file(data_dir, name, required=name.endswith("subject.json")) for name in R_FILES]
    rows = _limit_groups(pd.concat([parse_probe_r(f) for f in files if f is not None], ignore_index=True), limit, seed)
    paths = _vg_images(data_dir, rows["image_id"])
    rows["image"] = [paths[i] for i in rows["image_id"]]
    rows["image_id"] = rows["image_id"].astype(str)
    return rows


# --------------------------------------------------------------------------------------------- Probe-C
C_FILES = {"composition": "data_compositional_switch.json", "object": "data_object_switch.json"}
C_FIELDS = {f"img{k}_{f}": str for k in (1, 2) for f in ("prompt", "composition", "object")}


def parse_probe_c(path: Path, split: str) -> pd.DataFrame:
    """Groups of one Probe-C split (image ids in ``image_id_0``/``image_id_1``)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a list of groups, got a {type(data).__name__}")
    rows = []
    for k, entry in enumerate(data):
        for field, kind in C_FIELDS.items():
            need_field(entry, k, field, kind, path)
        ids = [image_id_field(entry, k, f"img{j}_id", path) for j in (1, 2)]
        if split == "composition":
            category = CATEGORY_OF_ATTRIBUTE.get(entry["img1_composition"].lower(), "other")
        else:
            category = entry["img1_object"]
        rows.append({"group_id": f"c-{split}-{k}", "split": split, "category": category,
                     "image_id_0": ids[0], "image_id_1": ids[1], "caption_0": entry["img1_prompt"],
                     "caption_1": entry["img2_prompt"], "attribute_0": entry["img1_composition"],
                     "attribute_1": entry["img2_composition"], "object_0": entry["img1_object"],
                     "object_1": entry["img2_object"]})
    return pd.DataFrame(rows)


def load_probe_c(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    check_split(split, "probe-c")
    parts = [parse_probe_c(find_file(data_dir, name), s) for s, name in C_FILES.items()]
    groups = pd.concat(parts, ignore_index=True)
    if limit is not None:  # a seeded subset with both splits represented in proportion
        groups = groups.iloc[np.sort(seeded_order(len(groups), seed)[:limit])].reset_index(drop=True)
    ids = pd.concat([groups["image_id_0"], groups["image_id_1"]])
    paths = coco_images(data_dir, ids)
    groups["image_0"] = [paths[i] for i in groups["image_id_0"]]
    groups["image_1"] = [paths[i] for i in groups["image_id_1"]]
    return groups
