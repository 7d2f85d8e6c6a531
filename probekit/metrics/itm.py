"""Image–text-matching accuracy on sentence x (positive, negative) image tables: SVO-Probes' Tables 4 and 6.

Inputs are an item table in the ``verbs`` schema and two score arrays aligned with its rows: the score of
(sentence, positive image) and of (sentence, negative image); NaN marks a pair that could not be scored.

* ``itm_accuracy``: a pair is predicted a match when its score >= ``threshold``.  Accuracy on positives (each
  (sentence, positive image) counted once), on negatives (each (sentence, negative image) counted once) and
  their equal-weight average, overall and per negative type.  A row belongs to a negative type when exactly
  that one of ``subj_neg``/``verb_neg``/``obj_neg`` is set; "all" is the union of those rows (rows with
  several or no flags set are left out everywhere, as in the paper's Table 4).
* ``pairwise_accuracy``: the fraction of (sentence, positive image, negative image) triples where the positive
  image scores higher; ties count 1/2.  Every model gets it (dual encoders only it).
* ``verb_accuracy`` / ``ranked_verbs``: accuracy per verb (lemma of the positive triplet's verb) for verbs
  with at least ``min_count`` distinct negative images (``verb_image_counts``), and the hardest and easiest
  ``k`` (Table 6).

``score_pairs`` is the hand-off from a scorer to these metrics: it returns the two score arrays, scoring each
distinct (sentence, image) pair once and leaving NaN where an image is missing.

Rows are in the one result schema (:mod:`probekit.results`), ``study="verbs"``, values as fractions, each with
a percentile-bootstrap 95% interval (``probekit.stats.bootstrap_ci``) over the counted units:

* ``probe="svo"``, ``subset`` "all"/"subject"/"verb"/"object": Table 4's ``pos``/``neg``/``avg`` with
  ``condition="threshold <t>"`` (the rows depend on the threshold; the paper's are at 0.5), and ``pairwise``
  with ``condition=""``.  ``n`` of "avg" is the number of positives plus negatives.
* ``probe="svo-verbs"``, ``subset`` = the verb: per-verb ``neg`` (at the threshold) or ``pairwise``.
* ``chance`` is 0.5 throughout: a coin flip per pair for ``pos``/``neg`` (and so for their average), and a
  random choice between the two images for ``pairwise``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.results import COLUMNS, frame
from probekit.stats import bootstrap_ci

NEG_TYPES = {"subject": "subj_neg", "verb": "verb_neg", "object": "obj_neg"}
SUBSETS = ["all", *NEG_TYPES]
PROBE, VERB_PROBE = "svo", "svo-verbs"
CHANCE = 0.5
HEADS = ("match", "similarity")


def condition(threshold: float) -> str:
    """The ``condition`` of thresholded rows: ``"threshold 0.5"``."""
    return f"threshold {threshold:g}"


def negative_type(items: pd.DataFrame) -> pd.Series:
    """Per row: "subject", "verb" or "object" when exactly that one flag is set, else None."""
    flags = items[list(NEG_TYPES.values())].astype(bool).to_numpy()
    single = flags.sum(axis=1) == 1
    names = np.array(list(NEG_TYPES))[flags.argmax(axis=1)]
    return pd.Series(np.where(single, names, None), index=items.index, dtype=object)


def _scored(items: pd.DataFrame, pos_scores, neg_scores) -> pd.DataFrame:
    pos_scores, neg_scores = np.asarray(pos_scores, float), np.asarray(neg_scores, float)
    if len(pos_scores) != len(items) or len(neg_scores) != len(items):
        raise ValueError(f"score arrays have {len(pos_scores)} and {len(neg_scores)} entries for {len(items)} rows")
    scored = items[["sentence", "pos_image_id", "neg_image_id", "verb"]].copy()
    scored["type"] = negative_type(items).to_numpy()
    scored["pos_score"], scored["neg_score"] = pos_scores, neg_scores
    return scored[scored["type"].notna()]


def _subset(scored: pd.DataFrame, subset: str) -> pd.DataFrame:
    return scored if subset == "all" else scored[scored["type"] == subset]


def _positives(scored: pd.DataFrame) -> np.ndarray:
    unique = scored.drop_duplicates(["sentence", "pos_image_id"])
    return unique["pos_score"].dropna().to_numpy()


def _negatives(scored: pd.DataFrame) -> np.ndarray:
    unique = scored.drop_duplicates(["sentence", "neg_image_id"])
    return unique["neg_score"].dropna().to_numpy()


def _row(model, metric, subset, values, statistic=np.mean, n_resamples=1000, seed=0, probe=PROBE,
         cond="") -> dict:
    values = np.asarray(values, float)
    value = float(statistic(values)) if len(values) else float("nan")
    low, high = bootstrap_ci(values, statistic, n_resamples=n_resamples, seed=seed)
    return dict(study="verbs", probe=probe, model=model, condition=cond, subset=subset, metric=metric,
                value=value, ci_low=low, ci_high=high, n=int(len(values)), chance=CHANCE, source="ours")


def _balanced_mean(values: np.ndarray) -> float:
    """Mean of column 0 over rows with column 1 == 1 and over rows with column 1 == 0, averaged."""
    pos, neg = values[values[:, 1] == 1, 0], values[values[:, 1] == 0, 0]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    return (pos.mean() + neg.mean()) / 2


def itm_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", threshold: float = 0.5,
                 n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Table 4: accuracy on positives ("pos"), negatives ("neg") and their mean ("avg") per subset.

    ``n`` of "avg" is the number of positives plus negatives; its interval resamples both together.
    """
    scored = _scored(items, pos_scores, neg_scores)
    rows, cond = [], condition(threshold)
    for subset in SUBSETS:
        part = _subset(scored, subset)
        pos_ok = (_positives(part) >= threshold).astype(float)
        neg_ok = (_negatives(part) < threshold).astype(float)
        both = np.column_stack([np.concatenate([pos_ok, neg_ok]),
                                np.concatenate([np.ones(len(pos_ok)), np.zeros(len(neg_ok))])])
        rows.append(_row(model, "avg", subset, both, _balanced_mean, n_resamples, seed, cond=cond))
        rows.append(_row(model, "pos", subset, pos_ok, np.mean, n_resamples, seed, cond=cond))
        rows.append(_row(model, "neg", subset, neg_ok, np.mean, n_resamples, seed, cond=cond))
    return frame(rows)


