"""Image–text-matching accuracy on sentence x (positive, negative) image tables: SVO-Probes' Tables 4 and 6.

Inputs are an item table in the ``verbs`` schema and two score arrays aligned with its rows: the score of
(sentence, positive image) and of (sentence, negative image); NaN marks a pair that could not be scored.

Rules, as in the authors' evaluation notebook:

* **A row is scored whole or not at all.**  A row whose positive or negative image is missing (or unreadable)
  is dropped entirely: its positive pair is not counted either (:func:`coverage` says how many rows were
  dropped for a missing positive and for a missing negative image).
* ``itm_accuracy``: a pair is predicted a match when its score >= ``threshold`` (a score equal to the threshold
  is a match: the paper labels a pair "negative if the classifier output is < 0.5 and positive otherwise").  Accuracy on positives (each
  (sentence, positive image) counted once), on negatives (each (sentence, negative image) counted once) and
  their equal-weight average, overall and per negative type.  A row belongs to a negative type when exactly
  that one of ``subj_neg``/``verb_neg``/``obj_neg`` is set; "all" is the union of those rows (rows with
  several or no flags set are left out everywhere, as in the paper's Table 4).
* ``pairwise_accuracy``: the fraction of (sentence, positive image, negative image) triples where the positive
  image scores higher; a tie counts 1/2 (probekit's rule: the authors' notebook has no pairwise metric, and 1/2 is
  what a coin flip between tied images scores, so a model blind to the image sits at chance).  Every model gets it
  (dual encoders only it).
* ``verb_accuracy`` (Table 6): only SVO *triplets* (the positive triplet) with at least ``min_negatives``
  distinct negative images are kept (:func:`triplet_negative_counts`); accuracy per verb (lemma of the
  triplet's verb) over the rows of its kept triplets.  A verb spread over small triplets is dropped however many
  negatives it has in total.  ``ranked_verbs`` orders ours; the paper's own lists are sets, not rankings.
* ``verb_pair_counts``: positive and negative pairs of verb negatives with both images, the quantity the
  guided-masking paper counts (11,571 + 22,322 = 33,893).

The scores are the caller's (:func:`probekit.studies.pair_scores.score_pairs` asks a model for them: the two score
arrays for the rows with both images, each distinct (sentence, image) pair scored once, NaN for every other row);
nothing here calls a model.

Rows are in the one result schema (:mod:`probekit.results`), ``study="verbs"``, values as fractions, each with
a percentile-bootstrap 95% interval (``probekit.stats.bootstrap_ci``, which always holds the value: with few
resamples, e.g. ``n_resamples=10``, an end that misses it is moved to it).  Rows of one sentence are not
independent (on the toy world a verb negative and its mirror, the same two images, are right together or wrong
together), so the interval is a cluster bootstrap over :func:`units`: the item table's ``unit`` where it has one
(the toy world's draw: a positive image with its negatives and their mirrors), else the ``sentence``.  The rows:

* ``probe="svo"``, ``subset`` "all"/"subject"/"verb"/"object": Table 4's ``pos``/``neg``/``avg`` with
  ``condition="threshold <t>"`` (the rows depend on the threshold; the paper's are at 0.5), and ``pairwise``
  with ``condition=""``.  ``n`` of "avg" is the number of positives plus negatives.
* ``probe="svo-verbs"``, ``subset`` = the verb: per-verb ``neg`` (at the threshold) or ``pairwise``.
* ``pairwise_by``: ``pairwise`` per group of rows the caller labels (``probe`` and ``subset`` = the label its own).
* ``itm_accuracy_diff``: two runs on the same pairs, ``pos_diff``/``neg_diff``/``avg_diff`` on "all" (one run
  minus the other, a paired interval; ``chance`` 0).
* ``chance`` is 0.5 throughout: a coin flip per pair for ``pos``/``neg`` (and so for their average), and a
  random choice between the two images for ``pairwise``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.results import COLUMNS, frame, items_frame, row
from probekit.stats import bootstrap_ci

NEG_TYPES = {"subject": "subj_neg", "verb": "verb_neg", "object": "obj_neg"}
SUBSETS = ["all", *NEG_TYPES]
PROBE, VERB_PROBE = "svo", "svo-verbs"
CHANCE = 0.5


def condition(threshold: float) -> str:
    """The ``condition`` of thresholded rows: ``"threshold 0.5"``."""
    return f"threshold {threshold:g}"


def negative_type(items: pd.DataFrame) -> pd.Series:
    """Per row: "subject", "verb" or "object" when exactly that one flag is set, else None."""
    flags = items[list(NEG_TYPES.values())].astype(bool).to_numpy()
    single = flags.sum(axis=1) == 1
    names = np.array(list(NEG_TYPES))[flags.argmax(axis=1)]
    return pd.Series(np.where(single, names, None), index=items.index, dtype=object)


#: what a verbs row's interval resamples (:func:`units`): the item table's ``unit`` column where it has one
UNIT, SENTENCE_UNIT = "unit", "sentence"


def units(items: pd.DataFrame) -> pd.Series:
    """Per row of ``items``, the unit the intervals resample whole: its ``unit`` where the table has that column
    (the toy world's draw of one positive image: its negatives and their mirrors), else its sentence."""
    return items[UNIT if UNIT in items else SENTENCE_UNIT].astype(str).rename(UNIT)


def _scored(items: pd.DataFrame, pos_scores, neg_scores) -> pd.DataFrame:
    pos_scores, neg_scores = np.asarray(pos_scores, float), np.asarray(neg_scores, float)
    if len(pos_scores) != len(items) or len(neg_scores) != len(items):
        raise ValueError(f"score arrays have {len(pos_scores)} and {len(neg_scores)} entries for {len(items)} rows")
    scored = items[["sentence", "pos_triplet", "pos_image_id", "neg_image_id", "verb"]].assign(unit=units(items))
    scored["type"] = negative_type(items).to_numpy()
    scored["pos_score"], scored["neg_score"] = pos_scores, neg_scores
    whole = ~(np.isnan(pos_scores) | np.isnan(neg_scores))  # a row without either score is dropped whole
    return scored[scored["type"].notna().to_numpy() & whole]


def _subset(scored: pd.DataFrame, subset: str) -> pd.DataFrame:
    return scored if subset == "all" else scored[scored["type"] == subset]


def _positives(scored: pd.DataFrame) -> pd.DataFrame:
    return scored.drop_duplicates(["sentence", "pos_image_id"])


def _negatives(scored: pd.DataFrame) -> pd.DataFrame:
    return scored.drop_duplicates(["sentence", "neg_image_id"])


def _row(model, metric, subset, values, statistic=np.mean, n_resamples=1000, seed=0, probe=PROBE,
         cond="", clusters=None, ids=None) -> dict:
    values = np.asarray(values, float)
    value = float(statistic(values)) if len(values) else float("nan")
    return row(study="verbs", probe=probe, model=model, condition=cond, subset=subset, metric=metric, value=value,
               ci=bootstrap_ci(values, statistic, n_resamples=n_resamples, seed=seed, clusters=clusters, ids=ids),
               n=int(len(values)), chance=CHANCE)


def _balanced_mean(values: np.ndarray) -> float:
    """Mean of column 0 over rows with column 1 == 1 and over rows with column 1 == 0, averaged."""
    pos, neg = values[values[:, 1] == 1, 0], values[values[:, 1] == 0, 0]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    return (pos.mean() + neg.mean()) / 2


def _correct(scored: pd.DataFrame,
             threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per positive pair 1 when predicted a match (score >= ``threshold``), per negative pair 1 when not; then the
    unit of each positive and of each negative pair, then their ids (:func:`pair_ids`)."""
    pos, neg = _positives(scored), _negatives(scored)
    return ((pos["pos_score"].to_numpy() >= threshold).astype(float),
            (neg["neg_score"].to_numpy() < threshold).astype(float), pos["unit"].to_numpy(), neg["unit"].to_numpy(),
            pair_ids(pos, "pos"), pair_ids(neg, "neg"))


def pair_ids(pairs: pd.DataFrame, side: str, *more: str) -> np.ndarray:
    """An id per row of ``pairs``: "<side>|<sentence>|<side's image id>", then each of the ``more`` columns (side
    "pos" or "neg" of a (sentence, image) pair, so a positive and a negative pair never share one; "triple" with
    ``neg_image_id`` for a (sentence, positive, negative) triple)."""
    image = "pos" if side == "triple" else side
    parts = [pairs[c].astype(str) for c in ("sentence", f"{image}_image_id", *more)]
    return (side + "|" + parts[0].str.cat(parts[1:], sep="|")).to_numpy()


def _pooled(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Positives' and negatives' values in one column beside a 1/0 column saying which (for :func:`_balanced_mean`,
    so that "avg" resamples both together)."""
    return np.column_stack([np.concatenate([pos, neg]), np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])])


