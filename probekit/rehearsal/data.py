"""Paper mode's datasets made up in their real formats, for the rehearsal (nothing third-party is copied).

:func:`write_data` writes, under ``served/`` laid out by host (``served/<host>/<path>``, as
:func:`probekit.environ.mirrored` asks a mirror for a URL), every file paper mode downloads: the SVO-Probes CSV and
its images (some dead links, some redirected to a "photo unavailable" placeholder, one not an image), the
predicate–noun ``eval_set.json``, the authors' released result CSVs and the Open Images photos, the Visual Genome
and COCO photos of Probe-R/C/B (Visual Genome's second folder as the fallback), V-COCO's annotations and COCO's
annotation zip; and, under ``data/``, what paper mode expects the user to place there by hand: the Probe-R/C/B
annotations and COCO's ``instances_val2014.json``, a RelComp-style training file and an ImageNet validation set in
torchvision's layout.  Everything is drawn from a small world of people, verbs and objects with one seed.
"""

from __future__ import annotations

import io
import json
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from probekit.data import openimages, prednoun, prednoun_released, svo

PEOPLE = ["man", "woman", "girl", "boy", "child"]
VERBS = {"ride": "riding", "hold": "holding", "feed": "feeding", "kick": "kicking", "carry": "carrying",
         "push": "pushing", "throw": "throwing", "walk": "walking"}
OBJECTS = ["horse", "ball", "dog", "bike", "bag", "cart", "frisbee", "cat"]
CLASSES = {"dog": 18, "person": 1, "cat": 17}            # Probe-B's classes with their COCO category ids
PLACEHOLDER = "https://s.yimg.com/pw/images/en-us/photo_unavailable.png"
COCO_SIZE = (64, 48)


def served_path(url: str) -> str:
    """Where a URL's copy lies under ``served/``: ``<host>/<path>``."""
    parts = urllib.parse.urlsplit(url)
    return parts.netloc + parts.path


class Site:
    """The files of ``served/`` and the redirects the rehearsal's server answers."""

    def __init__(self, root: Path, seed: int = 0):
        self.redirects: dict[str, str] = {}
        self.root, self.rng = Path(root), np.random.default_rng(seed)

    def put(self, url: str, data: bytes) -> None:
        path = self.root / served_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def photo(self, url: str, size=(56, 40)) -> None:
        self.put(url, jpeg(self.rng, size))

    def placeholder(self, url: str) -> None:
        """``url`` answers 302 to the host's "photo unavailable" image."""
        self.redirects["/" + served_path(url)] = "/" + served_path(PLACEHOLDER)
        self.photo(PLACEHOLDER)


def jpeg(rng, size=(56, 40)) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)).save(buf, format="JPEG")
    return buf.getvalue()


def write_svo(site: Site, n: int = 24) -> list[str]:
    """svo_probes.csv: ``n`` sentences, each with a subject, a verb and an object negative; every 7th image is a
    dead link, every 11th goes to the placeholder, one is not an image.  Returns the sentences."""
    rows: list[dict[str, Any]] = []
    rng, image_id = site.rng, 1000
    for i in range(n):
        s, v, o = PEOPLE[i % 5], list(VERBS)[i % 8], OBJECTS[(i * 3) % 8]
        pos_id, sentence = image_id, f"A {s} {VERBS[v]} a {o}."
        for kind, (ns, nv, no) in (("subj", (PEOPLE[(i + 1) % 5], v, o)), ("verb", (s, list(VERBS)[(i + 3) % 8], o)),
                                   ("obj", (s, v, OBJECTS[(i * 3 + 1) % 8]))):
            image_id += 1
            rows.append(dict(sentence=sentence, pos_triplet=f"{s},{v},{o}", neg_triplet=f"{ns},{nv},{no}",
                             pos_image_id=pos_id, neg_image_id=image_id, pos_url=_flickr(pos_id),
                             neg_url=_flickr(image_id), subj_neg=kind == "subj", verb_neg=kind == "verb",
                             obj_neg=kind == "obj"))
        image_id += 1
    for k in range(1000, image_id):
        if k % 11 == 5:
            site.placeholder(_flickr(k))
        elif k == 1013:
            site.put(_flickr(k), b"<html>moved</html>")
        elif k % 7:
            site.photo(_flickr(k), (int(rng.integers(40, 90)), int(rng.integers(30, 70))))
    site.put(svo.SVO_CSV_URL, pd.DataFrame(rows).to_csv().encode())   # with the leading index column
    return [r["sentence"] for r in rows]


