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

The scoring functions take item tables and predictions, never a model; :func:`predict_verbs`,
:func:`guided_masking` and :func:`itm_under_ablation` are the ones that call scorers.
"""

from __future__ import annotations

import heapq
import re
from itertools import product

import numpy as np
import pandas as pd
from lemminflect import getLemma

from probekit.ablation import CONDITIONS, PatchGrid, condition_images
from probekit.metrics.itm import itm_accuracy
from probekit.scorers import MASK
from probekit.stats import bootstrap_ci

_WORD_START = ("Ġ", "▁")


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


def accuracy_table(per_item: pd.DataFrame, by=("model", "condition"), seed: int = 0) -> pd.DataFrame:
    """Top-k accuracy per group with a 95 % percentile-bootstrap interval over items."""
    rows = []
    for key, group in per_item.groupby(list(by), sort=False):
        hits = group["correct"].dropna().to_numpy(dtype=float)
        low, high = bootstrap_ci(hits, seed=seed)
        rows.append({**dict(zip(by, key)), "accuracy": hits.mean(), "ci_low": low, "ci_high": high,
                     "n": len(hits)})
    return pd.DataFrame(rows)


def ablation_drops(per_item: pd.DataFrame, reference: str, by=("model",), seed: int = 0) -> pd.DataFrame:
    """Accuracy of ``reference`` minus each other condition, per group, with a paired bootstrap interval
    (resampling items, so both conditions see the same items)."""
    rows = []
    for key, group in per_item.groupby(list(by), sort=False):
        table = group.pivot(index="item_id", columns="condition", values="correct").astype(float)
        if reference not in table:
            raise ValueError(f"reference condition {reference!r} missing for {key}; have {list(table)}")
        for condition in table.columns.drop(reference):
            diff = (table[reference] - table[condition]).dropna().to_numpy()
            low, high = bootstrap_ci(diff, seed=seed)
            rows.append({**dict(zip(by, key)), "condition": condition,
                         "drop": diff.mean(), "ci_low": low, "ci_high": high, "n": len(diff)})
    return pd.DataFrame(rows)


def _images_of(items: pd.DataFrame, scorer, condition: str, data_dir) -> list:
    if condition == "text only":
        return [None] * len(items)
    grid = PatchGrid.of(scorer)
    return condition_images(items["image"].tolist(), condition, grid, data_dir, boxes=items["subject_box"].tolist())


def guided_masking(items: pd.DataFrame, scorers, text_scorer, data_dir, k: int = 5) -> pd.DataFrame:
    """Per item, model and condition: :func:`score_predictions`'s row plus ``model``, ``condition`` and
    ``scored_by`` (the model that answered).  Conditions: ``probekit.ablation.CONDITIONS`` for each masked-LM
    scorer, and "text only" answered once by ``text_scorer`` and listed under every model (same items, so
    drops stay paired).  An item whose image (or, when ablating the subject, whose box) is missing has no row
    in that condition."""
    frames, text = [], None
    if text_scorer is not None:
        text = score_predictions(items, predict_verbs(text_scorer, items, None, k), k)
    for scorer in scorers:
        for condition in CONDITIONS:
            images = _images_of(items, scorer, condition, data_dir)
            keep = np.array([p is not None for p in images], bool)
            part = items[keep]
            preds = predict_verbs(scorer, part, [str(p) for p in images if p is not None], k) if len(part) else []
            frames.append(score_predictions(part, preds, k).assign(model=scorer.name, condition=condition,
                                                                   scored_by=scorer.name))
        if text is not None:
            frames.append(text.assign(model=scorer.name, condition="text only", scored_by=text_scorer.name))
    return pd.concat(frames, ignore_index=True)


def _match(scorer, images, texts) -> np.ndarray:
    """``scorer.match`` on the distinct (image, text) pairs; NaN where the image is None."""
    pairs = list(dict.fromkeys((str(i), t) for i, t in zip(images, texts) if i is not None))
    scores = dict(zip(pairs, scorer.match([i for i, _ in pairs], [t for _, t in pairs]))) if pairs else {}
    return np.array([np.nan if i is None else scores[(str(i), t)] for i, t in zip(images, texts)], float)


def itm_under_ablation(pairs: pd.DataFrame, scorers, pos_boxes, neg_boxes, data_dir,
                       threshold: float = 0.5) -> pd.DataFrame:
    """ITM accuracy (``probekit.metrics.itm.itm_accuracy``: positives, negatives, average, per negative type)
    on a ``verbs`` table with both images of every row under each of ``CONDITIONS``; a ``condition`` column
    is added.  A row whose image or box is missing is left out of that condition (NaN score)."""
    frames = []
    for scorer in scorers:
        grid = PatchGrid.of(scorer)
        for condition in CONDITIONS:
            pos = condition_images(pairs["pos_image"].tolist(), condition, grid, data_dir, boxes=pos_boxes)
            neg = condition_images(pairs["neg_image"].tolist(), condition, grid, data_dir, boxes=neg_boxes)
            texts = pairs["sentence"].tolist()
            table = itm_accuracy(pairs, _match(scorer, pos, texts), _match(scorer, neg, texts), model=scorer.name,
                                 threshold=threshold)
            frames.append(table.assign(condition=condition))
    return pd.concat(frames, ignore_index=True)