def itm_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", threshold: float = 0.5,
                 n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Table 4: accuracy on positives ("pos"), negatives ("neg") and their mean ("avg") per subset.

    ``n`` of "avg" is the number of positives plus negatives; its interval resamples both together.
    """
    scored = _scored(items, pos_scores, neg_scores)
    rows, cond = [], condition(threshold)
    for subset in SUBSETS:
        rows += _table4_rows(model, subset, *_correct(_subset(scored, subset), threshold), n_resamples, seed, cond)
    return frame(rows)


def _table4_rows(model, subset, pos, neg, pos_units, neg_units, pos_ids, neg_ids, n_resamples, seed, cond,
                 suffix="") -> list[dict]:
    """Table 4's "avg", "pos" and "neg" rows (metric + ``suffix``) of per-pair values, resampled by unit."""
    return [_row(model, f"avg{suffix}", subset, _pooled(pos, neg), _balanced_mean, n_resamples, seed, cond=cond,
                 clusters=np.concatenate([pos_units, neg_units]), ids=np.concatenate([pos_ids, neg_ids])),
            *(_row(model, f"{side}{suffix}", subset, v, np.mean, n_resamples, seed, cond=cond, clusters=u, ids=i)
              for side, v, u, i in (("pos", pos, pos_units, pos_ids), ("neg", neg, neg_units, neg_ids)))]


