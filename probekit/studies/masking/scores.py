"""What the guided-masking study asks a model: its top-k fillers of the masked verb (one mask per gold piece),
under each image condition and with the text alone, its match probabilities of the verb pairs under each
condition, and both heads' scores of a verb pair's two verbs (:func:`head_scores`).  :mod:`probekit.metrics.masking`
and :mod:`probekit.metrics.head_choice` turn the answers into verdicts and rows and never call a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from probekit.ablation import PatchGrid, condition_images
from probekit.data.masking import verb_choice_items
from probekit.metrics.head_choice import head_credit, head_items, head_rows_by
from probekit.metrics.itm import itm_accuracy, units as itm_units
from probekit.metrics.masking import PER_ITEM, STUDY, TEXT_ONLY, pooled_rows, score_predictions
from probekit.results import concat, concat_items, frame
from probekit.scorers import MASK, Scorer
from probekit.studies.pair_scores import score_pairs

#: (model, image condition) -> the image it sees per item (None: no image, or no box to ablate)
ConditionPaths = dict[tuple[str, str], list[Path | None]]


def mask_span(sentence: str, start: int, end: int, n_masks: int, mask: str = MASK) -> str:
    """``sentence`` with characters ``start:end`` replaced by ``n_masks`` mask tokens separated by spaces."""
    if not 0 <= start < end <= len(sentence):
        raise ValueError(f"verb span {start}:{end} lies outside the sentence {sentence!r}")
    if n_masks < 1:
        raise ValueError(f"n_masks must be at least 1, got {n_masks}")
    return sentence[:start] + " ".join([mask] * n_masks) + sentence[end:]


def verb_pieces(scorer: Scorer, items: pd.DataFrame) -> list[list[str]]:
    """The gold pieces of each item's verb as ``scorer``'s tokenizer splits its surface form."""
    return [scorer.word_pieces(item.sentence[int(item.verb_start):int(item.verb_end)])
            for item in items.itertuples(index=False)]


def predict_verbs(scorer: Scorer, items: pd.DataFrame, pieces: Sequence[Sequence[str]],
                  images: Sequence[str] | None = None, k: int = 5) -> list[Any]:
    """Mask each item's verb with one mask per gold piece (``pieces``, :func:`verb_pieces`); return
    ``scorer.fill_mask``'s per-item predictions (``images``: one path per item, or None for text only)."""
    texts = [mask_span(item.sentence, int(item.verb_start), int(item.verb_end), len(p))
             for item, p in zip(items.itertuples(index=False), pieces)]
    return scorer.fill_mask(texts, images=images, k=k)


def guided_masking(items: pd.DataFrame, scorers: Sequence[Scorer], text_scorer: Scorer | None,
                   images: ConditionPaths, k: int = 5) -> pd.DataFrame:
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
        if text is not None and text_scorer is not None:
            frames.append(text.assign(model=scorer.name, condition=TEXT_ONLY, scored_by=text_scorer.name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=[*PER_ITEM, "model", "condition", "scored_by"])


def head_scores(scorer: Scorer, items: pd.DataFrame) -> pd.DataFrame:
    """Per item of :func:`probekit.data.masking.verb_choice_items`, under its image: the match head's probability
    of ``sentence_pos`` and of ``sentence_neg`` (``itm_pos``, ``itm_neg``), and the masked-LM head's log-probability
    of each verb's surface form at the verb's place (``mlm_pos``, ``mlm_neg``): the verb masked with one mask per
    piece of that form and the pieces' log-probabilities summed, i.e. the joint probability of the study's
    whole-word rule (positions predicted independently).  NaN where the image is unreadable."""
    images, n = [str(p) for p in items["image"]], len(items)
    match = scorer.match(images + images, [*items["sentence_pos"], *items["sentence_neg"]])
    words = [*items["word_pos"], *items["word_neg"]]
    masked = [mask_span(item.sentence_pos, int(item.verb_start), int(item.verb_end), len(scorer.word_pieces(word)))
              for item, word in zip([*items.itertuples(index=False)] * 2, words)]
    mlm = np.array([np.nan if f is None else float(np.sum(f))
                    for f in scorer.mask_logprobs(masked, words, images + images)])
    return items[["item_id"]].assign(itm_pos=match[:n], itm_neg=match[n:], mlm_pos=mlm[:n], mlm_neg=mlm[n:])


def both_heads(scorer: Scorer) -> bool:
    """Whether ``scorer`` sees images and has both a match (ITM) head and a masked-LM head."""
    return not scorer.text_only and {"match", "fill_mask"} <= set(scorer.capabilities)


def head_choice(scorers: Sequence[Scorer], pairs: pd.DataFrame, root: Path, seed: int = 0,
                cues: pd.Series | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Both heads of each scorer (:func:`both_heads`) on the verb-negative rows of a ``verbs`` table, each positive
    image shown as the study's "full image" condition shows it (written at the model's input size under ``root``):
    (rows of :func:`probekit.metrics.head_choice.head_rows_by`, per cue too when ``cues`` says what tells each
    row's verbs apart (:func:`probekit.toyworld.svo.verb_cue`, aligned with ``pairs``), their item rows, the verb
    pairs)."""
    items = verb_choice_items(pairs)
    units = itm_units(pairs).set_axis(pairs["item_id"])   # the verbs table's unit of each verb pair
    by_item = None if cues is None else pd.Series(cues.to_numpy(), index=pairs["item_id"].to_numpy())
    rows, shown = [], []
    for scorer in scorers:
        full = condition_images(pairs["pos_image"].tolist(), "full image", PatchGrid.of(scorer), root)
        mine = verb_choice_items(pairs.assign(pos_image=[None if p is None else str(p) for p in full]))
        scores = head_scores(scorer, mine) if len(mine) else None
        credit = (head_credit(scores.assign(unit=scores["item_id"].map(units)))  # type: ignore[union-attr,index]
                  if len(mine) else pd.DataFrame())  # scores is None only without items
        if len(credit):
            rows.append(head_rows_by(credit, scorer.name, by_item, seed))
            shown.append(head_items(credit, mine, scorer.name))
    return concat(rows), concat_items(shown), items


def itm_under_ablation(pairs: pd.DataFrame, scorers: Sequence[Scorer],
                       images: Mapping[tuple[str, str], tuple[list[Path | None], ...]],
                       threshold: float = 0.5) -> pd.DataFrame:
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
