"""The guided-masking lab (``probekit.studies.lab``): the toy zoo's masked-LM models on the study's own items.

``lab_rows`` scores the lab models with the study's scoring (``masking.condition_paths``, ``guided_masking``,
``accuracy_rows``, ``drop_rows``, ``masking.itm_rows``) at the paper's k = 5, the k of every claim and check, as
of the chapter's tables.  Rows carry the probe ``top-5`` instead of the study's ``top-k`` (the k is in the name,
their chance the caption's prior, not the study's); ITM rows are the study's (probe
``itm``, subset ``verb`` for verb negatives).  A text-only model (``text_only``; one at most) answers the "text
only" condition, paired with every image model; the others answer the three image conditions and, with a
calibrated match head, ITM on the verb pairs.

* CHECKS: the knock-out ``toy-vilt-noverb`` (each transitive training scene drawn as a verb picked at random
  among all 24, the captioned one about 1 time in 24) must find the masked
  verb at chance with the full image; the text-only ``toy-bert`` must not beat chance.  Chance here is what the
  caption alone allows, the world's stated prior ``vocab.prior_topk(k)`` (24.8% at k = 5: given subject and
  object, 20-21 verbs are equally likely), not k / 24, which a reader of the caption beats by construction.  The
  knock-out's controls (what it still sees: agents, objects, poses) are the verbs chapter's; none is added here.
* CLAIMS: Beňová et al. 2024, Tables 1 and 2 (see each ``PaperClaim``).  The blanked-subject claim is decided by
  construction (:data:`BLANKED_BY_CONSTRUCTION`).  The masked-LM vs ITM claim is tested within one model on the
  same verb pairs (:mod:`probekit.metrics.head_choice`: the masked-LM head's two-way choice between the pair's two
  verbs against the ITM head's choice between its two sentences, both at chance 50%, by their paired difference):
  the paper's own comparison, top-5 accuracy over captions against ITM accuracy over image pairs, stands on other
  items at other chance levels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from probekit.metrics.head_choice import DIFF, ITM, MLM, PROBE as CHOICE, SUBSET as CHOICE_SUBSET
from probekit.metrics.masking import accuracy_rows, common_items, drop_rows
from probekit.toyworld.vocab import prior_topk
from probekit.papers import effect, guided_masking as the_paper
from probekit.results import concat
from probekit.scorers import Scorer, can_answer
from probekit.studies.lab import BLIND, HIGHER, PARENT, TARGET, Check, PaperClaim
from probekit.studies.masking.scores import ConditionPaths, both_heads, guided_masking, head_choice

PAPER_K = 5            # the paper's top-k (Tables 2 and 3)
SOURCE = "Beňová et al. 2024"


def where(k: int, condition: str, metric: str = "accuracy") -> dict[str, str]:
    """The lab row of top-``k`` ``metric`` (``accuracy`` or ``accuracy_diff``) under ``condition``."""
    return dict(probe=f"top-{k}", subset="all", metric=metric, condition=condition)


def choice(condition: str, metric: str = "accuracy") -> dict[str, str]:
    """The lab row of one head's verb choice (``condition`` ``MLM head`` / ``ITM head``), or their difference."""
    return dict(probe=CHOICE, subset=CHOICE_SUBSET, metric=metric, condition=condition)


#: what this lab's chance level is, in its cells and findings (:func:`probekit.report.lab._chance_words`): what the
#: caption alone allows (the module's docstring), not the study's k of the verbs named at random
CHANCE_WORDS = "the best from the caption alone"

#: the paper's rows a claim's effect is read from: ViLBERT's (the paper's first model, the claims' example) and BERT's
_TOPK = dict(probe="top-k", model="ViLBERT", subset="SVO-Probes", metric="accuracy")
_ITM = dict(probe="itm", model="ViLBERT", condition="full image", subset="verb", metric="avg_pooled")

#: why the blanked-subject claim is not judged on the toy world
BLANKED_BY_CONSTRUCTION = ("a toy transitive verb is drawn only in the subject's limbs and in where its object "
                           "stands beside it, so blanking the subject removes the verb's evidence by how the world is "
                           "drawn (its accuracy falls to about what the caption alone allows)")

CHECKS = [
    Check("toy-vilt-noverb", TARGET, "masked verb, top-5, full image", where(PAPER_K, "full image")),
    Check("toy-vilt-hardneg", PARENT, "masked verb, top-5, full image", where(PAPER_K, "full image")),
    Check("toy-bert", BLIND, "masked verb, top-5, text only", where(PAPER_K, "text only")),
]

