"""Guided masking: mask the verb, ask a masked-LM head for it, score the top-k after lemmatization.

The verb's surface form (``sentence[verb_start:verb_end]``) is replaced by as many mask tokens as the model's
tokenizer splits it into (``scorer.word_pieces``), so the model is asked for a word of the verb's length in
pieces, not told how it is spelt.

**Lemma matching.**  Gold and predicted words are lemmatized as verbs with ``lemminflect`` (rule-based, no
download at run time; an irregular form such as "ran" maps to "run", "sitting" to "sit").  A word may have
several verb lemmas ("saw" -> "see", "saw"); a caption counts as correct when a gold lemma is among the lemmas
of its top-k candidate words.

**Multi-piece verbs.**  When the verb takes several pieces, the candidate words are the ``k`` best
*combinations* of per-position predictions: each masked position contributes its top-k pieces, a combination's
probability is the product of its pieces' probabilities (the head predicts positions independently), and the
``k`` most probable combinations, joined into words by the tokenizer's continuation convention ("##" continues
a WordPiece word; "Ġ"/"▁" start a new BPE/SentencePiece word), are the top-k words.  For a one-piece verb this
is exactly the head's top-k.  A combination that spells several words never matches a one-word verb.

**Rows.**  :func:`accuracy_rows` gives top-k accuracy per model × condition in the result schema (study
``masking``, probe ``top-k``, metric ``accuracy``, chance :func:`topk_chance`); :func:`drop_rows` the paired
differences between conditions (metric ``accuracy_diff``, condition "full image − subject ablated", chance 0);
:func:`itm_under_ablation` ITM accuracy rows (probe ``itm``) per image condition.

The scoring functions take item tables and predictions, never a model; :func:`predict_verbs`,
:func:`guided_masking` and :func:`itm_under_ablation` are the ones that call scorers, on image paths the caller
made (``probekit.ablation``): this module writes no images.
"""

from __future__ import annotations

import heapq
import re
from itertools import product

import numpy as np
import pandas as pd
from lemminflect import getLemma

from probekit.metrics.itm import itm_accuracy, score_pairs
from probekit.results import concat, frame, row
from probekit.scorers import MASK
from probekit.stats import bootstrap_ci

_WORD_START = ("Ġ", "▁")
STUDY, PROBE, TEXT_ONLY = "masking", "top-k", "text only"
#: the paired differences of top-k accuracy the study reports (a − b)
DROPS = (("full image", "subject ablated"), ("full image", "image ablated"), ("full image", TEXT_ONLY),
         ("subject ablated", "image ablated"))


def mask_span(sentence: str, start: int, end: int, n_masks: int, mask: str = MASK) -> str:
    """``sentence`` with characters ``start:end`` replaced by ``n_masks`` mask tokens separated by spaces."""
    if not 0 <= start < end <= len(sentence):
        raise ValueError(f"verb span {start}:{end} lies outside the sentence {sentence!r}")
    if n_masks < 1:
        raise ValueError(f"n_masks must be at least 1, got {n_masks}")
    return sentence[:start] + " ".join([mask] * n_masks) + sentence[end:]


def verb_lemmas(word: str) -> frozenset[str]:
    """All verb lemmas of ``word`` (lower-cased; out-of-vocabulary words by lemminflect's rules)."""
    w = re.sub(r"[^a-z'-]", "", word.lower())
    if not w:
        return frozenset()
    return frozenset(getLemma(w, upos="VERB", lemmatize_oov=True))


def join_pieces(pieces) -> str:
    """Join tokenizer pieces into text.  WordPiece: "##x" continues the previous word.  BPE/SentencePiece
    (some piece starts with "Ġ" or "▁"): a marked piece starts a word, an unmarked one continues it."""
    bpe = any(p.startswith(_WORD_START) for p in pieces)
    words: list[str] = []
    for piece in pieces:
        if bpe and piece.startswith(_WORD_START):
            words.append(piece[1:])
        elif words and (bpe or piece.startswith("##")):
            words[-1] += piece.removeprefix("##")
        else:
            words.append(piece.removeprefix("##"))
    return " ".join(words)


def top_candidates(positions, k: int) -> list[tuple[str, float]]:
    """The ``k`` most probable words from per-position ``(piece, prob)`` predictions (see the module docstring)."""
    if len(positions) == 1:
        return [(join_pieces([p]), float(q)) for p, q in list(positions[0])[:k]]
    pools = [list(pos)[:k] for pos in positions]
    combos = heapq.nlargest(k, product(*pools), key=lambda c: np.prod([q for _, q in c]))
    return [(join_pieces([p for p, _ in c]), float(np.prod([q for _, q in c]))) for c in combos]


def score_predictions(items: pd.DataFrame, predictions, k: int = 5) -> pd.DataFrame:
    """One row per item: the gold lemma, the top-k words and their probabilities, the rank of the first
    candidate whose lemmas contain a gold lemma (NaN if none) and ``correct`` (rank <= k).

    ``predictions`` holds, per item in order, ``scorer.fill_mask``'s list over masked positions of
    ``(piece, prob)`` tuples.
    """
    if len(predictions) != len(items):
        raise ValueError(f"{len(predictions)} predictions for {len(items)} items")
    rows = []
    for item, positions in zip(items.itertuples(index=False), predictions):
        gold = verb_lemmas(item.verb) or frozenset([item.verb.lower()])
        cands = top_candidates(positions, k)
        rank = next((i + 1 for i, (w, _) in enumerate(cands) if verb_lemmas(w) & gold), np.nan)
        rows.append({"item_id": item.item_id, "verb": item.verb,
                     "predictions": [w for w, _ in cands], "probs": [p for _, p in cands],
                     "rank": rank, "correct": bool(rank == rank and rank <= k)})
    return pd.DataFrame(rows)