def itm_accuracy_diff(items: pd.DataFrame, a_scores, b_scores, model: str, against: str, threshold: float = 0.5,
                      n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Table 4's "pos", "neg" and "avg" on all rows of run ``a`` (``model``) minus run ``b`` (``against``) on the
    same pairs, each ``(pos_scores, neg_scores)``: metrics ``<m>_diff``, condition ``"<model> − <against>,
    threshold <t>"``, a paired bootstrap over the pairs both runs scored (a row either left out is left out of
    both), chance 0."""
    (pa, na), (pb, nb) = ([np.asarray(x, float) for x in s] for s in (a_scores, b_scores))
    lost = np.isnan(pa) | np.isnan(na) | np.isnan(pb) | np.isnan(nb)
    (pos_a, neg_a, pos_units, neg_units, pos_ids, neg_ids), (pos_b, neg_b, *_) = (
        _correct(_scored(items, np.where(lost, np.nan, pos), np.where(lost, np.nan, neg)), threshold)
        for pos, neg in ((pa, na), (pb, nb)))
    cond = f"{model} − {against}, {condition(threshold)}"
    rows = _table4_rows(model, "all", pos_a - pos_b, neg_a - neg_b, pos_units, neg_units, pos_ids, neg_ids,
                        n_resamples, seed, cond, suffix="_diff")
    return frame([{**r, "chance": 0.0} for r in rows])


def pair_credit(right, wrong) -> np.ndarray:
    """probekit's pairwise rule: per pair, 1 where the right answer's score is higher, 1/2 on a tie (what a coin flip
    between tied answers scores), 0 otherwise; NaN where either score is missing."""
    diff = np.asarray(right, float) - np.asarray(wrong, float)
    return np.where(np.isnan(diff), np.nan, np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0)))


def _pair_correct(scored: pd.DataFrame) -> np.ndarray:
    """Per distinct (sentence, positive, negative) triple: :func:`pair_credit` of the positive image over the
    negative (``pairwise`` here, in :func:`pairwise_by` and in :func:`verb_accuracy`)."""
    unique = _triples(scored)
    return pair_credit(unique["pos_score"], unique["neg_score"])


def _triples(scored: pd.DataFrame) -> pd.DataFrame:
    return scored.drop_duplicates(["sentence", "pos_image_id", "neg_image_id"])


def _pairwise_row(model, subset, scored, n_resamples, seed, probe=PROBE) -> dict:
    """The ``pairwise`` row of ``scored``'s triples, resampled by unit."""
    triples = _triples(scored)
    return _row(model, "pairwise", subset, _pair_correct(scored), np.mean, n_resamples, seed, probe=probe,
                clusters=triples["unit"].to_numpy(), ids=pair_ids(triples, "triple", "neg_image_id"))


def pairwise_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", n_resamples: int = 1000,
                      seed: int = 0) -> pd.DataFrame:
    """Fraction of (sentence, positive, negative) triples whose positive image scores higher (metric "pairwise");
    a tie counts 1/2."""
    scored = _scored(items, pos_scores, neg_scores)
    return frame([_pairwise_row(model, subset, _subset(scored, subset), n_resamples, seed) for subset in SUBSETS])


