"""Loaders for the authors' release of Probe-R, Probe-C and Probe-B (Schiappa et al. 2023).

The annotation files (https://www.crcv.ucf.edu/data1/probe_rcb/) go anywhere under
``data_dir/probe-rcb/`` and are found by name:

* Probe-R: ``relation_eval_subject.json`` -- a dict keyed by Visual Genome image id, each entry holding
  ``positive_image_ids`` (images of the subject alone), ``negative_image_ids``, ``positive_prompt`` (the true
  relation), ``negative_prompt`` (subject swapped), ``negative_predicate_prompt`` (predicate swapped),
  ``positive_object`` and ``negative_object``.
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
fetched has path None and the chapter counts it.  Probe-B masks are decoded with ``pycocotools`` and written
as binary PNGs under ``data_dir/derived/probe-b/masks/``.  The release has one evaluation set: ``split``
must be ``"eval"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

RELEASE_URL = "https://www.crcv.ucf.edu/data1/probe_rcb/"
VG_URLS = ("https://cs.stanford.edu/people/rak248/VG_100K/{id}.jpg",
           "https://cs.stanford.edu/people/rak248/VG_100K_2/{id}.jpg")
COCO_URL = "http://images.cocodataset.org/val2014/COCO_val2014_{id:012d}.jpg"
COCO_ANNOTATIONS_URL = "http://images.cocodataset.org/annotations/annotations_trainval2014.zip"

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


def find_file(data_dir, name: str, required: bool = True) -> Path | None:
    """The first file called ``name`` under ``data_dir/probe-rcb`` (any depth)."""
    root = release_dir(data_dir)
    hits = sorted(root.rglob(name)) if root.is_dir() else []
    if hits:
        return hits[0]
    if required:
        raise FileNotFoundError(f"{name} not found under {root}: download the Probe-R/C/B annotations from "
                                f"{RELEASE_URL} and unpack them there (any sub-folder works)")
    return None


def _read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise AnnotationError(f"{path}: not valid JSON ({err})") from err


def _need(entry, key, field: str, kind: type | tuple, path: Path):
    if not isinstance(entry, dict):
        raise AnnotationError(f"{path}: entry {key!r} is a {type(entry).__name__}, expected an object")
    if field not in entry:
        raise AnnotationError(f"{path}: entry {key!r} has no field {field!r} (fields: {sorted(entry)})")
    value = entry[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise AnnotationError(f"{path}: entry {key!r}, field {field!r} is {value!r}, expected {names}")
    return value


def _image_id(entry, key, field: str, path: Path) -> int:
    value = _need(entry, key, field, (int, str), path)
    try:
        return int(value)
    except ValueError:
        raise AnnotationError(f"{path}: entry {key!r}, field {field!r} is {value!r}, not an image id") from None


def _check_split(split: str, probe: str) -> None:
    if split != "eval":
        raise ValueError(f"{probe}: the authors' release has only an evaluation set; split={split!r} is not "
                         "available (train on the toy world or your own data instead)")


def _order(n: int, seed: int) -> np.ndarray:
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
    from probekit.data.download import fetch_images  # images already in dest_dir are used without a download

    ids = list(dict.fromkeys(int(i) for i in ids))
    by_stem = {stem_of(i): i for i in ids}
    found: dict[int, str] = {}
    for attempt in range(max((len(urls_of(i)) for i in ids), default=0)):
        todo = {stem_of(i): urls_of(i)[attempt] for i in ids if i not in found and attempt < len(urls_of(i))}
        if not todo:
            break
        got = fetch_images(todo, dest_dir, desc=desc)
        for rec in got.to_dict("records"):
            if rec["ok"]:
                found[by_stem[str(rec["id"])]] = str(rec["path"])
    return {i: found.get(i) for i in ids}


def _vg_images(data_dir, ids) -> dict[int, str | None]:
    return resolve_images(ids, vg_dir(data_dir), str, lambda i: [u.format(id=i) for u in VG_URLS],
                          "Visual Genome images")


def _coco_images(data_dir, ids) -> dict[int, str | None]:
    return resolve_images(ids, coco_dir(data_dir), coco_stem, lambda i: [COCO_URL.format(id=i)],
                          "COCO val2014 images")


# --------------------------------------------------------------------------------------------- Probe-R
R_FIELDS = {"positive_image_ids": list, "negative_image_ids": list, "positive_prompt": str,
            "negative_prompt": str, "negative_predicate_prompt": str, "positive_object": str,
            "negative_object": str}


def subject_prompt(subject: str) -> str:
    """The subject-only prompt P_O1, as the authors build it."""
    return f"A photo of {subject}."


def parse_probe_r(path: Path) -> pd.DataFrame:
    """Rows of Probe-R (without image paths: columns ``image_id`` and ``source`` = "vg") from
    ``relation_eval_subject.json``."""
    data = _read_json(path)
    if not isinstance(data, dict):
        raise AnnotationError(f"{path}: expected an object keyed by Visual Genome image id, "
                              f"got a {type(data).__name__}")
    rows = []
    for key, entry in data.items():
        for field, kind in R_FIELDS.items():
            _need(entry, key, field, kind, path)
        anchor = _image_id({"id": key}, key, "id", path)
        base = {"group_id": f"r-{anchor}", "correct_prompt": entry["positive_prompt"]}
        rows.append({**base, "item_id": f"r-{anchor}-subject", "image_id": anchor, "kind": "subject_swap",
                     "wrong_prompt": entry["negative_prompt"]})
        rows.append({**base, "item_id": f"r-{anchor}-predicate", "image_id": anchor, "kind": "predicate_swap",
                     "wrong_prompt": entry["negative_predicate_prompt"]})
        for j, value in enumerate(entry["positive_image_ids"]):
            if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
                raise AnnotationError(f"{path}: entry {key!r}, field 'positive_image_ids'[{j}] is {value!r}, "
                                      "expected an image id")
            pid = int(value)
            rows.append({"group_id": f"r-{anchor}", "item_id": f"r-{anchor}-only-{pid}", "image_id": pid,
                         "kind": "subject_only", "correct_prompt": subject_prompt(entry["positive_object"]),
                         "wrong_prompt": entry["positive_prompt"]})
    return pd.DataFrame(rows, columns=["item_id", "group_id", "image_id", "correct_prompt", "wrong_prompt",
                                       "kind"])


def _limit_groups(rows: pd.DataFrame, limit: int | None, seed: int, group: str = "group_id") -> pd.DataFrame:
    """Whole groups in a seeded random order until ``limit`` rows are reached (then cut at ``limit``)."""
    if limit is None:
        return rows.reset_index(drop=True)
    groups = rows[group].unique()
    order = groups[_order(len(groups), seed)]
    sizes = rows.groupby(group).size()
    keep = order[: int(np.searchsorted(np.cumsum(sizes[order].to_numpy()), limit) + 1)]
    picked = rows[rows[group].isin(set(keep))]
    rank = {g: k for k, g in enumerate(keep)}
    picked = picked.iloc[np.argsort([rank[g] for g in picked[group]], kind="stable")]
    return picked.head(limit).reset_index(drop=True)


def load_probe_r(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    _check_split(split, "probe-r")
    rows = _limit_groups(parse_probe_r(find_file(data_dir, "relation_eval_subject.json")), limit, seed)
    paths = _vg_images(data_dir, rows["image_id"])
    rows["image"] = [paths[i] for i in rows["image_id"]]
    rows["image_id"] = rows["image_id"].astype(str)
    return rows


# --------------------------------------------------------------------------------------------- Probe-C
C_FILES = {"composition": "data_compositional_switch.json", "object": "data_object_switch.json"}
C_FIELDS = {f"img{k}_{f}": str for k in (1, 2) for f in ("prompt", "composition", "object")}


def parse_probe_c(path: Path, split: str) -> pd.DataFrame:
    """Groups of one Probe-C split (image ids in ``image_id_0``/``image_id_1``)."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a list of groups, got a {type(data).__name__}")
    rows = []
    for k, entry in enumerate(data):
        for field, kind in C_FIELDS.items():
            _need(entry, k, field, kind, path)
        ids = [_image_id(entry, k, f"img{j}_id", path) for j in (1, 2)]
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
    _check_split(split, "probe-c")
    parts = [parse_probe_c(find_file(data_dir, name), s) for s, name in C_FILES.items()]
    groups = pd.concat(parts, ignore_index=True)
    if limit is not None:  # a seeded subset with both splits represented in proportion
        groups = groups.iloc[np.sort(_order(len(groups), seed)[:limit])].reset_index(drop=True)
    ids = pd.concat([groups["image_id_0"], groups["image_id_1"]])
    paths = _coco_images(data_dir, ids)
    groups["image_0"] = [paths[i] for i in groups["image_id_0"]]
    groups["image_1"] = [paths[i] for i in groups["image_id_1"]]
    return groups


