"""What the guided-masking study asks a model: its top-k fillers of the masked verb (one mask per gold piece),
under each image condition and with the text alone, and its match probabilities of the verb pairs under each
condition.  :mod:`probekit.metrics.masking` turns the answers into verdicts and rows and never calls a model."""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.metrics.itm import itm_accuracy
from probekit.metrics.masking import PER_ITEM, STUDY, TEXT_ONLY, pooled_rows, score_predictions
from probekit.results import concat, frame
from probekit.scorers import MASK
from probekit.studies.pair_scores import score_pairs


def mask_span(sentence: str, start: int, end: int, n_masks: int, mask: str = MASK) -> str:
    """``sentence`` with characters ``start:end`` replaced by ``n_masks`` mask tokens separated by spaces."""
    if not 0 <= start < end <= len(sentence):
        raise ValueError(f"verb span {start}:{end} lies outside the sentence {sentence!r}")
    if n_masks < 1:
        raise ValueError(f"n_masks must be at least 1, got {n_masks}")
    return sentence[:start] + " ".join([mask] * n_masks) + sentence[end:]


def verb_pieces(scorer, items: pd.DataFrame) -> list[list[str]]:
    """The gold pieces of each item's verb as ``scorer``'s tokenizer splits its surface form."""
    return [scorer.word_pieces(item.sentence[int(item.verb_start):int(item.verb_end)])
            for item in items.itertuples(index=False)]


def predict_verbs(scorer, items: pd.DataFrame, pieces, images=None, k: int = 5) -> list:
    """Mask each item's verb with one mask per gold piece (``pieces``, :func:`verb_pieces`); return
    ``scorer.fill_mask``'s per-item predictions (``images``: one path per item, or None for text only)."""
    texts = [mask_span(item.sentence, int(item.verb_start), int(item.verb_end), len(p))
             for item, p in zip(items.itertuples(index=False), pieces)]
    return scorer.fill_mask(texts, images=images, k=k)


def guided_masking(items: pd.DataFrame, scorers, text_scorer, images, k: int = 5) -> pd.DataFrame:
    """Per item, model and condition: :func:`score_predictions`'s row plus ``model``, ``condition`` and
    ``scored_by`` (the model that answered).  ``images[(scorer.name, condition)]`` is one path (or None) per
    item for each image condition of each masked-LM scorer; "text only" is answered once by ``text_scorer``
    and listed under every model.  An item whose image under a condition is None (missing image, or no subject
    box to ablate) gets a row without a verdict there (:func:`common_items` then sets it apart)."""
    frames, text = [], None
    if text_scorer is not None:
        pieces = verb_pieces(text_scorer, items)
        text = score_predictions(items, predict_verbs(text_scorer, items, pieces, None, k), pieces, k)
    for scorer in scorers:
        pieces = verb_pieces(scorer, items) if len(items) else []
        for (name, condition), paths in images.items():
            if name != scorer.name:
                continue
            shown = [i for i, p in enumerate(paths) if p is not None]
            preds = [None] * len(items)
            if shown:
                found = predict_verbs(scorer, items.iloc[shown], [pieces[i] for i in shown],
                                      [str(paths[i]) for i in shown], k)
                for i, pred in zip(shown, found):
                    preds[i] = pred
            frames.append(score_predictions(items, preds, pieces, k).assign(model=scorer.name, condition=condition,
                                                                            scored_by=scorer.name))
        if text is not None:
            frames.append(text.assign(model=scorer.name, condition=TEXT_ONLY, scored_by=text_scorer.name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=[*PER_ITEM, "model", "condition", "scored_by"])


def itm_under_ablation(pairs: pd.DataFrame, scorers, images, threshold: float = 0.5) -> pd.DataFrame:
    """ITM accuracy rows (``probekit.metrics.itm.itm_accuracy``: positives, negatives, balanced average, per
    negative type; and :func:`pooled_rows`) of each scorer on a ``verbs`` table under each image condition:
    ``images[(scorer.name, condition)]`` = (positive paths, negative paths), one per row, None where the image
    or its box is missing.  Only the rows with both images in every condition of the scorer are scored, so each
    condition sees the same pairs.  Probe ``itm``, the condition in ``condition``, chance 0.5 (a coin flip is
    right on half the positives and half the negatives)."""
    parts = []
    for scorer in scorers:
        mine = {c: paths for (name, c), paths in images.items() if name == scorer.name}
        complete = np.array([all(p is not None for pos, neg in mine.values() for p in (pos[i], neg[i]))
                             for i in range(len(pairs))], bool)
        kept = pairs[complete]
        for condition, (pos, neg) in mine.items():
            shown = kept.assign(pos_image=[str(p) for p, ok in zip(pos, complete) if ok],
                                neg_image=[str(p) for p, ok in zip(neg, complete) if ok])
            scores = score_pairs(scorer, shown, head="match")
            table = itm_accuracy(kept, *scores, model=scorer.name, threshold=threshold)
            parts += [frame(table.assign(study=STUDY, probe="itm", condition=condition), chance=0.5),
                      pooled_rows(kept, *scores, model=scorer.name, threshold=threshold).assign(condition=condition)]
    return concat(parts)