CLAIMS = [
    PaperClaim("The image helps a masked-LM head predict the verb beyond the text: with the full image the four "
               "models find it among their top 5 in 73.9–74.6% of SVO-Probes captions, BERT from the text alone in "
               "36.1%", f"{SOURCE}, Table 2",
               a=("toy-vilt", where(PAPER_K, "full image")), b=("toy-bert", where(PAPER_K, "text only")),
               expect=HIGHER, diff=("toy-vilt", where(PAPER_K, "full image − text only", "accuracy_diff")),
               paper_effect=effect(the_paper, {**_TOPK, "condition": "full image"},
                                   {**_TOPK, "model": "BERT", "condition": "text only"})),
    PaperClaim("Blanking the subject's region hurts the verb's prediction: top-5 accuracy drops by 2.1–3.0 points "
               "in all four models (ViLBERT 73.9% → 71.5%)", f"{SOURCE}, Table 2",
               a=("toy-vilt", where(PAPER_K, "full image")), b=("toy-vilt", where(PAPER_K, "subject ablated")),
               expect=HIGHER, diff=("toy-vilt", where(PAPER_K, "full image − subject ablated", "accuracy_diff")),
               by_construction=True, reason=BLANKED_BY_CONSTRUCTION,
               paper_effect=effect(the_paper, {**_TOPK, "condition": "full image"},
                                   {**_TOPK, "condition": "subject ablated"})),
    PaperClaim("Image-text matching on verb negatives understates what the models know about verbs: their ITM "
               "accuracy on SVO-Probes' verb-negative pairs is 45.0–47.2% (pooled over positives and negatives, "
               "Table 1), while their masked-LM heads find the verb among the top 5 in 73.9–74.6% of captions "
               "(Table 2)", f"{SOURCE}, Tables 1 and 2",
               a=("toy-vilt", choice(MLM)), b=("toy-vilt", choice(ITM)), expect=HIGHER,
               diff=("toy-vilt", choice(DIFF, "accuracy_diff")),
               paper_effect=effect(the_paper, {**_TOPK, "condition": "full image"}, _ITM)),
]


#: the lab models whose two heads' verb choice a claim reads (the only ones the lab asks for it)
CHOOSERS = {model for c in CLAIMS for model, where in (c.a, c.b) if where.get("probe") == CHOICE}


def lab_rows(items: pd.DataFrame, lab_models: Sequence[str], load: Callable[[str], Scorer], root: Path,
             pairs: Sequence[Any] | None = None, seed: int = 0, *,
             condition_paths: Callable[[pd.DataFrame, Sequence[Scorer], Path], ConditionPaths],
             itm_rows: Callable[[pd.DataFrame, Sequence[Any], Sequence[Any], Sequence[Scorer], Path], pd.DataFrame]
             ) -> pd.DataFrame:
    """Schema rows of the ``lab_models`` (registry names, loaded with ``load(name)``) on the study's ``items``
    (with their subject boxes): top-5 accuracy per model and condition, the paired drops, and, on
    ``pairs`` = (verbs table, positive boxes, negative boxes) when given, ITM and the two heads' verb choice of the
    models a claim reads it of (:data:`CHOOSERS`, ``head_choice``).  Only the captions every lab model
    answered in every condition are counted.  ``condition_paths`` and ``itm_rows`` are the study's (passed in, so
    this module does not import the study that imports it)."""
    scorers = [load(name) for name in dict.fromkeys(lab_models)]
    texts = [s for s in scorers if s.text_only and can_answer(s, "fill_mask")]
    mlm = [s for s in scorers if not s.text_only and can_answer(s, "fill_mask")]
    itm = [s for s in scorers if can_answer(s, "threshold")]
    if len(texts) > 1:
        raise ValueError(f"the lab pairs one text-only model with the image models; got {[s.name for s in texts]}")
    images = condition_paths(items, mlm, root)
    per_item, _ = common_items(guided_masking(items, mlm, texts[0] if texts else None, images, k=PAPER_K))
    parts = []
    if len(per_item):
        images_of = items.set_index("item_id")["image_id"]   # captions of one image resampled together
        parts += [p.assign(probe=f"top-{PAPER_K}") for p in (
            accuracy_rows(per_item, prior_topk(PAPER_K), seed, units=images_of),
            drop_rows(per_item, seed=seed, units=images_of))]
    if itm and pairs is not None:
        parts.append(itm_rows(pairs[0], pairs[1], pairs[2], itm, root))
    both = [s for s in scorers if both_heads(s) and s.name in CHOOSERS]   # only what a claim reads: scoring costs
    if both and pairs is not None:
        parts.append(head_choice(both, pairs[0], root, seed)[0])
    return concat(parts)
