"""Guided masking: mask the verb, ask a masked-LM head for it, score the top-k after lemmatization.

The verb's surface form (``sentence[verb_start:verb_end]``) is replaced by as many mask tokens as the model's
tokenizer splits it into (``scorer.word_pieces``), so the model is asked for a word of the verb's length in
pieces, not told how it is spelt.  Lemmas, piece markers and the two scoring rules are
:mod:`probekit.metrics.verb_pieces`'s:

* ``correct`` (metric ``accuracy``, the paper's rule): at least half of the verb's pieces hit, a piece hitting
  when its lemma is among its position's top-k lemmas;
* ``word_correct`` (metric ``word_accuracy``): a gold verb lemma is among the lemmas of the top-k whole words
  (combinations of pieces ranked by joint probability).  For a one-piece verb the two agree.

**Rows.**  :func:`accuracy_rows` gives both accuracies per model × condition in the result schema (study
``masking``, probe ``top-k``, chance :func:`topk_chance`); :func:`drop_rows` the paired differences between
conditions (metric ``<metric>_diff``, condition "full image − subject ablated", chance 0);
:func:`pooled_rows` the pooled ITM average beside the balanced one (probe ``itm``, per image condition).

**One item set.**  :func:`common_items` keeps the items scored in every condition; drops and accuracies then
compare the same captions (the others are the caller's to report).

**Units.**  Captions of one image are not independent: with ``units`` (item_id -> image id) the intervals resample
images whole (a cluster bootstrap, :func:`probekit.stats.bootstrap_ci`); the ITM rows resample the verbs table's
units (:func:`probekit.metrics.itm.units`: the toy world's draw of a positive image with its mirrors, else the
sentence).

The functions here take item tables and predictions, never a model (:mod:`probekit.studies.masking.scores` asks
the models, on image paths the caller made, ``probekit.ablation``): this module writes no images.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.metrics.itm import negative_type, pair_ids, units as itm_units
from probekit.metrics.verb_pieces import (piece_ranks, pieces_correct, top_candidates, verb_lemmas)
from probekit.results import frame, items_frame, row
from probekit.stats import bootstrap_ci

STUDY, PROBE, TEXT_ONLY = "masking", "top-k", "text only"
#: metric name -> the per-item column it averages
METRICS = {"accuracy": "correct", "word_accuracy": "word_correct"}
#: the paired differences of top-k accuracy the study reports (a − b)
#: (``image ablated − text only``: whether the model without the image still reads the caption as well as a text-only
#: model does, see :mod:`probekit.studies.masking.claims`)
DROPS = (("full image", "subject ablated"), ("full image", "image ablated"), ("full image", TEXT_ONLY),
         ("subject ablated", "image ablated"), ("image ablated", TEXT_ONLY))
PER_ITEM = ["item_id", "verb", "pieces", "piece_ranks", "hits", "correct", "predictions", "probs", "rank",
            "word_correct"]


def score_predictions(items: pd.DataFrame, predictions, pieces, k: int = 5) -> pd.DataFrame:
    """One row per item (columns ``PER_ITEM``): the gold ``pieces``, each position's gold-piece rank, the
    ``hits`` within top-k and ``correct`` (the paper's rule); the top-k whole words and their probabilities, the
    rank of the first whose lemmas contain a gold lemma (NaN if none) and ``word_correct`` (rank <= k).

    ``predictions`` holds, per item in order, ``scorer.fill_mask``'s list over masked positions of
    ``(piece, prob)`` tuples (None for an unreadable image: both verdicts NaN); ``pieces`` the verb's gold pieces
    per item (``scorer.word_pieces`` of its surface form).
    """
    if not len(predictions) == len(pieces) == len(items):
        raise ValueError(f"{len(predictions)} predictions and {len(pieces)} piece lists for {len(items)} items")
    rows = []
    for item, positions, gold_pieces in zip(items.itertuples(index=False), predictions, pieces):
        out = {"item_id": item.item_id, "verb": item.verb, "pieces": list(gold_pieces)}
        if positions is None:
            rows.append({**out, "piece_ranks": None, "hits": np.nan, "correct": np.nan, "predictions": None,
                         "probs": None, "rank": np.nan, "word_correct": np.nan})
            continue
        ranks = piece_ranks(gold_pieces, [list(p)[:k] for p in positions])
        hits = int(sum(r <= k for r in ranks))
        gold = verb_lemmas(item.verb) or frozenset([item.verb.lower()])
        cands = top_candidates(positions, k)
        rank = next((i + 1 for i, (w, _) in enumerate(cands) if verb_lemmas(w) & gold), np.nan)
        rows.append({**out, "piece_ranks": ranks, "hits": hits, "correct": pieces_correct(hits, len(ranks)),
                     "predictions": [w for w, _ in cands], "probs": [p for _, p in cands], "rank": rank,
                     "word_correct": bool(rank == rank and rank <= k)})
    return pd.DataFrame(rows, columns=PER_ITEM)


def topk_chance(verbs, k: int) -> float:
    """Chance of top-k verb accuracy: ``k`` / the number of distinct gold verb lemmas (capped at 1), i.e. what a
    guesser that knows the probe's verb set and names ``k`` of them at random gets; NaN for no verbs.  A
    masked-LM head chooses from its whole vocabulary, so for it this is an upper bound on chance."""
    lemmas = {str(v).strip().lower() for v in verbs}
    return min(1.0, k / len(lemmas)) if lemmas else float("nan")


def _units_of(item_ids, units: pd.Series | None):
    """The unit of each of ``item_ids`` (``units``: item_id -> unit), or None (captions one by one)."""
    return None if units is None else pd.Series(item_ids).map(units).astype(str).to_numpy()


def accuracy_rows(per_item: pd.DataFrame, chance: float = float("nan"), seed: int = 0,
                  subset: str = "all", units: pd.Series | None = None) -> pd.DataFrame:
    """Both accuracies (``METRICS``) per model (the one that answered, ``scored_by``) and condition, with a 95%
    percentile bootstrap interval over captions (over images with ``units``: item_id -> image id); a text-only
    model listed under several image models counts once.  Captions without a verdict (NaN) are not counted."""
    once = per_item.drop_duplicates(["scored_by", "condition", "item_id"])
    rows = []
    for (model, condition), group in once.groupby(["scored_by", "condition"], sort=False):
        for metric, column in METRICS.items():
            kept = group[group[column].notna()]
            hits = kept[column].to_numpy(dtype=float)
            rows.append(row(study=STUDY, probe=PROBE, model=model, condition=condition, subset=subset,
                            metric=metric, value=hits.mean() if len(hits) else np.nan,
                            ci=bootstrap_ci(hits, seed=seed, clusters=_units_of(kept["item_id"], units),
                                            ids=kept["item_id"].to_numpy()),
                            n=len(hits), chance=chance))
    return frame(rows)


def topk_items(per_item: pd.DataFrame, sentences: pd.Series, subset: str = "all") -> pd.DataFrame:
    """The item rows (:func:`probekit.results.items_frame`) behind :func:`accuracy_rows`: one per caption, model that
    answered (``model`` = ``scored_by``, a text-only model once) and condition, with the ``sentence``
    (``sentences``: item_id -> sentence), gold ``verb`` and its ``pieces``, the top-k whole words (``predictions``,
    ``probs``), ``rank``, ``word_correct``, ``hits`` and ``correct`` (the paper's rule), and ``subset``; the mean of
    ``correct`` (``word_correct``) over a model and condition's rows is its ``accuracy`` (``word_accuracy``) row."""
    once = per_item.drop_duplicates(["scored_by", "condition", "item_id"])
    out = once.drop(columns="model").rename(columns={"scored_by": "model"})
    out.insert(1, "sentence", out["item_id"].map(sentences).to_numpy())
    return items_frame(out.assign(subset=subset, word_correct=out["word_correct"].astype(float)), study=STUDY,
                       probe=PROBE)


def drop_rows(per_item: pd.DataFrame, pairs=DROPS, seed: int = 0, units: pd.Series | None = None) -> pd.DataFrame:
    """Paired differences of both accuracies per model: ``a − b`` for each (a, b) in ``pairs`` (metric
    ``<metric>_diff``, condition "a − b"), over the captions scored in both, with a paired bootstrap interval
    (the same captions, or with ``units`` the same images, are resampled for both conditions); chance 0."""
    rows = []
    for model, group in per_item.groupby("model", sort=False):
        for metric, column in METRICS.items():
            table = group.pivot(index="item_id", columns="condition", values=column).astype(float)
            for a, b in pairs:
                if a not in table or b not in table:
                    continue
                both = (table[a] - table[b]).dropna()
                diff = both.to_numpy()
                rows.append(row(study=STUDY, probe=PROBE, model=model, condition=f"{a} − {b}",
                                metric=f"{metric}_diff", value=diff.mean() if len(diff) else np.nan,
                                ci=bootstrap_ci(diff, seed=seed, clusters=_units_of(both.index, units),
                                                ids=both.index.to_numpy()),
                                n=len(diff), chance=0.0))
    return frame(rows)


def common_items(per_item: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows of the items with a verdict in every model × condition of ``per_item``, rows of the others)."""
    verdicts = per_item.pivot_table(index="item_id", columns=["model", "condition"], values="correct",
                                    aggfunc="first", dropna=False)
    full = verdicts.index[verdicts.notna().all(axis=1)] if verdicts.shape[1] else verdicts.index
    inside = per_item["item_id"].isin(full)
    return per_item[inside].reset_index(drop=True), per_item[~inside].reset_index(drop=True)


def pooled_rows(pairs: pd.DataFrame, pos_scores, neg_scores, model: str, threshold: float = 0.5,
                seed: int = 0) -> pd.DataFrame:
    """ITM accuracy pooled over all pairs (metric ``avg_pooled``): every distinct (sentence, positive image) and
    (sentence, negative image) pair counts once, so a subset with twice as many negatives weighs negatives
    twice (the paper's Table 1 average: 0.954 on 11,571 positives and 0.209 on 22,322 negatives give 0.463).
    Subsets ``all`` (rows of one negative type) and each negative type; chance 0.5."""
    scored = pairs[["sentence", "pos_image_id", "neg_image_id"]].assign(
        type=negative_type(pairs).to_numpy(), pos=np.asarray(pos_scores, float), neg=np.asarray(neg_scores, float),
        unit=itm_units(pairs).to_numpy())
    scored = scored[scored["type"].notna()]
    rows = []
    for subset in ["all", *dict.fromkeys(negative_type(pairs).dropna())]:
        part = scored if subset == "all" else scored[scored["type"] == subset]
        pos = part.drop_duplicates(["sentence", "pos_image_id"]).dropna(subset="pos")
        neg = part.drop_duplicates(["sentence", "neg_image_id"]).dropna(subset="neg")
        hits = np.concatenate([pos["pos"] >= threshold, neg["neg"] < threshold]).astype(float)
        unit = np.concatenate([pos["unit"], neg["unit"]])
        ids = np.concatenate([pair_ids(pos, "pos"), pair_ids(neg, "neg")])
        rows.append(row(study=STUDY, probe="itm", model=model, subset=subset, metric="avg_pooled",
                        value=hits.mean() if len(hits) else np.nan,
                        ci=bootstrap_ci(hits, seed=seed, clusters=unit, ids=ids), n=len(hits), chance=0.5))
    return frame(rows)