def pair_items(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model") -> pd.DataFrame:
    """The item rows (:func:`probekit.results.items_frame`) behind :func:`pairwise_accuracy`: one per distinct
    (sentence, positive, negative) triple it counts, with its images, negative ``type``, both scores and
    ``correct``; the mean of ``correct`` over a negative type's rows (all rows for "all") is that row's value."""
    unique = _triples(_scored(items, pos_scores, neg_scores))
    own = items.loc[unique.index, ["item_id", "pos_image", "neg_image"]]
    return items_frame(pd.concat([own, unique.drop(columns="verb")], axis=1).assign(correct=_pair_correct(unique)),
                       study="verbs", probe=PROBE, model=model)


def pairwise_by(items: pd.DataFrame, pos_scores, neg_scores, groups: pd.Series, probe: str, model: str = "model",
                n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Pairwise accuracy per group of rows: ``groups`` labels each row of ``items`` (None: in no group), one row per
    label in sorted order, ``subset`` = the label."""
    scored = _scored(items, pos_scores, neg_scores)
    labels = groups.reindex(scored.index)
    return frame([_pairwise_row(model, label, scored[labels == label], n_resamples, seed, probe=probe)
                  for label in sorted(labels.dropna().unique())])


def triplet_negative_counts(items: pd.DataFrame, pos_scores, neg_scores) -> pd.Series:
    """Per positive SVO triplet: distinct negative images among its scored rows (what Table 6's filter counts)."""
    scored = _scored(items, pos_scores, neg_scores)
    return scored.groupby("pos_triplet")["neg_image_id"].nunique().astype(int).rename("n_negatives")


def verb_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", metric: str = "neg",
                  threshold: float = 0.5, min_negatives: int = 30, n_resamples: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """Per-verb accuracy on negatives over the SVO triplets with at least ``min_negatives`` negative images.

    ``metric="neg"``: fraction of (sentence, negative image) pairs scored below ``threshold`` (condition
    "threshold <t>"; a score equal to it is a match); ``metric="pairwise"``: fraction of triples where the positive
    image wins, a tie counting 1/2.  ``probe`` is
    "svo-verbs" and ``subset`` holds the verb; the triplets' counts are :func:`triplet_negative_counts`.
    """
    if metric not in {"neg", "pairwise"}:
        raise ValueError(f"metric must be 'neg' (thresholded negatives) or 'pairwise', not {metric!r}")
    scored = _scored(items, pos_scores, neg_scores)
    counts = scored.groupby("pos_triplet")["neg_image_id"].transform("nunique")
    rows = []
    for verb, part in scored[counts >= min_negatives].groupby("verb", sort=True):
        if metric == "neg":
            _, correct, _, unit, _, ids = _correct(part, threshold)
            rows.append(_row(model, metric, verb, correct, np.mean, n_resamples, seed, probe=VERB_PROBE,
                             cond=condition(threshold), clusters=unit, ids=ids))
        else:
            rows.append(_pairwise_row(model, verb, part, n_resamples, seed, probe=VERB_PROBE))
    return frame(pd.DataFrame(rows, columns=COLUMNS))


def ranked_verbs(verbs: pd.DataFrame, k: int = 10) -> list[str]:
    """Our Table 6 as one list, hardest first: the ``k`` hardest (lowest accuracy, ties by name) and then the
    ``k`` easiest verbs, ending with the easiest; every verb when there are at most ``2 k``."""
    ordered = verbs.sort_values(["value", "subset"], kind="stable")["subset"].tolist()
    return ordered if len(ordered) <= 2 * k else ordered[:k] + ordered[-k:]


def coverage(items: pd.DataFrame, pos_scores, neg_scores) -> dict:
    """How many rows could be scored, and how many were dropped whole: for a missing positive image, for a
    missing negative image (positive present), for an image the model could not read, or for a mixed flag set."""
    has_pos, has_neg = items["pos_image"].notna().to_numpy(), items["neg_image"].notna().to_numpy()
    read = ~(np.isnan(np.asarray(pos_scores, float)) | np.isnan(np.asarray(neg_scores, float)))
    typed = negative_type(items).notna().to_numpy()
    return {"rows": int(len(items)), "scored": int((read & typed).sum()),
            "missing_pos_image": int((~has_pos).sum()), "missing_neg_image": int((has_pos & ~has_neg).sum()),
            "unreadable_image": int((has_pos & has_neg & ~read).sum()), "mixed_flags": int((~typed).sum())}


def verb_pair_counts(items: pd.DataFrame) -> dict:
    """Pairs of verb negatives with both images, as the guided-masking paper counts them: distinct (sentence,
    positive image) pairs ("pos"), distinct (sentence, negative image) pairs ("neg") and their sum ("all")."""
    verb = items[(negative_type(items) == "verb").to_numpy()
                 & (items["pos_image"].notna() & items["neg_image"].notna()).to_numpy()]
    pos = len(verb.drop_duplicates(["sentence", "pos_image_id"]))
    neg = len(verb.drop_duplicates(["sentence", "neg_image_id"]))
    return {"pos": pos, "neg": neg, "all": pos + neg}
