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
* ``items`` (:func:`probekit.metrics.masking.topk_items`): one row per caption, model that answered and condition
  (probe ``top-k``, ``subset`` as the rows'), ``correct`` its verdict by the paper's rule, whose mean is the
  ``accuracy`` row (the two conditions of an ``accuracy_diff`` each recomputed from their rows);
* probe ``itm``, metrics ``avg`` (balanced) / ``avg_pooled`` / ``pos`` / ``neg``, subset ``all``/negative type,
  per ITM model and condition, on the pairs with both images in every condition.

Subject boxes come from the dataset (the toy world's exact boxes) or, where it has none, from the detector
adapter :data:`DETECTOR` queried with the subject noun.

On the toy world the lab (:mod:`probekit.studies.masking.lab`) scores the zoo's ``lab_models`` on the same items
and pairs: ``data["lab"]`` (rows, not in ``result.rows``), ``data["lab_checks"]`` and ``data["lab_claims"]``
(``probekit.studies.lab``); ``facts.text_prior`` is the best top-k a text-only model can reach there
(``probekit.toyworld.vocab.prior_topk``), ``facts.pose_prior`` the best a model that reads the agent's pose but
not where the object is can reach (``pose_only_topk``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from probekit import papers
from probekit.papers import guided_masking as the_paper
from probekit.ablation import CONDITIONS, PatchGrid, condition_images, patches_under_box
from probekit.data.masking import pair_subject_boxes, triplet_subjects
from probekit.datasets import default_data_dir, load_dataset, sources
from probekit.metrics.masking import accuracy_rows, common_items, drop_rows, topk_chance, topk_items
from probekit.results import FromItems, StudyResult, Where, concat, concat_items
from probekit.scorers import Scorer, can_answer, head_for, load_scorer
from probekit.studies.masking import lab as masking_lab
from probekit.studies.masking.claims import claims
from probekit.studies.masking.params import Params
from probekit.studies.masking.scores import ConditionPaths, both_heads, guided_masking, head_choice, itm_under_ablation
from probekit.studies.lab_items import lab_data, split
from probekit.studies.lab_pooling import pooled_over_seeds
from probekit.toyworld import svo, vocab

STUDY = "masking"
DETECTOR = "owlvit-b32"
ALL_CONDITIONS = (*CONDITIONS, "text only")
LEFT_OUT = "not in every condition"
#: the paper's table for each dataset (its subset in the paper's rows)
PAPER_SUBSETS = {"svo-probes": "SVO-Probes", "v-coco": "V-COCO", "toy": "SVO-Probes"}
HEADLINES = [dict(probe="top-k", condition="full image", subset="all", metric="accuracy"),
             dict(probe="top-k", condition="full image − subject ablated", subset="all", metric="accuracy_diff")]
CONTROLS: list[Where] = []
#: the headlines rebuilt from the item rows (probe "top-k", one per caption): the mean of ``correct`` on the full
#: image, and per caption full image minus subject ablated, averaged over the captions both scored
_TOP_K = {cond: dict(probe="top-k", condition=cond, subset="all") for cond in ("full image", "subject ablated")}
FROM_ITEMS = [(HEADLINES[0], FromItems(_TOP_K["full image"])),
              (HEADLINES[1], FromItems(_TOP_K["full image"], minus=_TOP_K["subject ablated"]))]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _present(value: object) -> bool:
    return not _missing(value)


def _left_out(items: pd.DataFrame, left: pd.DataFrame) -> pd.DataFrame:
    """The captions not scored in every condition, with why: no image, no subject box, or an image unreadable."""
    shown = items[items["item_id"].isin(left["item_id"])][["item_id", "sentence", "verb", "image", "subject_box"]]
    why = ["no image" if _missing(im) else "no subject box" if _missing(b) else "image unreadable"
           for im, b in zip(shown["image"], shown["subject_box"])]
    return shown.assign(reason=why).reset_index(drop=True)


def fill_boxes(boxes: Sequence[Any], images: Sequence[Any], queries: Sequence[str],
               detector: Callable[[], Scorer]) -> tuple[list[Any], int]:
    """``boxes`` with every missing box of an existing image asked of ``detector()`` (called only when one is
    missing); returns the boxes and how many were asked for."""
    boxes = [None if _missing(b) else b for b in boxes]
    todo = [i for i, (b, im) in enumerate(zip(boxes, images)) if b is None and not _missing(im)]
    if todo:
        found = detector().detect([str(images[i]) for i in todo], [queries[i] for i in todo])
        for i, box in zip(todo, found):
            boxes[i] = None if box is None else list(box)
    return boxes, len(todo)


def condition_paths(items: pd.DataFrame, scorers: Sequence[Scorer], root: Path) -> ConditionPaths:
    """The image each masked-LM scorer sees per item under each image condition (``probekit.ablation``), the
    subject blanked under ``items["subject_box"]``."""
    return {(s.name, c): condition_images(items["image"].tolist(), c, PatchGrid.of(s), root,
                                          boxes=items["subject_box"].tolist())
            for s in scorers for c in CONDITIONS}


def verb_pairs(dataset: str, root: Path, limit: int | None, seed: int,
               detector: Callable[[], Scorer]) -> tuple[pd.DataFrame, list[Any], list[Any], int]:
    """The ``verbs`` table of ``dataset`` with the positive and negative images' subject boxes (asked of
    ``detector()`` where missing): (pairs, positive boxes, negative boxes, how many boxes were detected)."""
    pairs = load_dataset("verbs", dataset, data_dir=root, limit=limit, seed=seed)
    pos_boxes, neg_boxes = pair_subject_boxes(pairs)
    pos_boxes, n_pos = fill_boxes(pos_boxes, pairs["pos_image"].tolist(), triplet_subjects(pairs["pos_triplet"]),
                                  detector)
    neg_boxes, n_neg = fill_boxes(neg_boxes, pairs["neg_image"].tolist(), triplet_subjects(pairs["neg_triplet"]),
                                  detector)
    return pairs, pos_boxes, neg_boxes, n_pos + n_neg


def itm_rows(pairs: pd.DataFrame, pos_boxes: Sequence[Any], neg_boxes: Sequence[Any], scorers: Sequence[Scorer],
             root: Path) -> pd.DataFrame:
    """ITM rows of each scorer on the verb ``pairs`` under the three image conditions (``itm_under_ablation``)."""
    return itm_under_ablation(pairs, scorers, {
        (s.name, c): tuple(condition_images(pairs[col].tolist(), c, PatchGrid.of(s), root, boxes=b)
                           for col, b in (("pos_image", pos_boxes), ("neg_image", neg_boxes)))
        for s in scorers for c in CONDITIONS})


def _lab(dataset: str, lab_models: Sequence[str], items: pd.DataFrame, load: Callable[[str], Scorer], root: Path,
         pairs: Sequence[Any] | None, seed: int) -> tuple[dict[str, pd.DataFrame], str | None]:
    """The lab's rows, checks and claims on the toy world; empty frames and why otherwise."""
    found = (split(masking_lab.lab_rows(items, lab_models, load, root, pairs, seed=seed,
                                        condition_paths=condition_paths, itm_rows=itm_rows))
             if dataset == "toy" and lab_models else None)
    why = (None if found is not None and len(found.rows) else "The lab runs on the toy world only." if dataset != "toy"
           else "No lab models were given (lab_models)." if not lab_models else "The lab models scored nothing.")
    if why:
        return lab_data(found, [], []), why
    return lab_data(found, masking_lab.CHECKS, masking_lab.CLAIMS), None


def _examples(items: pd.DataFrame, images: ConditionPaths, scorer: Scorer, n: int, seed: int) -> pd.DataFrame:
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



@dataclass(frozen=True)
class MaskingFacts:
    """What the page states (``StudyResult.facts``); a misspelt field is an AttributeError in a unit test
    (tests/test_facts.py), not on the executed page.  None: not measured on this run (toy-world or ITM-pair facts)."""

    captions: int                  # captions with the verb located
    unlocated: int                 # ... and those whose verb was not
    with_image: int
    with_box: int
    detected: int                  # subject boxes asked of the detector
    detector: str | None
    k: int
    chance: float                  # top-k chance
    in_every_condition: int        # captions scored in every condition
    left_out: int                  # ... and those not
    paper_subset: str
    text_model: str | None
    fill_mask_heads: dict[str, str]
    itm_heads: dict[str, str]
    threshold: float
    lab: str | None                # why the lab did not run (None: it ran)
    lab_models: list[str]
    verbs: int | None = None       # the toy world's: verbs, text and pose priors, the lab's chance levels
    text_prior: float | None = None
    pose_prior: float | None = None
    lab_text_prior: float | None = None
    lab_chance: float | None = None
    pairs: int | None = None       # the ITM verb pairs (when ITM models ran on them)
    pair_images: int | None = None
    pair_detected: int | None = None
    pair_images_boxed: int | None = None
    pairs_in_every_condition: int | None = None
    choice_pairs: int | None = None   # verb pairs both heads of a model chose on (``probekit.metrics.head_choice``) ...
    choice_unlocated: int | None = None   # ... and verb-negative rows whose verb could not be located or inflected


@pooled_over_seeds
def run(params: Params) -> StudyResult:
    """Top-k verb prediction of every masked-LM model under the four conditions and ITM under the three image
    conditions; rows, per-item predictions, example items, facts and claims; on the toy world the lab's rows,
    checks and claims (``lab_models``, :mod:`probekit.studies.masking.lab`; none: no lab)."""
    models, mlm_models, itm_models, lab_models = params.models, params.mlm_models, params.itm_models, params.lab_models
    dataset, limit, seed, k, text_model = params.dataset, params.limit, params.seed, params.k, params.text_model
    root = Path(params.data_dir) if params.data_dir is not None else default_data_dir()
    loaded: dict[str, Scorer] = {}

    def load(name: str) -> Scorer:   # each model loaded once, the lab's included
        if name not in loaded:
            loaded[name] = load_scorer(name, device=params.device, batch_size=params.batch_size,
                                       cache_dir=params.cache_dir)
        return loaded[name]

    scorers = {name: load(name) for name in dict.fromkeys([*models, *(mlm_models or []), *(itm_models or [])])}
    mlm = [scorers[n] for n in (mlm_models or [n for n in models if can_answer(scorers[n], "fill_mask")])]
    itm = [scorers[n] for n in (itm_models or [n for n in models if can_answer(scorers[n], "threshold")])]
    text_scorer = load(text_model) if text_model else None

    items = load_dataset(STUDY, dataset, data_dir=root, limit=limit, seed=seed)
    boxes, detected = fill_boxes(items["subject_box"].tolist(), items["image"].tolist(),
                                 items.get("subject", pd.Series([""] * len(items))).tolist(), lambda: load(DETECTOR))
    items = items.assign(subject_box=boxes)
    images = condition_paths(items, mlm, root)
    per_item, left = common_items(guided_masking(items, mlm, text_scorer, images, k=k))
    chance = topk_chance(items["verb"], k)
    images_of = items.set_index("item_id")["image_id"]   # the unit: captions of one image are resampled together
    parts = ([accuracy_rows(per_item, chance, seed, units=images_of), drop_rows(per_item, seed=seed, units=images_of)]
             if len(per_item) else [])
    if len(left):
        parts.append(accuracy_rows(left, chance, seed, subset=LEFT_OUT, units=images_of))

    facts = MaskingFacts(captions=len(items), unlocated=len(items.attrs.get("unlocated", [])),
                         with_image=int(items["image"].notna().sum()), with_box=sum(b is not None for b in boxes),
                         detected=detected, detector=DETECTOR if detected else None, k=k, chance=chance,
                         in_every_condition=int(per_item["item_id"].nunique()), left_out=int(left["item_id"].nunique()),
                         paper_subset=PAPER_SUBSETS.get(dataset, "SVO-Probes"),
                         text_model=text_model, fill_mask_heads={s.name: head_for(s, "fill_mask") for s in mlm},
                         itm_heads={s.name: head_for(s, "threshold") for s in itm}, threshold=0.5,
                         lab=None, lab_models=lab_models)   # lab: why it did not run, set once it has (below)
    if dataset == "toy":   # the best a text-only model can do: the verb is uniform given subject and object
        facts = replace(facts, verbs=int(items["verb"].nunique()), text_prior=vocab.prior_topk(k),
                               pose_prior=vocab.pose_only_topk(k),
                               lab_text_prior=vocab.prior_topk(masking_lab.PAPER_K),
                               lab_chance=topk_chance(items["verb"], masking_lab.PAPER_K))
    pairs = None   # (verbs table, positive boxes, negative boxes): ITM for the study's models and the lab's
    both = [s for s in scorers.values() if both_heads(s)]   # ITM and masked-LM heads on the same verb pairs
    if (itm or both or (dataset == "toy" and lab_models)) and dataset in sources("verbs"):
        *pairs, n_detected = verb_pairs(dataset, root, limit, seed, lambda: load(DETECTOR))
    if itm and pairs is not None:
        table, pos_boxes, neg_boxes = pairs
        parts.append(itm_rows(table, pos_boxes, neg_boxes, itm, root))
        facts = replace(facts, pairs=len(table), pair_images=2 * len(table), pair_detected=n_detected,
                               pair_images_boxed=sum(b is not None for b in pos_boxes + neg_boxes),
                               pairs_in_every_condition=sum(
                                   all(_present(p) for p in (a, b, c, d))
                                   for a, b, c, d in zip(table["pos_image"], table["neg_image"], pos_boxes, neg_boxes)))
        if n_detected:
            facts = replace(facts, detector=DETECTOR)
    chosen = None
    if both and pairs is not None:
        cues = svo.verb_cue(pairs[0]) if dataset == "toy" else None   # what tells a toy pair's verbs apart
        choice_rows, chosen, choice = head_choice(both, pairs[0], root, seed, cues)
        parts.append(choice_rows)
        facts = replace(facts, choice_pairs=len(choice), choice_unlocated=choice.attrs["unlocated"])
    rows = concat([*parts, papers.reported(the_paper)])
    data = dict(items=items, unlocated=pd.DataFrame(items.attrs.get("unlocated", []), columns=["sentence", "verb"]),
                per_item=per_item, left_out=_left_out(items, left),
                examples=_examples(items, images, mlm[0], params.n_examples, seed) if mlm else None)
    lab_data, why = _lab(dataset, lab_models, items, load, root, pairs, seed)
    facts = replace(facts, lab=why)
    data.update(lab_data)
    sentences = items.set_index("item_id")["sentence"]
    per_row = [topk_items(t, sentences, subset) for t, subset in ((per_item, "all"), (left, LEFT_OUT)) if len(t)]
    return StudyResult(study=STUDY, params=asdict(params), rows=rows, data=data, facts=facts, claims=claims(rows, k=k),
                       items=concat_items([*per_row, chosen]))
