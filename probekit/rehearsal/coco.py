"""The rehearsal's made-up Probe-R/C/B release, COCO and V-COCO annotations, Visual Genome and COCO photos, a
RelComp-style training file and an ImageNet validation set (see :mod:`probekit.rehearsal.data`)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from probekit import checksums
from probekit.data import conceptual, vcoco
from probekit.rehearsal.data import CLASSES, COCO_SIZE, OBJECTS, PEOPLE, VERBS, Site, jpeg

ATTRIBUTES = ["small", "large", "red", "blue", "wooden", "shiny"]


def _polygon(x, y, w, h):
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def write_probe_rcb(site: Site, release: Path, n: int = 12) -> list[str]:
    """The release's annotation files under ``release`` (``data/probe-rcb/annotations``; scene pictures beside
    it), COCO's ``instances_val2014.json`` (in ``data/coco/annotations``), their Visual Genome
    photos (odd ids only in VG_100K_2, every 6th missing) and COCO photos served.  Returns the prompts."""
    release.mkdir(parents=True, exist_ok=True)
    vg_ids: list[int] = []
    coco_ids: list[int] = []
    texts: list[str] = []
    probe_r = {}
    for i in range(n):
        s, v, o, other = PEOPLE[i % 5], list(VERBS.values())[i % 8], OBJECTS[i % 8], OBJECTS[(i + 3) % 8]
        anchor = 2_300_000 + 10 * i
        entry: dict[str, Any]
        entry = {"positive_image_ids": [anchor + 1, anchor + 2], "negative_image_ids": [anchor + 3],
                 "positive_prompt": f"A photo of a {s} {v} a {o}.", "negative_prompt": f"A photo of a {other} {v} a {o}.",
                 "negative_object": other, "positive_object": s,
                 "negative_predicate_prompt": f"A photo of a {s} {list(VERBS.values())[(i + 1) % 8]} a {o}."}
        probe_r[str(anchor)] = entry
        vg_ids += [anchor, anchor + 1, anchor + 2, anchor + 3]
        texts += [entry[k] for k in ("positive_prompt", "negative_prompt", "negative_predicate_prompt")]
        texts.append(conceptual.subject_prompt(s))
    comp: list[dict[str, Any]] = []
    obj: list[dict[str, Any]] = []
    for i in range(n):
        a, b, thing = ATTRIBUTES[i % 6], ATTRIBUTES[(i + 1) % 6], OBJECTS[i % 8]
        ids = [100 + 2 * i, 101 + 2 * i]
        comp.append({"img1_prompt": f"A photo of a {a} {thing}.", "img1_id": str(ids[0]), "img1_composition": a,
                     "img1_object": thing, "img2_id": ids[1], "img2_prompt": f"A photo of a {b} {thing}.",
                     "img2_composition": b, "img2_object": thing})
        other = OBJECTS[(i + 2) % 8]
        obj.append({**comp[-1], "img2_id": ids[1] + 1000, "img2_prompt": f"A photo of a {a} {other}.",
                    "img2_composition": a, "img2_object": other})
        coco_ids += [ids[0], ids[1], ids[1] + 1000]
        texts += [comp[-1]["img1_prompt"], comp[-1]["img2_prompt"], obj[-1]["img2_prompt"]]
    prompts = {c: f"a photo of a {c}." for c in CLASSES}
    texts += list(prompts.values())
    background = [{"image": conceptual.coco_stem(5000 + i) + ".jpg", "image_id": 5000 + i,
                   "annotations": {list(CLASSES)[i % 3]: [{"segmentation": _polygon(5, 5, 20, 16), "iscrowd": 0,
                                                           "bbox": [5, 5, 20, 16]}]}} for i in range(n)]
    objects = [{"image_id": 6000 + i, "object": "person", "other_objects": ["dog"],
                "path": f"person_{conceptual.coco_stem(6000 + i)}.jpg"} for i in range(n)]
    coco_ids += [5000 + i for i in range(n)] + [6000 + i for i in range(n)]
    for name, data in (("relation_eval_subject.json", probe_r), ("data_compositional_switch.json", comp),
                       ("data_object_switch.json", obj), ("background_context_dataset.json", background),
                       ("object_context_dataset.json", objects)):
        (release / name).write_text(json.dumps(data))
    (release / "prompt_classes.csv").write_text(pd.DataFrame({"class": list(prompts), "prompt": list(prompts.values())})
                                                .to_csv(index=False))
    instances = {"images": [{"id": 6000 + i, "width": COCO_SIZE[0], "height": COCO_SIZE[1],
                             "file_name": conceptual.coco_stem(6000 + i) + ".jpg"} for i in range(n)],
                 "categories": [{"id": k, "name": c} for c, k in CLASSES.items()],
                 "annotations": [a for i in range(n) for a in (
                     {"id": 2 * i + 1, "image_id": 6000 + i, "category_id": 1, "segmentation": _polygon(2, 2, 16, 30),
                      "area": 480, "bbox": [2, 2, 16, 30], "iscrowd": 0},
                     {"id": 2 * i + 2, "image_id": 6000 + i, "category_id": 18, "segmentation": _polygon(30, 10, 20, 20),
                      "area": 400, "bbox": [30, 10, 20, 20], "iscrowd": 0})]}
    annotations = release.parents[1] / "coco" / "annotations"
    annotations.mkdir(parents=True, exist_ok=True)
    (annotations / "instances_val2014.json").write_text(json.dumps(instances))
    (release.parent / "scenes").mkdir(exist_ok=True)
    for name in ("beach", "street", "kitchen"):                # the "scene" filler's backgrounds
        (release.parent / "scenes" / f"{name}.jpg").write_bytes(jpeg(site.rng, COCO_SIZE))
    for k, i in enumerate(vg_ids):
        if k % 6 != 5:
            site.photo(conceptual.VG_URLS[i % 2].format(id=i))
    for k, i in enumerate(coco_ids):
        if k % 9 != 8:
            site.photo(conceptual.COCO_URL.format(id=i), COCO_SIZE)
    return texts


def write_vcoco(site: Site, data: Path, n: int = 12) -> list[str]:
    """V-COCO's vcoco_test.json, served with its photos, and COCO's annotation zip: its captions, and the person
    boxes added to the ``instances_val2014.json`` already under ``data/coco/annotations`` (written by
    :func:`write_probe_rcb`; the copy there and the zip's are one file, as a user's unpacked zip is)."""
    actions: dict[str, dict[str, Any]]
    actions = {v: {"action_name": v, "role_name": ["agent"], "image_id": [], "ann_id": [], "label": [],
                   "role_object_id": [], "include": [[]]} for v in list(VERBS)[:4]}
    images: list[dict[str, Any]] = []
    captions: list[dict[str, Any]] = []
    boxes: list[Any] = []
    for i in range(n):
        image_id, verb = 7000 + i, list(VERBS)[i % 4]
        for entry in actions.values():
            entry["image_id"].append(image_id)
            entry["ann_id"].append(70_000 + i)
            entry["label"].append(int(entry["action_name"] == verb))
            entry["role_object_id"].append([70_000 + i])
        images.append({"id": image_id, "width": COCO_SIZE[0], "height": COCO_SIZE[1],
                       "file_name": conceptual.coco_stem(image_id) + ".jpg"})
        captions += [{"id": 2 * i, "image_id": image_id, "caption": f"A {OBJECTS[i % 8]} in a park."},
                     {"id": 2 * i + 1, "image_id": image_id,
                      "caption": f"A {PEOPLE[i % 5]} {VERBS[verb]} a {OBJECTS[i % 8]}." if i % 5 else "A quiet park."}]
        boxes.append({"id": 70_000 + i, "image_id": image_id, "bbox": [4, 4, 30, 40], "category_id": 1,
                      "segmentation": _polygon(4, 4, 30, 40), "area": 1200, "iscrowd": 0})
        site.photo(conceptual.COCO_URL.format(id=image_id), COCO_SIZE)
    site.put(vcoco.VCOCO_URL.format(split=vcoco.SPLIT), json.dumps(list(actions.values())).encode())
    path = data / "coco" / "annotations" / "instances_val2014.json"
    instances = json.loads(path.read_text())
    instances["images"] += images
    instances["annotations"] += boxes
    path.write_text(json.dumps(instances))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("annotations/captions_val2014.json", json.dumps({"images": images, "annotations": captions}))
        zf.write(path, "annotations/instances_val2014.json")
    site.put(checksums.COCO_ANNOTATIONS_URL, archive.getvalue())
    return [c["caption"] for c in captions]


def write_imagenet(site: Site, root: Path, per_class: int = 3) -> list[str]:
    """An ImageNet validation set as torchvision's ``ImageNet(root, split="val")`` reads it (``meta.bin`` and
    ``val/<wnid>/``), one class per object.  Returns its prompts."""
    wnids = {f"n{1000 + i:08d}": (thing,) for i, thing in enumerate(OBJECTS)}
    val: list[Any] = []
    for wnid in wnids:
        (root / "val" / wnid).mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            (root / "val" / wnid / f"ILSVRC2012_val_{len(val) + 1:08d}.JPEG").write_bytes(jpeg(site.rng))
            val.append(wnid)
    torch.save((wnids, val), root / "meta.bin")
    return [f"a photo of a {thing}." for thing in OBJECTS]


def write_relcomp(site: Site, path: Path, n: int = 48) -> list[str]:
    """A RelComp-style training file (image, caption, negative_caption) over local photos."""
    images = path.parent / "relcomp-images"
    images.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        s, v, o = PEOPLE[i % 5], list(VERBS.values())[i % 8], OBJECTS[(i * 5) % 8]
        image = images / f"{i}.jpg"
        image.write_bytes(jpeg(site.rng))
        rows.append({"image": str(image), "caption": f"a {s} {v} a {o}", "negative_caption": f"a {o} {v} a {s}"})
    pd.DataFrame(rows).to_csv(path, index=False)
    return [r[k] for r in rows for k in ("caption", "negative_caption")]