# --------------------------------------------------------------------------------------------- Probe-B
def read_prompt_classes(path: Path) -> dict[str, str]:
    table = pd.read_csv(path)
    missing = [c for c in ("class", "prompt") if c not in table.columns]
    if missing:
        raise AnnotationError(f"{path}: no column(s) {missing} (columns: {list(table.columns)})")
    return dict(zip(table["class"].astype(str), table["prompt"].astype(str)))


def parse_background(path: Path, classes: dict[str, str]) -> list[dict]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a list of images, got a {type(data).__name__}")
    out = []
    for k, entry in enumerate(data):
        image_id = _image_id(entry, k, "image_id", path)
        anns = _need(entry, k, "annotations", dict, path)
        for name, instances in anns.items():
            if name not in classes:
                raise AnnotationError(f"{path}: entry {k!r}, field 'annotations' names class {name!r}, which "
                                      "prompt_classes.csv does not list")
            if not isinstance(instances, list) or not all(isinstance(a, dict) and "segmentation" in a
                                                          for a in instances):
                raise AnnotationError(f"{path}: entry {k!r}, annotations[{name!r}] must be a list of COCO "
                                      "instance annotations with a 'segmentation' field")
        out.append({"item_id": f"b-{image_id}", "image_id": image_id, "labels": sorted(anns),
                    "segmentations": [a["segmentation"] for v in anns.values() for a in v],
                    "single_object": False, "target": None})
    return out


