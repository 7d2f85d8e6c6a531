"""What a study asks a model of image–text pairs: the two scores of a sentence with its positive and its negative
image (verbs, masking), and of an image with its target and its distractor sentence (predicate–noun).  The metrics
(:mod:`probekit.metrics.itm`, :mod:`probekit.metrics.pairs`) take these arrays and never call a model."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from probekit.scorers import head_for

if TYPE_CHECKING:
    from probekit.scorers.base import Scorer

#: a study's scores of its pairs: per row, (sentence, positive image) and (sentence, negative image)
PairScores = tuple[np.ndarray, np.ndarray]
HEADS = ("match", "similarity")   # the heads :func:`score_pairs` can score a pair with


def score_pairs(scorer: Scorer, items: pd.DataFrame, head: str) -> PairScores:
    """Score of (sentence, positive image) and (sentence, negative image) for the rows of ``items`` with both.

    ``head="match"``: ``scorer.match`` probabilities, each distinct (sentence, image) pair scored once (the
    scores a threshold applies to, and the choice head of ITM models).  ``head="similarity"``:
    ``scorer.choose_image`` over [positive, negative] per row with that head (a softmax over the two images'
    similarities).  A row missing either image (None) is dropped whole, as the authors do: both its scores are
    NaN and neither pair is scored.  Which head answers which question is ``probekit.scorers.head_for``'s
    decision, not this function's.
    """
    if head not in HEADS:
        raise ValueError(f"head must be one of {HEADS}, not {head!r}")
    n = len(items)
    pos, neg = np.full(n, np.nan), np.full(n, np.nan)
    both = (items["pos_image"].notna() & items["neg_image"].notna()).to_numpy()
    if not both.any():
        return pos, neg
    part = items.loc[both]
    if head == "match":
        pairs = pd.concat([part[["sentence", "pos_image"]].set_axis(["text", "image"], axis=1),
                           part[["sentence", "neg_image"]].set_axis(["text", "image"], axis=1)])
        pairs = pairs.drop_duplicates().reset_index(drop=True)
        scores = np.asarray(scorer.match(pairs["image"].tolist(), pairs["text"].tolist()), float)
        lookup = dict(zip(zip(pairs["text"], pairs["image"]), scores))
        pos[both] = [lookup[k] for k in zip(part["sentence"], part["pos_image"])]
        neg[both] = [lookup[k] for k in zip(part["sentence"], part["neg_image"])]
    else:
        probs = np.asarray(scorer.choose_image([[p, q] for p, q in zip(part["pos_image"], part["neg_image"])],
                                               part["sentence"].tolist(), head=head), float)
        pos[both], neg[both] = probs[:, 0], probs[:, 1]
    return pos, neg


def score_triplets(scorer: Scorer, items: pd.DataFrame, images: Sequence[Any] | None = None,
                   template: str = "default") -> pd.DataFrame:
    """s(I, target) and s(I, distractor) for every triplet, as the paper computes them.

    The choice head (:func:`probekit.scorers.head_for`) answers: an ITM model gives each sentence's match
    probability, a dual encoder a softmax over the two sentences for the one image (s(I, S1) = 1 - s(I, S2)).
    ``images`` overrides the image column (e.g. crops); rows without an image get NaN.  ``template="alt"`` uses
    the alternative sentences ("the man wears glasses").
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
                                                        [candidates[i] for i in present],
                                                        head=head_for(scorer, "choice")), dtype=float)
    return pd.DataFrame({"item_id": items["item_id"].to_numpy(), "s_target": scores[:, 0],
                         "s_distractor": scores[:, 1]}, index=items.index)
