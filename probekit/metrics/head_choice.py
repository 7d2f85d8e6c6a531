"""Both heads of one model on the same verb pairs: its ITM head's choice against its masked-LM head's.

Each item is a verb pair under the positive image (:func:`probekit.data.masking.verb_choice_items`): the sentence
with the true verb v+ and the same sentence with the verb-negative's v−.  The caller asks the model
(:func:`probekit.studies.masking.scores.head_scores`); nothing here calls a model.

* **ITM head** (pairwise choice): right when match(image, sentence with v+) > match(image, sentence with v−);
* **MLM head** (two-way choice): the verb masked, the image shown, right when P(v+) > P(v−) at the verb's place,
  the two verbs alone compared (the vocabulary's other words play no part); a verb of several pieces is scored as
  the study's whole-word rule scores it, the product of its pieces' probabilities (one mask per piece).

**Ties** count 1/2 for either head, as in the verbs chapter's pairwise metric
(:func:`probekit.metrics.itm.pair_credit`): a head that cannot tell the two apart sits at chance, 50%.

Rows (:func:`head_rows`; probe ``verb choice``, subset ``verb``, over the pairs both heads scored, and
:func:`head_rows_by` the same per cue, subset the cue, where the pairs say what tells their verbs apart): ``accuracy``
per head (condition ``MLM head`` / ``ITM head``, chance 0.5); ``accuracy_diff`` ``MLM head − ITM head``, its
interval a paired bootstrap over the same pairs (chance 0); and the discordant pairs, McNemar's counts as shares
of the pairs (metric ``discordant``, condition ``MLM head only`` / ``ITM head only``: the pairs where that head's
credit is above the other's; the difference of the two shares is the difference of accuracies).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.metrics.itm import pair_credit
from probekit.results import frame, items_frame, row
from probekit.stats import bootstrap_ci

STUDY, PROBE, SUBSET = "masking", "verb choice", "verb"
MLM, ITM = "MLM head", "ITM head"
DIFF = f"{MLM} − {ITM}"
ONLY = {MLM: f"{MLM} only", ITM: f"{ITM} only"}
CHANCE = 0.5


def head_credit(scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` (``itm_pos``, ``itm_neg``, ``mlm_pos``, ``mlm_neg`` per item) plus each head's credit
    (``itm_correct``, ``mlm_correct``: :func:`~probekit.metrics.itm.pair_credit`), keeping the items both heads
    scored."""
    out = scores.assign(itm_correct=pair_credit(scores["itm_pos"], scores["itm_neg"]),
                        mlm_correct=pair_credit(scores["mlm_pos"], scores["mlm_neg"]))
    return out[out["itm_correct"].notna() & out["mlm_correct"].notna()].reset_index(drop=True)


def head_rows(credit: pd.DataFrame, model: str, seed: int = 0, subset: str = SUBSET) -> pd.DataFrame:
    """The rows of the module docstring for one ``model`` from :func:`head_credit`'s items, under ``subset``
    (resampled by their ``unit`` where ``credit`` has that column: the verb pairs drawn from one sentence's
    draw together)."""
    mlm, itm = credit["mlm_correct"].to_numpy(float), credit["itm_correct"].to_numpy(float)
    units = credit["unit"].to_numpy() if "unit" in credit else None
    ids = credit["item_id"].to_numpy() if "item_id" in credit else None   # without: its pairs named by position

    def one(condition: str, metric: str, values: np.ndarray, chance: float) -> dict:
        return row(study=STUDY, probe=PROBE, model=model, condition=condition, subset=subset, metric=metric,
                   value=values.mean() if len(values) else np.nan,
                   ci=bootstrap_ci(values, seed=seed, clusters=units, ids=ids), n=len(values), chance=chance)
    return frame([one(MLM, "accuracy", mlm, CHANCE), one(ITM, "accuracy", itm, CHANCE),
                  one(DIFF, "accuracy_diff", mlm - itm, 0.0),
                  one(ONLY[MLM], "discordant", (mlm > itm).astype(float), np.nan),
                  one(ONLY[ITM], "discordant", (itm > mlm).astype(float), np.nan)])


def head_rows_by(credit: pd.DataFrame, model: str, cues: pd.Series | None = None, seed: int = 0) -> pd.DataFrame:
    """:func:`head_rows` over every pair (subset ``verb``), then over the pairs of each cue in the order first met
    (``cues``: what tells a pair's two verbs apart, by item id, e.g. the toy world's "the object's place" or "the
    pose", :func:`probekit.toyworld.svo.verb_cue`; subset: the cue), each from the same pairs' credits."""
    parts = [head_rows(credit, model, seed)]
    if cues is not None:
        cue = credit["item_id"].map(cues)
        parts += [head_rows(credit[cue == c].reset_index(drop=True), model, seed, subset=str(c))
                  for c in dict.fromkeys(cue.dropna())]
    return frame(pd.concat(parts, ignore_index=True))


def discordant_count(r) -> int:
    """How many pairs a ``discordant`` row counts (its share of its ``n`` pairs), McNemar's b or c."""
    return round(float(r["value"]) * float(r["n"]))


def head_items(credit: pd.DataFrame, pairs: pd.DataFrame, model: str) -> pd.DataFrame:
    """The item rows behind :func:`head_rows`' accuracies: per pair and head (``condition``), the two sentences,
    the head's two scores (``score_pos``, ``score_neg``: match probabilities, or summed log-probabilities of the
    verb's pieces) and ``correct``, its credit; the mean of ``correct`` over a head's rows is its accuracy."""
    shown = credit.merge(pairs[["item_id", "sentence_pos", "sentence_neg", "verb_pos", "verb_neg"]], on="item_id")
    heads = [shown.assign(condition=head, score_pos=shown[f"{h}_pos"], score_neg=shown[f"{h}_neg"],
                          correct=shown[f"{h}_correct"]) for head, h in ((MLM, "mlm"), (ITM, "itm"))]
    keep = ["item_id", "condition", "sentence_pos", "sentence_neg", "verb_pos", "verb_neg", "score_pos", "score_neg",
            "correct"]
    return items_frame(pd.concat([h[keep] for h in heads], ignore_index=True), study=STUDY, probe=PROBE,
                       model=model, subset=SUBSET)