def parse_object_context(path: Path, classes: dict[str, str]) -> list[dict]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a list of items, got a {type(data).__name__}")
    out = []
    for k, entry in enumerate(data):
        image_id = _image_id(entry, k, "image_id", path)
        target = _need(entry, k, "object", str, path)
        others = _need(entry, k, "other_objects", list, path)
        if target not in classes:
            raise AnnotationError(f"{path}: entry {k!r}, field 'object' is {target!r}, not a class of "
                                  "prompt_classes.csv")
        out.append({"item_id": f"b-{image_id}-{target.replace(' ', '_')}", "image_id": image_id,
                    "labels": sorted({target, *map(str, others)}), "segmentations": None,
                    "single_object": True, "target": target})
    return out


def _masks_from_segmentations(segmentations, height: int, width: int) -> np.ndarray:
    from pycocotools import mask as mask_utils  # lazy: only the real Probe-B needs it

    keep = np.zeros((height, width), bool)
    for seg in segmentations:
        if isinstance(seg, list):  # polygons
            rle = mask_utils.merge(mask_utils.frPyObjects(seg, height, width))
        elif isinstance(seg.get("counts"), list):  # uncompressed RLE (crowds)
            rle = mask_utils.frPyObjects(seg, height, width)
        else:
            rle = seg
        keep |= mask_utils.decode(rle).astype(bool)
    return keep


def _write_mask(keep: np.ndarray, path: Path) -> str:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        tmp = path.with_suffix(".tmp.png")
        Image.fromarray((keep * 255).astype(np.uint8)).save(tmp)
        tmp.replace(path)
    return str(path)


