"""The guided-masking probe on real data: SVO-Probes' positive pairs with the verb located and the subject boxed.

Each distinct (sentence, positive image) of SVO-Probes becomes one item.  The verb is the middle word of
``pos_triplet``; it is found in the sentence by lemma (any inflected form: "jogs", "jogging", "ran"), and a
sentence where no word has that lemma is not guessed at: it is dropped, counted and listed in
``items.attrs["unlocated"]``.  The subject's box comes from an open-vocabulary detector (OWL-ViT through
``transformers``) queried with the subject noun; an image where nothing is detected keeps ``subject_box=None``
and is counted in ``items.attrs["undetected"]``.  Detections are cached on disk, one JSON line per (image, query).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
from lemminflect import getAllInflections, getAllInflectionsOOV, getAllLemmas, getAllLemmasOOV

OWLVIT = "google/owlvit-base-patch32"
DETECTION_THRESHOLD = 0.1
_WORD = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*")


def verb_forms(lemma: str) -> set[str]:
    """Every inflected form of the verb ``lemma`` that lemminflect knows (its rules for unknown verbs)."""
    lemma = lemma.lower()
    table = getAllInflections(lemma, upos="VERB") or getAllInflectionsOOV(lemma, upos="VERB")
    return {lemma} | {form.lower() for forms in table.values() for form in forms}


def locate_verb(sentence: str, lemma: str) -> tuple[int, int] | None:
    """Character span of the first word of ``sentence`` that is a form of the verb ``lemma``, else None.

    A word matches when it is one of the lemma's inflections or lemmatizes (as a verb) to the lemma.
    Multi-word verbs ("pick up") are never located: masking one word of them would be a guess.
    """
    lemma = lemma.strip().lower()
    if not lemma or not _WORD.fullmatch(lemma):
        return None
    forms = verb_forms(lemma)
    for match in _WORD.finditer(sentence):
        word = match.group().lower()
        lemmas = getAllLemmas(word, upos="VERB").get("VERB") or getAllLemmasOOV(word, upos="VERB").get("VERB", ())
        if word in forms or lemma in lemmas:
            return match.span()
    return None


class DetectionCache:
    """Boxes per (image path, query) in a JSON-lines file, appended as they are computed (resumable)."""

    def __init__(self, path):
        self.path = Path(path)
        self.boxes: dict[tuple[str, str], list[float] | None] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:  # a line cut short by an interrupted run
                    continue
                self.boxes[(rec["image"], rec["query"])] = rec["box"]

    def __contains__(self, key) -> bool:
        return key in self.boxes

    def __getitem__(self, key):
        return self.boxes[key]

    def add(self, image: str, query: str, box) -> None:
        self.boxes[(image, query)] = box
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            f.write(json.dumps({"image": image, "query": query, "box": box}) + "\n")


def load_owlvit(model_id: str = OWLVIT, device: str = "auto"):
    """OWL-ViT detector and processor by hub id or local directory."""
    from transformers import OwlViTForObjectDetection, OwlViTProcessor

    from probekit.device import resolve_device

    model = OwlViTForObjectDetection.from_pretrained(model_id).to(resolve_device(device)).eval()
    return model, OwlViTProcessor.from_pretrained(model_id)


def best_boxes(model, processor, images, queries, threshold: float = DETECTION_THRESHOLD) -> list:
    """For each PIL image, the highest-scoring box of its text query as [x, y, w, h] fractions, or None."""
    import torch

    inputs = processor(text=[[f"a photo of a {q}"] for q in queries], images=images, return_tensors="pt",
                       padding=True, truncation=True)
    with torch.no_grad():
        outputs = model(**inputs.to(model.device))
    # OWL-ViT resizes without padding, so its normalised boxes are fractions of the original image
    results = processor.post_process_grounded_object_detection(outputs, threshold=threshold)
    boxes = []
    for res in results:
        if len(res["scores"]) == 0:
            boxes.append(None)
            continue
        x0, y0, x1, y1 = res["boxes"][int(res["scores"].argmax())].clamp(0, 1).tolist()
        boxes.append([x0, y0, x1 - x0, y1 - y0] if x1 > x0 and y1 > y0 else None)
    return boxes


def detect_subject_boxes(images, queries, cache_file, *, model_id: str = OWLVIT,
                         threshold: float = DETECTION_THRESHOLD, device: str = "auto", batch_size: int = 8,
                         detector=None) -> list:
    """Box of ``queries[i]`` in ``images[i]`` (paths) from an open-vocabulary detector, None where nothing is found
    or the image is missing.  Boxes are read from / appended to ``cache_file``; the detector (``detector`` =
    (model, processor), else loaded from ``model_id``) is loaded only when some pair is not cached yet."""
    from PIL import Image
    from ..progress import bar as tqdm

    cache = DetectionCache(cache_file)
    keys = [(None if im is None or im != im else str(im), q) for im, q in zip(images, queries)]
    todo = [k for k in dict.fromkeys(keys) if k[0] is not None and k not in cache]
    if todo:
        model, processor = detector or load_owlvit(model_id, device)
        for start in tqdm(range(0, len(todo), batch_size), desc=f"detecting subjects ({Path(model_id).name})"):
            chunk = todo[start:start + batch_size]
            pil = [Image.open(path).convert("RGB") for path, _ in chunk]
            for (path, query), box in zip(chunk, best_boxes(model, processor, pil, [q for _, q in chunk], threshold)):
                cache.add(path, query, box)
    return [None if k[0] is None else cache[k] for k in keys]


def detection_cache(data_dir) -> Path:
    return Path(data_dir) / "derived" / "detections" / f"{Path(OWLVIT).name}-t{DETECTION_THRESHOLD}.jsonl"


def pair_subject_boxes(pairs: pd.DataFrame, data_dir, detect: bool = True) -> tuple[list, list]:
    """Subject boxes of the positive and negative image of every row of a ``verbs`` table: the generator's own
    ``pos_subject_box``/``neg_subject_box`` columns when it has them (the toy world knows them exactly), else
    OWL-ViT queried with each triplet's subject (cached like the masking items' boxes) when ``detect``, else
    None for every image (the caller counts them)."""
    if {"pos_subject_box", "neg_subject_box"} <= set(pairs.columns):
        return pairs["pos_subject_box"].tolist(), pairs["neg_subject_box"].tolist()
    if not detect:
        return [None] * len(pairs), [None] * len(pairs)
    subjects = {side: [t.split(",")[0].strip() for t in pairs[f"{side}_triplet"]] for side in ("pos", "neg")}
    images = {side: [None if p is None or p != p else p for p in pairs[f"{side}_image"]] for side in ("pos", "neg")}
    boxes = detect_subject_boxes(images["pos"] + images["neg"], subjects["pos"] + subjects["neg"],
                                 detection_cache(data_dir))
    return boxes[:len(pairs)], boxes[len(pairs):]


def masking_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """Masking items (without boxes) from a verbs table: one per (sentence, positive image), verb located.

    Sentences whose verb cannot be located are listed in ``attrs["unlocated"]`` as {sentence, verb} records.
    """
    pos = pairs.drop_duplicates(["sentence", "pos_image_id"]).reset_index(drop=True)
    triplets = pos["pos_triplet"].str.split(",")
    rows, unlocated = [], []
    for item, triplet in zip(pos.itertuples(index=False), triplets):
        subject, verb = triplet[0].strip(), item.verb
        span = locate_verb(item.sentence, verb)
        if span is None:
            unlocated.append({"sentence": item.sentence, "verb": verb})
            continue
        digest = hashlib.sha1(f"{item.sentence}|{item.pos_image_id}".encode()).hexdigest()[:12]
        rows.append({"item_id": f"svo-{digest}", "image_id": str(item.pos_image_id), "image": item.pos_image,
                     "sentence": item.sentence, "verb": verb, "verb_start": span[0], "verb_end": span[1],
                     "subject": subject, "subject_box": None})
    items = pd.DataFrame(rows, columns=["item_id", "image_id", "image", "sentence", "verb", "verb_start",
                                        "verb_end", "subject", "subject_box"])
    items.attrs["unlocated"] = unlocated
    return items


def load_svo_masking(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    """The 'masking' probe from SVO-Probes' positive pairs, subject boxes from OWL-ViT (cached).

    ``limit`` and ``seed`` draw rows of SVO-Probes as its loader does (``probekit.data.svo.load_svo_probes``);
    the items are the distinct positive pairs among them, so at most ``limit``.
    """
    from probekit.data.svo import load_svo_probes

    items = masking_items(load_svo_probes(data_dir, limit, seed, split))
    cache_file = detection_cache(data_dir)
    has_image = items["image"].notna()
    found = iter(detect_subject_boxes(items.loc[has_image, "image"].tolist(),
                                      items.loc[has_image, "subject"].tolist(), cache_file) if has_image.any() else [])
    items["subject_box"] = [next(found) if ok else None for ok in has_image]
    items.attrs["undetected"] = int(items.loc[has_image, "subject_box"].isna().sum())
    return items


# The guided-masking paper's results (region-feature models through VOLTA), as fractions.
# Table 1: ITM on SVO-Probes (average, positive, negative) under the image conditions.
# Tables 2 (SVO-Probes) and 3 (V-COCO): top-5 verb accuracy; the BERT row is the text-only baseline.
_PAPER_ITM = {  # model: {condition: (avg, pos, neg)}
    "ViLBERT": {"full image": (.463, .954, .209), "subject ablated": (.565, .634, .530),
                "image ablated": (.652, .083, .947)},
    "LXMERT": {"full image": (.450, .955, .188), "subject ablated": (.475, .865, .272),
               "image ablated": (.553, .455, .604)},
    "UNITER": {"full image": (.472, .945, .227), "subject ablated": (.442, .956, .175),
               "image ablated": (.431, .852, .212)},
    "VisualBERT": {"full image": (.471, .944, .226), "subject ablated": (.463, .916, .229),
                   "image ablated": (.583, .403, .677)},
}
_PAPER_TOP5 = {  # dataset: model: (full image, subject ablated, image ablated, text only)
    "SVO-Probes": {"ViLBERT": (.739, .715, .629, .361), "LXMERT": (.746, .716, .596, .361),
                   "UNITER": (.744, .722, .625, .361), "VisualBERT": (.743, .722, .599, .361)},
    "V-COCO": {"ViLBERT": (.811, .798, .725, .585), "LXMERT": (.805, .792, .735, .585),
               "UNITER": (.813, .795, .763, .585), "VisualBERT": (.802, .785, .748, .585)},
}


def paper_itm() -> pd.DataFrame:
    """The paper's Table 1 (SVO-Probes, all negative types) as tidy rows: model, condition, metric, value."""
    return pd.DataFrame([{"model": m, "condition": c, "metric": metric, "value": v}
                         for m, conds in _PAPER_ITM.items() for c, vals in conds.items()
                         for metric, v in zip(("avg", "pos", "neg"), vals)])


def paper_top5() -> pd.DataFrame:
    """The paper's Tables 2 and 3 as tidy rows: dataset, model, condition, accuracy (top-5)."""
    conditions = ("full image", "subject ablated", "image ablated", "text only")
    return pd.DataFrame([{"dataset": d, "model": m, "condition": c, "accuracy": v}
                         for d, models in _PAPER_TOP5.items() for m, vals in models.items()
                         for c, v in zip(conditions, vals)])