def score_pairs(scorer, items: pd.DataFrame, head: str) -> tuple[np.ndarray, np.ndarray]:
    """Score of (sentence, positive image) and (sentence, negative image) for every row of ``items``.

    ``head="match"``: ``scorer.match`` probabilities, each distinct (sentence, image) pair scored once (the
    scores a threshold applies to, and the choice head of ITM models).  ``head="similarity"``:
    ``scorer.choose_image`` over [positive, negative] per row with that head (a softmax over the two images'
    similarities), for rows with both images.  Missing images (None) give NaN.  Which head answers which
    question is ``probekit.scorers.head_for``'s decision, not this function's.
    """
    if head not in HEADS:
        raise ValueError(f"head must be one of {HEADS}, not {head!r}")
    n = len(items)
    pos, neg = np.full(n, np.nan), np.full(n, np.nan)
    has_pos = items["pos_image"].notna().to_numpy()
    has_neg = items["neg_image"].notna().to_numpy()
    if head == "match":
        pairs = pd.concat([items.loc[has_pos, ["sentence", "pos_image"]].set_axis(["text", "image"], axis=1),
                           items.loc[has_neg, ["sentence", "neg_image"]].set_axis(["text", "image"], axis=1)])
        pairs = pairs.drop_duplicates().reset_index(drop=True)
        if len(pairs):
            scores = np.asarray(scorer.match(pairs["image"].tolist(), pairs["text"].tolist()), float)
            lookup = dict(zip(zip(pairs["text"], pairs["image"]), scores))
            pos[has_pos] = [lookup[k] for k in zip(items.loc[has_pos, "sentence"], items.loc[has_pos, "pos_image"])]
            neg[has_neg] = [lookup[k] for k in zip(items.loc[has_neg, "sentence"], items.loc[has_neg, "neg_image"])]
    else:
        both = has_pos & has_neg
        if both.any():
            part = items.loc[both]
            probs = np.asarray(scorer.choose_image([[p, q] for p, q in zip(part["pos_image"], part["neg_image"])],
                                                   part["sentence"].tolist(), head=head), float)
            pos[both], neg[both] = probs[:, 0], probs[:, 1]
    return pos, neg


