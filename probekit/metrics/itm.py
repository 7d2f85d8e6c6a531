"""Image–text-matching accuracy on sentence x (positive, negative) image tables: SVO-Probes' Tables 4 and 6.

Inputs are an item table in the ``verbs`` schema and two score arrays aligned with its rows: the score of
(sentence, positive image) and of (sentence, negative image); NaN marks a pair that could not be scored.

* ``itm_accuracy``: a pair is predicted a match when its score >= ``threshold``.  Accuracy on positives (each
  (sentence, positive image) counted once), on negatives (each (sentence, negative image) counted once) and
  their equal-weight average, overall and per negative type.  A row belongs to a negative type when exactly
  that one of ``subj_neg``/``verb_neg``/``obj_neg`` is set; "all" is the union of those rows (rows with
  several or no flags set are left out everywhere, as in the paper's Table 4).
* ``pairwise_accuracy``: for models without a calibrated threshold (dual encoders): the fraction of
  (sentence, positive image, negative image) triples where the positive image scores higher; ties count 1/2.
* ``verb_accuracy`` / ``rank_verbs``: accuracy per verb (lemma of the positive triplet's verb) for verbs with
  at least ``min_count`` distinct negative images, and the hardest and easiest ``k`` (Table 6).

``score_pairs`` is the hand-off from a scorer to these metrics: it returns the two score arrays, scoring each
distinct (sentence, image) pair once and leaving NaN where an image is missing.

Every number comes with a percentile-bootstrap 95% interval (``probekit.stats.bootstrap_ci``) over the counted
units, and results are tidy rows: ``model, metric, subset, value, ci_low, ci_high, n`` (values are fractions).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.stats import bootstrap_ci

NEG_TYPES = {"subject": "subj_neg", "verb": "verb_neg", "object": "obj_neg"}
SUBSETS = ["all", *NEG_TYPES]
COLUMNS = ["model", "metric", "subset", "value", "ci_low", "ci_high", "n"]


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
    frame = items[["sentence", "pos_image_id", "neg_image_id", "verb"]].copy()
    frame["type"] = negative_type(items).to_numpy()
    frame["pos_score"], frame["neg_score"] = pos_scores, neg_scores
    return frame[frame["type"].notna()]


def _subset(frame: pd.DataFrame, subset: str) -> pd.DataFrame:
    return frame if subset == "all" else frame[frame["type"] == subset]


def _positives(frame: pd.DataFrame) -> np.ndarray:
    unique = frame.drop_duplicates(["sentence", "pos_image_id"])
    return unique["pos_score"].dropna().to_numpy()


def _negatives(frame: pd.DataFrame) -> np.ndarray:
    unique = frame.drop_duplicates(["sentence", "neg_image_id"])
    return unique["neg_score"].dropna().to_numpy()


def _row(model, metric, subset, values, statistic=np.mean, n_resamples=1000, seed=0, n=None) -> dict:
    values = np.asarray(values, float)
    value = float(statistic(values)) if len(values) else float("nan")
    low, high = bootstrap_ci(values, statistic, n_resamples=n_resamples, seed=seed)
    return dict(model=model, metric=metric, subset=subset, value=value, ci_low=low, ci_high=high,
                n=int(len(values) if n is None else n))


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
    frame = _scored(items, pos_scores, neg_scores)
    rows = []
    for subset in SUBSETS:
        part = _subset(frame, subset)
        pos_ok = (_positives(part) >= threshold).astype(float)
        neg_ok = (_negatives(part) < threshold).astype(float)
        both = np.column_stack([np.concatenate([pos_ok, neg_ok]),
                                np.concatenate([np.ones(len(pos_ok)), np.zeros(len(neg_ok))])])
        rows.append(_row(model, "avg", subset, both, _balanced_mean, n_resamples, seed))
        rows.append(_row(model, "pos", subset, pos_ok, np.mean, n_resamples, seed))
        rows.append(_row(model, "neg", subset, neg_ok, np.mean, n_resamples, seed))
    return pd.DataFrame(rows, columns=COLUMNS)


def scoring_mode(scorer) -> str:
    """"itm" for models with an image-text-matching head (thresholded), else "pairwise" (choice of image)."""
    if "match" in scorer.capabilities:
        return "itm"
    if "similarity" in scorer.capabilities:
        return "pairwise"
    raise ValueError(f"{scorer.name} can neither match nor compare images and texts "
                     f"(capabilities: {sorted(scorer.capabilities)})")


def score_pairs(scorer, items: pd.DataFrame, mode: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Score of (sentence, positive image) and (sentence, negative image) for every row of ``items``.

    ``mode="itm"``: ``scorer.match`` probabilities, each distinct (sentence, image) pair scored once.
    ``mode="pairwise"``: ``scorer.choose_image`` over [positive, negative] per row (a softmax over the two
    images for a dual encoder), for rows with both images.  Missing images (None) give NaN.
    """
    mode = mode or scoring_mode(scorer)
    n = len(items)
    pos, neg = np.full(n, np.nan), np.full(n, np.nan)
    has_pos = items["pos_image"].notna().to_numpy()
    has_neg = items["neg_image"].notna().to_numpy()
    if mode == "itm":
        pairs = pd.concat([items.loc[has_pos, ["sentence", "pos_image"]].set_axis(["text", "image"], axis=1),
                           items.loc[has_neg, ["sentence", "neg_image"]].set_axis(["text", "image"], axis=1)])
        pairs = pairs.drop_duplicates().reset_index(drop=True)
        if len(pairs):
            scores = np.asarray(scorer.match(pairs["image"].tolist(), pairs["text"].tolist()), float)
            lookup = dict(zip(zip(pairs["text"], pairs["image"]), scores))
            pos[has_pos] = [lookup[k] for k in zip(items.loc[has_pos, "sentence"], items.loc[has_pos, "pos_image"])]
            neg[has_neg] = [lookup[k] for k in zip(items.loc[has_neg, "sentence"], items.loc[has_neg, "neg_image"])]
    elif mode == "pairwise":
        both = has_pos & has_neg
        if both.any():
            part = items.loc[both]
            probs = np.asarray(scorer.choose_image([[p, q] for p, q in zip(part["pos_image"], part["neg_image"])],
                                                   part["sentence"].tolist()), float)
            pos[both], neg[both] = probs[:, 0], probs[:, 1]
    else:
        raise ValueError(f"mode must be 'itm' or 'pairwise', not {mode!r}")
    return pos, neg


