"""The guided-masking study (Beňová et al. 2024) with patch models: mask the verb, let the masked-LM head fill it
in with the full image, the subject's patches blanked, the whole image blanked, and a text-only model; and
image-text matching on the verb pairs under the same ablations.

Rows (vocabulary shared with :mod:`probekit.papers.guided_masking`):

* probe ``top-k``, metrics ``accuracy`` (the paper's per-piece rule) and ``word_accuracy`` (whole words),
  condition ``full image`` / ``subject ablated`` / ``image ablated`` per masked-LM model and ``text only`` for
  the text model (``model`` is the model that answered); chance ``probekit.metrics.masking.topk_chance``;
  subset ``all`` = the captions scored in every condition, ``not in every condition`` = the others;
* probe ``top-k``, metrics ``accuracy_diff``/``word_accuracy_diff``, condition "a − b" (``full image − subject
  ablated``, ``full image − image ablated``, ``full image − text only``, ``subject ablated − image ablated``):
  paired bootstrap over the same captions, chance 0;
* probe ``itm``, metrics ``avg`` (balanced) / ``avg_pooled`` / ``pos`` / ``neg``, subset ``all``/negative type,
  per ITM model and condition, on the pairs with both images in every condition.

Subject boxes come from the dataset (the toy world's exact boxes) or, where it has none, from the detector
adapter :data:`DETECTOR` queried with the subject noun.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from probekit import papers
from probekit.ablation import CONDITIONS, PatchGrid, condition_images, patches_under_box
from probekit.data.masking import pair_subject_boxes, triplet_subjects
from probekit.datasets import default_data_dir, load_dataset, sources
from probekit.metrics.masking import (accuracy_rows, common_items, drop_rows, guided_masking, itm_under_ablation,
                                      topk_chance)
from probekit.results import StudyResult, concat
from probekit.scorers import can_answer, head_for, load_scorer
from probekit.studies.masking_claims import claims

STUDY = "masking"
DETECTOR = "owlvit-b32"
ALL_CONDITIONS = (*CONDITIONS, "text only")
LEFT_OUT = "not in every condition"
#: the paper's table for each dataset (its subset in the paper's rows)
PAPER_SUBSETS = {"svo-probes": "SVO-Probes", "v-coco": "V-COCO", "toy": "SVO-Probes"}
HEADLINES = [dict(probe="top-k", condition="full image", subset="all", metric="accuracy"),
             dict(probe="top-k", condition="full image − subject ablated", subset="all", metric="accuracy_diff")]
#: what each model parameter must answer (``probekit.scorers.head_for`` questions; at least one of them),
#: checked from the registry before anything runs (``probekit check``)
ROLES = {"models": ("fill_mask", "threshold"), "mlm_models": ("fill_mask",), "itm_models": ("threshold",),
         "text_model": ("fill_mask",)}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _present(value) -> bool:
    return not _missing(value)


def _left_out(items: pd.DataFrame, left: pd.DataFrame) -> pd.DataFrame:
    """The captions not scored in every condition, with why: no image, no subject box, or an image unreadable."""
    shown = items[items["item_id"].isin(left["item_id"])][["item_id", "sentence", "verb", "image", "subject_box"]]
    why = ["no image" if _missing(im) else "no subject box" if _missing(b) else "image unreadable"
           for im, b in zip(shown["image"], shown["subject_box"])]
    return shown.assign(reason=why).reset_index(drop=True)


def fill_boxes(boxes, images, queries, detector) -> tuple[list, int]:
    """``boxes`` with every missing box of an existing image asked of ``detector()`` (called only when one is
    missing); returns the boxes and how many were asked for."""
    boxes = [None if _missing(b) else b for b in boxes]
    todo = [i for i, (b, im) in enumerate(zip(boxes, images)) if b is None and not _missing(im)]
    if todo:
        found = detector().detect([str(images[i]) for i in todo], [queries[i] for i in todo])
        for i, box in zip(todo, found):
            boxes[i] = None if box is None else list(box)
    return boxes, len(todo)


def _examples(items: pd.DataFrame, images: dict, scorer, n: int, seed: int) -> pd.DataFrame:
    """``n`` items with an image and a subject box, drawn with ``seed``, with the paths the model saw."""
    grid = PatchGrid.of(scorer)
    full, ablated = images[(scorer.name, "full image")], images[(scorer.name, "subject ablated")]
    ok = np.flatnonzero([f is not None and a is not None for f, a in zip(full, ablated)])
    rng = np.random.default_rng(seed)
    picked = ok[np.sort(rng.choice(len(ok), size=min(n, len(ok)), replace=False))] if len(ok) else ok
    shown = items.iloc[picked][["item_id", "sentence", "verb", "verb_start", "verb_end", "subject_box"]]
    return shown.assign(model=scorer.name, full=[str(full[i]) for i in picked],
                        ablated=[str(ablated[i]) for i in picked], image_size=grid.image_size,
                        patches=[len(patches_under_box(b, grid)) for b in shown["subject_box"]]).reset_index(drop=True)


def run(models=("toy-vilt",), dataset: str = "toy", data_dir=None, limit: int | None = None, seed: int = 0,
        device: str = "auto", batch_size: int = 32, cache_dir=None, k: int = 5, mlm_models=None, itm_models=None,
        text_model: str | None = "toy-bert", n_examples: int = 4) -> StudyResult:
    """Top-k verb prediction of every masked-LM model under the four conditions and ITM under the three image
    conditions; rows, per-item predictions, example items, facts and claims."""
    params = dict(models=list(models), dataset=dataset, data_dir=data_dir, limit=limit, seed=seed, device=device,
                  batch_size=batch_size, cache_dir=cache_dir, k=k, mlm_models=mlm_models, itm_models=itm_models,
                  text_model=text_model, n_examples=n_examples)
    root = Path(data_dir) if data_dir is not None else default_data_dir()

    def load(name):
        return load_scorer(name, device=device, batch_size=batch_size, cache_dir=cache_dir)

    scorers = {name: load(name) for name in dict.fromkeys([*models, *(mlm_models or []), *(itm_models or [])])}
    mlm = [scorers[n] for n in (mlm_models or [n for n in models if can_answer(scorers[n], "fill_mask")])]
    itm = [scorers[n] for n in (itm_models or [n for n in models if can_answer(scorers[n], "threshold")])]
    text_scorer = load(text_model) if text_model else None

    items = load_dataset(STUDY, dataset, data_dir=root, limit=limit, seed=seed)
    boxes, detected = fill_boxes(items["subject_box"].tolist(), items["image"].tolist(),
                                 items.get("subject", pd.Series([""] * len(items))).tolist(), lambda: load(DETECTOR))
    items = items.assign(subject_box=boxes)
    images = {(s.name, c): condition_images(items["image"].tolist(), c, PatchGrid.of(s), root, boxes=boxes)
              for s in mlm for c in CONDITIONS}
    per_item, left = common_items(guided_masking(items, mlm, text_scorer, images, k=k))
    chance = topk_chance(items["verb"], k)
    parts = [accuracy_rows(per_item, chance, seed), drop_rows(per_item, seed=seed)] if len(per_item) else []
    if len(left):
        parts.append(accuracy_rows(left, chance, seed, subset=LEFT_OUT))

    facts = dict(captions=len(items), unlocated=len(items.attrs.get("unlocated", [])),
                 with_image=int(items["image"].notna().sum()), with_box=sum(b is not None for b in boxes),
                 detected=detected, detector=DETECTOR if detected else None, k=k, chance=chance,
                 in_every_condition=int(per_item["item_id"].nunique()), left_out=int(left["item_id"].nunique()),
                 paper_subset=PAPER_SUBSETS.get(dataset, "SVO-Probes"),
                 text_model=text_model, fill_mask_heads={s.name: head_for(s, "fill_mask") for s in mlm},
                 itm_heads={s.name: head_for(s, "threshold") for s in itm}, threshold=0.5)
    if itm and dataset in sources("verbs"):
        pairs = load_dataset("verbs", dataset, data_dir=root, limit=limit, seed=seed)
        pos_boxes, neg_boxes = pair_subject_boxes(pairs)
        pos_boxes, n_pos = fill_boxes(pos_boxes, pairs["pos_image"].tolist(), triplet_subjects(pairs["pos_triplet"]),
                                      lambda: load(DETECTOR))
        neg_boxes, n_neg = fill_boxes(neg_boxes, pairs["neg_image"].tolist(), triplet_subjects(pairs["neg_triplet"]),
                                      lambda: load(DETECTOR))
        itm_images = {(s.name, c): (condition_images(pairs["pos_image"].tolist(), c, PatchGrid.of(s), root,
                                                     boxes=pos_boxes),
                                    condition_images(pairs["neg_image"].tolist(), c, PatchGrid.of(s), root,
                                                     boxes=neg_boxes))
                      for s in itm for c in CONDITIONS}
        parts.append(itm_under_ablation(pairs, itm, itm_images))
        facts.update(pairs=len(pairs), pair_images=2 * len(pairs), pair_detected=n_pos + n_neg,
                     pair_images_boxed=sum(b is not None for b in pos_boxes + neg_boxes),
                     pairs_in_every_condition=sum(all(_present(p) for p in (a, b, c, d)) for a, b, c, d in
                                                  zip(pairs["pos_image"], pairs["neg_image"], pos_boxes, neg_boxes)))
        if n_pos + n_neg:
            facts["detector"] = DETECTOR
    rows = concat([*parts, papers.reported(STUDY)])
    data = dict(items=items, unlocated=pd.DataFrame(items.attrs.get("unlocated", []), columns=["sentence", "verb"]),
                per_item=per_item, left_out=_left_out(items, left), examples=_examples(items, images, mlm[0], n_examples, seed) if mlm else None)
    return StudyResult(study=STUDY, params=params, rows=rows, data=data, facts=facts, claims=claims(rows, k=k))