def load_probe_b(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    from PIL import Image

    _check_split(split, "probe-b")
    prompts = read_prompt_classes(find_file(data_dir, "prompt_classes.csv"))
    records = parse_background(find_file(data_dir, "background_context_dataset.json"), prompts)
    object_file = find_file(data_dir, "object_context_dataset.json", required=False)
    if object_file is not None:
        records += parse_object_context(object_file, prompts)
    if limit is not None:
        records = [records[i] for i in np.sort(_order(len(records), seed)[:limit])]
    paths = _coco_images(data_dir, [r["image_id"] for r in records])
    coco = _coco_instances(data_dir) if any(r["single_object"] for r in records) else None
    names = {c["id"]: c["name"] for c in coco.loadCats(coco.getCatIds())} if coco is not None else {}
    mask_dir = Path(data_dir) / "derived" / "probe-b" / "masks"
    rows = []
    for rec in records:
        image = paths[rec["image_id"]]
        mask = objects_mask = None
        if image is not None:
            width, height = Image.open(image).size
            if rec["single_object"]:
                anns = coco.loadAnns(coco.getAnnIds(imgIds=[rec["image_id"]], iscrowd=None))
                target = [a["segmentation"] for a in anns if names[a["category_id"]] == rec["target"]]
                every = [a["segmentation"] for a in anns]
                mask = _write_mask(_masks_from_segmentations(target, height, width),
                                   mask_dir / f"{rec['item_id']}.png")
                objects_mask = _write_mask(_masks_from_segmentations(every, height, width),
                                           mask_dir / f"b-{rec['image_id']}-all.png")
            else:
                mask = objects_mask = _write_mask(_masks_from_segmentations(rec["segmentations"], height, width),
                                                  mask_dir / f"{rec['item_id']}.png")
        rows.append({"item_id": rec["item_id"], "image_id": str(rec["image_id"]), "image": image, "mask": mask,
                     "objects_mask": objects_mask, "labels": rec["labels"], "single_object": rec["single_object"],
                     "target": rec["target"]})
    items = pd.DataFrame(rows, columns=["item_id", "image_id", "image", "mask", "objects_mask", "labels",
                                        "single_object", "target"])
    items["target"] = items["target"].astype(object).where(items["target"].notna(), None)
    scenes = release_dir(data_dir) / "scenes"
    items.attrs["classes"] = list(prompts)
    items.attrs["prompts"] = prompts
    items.attrs["scene_dir"] = str(scenes) if scenes.is_dir() else None
    return items


def _coco_instances(data_dir):
    hits = sorted((Path(data_dir) / "coco").rglob("instances_val2014.json"))
    if not hits:
        raise FileNotFoundError(f"instances_val2014.json not found under {Path(data_dir) / 'coco'}: the "
                                f"single-object split of Probe-B needs COCO's masks; download "
                                f"{COCO_ANNOTATIONS_URL} and unpack it there")
    from pycocotools.coco import COCO

    return COCO(str(hits[0]))


# ----------------------------------------------------------------------------------------------- suite
SUITES = {"toy": {"probe-r": "toy", "probe-c": "toy", "probe-b": "toy"},
          "paper": {"probe-r": "probe-r", "probe-c": "probe-c", "probe-b": "probe-b"}}


def suite_sources(dataset: str) -> dict[str, str]:
    """The source of each probe for the chapter's ``dataset`` parameter: ``"toy"`` (toy world) or
    ``"paper"`` (the authors' release)."""
    if dataset not in SUITES:
        raise ValueError(f"dataset={dataset!r} is not a suite of the conceptual chapter; valid: "
                         f"{', '.join(SUITES)} ('paper' reads the sources probe-r, probe-c, probe-b)")
    return dict(SUITES[dataset])


# ------------------------------------------------------------------------------------- the paper's tables
#: the paper's model labels -> this package's registry names ("CLIP ViT" is ViT-L/14@336px, "CLIP CNN" RN50x4)
PAPER_MODELS = {"CLIP RN50": "openclip-rn50-openai", "CLIP RN101": "openclip-rn101-openai",
                "CLIP ViT/B-32": "clip-vit-b32", "CLIP ViT-B/16": "clip-vit-b16", "CLIP ViT L/14": "clip-vit-l14",
                "CLIP ViT": "clip-vit-l14-336", "CLIP CNN": "openclip-rn50x4-openai", "FLAVA": "flava",
                "ViLT": "vilt-coco", "BridgeTower": "bridgetower"}

_PAPER_COLUMNS = {
    "table3": ["subject_swap μ(c)", "subject_swap acc", "predicate_swap μ(c)", "predicate_swap acc",
               "subject_only μ(c)", "subject_only acc", "X_O1: P_R1 vs P_R2 μ(c)", "X_O1: P_R1 vs P_R2 acc"],
    "table4": ["composition μ(c)", "composition image", "composition text", "composition group",
               "object μ(c)", "object image", "object text", "object group"],
    "table6a": [f"{c} {m}" for c in ("age", "color", "expression", "gender", "material")
                for m in ("image", "text", "group")],
    "table6b": [f"{c} {m}" for c in ("pattern", "shape", "size", "texture", "visibility")
                for m in ("image", "text", "group")],
    "table8": ["mAP x0", "mAP x̃0", "mAP x̃1", "γ (x0,x̃1)", "γ (x0,x̃0)", "γ (x̃0,x̃1)",
               "Δc (c0−c̃0)", "Δc (c̃0−c̃1)", "Δc (c0−c̃1)"],
    "table9": ["acc x0", "acc x̃0", "acc x̃1", "γ (x0,x̃1)", "γ (x0,x̃0)", "γ (x̃0,x̃1)"],
    "table2": ["ImageNet top1", "RelComp image", "Probe-C μ(c)", "Probe-R μ(c)"],
    "table10": ["alpha", "RelComp group", "RelComp image", "RelComp text", "ImageNet top1", "ImageNet top5"],
}
_TABLE3 = """\
CLIP RN50	69.77	72.14	51.33	51.13	61.19	61.69	78.44	89.10
CLIP ViT L/14	71.59	73.68	52.44	52.59	59.09	58.67	84.17	93.23
CLIP ViT-B/16	71.08	73.40	52.84	53.37	61.69	62.07	79.62	89.96
CLIP ViT/B-32	69.00	71.21	53.02	53.53	58.83	58.56	82.21	92.32
CLIP ViT	72.09	74.27	53.52	53.97	59.53	59.14	83.97	93.50
CLIP RN101	70.62	73.28	54.01	55.11	60.66	60.83	79.08	91.17
CLIP RN50x64	72.79	74.79	56.66	58.03	64.10	64.88	78.10	87.15
CLIP CNN	72.71	75.59	56.35	58.14	62.31	62.81	78.29	90.77
CLIP RN50x16	73.91	76.57	58.08	60.52	59.80	59.79	83.03	94.05
CLIP Patched (V)	78.58	81.41	59.36	62.27	66.56	68.07	81.32	90.79
FLAVA	76.79	79.09	64.65	68.29	64.40	65.56	84.19	90.12
ViLT	76.41	78.45	64.77	69.00	54.84	54.78	94.23	99.10
CLIP Patched (VT)	80.56	84.46	64.53	71.12	67.63	70.07	81.74	92.40
CLIP Patched (T)	82.37	86.25	66.28	72.55	67.93	70.51	79.76	90.70
BridgeTower	83.03	89.01	72.93	82.04	71.73	78.90	76.58	94.38
"""
_TABLE4 = """\
CLIP ViT	69.69	33.06	52.82	26.64	88.15	61.96	81.89	58.05
CLIP RN50	69.47	33.41	54.60	26.92	87.00	61.40	80.17	56.81
CLIP ViT-B/16	69.23	34.29	52.23	26.94	88.02	63.53	81.44	59.12
CLIP ViT L/14	69.41	33.73	52.36	27.01	87.89	61.93	81.31	57.86
CLIP RN101	69.24	34.95	51.82	27.42	86.99	61.75	80.58	57.46
CLIP RN50x64	70.44	35.21	52.89	27.95	87.75	63.09	80.55	58.27
CLIP ViT/B-32	69.79	34.71	53.85	27.96	87.75	62.01	80.92	57.65
CLIP RN50x16	69.77	35.51	53.24	28.07	87.91	63.12	82.23	59.38
CLIP CNN	69.75	36.07	54.56	28.79	87.24	61.29	81.24	57.06
FLAVA	67.45	60.93	39.65	33.09	83.85	82.66	70.08	65.37
CLIP Patched (T)	71.94	40.96	58.79	33.83	89.58	68.81	84.36	65.19
CLIP Patched (V)	73.65	42.30	59.10	34.48	89.79	66.17	84.00	62.45
CLIP Patched (VT)	73.65	44.53	61.92	37.18	90.30	70.01	85.41	66.83
ViLT	79.02	53.74	66.84	46.65	90.78	73.82	85.88	70.26
BridgeTower	81.88	65.95	75.02	59.28	90.05	77.44	87.63	74.54
"""
_TABLE6A = """\
CLIP RN50	47.74	68.84	39.20	18.18	13.64	0.00	21.07	35.45	13.14	34.71	60.75	30.18	0.00	0.00	0.00
CLIP RN50x64	53.77	82.41	49.25	4.55	13.64	0.00	20.08	36.28	13.97	39.64	70.61	36.29	100.00	100.00	100.00
CLIP RN101	48.74	70.35	39.20	18.18	63.64	18.18	37.60	43.97	24.30	32.35	55.23	27.02	0.00	100.00	0.00
CLIP ViT	53.27	71.36	46.73	18.18	77.27	18.18	20.91	38.26	15.62	45.17	69.03	40.43	100.00	0.00	0.00
CLIP ViT-B/16	45.73	76.88	40.70	27.27	77.27	22.73	28.84	66.94	24.05	41.03	62.92	35.90	0.00	0.00	0.00
CLIP ViT L/14	53.77	75.88	47.74	31.82	72.73	27.27	18.43	16.28	11.82	41.62	69.43	37.67	100.00	0.00	0.00
CLIP CNN	57.29	76.38	49.75	31.82	68.18	31.82	25.21	47.93	19.01	37.67	56.80	30.77	0.00	100.00	0.00
CLIP Patched (T)	41.71	79.40	37.69	31.82	68.18	31.82	37.27	61.98	31.74	46.94	54.83	36.09	100.00	100.00	100.00
CLIP ViT/B-32	40.20	74.37	35.68	18.18	13.64	4.55	23.22	58.02	20.08	39.05	60.75	33.93	100.00	100.00	100.00
CLIP Patched (V)	44.72	76.38	39.70	40.91	90.91	40.91	31.65	60.74	27.19	53.06	60.16	43.20	100.00	100.00	100.00
CLIP Patched (VT)	48.74	72.86	42.21	50.00	81.82	40.91	34.55	61.57	29.67	52.47	57.00	42.60	100.00	0.00	0.00
FLAVA	73.87	47.24	43.22	86.36	81.82	68.18	39.67	24.88	10.33	65.09	42.60	37.67	100.00	100.00	100.00
CLIP RN50x16	52.76	83.92	49.75	9.09	13.64	9.09	21.98	42.98	14.71	40.83	62.72	35.11	100.00	100.00	100.00
BridgeTower	68.34	80.40	65.33	95.45	90.91	90.91	32.23	52.07	24.79	57.79	64.89	49.90	100.00	100.00	100.00
ViLT	38.19	53.27	28.64	90.91	95.45	86.36	4.79	18.43	1.57	57.59	67.46	51.28	100.00	100.00	100.00
"""
_TABLE6B = """\
CLIP RN50	100.00	100.00	100.00	3.69	23.88	2.56	21.21	47.95	17.11	0.00	20.69	0.00	0.00	0.00	0.00
CLIP RN50x64	100.00	100.00	100.00	9.46	22.92	6.25	18.83	33.40	12.37	3.45	20.69	0.00	0.00	0.00	0.00
CLIP RN101	100.00	100.00	100.00	9.13	27.88	5.45	20.96	37.63	12.72	3.45	31.03	3.45	50.00	0.00	0.00
CLIP ViT	100.00	100.00	100.00	10.26	38.94	6.41	24.13	42.98	18.85	6.90	6.90	0.00	50.00	0.00	0.00
CLIP ViT-B/16	0.00	100.00	0.00	8.01	21.63	3.21	15.69	28.33	7.73	6.90	17.24	0.00	100.00	0.00	0.00
CLIP ViT L/14	0.00	100.00	0.00	13.46	37.02	8.49	24.84	45.11	19.34	3.45	6.90	0.00	50.00	0.00	0.00
CLIP CNN	100.00	100.00	100.00	12.82	39.58	8.81	17.51	33.43	10.62	0.00	6.90	0.00	0.00	0.00	0.00
CLIP Patched (T)	0.00	0.00	0.00	6.25	22.92	3.04	20.40	43.08	16.09	3.45	10.34	0.00	50.00	50.00	0.00
CLIP ViT/B-32	0.00	0.00	0.00	7.85	26.60	4.97	13.63	34.47	7.05	0.00	3.45	0.00	50.00	0.00	0.00
CLIP Patched (V)	0.00	100.00	0.00	10.10	28.04	6.41	16.29	44.60	10.42	0.00	6.90	0.00	50.00	50.00	50.00
CLIP Patched (VT)	0.00	0.00	0.00	7.37	23.24	5.45	25.14	45.67	17.03	3.45	27.59	3.45	0.00	50.00	0.00
FLAVA	0.00	0.00	0.00	34.62	3.37	2.72	48.66	16.09	12.60	31.03	3.45	3.45	0.00	0.00	0.00
CLIP RN50x16	100.00	100.00	100.00	7.85	19.87	4.49	22.93	54.13	18.88	3.45	20.69	0.00	0.00	0.00	0.00
BridgeTower	100.00	100.00	100.00	7.53	32.53	6.41	25.54	49.06	20.40	0.00	17.24	0.00	0.00	100.00	0.00
ViLT	0.00	100.00	0.00	5.13	20.99	2.56	17.44	45.36	14.75	6.90	27.59	3.45	0.00	0.00	0.00
"""
_TABLE8_FILLERS = """\
black	74.24	73.57	75.28	1.08	1.02	1.16	0.81	-0.80	0.01
noise	74.37	71.38	71.76	1.00	0.99	1.18	2.08	-0.62	1.46
gray	74.38	73.47	75.96	1.09	1.02	1.19	0.95	-0.98	-0.03
scene	74.34	71.36	71.71	1.01	0.99	1.25	1.81	-0.69	1.12
"""
_TABLE8_MODELS = """\
CLIP RN50	65.05	65.47	60.30	1.00	1.02	0.99	-0.05	4.86	4.82
CLIP ViT/B-32	68.77	67.49	61.10	0.95	0.99	0.98	0.40	5.12	5.52
CLIP CNN	63.23	63.56	63.46	1.12	1.02	1.10	0.46	2.64	3.11
CLIP RN101	64.56	65.00	63.80	1.09	1.02	1.08	0.21	2.79	3.00
CLIP ViT-B/16	69.97	68.54	65.15	0.99	0.98	1.02	0.36	2.92	3.28
FLAVA	72.05	74.47	66.75	0.98	1.05	0.94	0.00	0.01	0.01
CLIP ViT L/14	70.98	69.38	68.99	1.04	0.98	1.08	0.94	1.17	2.12
CLIP ViT	71.05	70.94	71.50	1.08	1.01	1.08	0.70	0.52	1.22
ViLT	83.49	71.38	83.26	1.00	0.87	1.62	6.68	-6.61	0.08
BridgeTower	81.85	81.88	83.40	1.05	1.06	1.23	-0.79	-0.42	-1.22
"""
_TABLE9_FILLERS = """\
noise	54.26	53.58	63.07	1.17	0.99	1.18
scene	49.85	53.41	58.15	1.17	1.08	1.09
black	56.80	55.74	68.02	1.21	0.98	1.23
gray	57.24	55.28	68.40	1.21	0.97	1.25
"""
_TABLE9_MODELS = """\
BridgeTower	77.36	76.14	77.70	1.01	0.98	1.02
FLAVA	56.33	59.16	58.32	1.03	1.06	0.99
CLIP ViT/B-32	46.19	50.50	54.20	1.17	1.10	1.07
CLIP ViT-B/16	51.12	51.31	60.30	1.18	1.01	1.17
CLIP ViT L/14	56.27	54.18	67.16	1.19	0.96	1.24
CLIP RN50	45.79	48.64	55.68	1.21	1.07	1.14
CLIP ViT	59.31	56.08	71.76	1.21	0.95	1.28
CLIP RN101	46.48	47.92	57.32	1.23	1.03	1.20
CLIP RN50x16	53.88	50.92	66.18	1.23	0.95	1.30
CLIP RN50x64	56.86	53.70	70.04	1.23	0.95	1.30
CLIP CNN	50.08	49.66	62.18	1.24	1.00	1.25
ViLT	54.73	55.82	72.09	1.33	1.02	1.30
"""
_TABLE2 = """\
ViLT	–	76.00	79.02	69.00
BridgeTower	–	85.00	81.86	82.20
FLAVA	56.83	47.12	67.45	68.29
CLIP ViT B32	63.60	51.93	69.67	53.52
CLIP Patched (T)	57.85	67.85	71.94	71.14
CLIP Patched (V)	61.45	54.66	73.65	61.40
CLIP Patched (VT)	54.61	64.27	73.65	71.20
"""
_TABLE10 = """\
v	0.2	31.52	54.67	53.17	61.45	87.73
v	0.3	32.58	55.61	53.97	58.25	85.69
v	0.4	33.29	56.40	54.89	54.19	82.72
v	0.5	34.15	57.31	55.60	49.36	78.87
v	0.6	34.43	57.62	55.94	44.04	73.96
vt	0.2	42.19	64.30	62.45	54.62	83.05
t	0.2	47.18	67.86	66.62	57.42	85.14
vt	0.3	49.58	69.83	68.00	44.92	73.93
vt	0.4	50.11	70.14	68.78	34.95	63.07
vt	0.5	51.57	71.12	70.35	27.00	52.54
vt	0.6	53.38	72.62	71.77	20.98	43.88
t	0.3	56.31	74.56	73.55	50.69	79.35
t	0.4	62.51	78.57	78.29	44.39	72.39
t	0.5	70.36	83.55	83.21	38.66	66.23
t	0.6	74.63	86.26	85.62	33.54	60.21
"""


def _parse(block: str, columns: list[str], index: str) -> pd.DataFrame:
    rows = [line.split("\t") for line in block.strip("\n").split("\n")]
    table = pd.DataFrame([r[1:] for r in rows], columns=columns,
                         index=pd.Index([r[0] for r in rows], name=index))
    return table.apply(pd.to_numeric, errors="coerce")


def paper_table(name: str) -> pd.DataFrame:
    """A table of Schiappa et al. 2023 as printed (percentages; γ as ratios): ``"3"`` Probe-R, ``"4"`` Probe-C,
    ``"6"`` Probe-C per attribute category (long: model x category), ``"8-fillers"``, ``"8-models"``,
    ``"9-fillers"``, ``"9-models"`` Probe-B, ``"2"`` fine-tuning, ``"10"`` the alpha sweep."""
    c = _PAPER_COLUMNS
    if name == "3":
        return _parse(_TABLE3, c["table3"], "paper model")
    if name == "4":
        return _parse(_TABLE4, c["table4"], "paper model")
    if name == "6":
        wide_ = _parse(_TABLE6A, c["table6a"], "paper model").join(_parse(_TABLE6B, c["table6b"], "paper model"))
        long = wide_.stack().rename("value").reset_index()
        long[["category", "metric"]] = long.pop("level_1").str.rsplit(" ", n=1, expand=True)
        return long.pivot_table(index=["paper model", "category"], columns="metric", values="value",
                                sort=False)[["image", "text", "group"]]
    blocks = {"8-fillers": (_TABLE8_FILLERS, "table8", "filler"), "8-models": (_TABLE8_MODELS, "table8", "paper model"),
              "9-fillers": (_TABLE9_FILLERS, "table9", "filler"), "9-models": (_TABLE9_MODELS, "table9", "paper model"),
              "2": (_TABLE2, "table2", "paper model"), "10": (_TABLE10, "table10", "encoders")}
    if name not in blocks:
        raise ValueError(f"no paper table {name!r}; valid: 3, 4, 6, {', '.join(blocks)}")
    block, cols, index = blocks[name]
    return _parse(block, c[cols], index)


#: item counts the chapter uses on the toy world when ``limit`` is None (sized for the 90 s budget)
TOY_SIZES = {"probe-r": 240, "probe-c": 160, "probe-b": 120, "classify": 120}


def chapter_limit(dataset: str, probe: str, limit: int | None) -> int | None:
    """``limit`` if given; else the toy world's chapter size, or everything for the paper's release."""
    if limit is not None:
        return int(limit)
    return TOY_SIZES[probe] if dataset == "toy" else None