def _pair_correct(frame: pd.DataFrame) -> np.ndarray:
    unique = frame.drop_duplicates(["sentence", "pos_image_id", "neg_image_id"])
    unique = unique.dropna(subset=["pos_score", "neg_score"])
    diff = unique["pos_score"].to_numpy() - unique["neg_score"].to_numpy()
    return np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))


def pairwise_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", n_resamples: int = 1000,
                      seed: int = 0) -> pd.DataFrame:
    """Fraction of (sentence, positive, negative) triples whose positive image scores higher (metric "pairwise")."""
    frame = _scored(items, pos_scores, neg_scores)
    rows = [_row(model, "pairwise", subset, _pair_correct(_subset(frame, subset)), np.mean, n_resamples, seed)
            for subset in SUBSETS]
    return pd.DataFrame(rows, columns=COLUMNS)


def verb_accuracy(items: pd.DataFrame, pos_scores, neg_scores, model: str = "model", mode: str = "itm",
                  threshold: float = 0.5, min_count: int = 30, n_resamples: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """Per-verb accuracy on negatives for verbs with at least ``min_count`` distinct negative images.

    ``mode="itm"``: fraction of (sentence, negative image) pairs scored below ``threshold`` (metric "neg");
    ``mode="pairwise"``: fraction of triples where the positive image wins (metric "pairwise").  ``subset``
    holds the verb; ``n_images`` the number of distinct negative images that decided the filter.
    """
    if mode not in {"itm", "pairwise"}:
        raise ValueError(f"mode must be 'itm' or 'pairwise', not {mode!r}")
    frame = _scored(items, pos_scores, neg_scores)
    rows = []
    for verb, part in frame.groupby("verb", sort=True):
        scored = part.dropna(subset=["neg_score"] if mode == "itm" else ["pos_score", "neg_score"])
        n_images = scored["neg_image_id"].nunique()
        if n_images < min_count:
            continue
        correct = (_negatives(scored) < threshold).astype(float) if mode == "itm" else _pair_correct(scored)
        row = _row(model, "neg" if mode == "itm" else "pairwise", verb, correct, np.mean, n_resamples, seed)
        rows.append({**row, "n_images": int(n_images)})
    return pd.DataFrame(rows, columns=[*COLUMNS, "n_images"])


def rank_verbs(verbs: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Table 6 layout: the ``k`` hardest (lowest accuracy) and easiest verbs side by side, ties by name."""
    ordered = verbs.sort_values(["value", "subset"], kind="stable")
    k = min(k, len(ordered))
    hard = ordered.head(k)
    easy = ordered.sort_values(["value", "subset"], ascending=[False, True], kind="stable").head(k)
    return pd.DataFrame({"rank": range(1, k + 1),
                         "hardest": hard["subset"].to_numpy(), "hardest_acc": hard["value"].to_numpy(),
                         "easiest": easy["subset"].to_numpy(), "easiest_acc": easy["value"].to_numpy()})


def coverage(items: pd.DataFrame, pos_scores, neg_scores) -> dict:
    """How many rows could be scored: both pairs, and rows skipped for a missing image or a mixed flag set."""
    pos_ok = ~np.isnan(np.asarray(pos_scores, float))
    neg_ok = ~np.isnan(np.asarray(neg_scores, float))
    typed = negative_type(items).notna().to_numpy()
    return {"rows": int(len(items)), "scored": int((pos_ok & neg_ok & typed).sum()),
            "missing_image": int((~(pos_ok & neg_ok)).sum()), "mixed_flags": int((~typed).sum())}


def wide_table(results: pd.DataFrame, scale: float = 100.0, digits: int = 1, with_ci: bool = True) -> pd.DataFrame:
    """Tidy results -> one row per model, columns (subset, metric), cells "value [low, high]" in percent."""
    def cell(r):
        text = f"{r.value * scale:.{digits}f}"
        if with_ci and np.isfinite(r.ci_low):
            text += f" [{r.ci_low * scale:.{digits}f}, {r.ci_high * scale:.{digits}f}]"
        return text

    frame = results.assign(cell=[cell(r) for r in results.itertuples()])
    table = frame.pivot_table(index="model", columns=["subset", "metric"], values="cell", aggfunc="first",
                              sort=False)
    order = [(s, m) for s in SUBSETS for m in ("avg", "pos", "neg", "pairwise") if (s, m) in table.columns]
    return table[order]