def _pair_correct(scored: pd.DataFrame) -> np.ndarray:
    unique = scored.drop_duplicates(["sentence", "pos_image_id", "neg_image_id"])
    unique = unique.dropna(subset=["pos_score", "neg_score"])
    diff = unique["pos_score"].to_numpy() - unique["neg_score"].to_numpy()
    return np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))


def pairwise_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", n_resamples: int = 1000,
                      seed: int = 0) -> pd.DataFrame:
    """Fraction of (sentence, positive, negative) triples whose positive image scores higher (metric "pairwise")."""
    scored = _scored(items, pos_scores, neg_scores)
    return frame([_row(model, "pairwise", subset, _pair_correct(_subset(scored, subset)), np.mean, n_resamples, seed)
                  for subset in SUBSETS])


def _check_metric(metric: str) -> None:
    if metric not in {"neg", "pairwise"}:
        raise ValueError(f"metric must be 'neg' (thresholded negatives) or 'pairwise', not {metric!r}")


def _verb_parts(scored: pd.DataFrame, metric: str):
    for verb, part in scored.groupby("verb", sort=True):
        part = part.dropna(subset=["neg_score"] if metric == "neg" else ["pos_score", "neg_score"])
        yield verb, part, part["neg_image_id"].nunique()


def verb_image_counts(items: pd.DataFrame, pos_scores, neg_scores, metric: str = "neg") -> pd.Series:
    """Per verb: the number of distinct negative images among its scored rows (what ``min_count`` filters on)."""
    _check_metric(metric)
    counts = {verb: int(n) for verb, _, n in _verb_parts(_scored(items, pos_scores, neg_scores), metric)}
    return pd.Series(counts, dtype=int, name="n_images")


def verb_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", metric: str = "neg",
                  threshold: float = 0.5, min_count: int = 30, n_resamples: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """Per-verb accuracy on negatives for verbs with at least ``min_count`` distinct negative images.

    ``metric="neg"``: fraction of (sentence, negative image) pairs scored below ``threshold`` (condition
    "threshold <t>"); ``metric="pairwise"``: fraction of triples where the positive image wins.  ``probe`` is
    "svo-verbs" and ``subset`` holds the verb; the image counts are :func:`verb_image_counts`.
    """
    _check_metric(metric)
    rows = []
    for verb, part, n_images in _verb_parts(_scored(items, pos_scores, neg_scores), metric):
        if n_images < min_count:
            continue
        if metric == "neg":
            correct, cond = (_negatives(part) < threshold).astype(float), condition(threshold)
        else:
            correct, cond = _pair_correct(part), ""
        rows.append(_row(model, metric, verb, correct, np.mean, n_resamples, seed, probe=VERB_PROBE, cond=cond))
    return frame(pd.DataFrame(rows, columns=COLUMNS))


def ranked_verbs(verbs: pd.DataFrame, k: int = 10) -> list[str]:
    """Table 6 as one list, hardest first: the ``k`` hardest (lowest accuracy, ties by name) and then the ``k``
    easiest verbs, ending with the easiest; every verb when there are at most ``2 k``."""
    ordered = verbs.sort_values(["value", "subset"], kind="stable")["subset"].tolist()
    return ordered if len(ordered) <= 2 * k else ordered[:k] + ordered[-k:]


def coverage(items: pd.DataFrame, pos_scores, neg_scores) -> dict:
    """How many rows could be scored: both pairs, and rows skipped for a missing image or a mixed flag set."""
    pos_ok = ~np.isnan(np.asarray(pos_scores, float))
    neg_ok = ~np.isnan(np.asarray(neg_scores, float))
    typed = negative_type(items).notna().to_numpy()
    return {"rows": int(len(items)), "scored": int((pos_ok & neg_ok & typed).sum()),
            "missing_image": int((~(pos_ok & neg_ok)).sum()), "mixed_flags": int((~typed).sum())}