def _flickr(image_id: int) -> str:
    return f"https://farm{image_id % 9 + 1}.staticflickr.com/{image_id % 97}/{image_id}_5f2c1e.jpg"


def prednoun_entry(i: int, pos: str, target: str, distractor: str, word_t: str, word_d: str, subject: str,
                   obj: str, split: str = "test", boxes=((0.0, 0.0, 0.5, 1.0), (0.5, 0.0, 0.5, 1.0))) -> dict:
    """One entry of the predicate–noun ``eval_set.json`` (its schema, made-up values); ``alt`` sentences drop
    the article and the copula; ``boxes``: the target's and the distractor's (x, y, w, h) as fractions."""
    def alt(s):
        return s.replace("a ", "the ", 1).replace(" is ", " ")
    rel_t = {"id": f"t{i}", "Label1": subject, "label": "is", "Label2": obj, "bounding_box": list(boxes[0])}
    rel_d = {"id": f"d{i}", "Label1": "Girl", "label": "is", "Label2": word_d, "bounding_box": list(boxes[1])}
    return {"id": i, "img_filename": f"{i:016x}.jpg", "sentence_target": target, "sentence_distractor": distractor,
            "sentence_target_alt": alt(target), "sentence_distractor_alt": alt(distractor),
            "relationship_target": rel_t, "relationship_distractor": rel_d, "subject": subject, "predicate": "is",
            "object": obj, "word_target": word_t, "word_distractor": word_d, "pos": pos, "open_images_split": split}


def write_prednoun(site: Site, folders, n_pairs: int = 16) -> list[str]:
    """eval_set.json (noun and predicate swaps, in pairs), its Open Images photos (every 7th missing) and each
    released folder's result CSVs.  Returns the sentences."""
    entries: list[dict[str, Any]] = []
    for k in range(n_pairs):
        a, b = (PEOPLE[k % 5], PEOPLE[(k + 2) % 5]) if k % 2 else (list(VERBS.values())[k % 8], "sitting")
        for first, second in ((a, b), (b, a)):
            i, split = len(entries), ("test", "validation")[k % 2]
            x, w = site.rng.uniform(0, 0.4, 2), site.rng.uniform(0.2, 0.6, 2)
            boxes = [(float(x[j]), 0.1 * j, float(w[j]), 0.9 - 0.1 * j) for j in (0, 1)]
            if k % 2:
                entries.append(prednoun_entry(i, "subject", f"a {first} is sitting", f"a {second} is sitting",
                                              first.title(), second.title(), first.title(), "Sit", split, boxes))
            else:
                entries.append(prednoun_entry(i, "object", f"a man is {first}", f"a man is {second}",
                                              first.title(), second.title(), "Man", first.title(), split, boxes))
    site.put(prednoun.EVAL_SET_URL, json.dumps(entries).encode())
    for e in entries:
        if int(e["id"]) % 7 != 6:
            site.photo(openimages.image_url(f"{e['id']:016x}", e["open_images_split"]), (80, 60))
    for folder in folders:
        for condition, template in prednoun_released.runs(folder):
            right = site.rng.random(len(entries)) < 0.6
            table = pd.DataFrame([{**e, "result": bool(r), "prob_target_match": 0.8 if r else 0.3,
                                   "prob_distractor_match": 0.6, "cropped_image": condition == "cropped",
                                   "model": folder} for e, r in zip(entries, right)])
            name = prednoun_released.file_name(condition, template)
            site.put(f"{prednoun_released.BASE_URL}/{folder}/{name}", table.to_csv(index=False).encode())
    return [e[k] for e in entries for k in ("sentence_target", "sentence_distractor", "sentence_target_alt",
                                               "sentence_distractor_alt")]
