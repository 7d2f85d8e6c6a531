"""The predicate–noun evaluation set of Nikolaus et al. (2022) and its conditions: full image, cropped to the target.

``eval_set.json`` (the authors' release, ``data/sentence-semantics/`` of their repository) is a list of triplets
(image, target sentence, distractor sentence); entries ``2k`` and ``2k+1`` are an example and its counter-example
(sentences swapped, images differ).  :func:`load_eval_set` validates every entry, refusing a malformed file with
the index and field at fault, and returns the ``prednoun`` item table of ``probekit.datasets.SCHEMAS``.  Photos come
from Open Images (:mod:`probekit.data.openimages`).

:func:`crop_to_targets` writes the topline condition's crops (the image reduced to the target's box) under
``<data_dir>/derived/crop/`` and :func:`score_triplets` asks a scorer for s(I, target) and s(I, distractor).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Sequence

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


def _fail(source: str, index: int | None, field: str | None, problem: str) -> None:
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


def _eval_set_path(data_dir: Path) -> Path:
    for candidate in (data_dir / EVAL_SET_NAME, data_dir / "prednoun" / EVAL_SET_NAME):
        if candidate.is_file():
            return candidate
    from probekit.data.download import fetch_file

    return fetch_file(EVAL_SET_URL, data_dir / "prednoun" / EVAL_SET_NAME, what=EVAL_SET_NAME)


def read_eval_set(path: str | os.PathLike) -> list[dict]:
    """Parse and validate one ``eval_set.json``."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise EvalSetError(f"{path}: not valid JSON ({err})") from err
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


def items_from_entries(entries: Sequence[dict], positions: Sequence[int] | None = None) -> pd.DataFrame:
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
    entries = read_eval_set(_eval_set_path(data_dir))
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
    paths = []
    for image, box in zip(items[image_column], items[box_column]):
        if image is None or (isinstance(image, float) and math.isnan(image)):
            paths.append(None)
            continue
        try:
            paths.append(str(crop_image(image, box, data_dir)))
        except (OSError, ValueError):
            paths.append(None)
    return pd.Series(paths, index=items.index, name="crop", dtype=object)


# --------------------------------------------------------------------------------------------- scoring


def score_triplets(scorer, items: pd.DataFrame, images: Sequence | None = None,
                   template: str = "default") -> pd.DataFrame:
    """s(I, target) and s(I, distractor) for every triplet, as the paper computes them.

    ITM models give each sentence's match probability; dual encoders a softmax over the two sentences for the
    one image (so s(I, S1) = 1 - s(I, S2)); both through ``scorer.choose_text``.  ``images`` overrides the image
    column (e.g. crops); rows without an image get NaN.  ``template="alt"`` uses the alternative sentences
    ("the man wears glasses").
    """
    if template not in ("default", "alt"):
        raise ValueError(f"unknown template {template!r}; valid: 'default', 'alt'")
    suffix = "_alt" if template == "alt" else ""
    images = list(items["image"] if images is None else images)
    candidates = [[t, d] for t, d in zip(items[f"sentence_target{suffix}"], items[f"sentence_distractor{suffix}"])]
    present = [i for i, img in enumerate(images) if img is not None and not (isinstance(img, float)
                                                                               and math.isnan(img))]
    scores = np.full((len(images), 2), np.nan)
    if present:
        scores[present] = np.asarray(scorer.choose_text([images[i] for i in present],
                                                        [candidates[i] for i in present]), dtype=float)
    return pd.DataFrame({"item_id": items["item_id"].to_numpy(), "s_target": scores[:, 0],
                         "s_distractor": scores[:, 1]}, index=items.index)



def _piece(token: str) -> str:
    return token.strip().removeprefix("##").lower()


def sentence_perplexities(scorer, sentences: Sequence[str], k: int = 1000) -> np.ndarray:
    """Pseudo-perplexity of each sentence under a masked LM (Salazar et al. 2020), through ``scorer.fill_mask``.

    Each word is masked in turn (as many masks as it has word pieces); the probability the model gives each
    true piece at its masked position enters the pseudo-log-likelihood, and the pseudo-perplexity is
    ``exp(-PLL / number of pieces)``.  ``fill_mask`` reports the top ``k`` words only: a true piece outside them
    is given the k-th probability, an upper bound on its own; raise ``k`` to the vocabulary size to make every
    value exact (the toy vocabulary is far smaller than the default; BERT's common words sit well inside it).
    """
    from probekit.metrics.confounds import pseudo_perplexity
    from probekit.scorers import MASK

    texts, owners, truths = [], [], []
    for index, sentence in enumerate(sentences):
        words = str(sentence).split()
        for i, word in enumerate(words):
            pieces = scorer.word_pieces(word)
            texts.append(" ".join(words[:i] + [MASK] * len(pieces) + words[i + 1:]))
            owners.append(index)
            truths.append([_piece(p) for p in pieces])
    predictions = scorer.fill_mask(texts, k=k) if texts else []
    log_probs: list[list[float]] = [[] for _ in sentences]
    for owner, truth, positions in zip(owners, truths, predictions):
        for piece, candidates in zip(truth, positions or []):
            probs = {_piece(w): p for w, p in reversed(candidates)}  # the most probable spelling wins
            floor = min(p for _, p in candidates) if candidates else float("nan")
            log_probs[owner].append(math.log(max(probs.get(piece, floor), 1e-12)))
    return np.array([pseudo_perplexity(values) for values in log_probs])

IMAGE_CONDITIONS = ("full", "cropped")
TEMPLATES = ("default", "alt")


