"""Loader for the authors' release of Probe-B (Schiappa et al. 2023): images, class prompts and object masks.

Files (under ``data_dir/probe-rcb/``, found by name, see :mod:`probekit.data.conceptual`):
``background_context_dataset.json`` (per COCO image: ``image_id`` and ``annotations``, a dict from class name to
COCO instance annotations with ``segmentation``), ``object_context_dataset.json`` (per single-object item:
``image_id``, ``object``, ``other_objects``; its masks come from COCO's ``instances_val2014.json``, looked for
under ``data_dir/coco/``), ``prompt_classes.csv`` (``class``, ``prompt``), and optionally a ``scenes/`` folder of
background pictures for the "scene" filler.  Masks are decoded with ``pycocotools`` and written as binary PNGs
under ``data_dir/derived/probe-b/masks/``, named by the item and a hash of the annotation they come from (an
edited annotation gets a new file).  An item whose mask is empty (a degenerate polygon, a target category with
no instance in COCO) is left out and named in ``items.attrs["empty_masks"]``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from probekit.checksums import COCO_ANNOTATIONS_URL
from probekit.data.conceptual import AnnotationError, check_split, coco_images, find_file, \
    image_id_field, need_field, read_json, release_dir, seeded_order
from probekit.files import save_png


def read_prompt_classes(path: Path) -> dict[str, str]:
    try:
        table = pd.read_csv(path, encoding="utf-8", dtype=str, keep_default_na=False)
    except UnicodeDecodeError as err:
        raise AnnotationError(f"{path}: not UTF-8 text (byte {err.start}); re-download the file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise AnnotationError(f"{path}: not a readable CSV of class,prompt rows ({err})") from None
    missing = [c for c in ("class", "prompt") if c not in table.columns]
    if missing:
        raise AnnotationError(f"{path}: no column(s) {missing} (columns: {list(table.columns)})")
    return dict(zip(table["class"].astype(str), table["prompt"].astype(str)))


def parse_background(path: Path, classes: dict[str, str]) -> list[dict]:
    data = read_json(path)
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a list of images, got a {type(data).__name__}")
    out = []
    for k, entry in enumerate(data):
        image_id = image_id_field(entry, k, "image_id", path)
        anns = need_field(entry, k, "annotations", dict, path)
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
    data = read_json(path)
    if not isinstance(data, list):
        raise AnnotationError(f"{path}: expected a list of items, got a {type(data).__name__}")
    out = []
    for k, entry in enumerate(data):
        image_id = image_id_field(entry, k, "image_id", path)
        target = need_field(entry, k, "object", str, path)
        others = need_field(entry, k, "other_objects", list, path)
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


def mask_file(segmentations, height: int, width: int, mask_dir: Path, name: str) -> str | None:
    """The binary PNG of the union of ``segmentations`` (written once, named ``<name>-<hash of the annotation and
    size>.png``); None when the mask is empty."""
    keep = _masks_from_segmentations(segmentations, height, width)
    if not keep.any():
        return None
    key = hashlib.sha256(json.dumps([segmentations, height, width], default=str).encode()).hexdigest()[:12]
    return _write_mask(keep, Path(mask_dir) / f"{name}-{key}.png")


def _write_mask(keep: np.ndarray, path: Path) -> str:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        save_png(Image.fromarray((keep * 255).astype(np.uint8)), path)
    return str(path)


def load_probe_b(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    from PIL import Image

    check_split(split, "probe-b")
    prompts = read_prompt_classes(find_file(data_dir, "prompt_classes.csv"))
    records = parse_background(find_file(data_dir, "background_context_dataset.json"), prompts)
    object_file = find_file(data_dir, "object_context_dataset.json", required=False)
    if object_file is not None:
        records += parse_object_context(object_file, prompts)
    if limit is not None:
        records = [records[i] for i in np.sort(seeded_order(len(records), seed)[:limit])]
    paths = coco_images(data_dir, [r["image_id"] for r in records])
    coco = _coco_instances(data_dir) if any(r["single_object"] for r in records) else None
    names = {c["id"]: c["name"] for c in coco.loadCats(coco.getCatIds())} if coco is not None else {}
    mask_dir = Path(data_dir) / "derived" / "probe-b" / "masks"
    rows, empty = [], []
    for rec in records:
        image = paths[rec["image_id"]]
        mask = objects_mask = None
        if image is not None:
            width, height = Image.open(image).size
            if rec["single_object"]:
                assert coco is not None  # loaded above for the records with a single object
                anns = coco.loadAnns(coco.getAnnIds(imgIds=[rec["image_id"]], iscrowd=None))
                target = [a["segmentation"] for a in anns if names[a["category_id"]] == rec["target"]]
                mask = mask_file(target, height, width, mask_dir, rec["item_id"])
                objects_mask = mask_file([a["segmentation"] for a in anns], height, width, mask_dir,
                                         f"b-{rec['image_id']}-all")
            else:
                mask = objects_mask = mask_file(rec["segmentations"], height, width, mask_dir, rec["item_id"])
            if mask is None:
                empty.append(rec["item_id"])
                continue
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
    items.attrs["empty_masks"] = empty
    return items


def with_toy_scenes(items: pd.DataFrame) -> pd.DataFrame:
    """The toy world's Probe-B items with their scene pictures by name (``attrs["scenes"]``) and, per item, the
    ``related_scenes`` the "scene" filler must not draw: its own background and its objects' typical scenes."""
    from probekit.toyworld.scene import Scene, image_path
    from probekit.toyworld.vocab import SCENES, TYPICAL_SCENE

    out = items.copy()
    out.attrs.update(items.attrs)
    out.attrs["scenes"] = {n: str(image_path(Scene(n), Path(items.attrs["scene_dir"]))) for n in SCENES}
    out["related_scenes"] = [sorted({own, *(TYPICAL_SCENE[o] for o in labels)})
                             for own, labels in zip(out["scene"], out["labels"])]
    return out


def _coco_instances(data_dir):
    hits = sorted((Path(data_dir) / "coco").rglob("instances_val2014.json"))
    if not hits:
        raise FileNotFoundError(f"instances_val2014.json not found under {Path(data_dir) / 'coco'}: the "
                                f"single-object split of Probe-B needs COCO's masks; download "
                                f"{COCO_ANNOTATIONS_URL} and unpack it there")
    from pycocotools.coco import COCO

    return COCO(str(hits[0]))