def predict_verbs(scorer, items: pd.DataFrame, images=None, k: int = 5) -> list:
    """Mask each item's verb with as many masks as ``scorer`` splits it into; return ``scorer.fill_mask``'s
    per-item predictions (``images``: one path per item, or None for text only)."""
    texts = []
    for item in items.itertuples(index=False):
        surface = item.sentence[int(item.verb_start):int(item.verb_end)]
        texts.append(mask_span(item.sentence, int(item.verb_start), int(item.verb_end),
                               len(scorer.word_pieces(surface))))
    return scorer.fill_mask(texts, images=images, k=k)


def topk_chance(verbs, k: int) -> float:
    """Chance of top-k verb accuracy: ``k`` / the number of distinct gold verb lemmas (capped at 1), i.e. what a
    guesser that knows the probe's verb set and names ``k`` of them at random gets; NaN for no verbs.  A
    masked-LM head chooses from its whole vocabulary, so for it this is an upper bound on chance."""
    lemmas = {str(v).strip().lower() for v in verbs}
    return min(1.0, k / len(lemmas)) if lemmas else float("nan")


def accuracy_rows(per_item: pd.DataFrame, chance: float = float("nan"), seed: int = 0) -> pd.DataFrame:
    """Top-k accuracy per model (the one that answered, ``scored_by``) and condition, with a 95% percentile
    bootstrap interval over captions; a text-only model listed under several image models counts once."""
    once = per_item.drop_duplicates(["scored_by", "condition", "item_id"])
    rows = []
    for (model, condition), group in once.groupby(["scored_by", "condition"], sort=False):
        hits = group["correct"].dropna().to_numpy(dtype=float)
        rows.append(row(study=STUDY, probe=PROBE, model=model, condition=condition, metric="accuracy",
                        value=hits.mean() if len(hits) else np.nan, ci=bootstrap_ci(hits, seed=seed),
                        n=len(hits), chance=chance))
    return frame(rows)


def drop_rows(per_item: pd.DataFrame, pairs=DROPS, seed: int = 0) -> pd.DataFrame:
    """Paired differences of top-k accuracy per model: ``a − b`` for each (a, b) in ``pairs`` (metric
    ``accuracy_diff``, condition "a − b"), over the captions scored in both, with a paired bootstrap interval
    (the same captions are resampled for both conditions); chance 0."""
    rows = []
    for model, group in per_item.groupby("model", sort=False):
        table = group.pivot(index="item_id", columns="condition", values="correct").astype(float)
        for a, b in pairs:
            if a not in table or b not in table:
                continue
            diff = (table[a] - table[b]).dropna().to_numpy()
            rows.append(row(study=STUDY, probe=PROBE, model=model, condition=f"{a} − {b}", metric="accuracy_diff",
                            value=diff.mean() if len(diff) else np.nan, ci=bootstrap_ci(diff, seed=seed),
                            n=len(diff), chance=0.0))
    return frame(rows)


def guided_masking(items: pd.DataFrame, scorers, text_scorer, images, k: int = 5) -> pd.DataFrame:
    """Per item, model and condition: :func:`score_predictions`'s row plus ``model``, ``condition`` and
    ``scored_by`` (the model that answered).  ``images[(scorer.name, condition)]`` is one path (or None) per
    item for each image condition of each masked-LM scorer; "text only" is answered once by ``text_scorer``
    and listed under every model (same items, so drops stay paired).  An item whose image under a condition
    is None (missing image, or no subject box to ablate) has no row in that condition."""
    frames, text = [], None
    if text_scorer is not None:
        text = score_predictions(items, predict_verbs(text_scorer, items, None, k), k)
    for scorer in scorers:
        for (name, condition), paths in images.items():
            if name != scorer.name:
                continue
            keep = np.array([p is not None for p in paths], bool)
            part = items[keep]
            preds = predict_verbs(scorer, part, [str(p) for p in paths if p is not None], k) if len(part) else []
            frames.append(score_predictions(part, preds, k).assign(model=scorer.name, condition=condition,
                                                                   scored_by=scorer.name))
        if text is not None:
            frames.append(text.assign(model=scorer.name, condition=TEXT_ONLY, scored_by=text_scorer.name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["item_id", "verb", "predictions", "probs", "rank", "correct", "model", "condition", "scored_by"])


def itm_under_ablation(pairs: pd.DataFrame, scorers, images, threshold: float = 0.5) -> pd.DataFrame:
    """ITM accuracy rows (``probekit.metrics.itm.itm_accuracy``: positives, negatives, average, per negative
    type) of each scorer on a ``verbs`` table under each image condition: ``images[(scorer.name, condition)]``
    = (positive paths, negative paths), one per row, None where the image or its box is missing (that pair is
    left out of the condition).  Probe ``itm``, the condition in ``condition``, chance 0.5 (a coin flip is right
    on half the positives and half the negatives)."""
    parts = []
    for scorer in scorers:
        for (name, condition), (pos, neg) in images.items():
            if name != scorer.name:
                continue
            shown = pairs.assign(pos_image=[None if p is None else str(p) for p in pos],
                                 neg_image=[None if p is None else str(p) for p in neg])
            table = itm_accuracy(pairs, *score_pairs(scorer, shown, head="match"), model=scorer.name,
                                 threshold=threshold)
            parts.append(frame(table.assign(study=STUDY, probe="itm", condition=condition), chance=0.5))
    return concat(parts)