def score_conditions(scorers: dict, items: pd.DataFrame, crops: Sequence | None = None,
                     conditions: Sequence[tuple[str, str]] = (("full", "default"), ("cropped", "default"),
                                                              ("full", "alt"), ("cropped", "alt"))) -> pd.DataFrame:
    """Score every (model, image condition, template) in one tidy table.

    ``scorers`` maps a model name to a scorer; ``crops`` are the target crops (:func:`crop_to_targets`), needed
    for the "cropped" condition.  Returns ``items`` repeated per model and condition with columns model, image
    ("full"/"cropped"), template ("default"/"alt"), s_target and s_distractor.
    """
    frames = []
    for name, scorer in scorers.items():
        for image, template in conditions:
            if image not in IMAGE_CONDITIONS or template not in TEMPLATES:
                raise ValueError(f"unknown condition ({image!r}, {template!r}); images: {IMAGE_CONDITIONS}, "
                                 f"templates: {TEMPLATES}")
            if image == "cropped" and crops is None:
                raise ValueError("the 'cropped' condition needs the crops (probekit.data.prednoun.crop_to_targets)")
            scores = score_triplets(scorer, items, images=crops if image == "cropped" else None, template=template)
            frame = items.copy()
            frame["model"], frame["image_condition"], frame["template"] = name, image, template
            frame["s_target"], frame["s_distractor"] = scores["s_target"], scores["s_distractor"]
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------- the paper's numbers

_TABLE1 = {"LXMERT": (0.57, 0.69), "UNITER": (0.54, 0.64), "ViLBERT": (0.28, 0.66), "ViLT": (0.40, 0.75),
           "Oscar": (0.32, 0.67), "VinVL": (0.30, 0.76), "CLIP": (0.20, 0.59)}
_TABLE7 = {"LXMERT": (0.55, 0.70), "UNITER": (0.54, 0.66), "ViLBERT": (0.26, 0.67), "ViLT": (0.34, 0.72),
           "Oscar": (0.32, 0.65), "VinVL": (0.30, 0.74), "CLIP": (0.21, 0.58)}
_TABLE8 = {"LXMERT": (0.60, 0.55, 0.78, 0.62), "UNITER": (0.60, 0.50, 0.76, 0.56),
           "ViLBERT": (0.27, 0.28, 0.74, 0.59), "ViLT": (0.44, 0.37, 0.80, 0.72),
           "Oscar": (0.36, 0.30, 0.75, 0.62), "VinVL": (0.33, 0.28, 0.83, 0.71), "CLIP": (0.21, 0.19, 0.69, 0.52)}
# open_clip (architecture, pretrained tag) -> pair accuracy on full images
_TABLE6 = {("RN101", "yfcc15m"): 0.18, ("RN101", "openai"): 0.21, ("RN50", "cc12m"): 0.18,
           ("RN50", "openai"): 0.20, ("RN50", "yfcc15m"): 0.17, ("ViT-B-32", "laion2b_e16"): 0.21,
           ("ViT-B-32", "laion400m_e31"): 0.20, ("ViT-B-32", "laion400m_e32"): 0.19, ("ViT-B-32", "openai"): 0.20,
           ("ViT-L-14-336", "openai"): 0.20}
# r (p) of the score difference against: box size, distance from centre, perplexity, detector confidence
_TABLE9 = {"LXMERT": ((-0.03, 0.12), (0.03, 0.08), (-0.01, 0.48), (0.30, 0.00)),
           "UNITER": ((-0.09, 0.00), (0.09, 0.00), (0.05, 0.01), (0.26, 0.00)),
           "ViLBERT": ((0.11, 0.00), (-0.16, 0.00), (0.05, 0.02), (0.22, 0.00)),
           "ViLT": ((-0.01, 0.73), (0.03, 0.13), (0.05, 0.02), (0.26, 0.00)),
           "Oscar": ((0.12, 0.00), (-0.17, 0.00), (0.06, 0.00), (0.15, 0.00)),
           "VinVL": ((0.12, 0.00), (-0.12, 0.00), (0.05, 0.01), (0.04, 0.05)),
           "CLIP": ((0.14, 0.00), (-0.24, 0.00), (0.08, 0.00), (0.17, 0.00))}


def paper_table(number: int) -> pd.DataFrame:
    """Nikolaus et al. (2022) Tables 1, 6, 7, 8 and 9 as tidy frames; models are labelled "<name> (paper)"."""
    label = "{} (paper)".format
    if number in (1, 7):
        table = _TABLE1 if number == 1 else _TABLE7
        return pd.DataFrame([{"model": label(m), "full": f, "cropped": c} for m, (f, c) in table.items()])
    if number == 6:
        return pd.DataFrame([{"model": label(f"CLIP {arch} {tag}"), "architecture": arch, "pretrained": tag,
                              "full": acc} for (arch, tag), acc in _TABLE6.items()])
    if number == 8:
        return pd.DataFrame([{"model": label(m), "full noun": a, "full predicate": b, "cropped noun": c,
                              "cropped predicate": d} for m, (a, b, c, d) in _TABLE8.items()])
    if number == 9:
        factors = ("bounding box size", "distance from centre", "perplexity", "object detector confidence")
        return pd.DataFrame([{"model": label(m), "factor": f, "r": r, "p": p}
                             for m, values in _TABLE9.items() for f, (r, p) in zip(factors, values)])
    raise ValueError(f"the paper has no table {number} of results here; valid: 1, 6, 7, 8, 9")
