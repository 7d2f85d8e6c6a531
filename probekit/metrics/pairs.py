"""Counter-balanced pair metrics of the predicate–noun study (Nikolaus et al. 2022), as result rows.

The caller asks a model for ``s_target`` = s(I, S_target) and ``s_distractor`` = s(I, S_distractor)
(:func:`probekit.studies.pair_scores.score_triplets`); nothing here calls a model.  A triplet is right when
``s_target > s_distractor`` (a tie is wrong, as in the authors' evaluation script: ``prob_target_match >
prob_distractor_match``); a pair (rows sharing ``pair_id``) is right when both its triplets
are, so a model that ignores the image is right on at most one of them and chance is 0.25.  Triplets without a
score (unreadable image) are left out, and so is the pair they belong to; each row's ``n`` says how many were used.

Rows (:mod:`probekit.results`): metric ``pair_accuracy`` (chance 0.25, n pairs) and ``triplet_accuracy`` (chance
0.5, n triplets), subset ``all`` / ``noun`` / ``predicate`` (what the distractor swaps) or a concept; every
interval is a 95% percentile bootstrap over pairs (:data:`N_BOOT` resamples).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from probekit.results import frame, items_frame, row
from probekit.stats import bootstrap_ci, bootstrap_std

STUDY = "prednoun"
PAIR_CHANCE = 0.25
TRIPLET_CHANCE = 0.5
SWAP_NAMES = {"subject": "noun", "object": "predicate"}
N_BOOT = 1000
#: the authors' plotting code keeps a (target, distractor) tuple with at least this many triplets (Fig. 6: 48
#: tuples); a concept needs 5 pairs (= 10 triplets, :func:`concept_accuracy`'s ``min_count``)
TUPLE_MIN_COUNT = 5


def triplet_correct(items: pd.DataFrame) -> pd.DataFrame:
    """``items`` plus ``correct``: 1.0 when s_target > s_distractor, 0.0 otherwise (a tie is wrong, the authors'
    rule), NaN where a score is missing."""
    out = items.copy()
    valid = out["s_target"].notna() & out["s_distractor"].notna()
    out["correct"] = (out["s_target"] > out["s_distractor"]).astype(float).where(valid)
    return out


def pair_results(items: pd.DataFrame) -> pd.DataFrame:
    """One row per pair: pair_id, pos, swap, correct (both triplets right), the two triplets' correctness, and
    the concepts the pair involves (nouns and predicates of either sentence)."""
    scored = triplet_correct(items)
    sizes = scored.groupby("pair_id", sort=False).size()
    odd = sizes[sizes != 2]
    if len(odd):
        raise ValueError(f"pair(s) {list(odd.index[:5])} have {sorted(set(odd))} triplets; a pair is exactly two "
                         "triplets (the example and its counter-example)")
    first = scored.groupby("pair_id", sort=False).nth(0).set_index("pair_id")
    second = scored.groupby("pair_id", sort=False).nth(1).set_index("pair_id")
    both = first["correct"] * second["correct"]  # NaN when either triplet is unscored
    out = pd.DataFrame({"pair_id": first.index, "pos": first["pos"].to_numpy(),
                        "swap": first["pos"].map(SWAP_NAMES).to_numpy(),
                        "correct_1": first["correct"].to_numpy(), "correct_2": second["correct"].to_numpy(),
                        "correct": both.to_numpy()})
    concepts = [pair_concepts(*r) for r in zip(first["pos"], first["subject"], first["object"],
                                                  first["word_target"], first["word_distractor"])]
    out["nouns"], out["predicates"] = [n for n, _ in concepts], [p for _, p in concepts]
    return out


#: per triplet of a pair, the columns :func:`pair_items` keeps (suffixed ``_1`` / ``_2``)
TRIPLET_ITEM_COLUMNS = ["item_id", "sentence_target", "sentence_distractor", "image_shown", "s_target",
                        "s_distractor"]


def pair_items(items: pd.DataFrame, *, model: str, probe: str, condition: str) -> pd.DataFrame:
    """The item rows (:func:`probekit.results.items_frame`) behind :func:`accuracy`: one per pair (``item_id`` the
    pair id), with its ``swap``, each triplet's id, sentences, image shown (``image_shown``, the items' ``image``
    where the table has none), scores and ``correct_1``/``correct_2``, and ``correct`` = both right
    (:func:`pair_results`, NaN when a triplet is unscored): the mean of ``correct`` over the rows with one (of a
    swap's rows for ``noun`` / ``predicate``) is that row's ``pair_accuracy``."""
    pairs = pair_results(items)
    table = items if "image_shown" in items else items.assign(image_shown=items["image"])
    own = table[["pair_id", *TRIPLET_ITEM_COLUMNS]].astype({"image_shown": object})
    first = own.groupby("pair_id", sort=False).nth(0).set_index("pair_id").add_suffix("_1")
    second = own.groupby("pair_id", sort=False).nth(1).set_index("pair_id").add_suffix("_2")
    out = pairs[["pair_id", "swap", "correct", "correct_1", "correct_2"]].join(first, on="pair_id").join(
        second, on="pair_id").rename(columns={"pair_id": "item_id"})
    return items_frame(out, study=STUDY, probe=probe, model=model, condition=condition)


def pair_concepts(pos: str, subject: str, obj: str, word_target: str, word_distractor: str
                  ) -> tuple[list[str], list[str]]:
    """Nouns and predicates appearing in either sentence of a triplet's pair.

    A noun swap (pos "subject") has two nouns (word_target, word_distractor) and one predicate (``object``); a
    predicate swap (pos "object") has one noun (``subject``) and two predicates (word_target, word_distractor).
    """
    if pos == "subject":
        return sorted({word_target, word_distractor}), [obj]
    return [subject], sorted({word_target, word_distractor})


def _rows(pairs: pd.DataFrame, seed: int, **labels) -> list[dict]:
    """pair_accuracy over the pairs scored in full, triplet_accuracy over the scored triplets (both resampled
    by pair)."""
    ids = pairs["pair_id"].to_numpy()   # the items: each pair's id
    scored = pairs["correct"].notna().to_numpy()
    some = pairs[["correct_1", "correct_2"]].notna().any(axis=1).to_numpy()
    correct = pairs["correct"].to_numpy(dtype=float)[scored]
    triplets = pairs[["correct_1", "correct_2"]].to_numpy(dtype=float)[some]
    out = [row(metric="pair_accuracy", value=correct.mean() if len(correct) else np.nan,
               ci=bootstrap_ci(correct, n_resamples=N_BOOT, seed=seed, ids=ids[scored]), n=len(correct),
               chance=PAIR_CHANCE, **labels)]
    ci = bootstrap_ci(triplets, np.nanmean, n_resamples=N_BOOT, seed=seed, ids=ids[some])
    out.append(row(metric="triplet_accuracy", value=np.nanmean(triplets) if len(triplets) else np.nan,
                   ci=ci.counted("finite"), n=int(np.isfinite(triplets).sum()), chance=TRIPLET_CHANCE, **labels))
    return out


def accuracy(items: pd.DataFrame, *, model: str, probe: str, condition: str, seed: int = 0) -> pd.DataFrame:
    """Pair and triplet accuracy of one scored run (one model, image condition and template), over all pairs
    (subset ``all``) and per swap (``noun``, ``predicate``)."""
    labels = dict(study=STUDY, probe=probe, model=model, condition=condition)
    pairs = pair_results(items)
    out = _rows(pairs, seed, subset="all", **labels)
    for swap in ("noun", "predicate"):
        part = pairs[pairs["swap"] == swap]
        if len(part):
            out += _rows(part, seed, subset=swap, **labels)
    return frame(out)


def accuracy_by(items: pd.DataFrame, groups: pd.Series, *, model: str, probe: str, condition: str,
                seed: int = 0) -> pd.DataFrame:
    """Pair and triplet accuracy of one scored run per group of pairs: ``groups`` labels each item (the same label
    for both items of a pair), one pair of rows per label in sorted order, ``subset`` = the label."""
    labels = dict(study=STUDY, probe=probe, model=model, condition=condition)
    pairs = pair_results(items)
    of_pair = groups.groupby(items["pair_id"], sort=False).first()
    pairs["group"] = of_pair.reindex(pairs["pair_id"]).to_numpy()
    return frame([r for label in sorted(pairs["group"].dropna().unique())
                  for r in _rows(pairs[pairs["group"] == label], seed, subset=label, **labels)])


def accuracy_diff(a: pd.DataFrame, b: pd.DataFrame, *, model: str, probe: str, condition: str, seed: int = 0,
                  groups: pd.Series | None = None, subset: str = "all") -> pd.DataFrame:
    """``pair_accuracy_diff`` of run ``a`` minus run ``b`` on the same pairs (e.g. cropped − full), with a
    paired bootstrap interval over the pairs scored in both; ``condition`` names the two sides; with ``groups``
    (as :func:`accuracy_by`'s), over the pairs labelled ``subset`` only."""
    return accuracy_contrast([a, b], [1, -1], model=model, probe=probe, condition=condition, seed=seed,
                             groups=groups, subset=subset)


def accuracy_contrast(runs: Sequence[pd.DataFrame], weights: Sequence[float], *, model: str, probe: str,
                      condition: str, seed: int = 0, groups: pd.Series | None = None,
                      subset: str = "all") -> pd.DataFrame:
    """A ``pair_accuracy_diff`` row of the per-pair contrast Σ weight × correct over ``runs`` scored on the same
    pairs (``[1, -1]``: a difference; ``[1, -1, -1, 1]``: a difference of two differences, an interaction), with a
    paired bootstrap interval over the pairs scored in every run; with ``groups`` (a label per item of the runs,
    the same for both items of a pair, as :func:`accuracy_by`'s), over the pairs labelled ``subset`` only."""
    correct = [pair_results(r).set_index("pair_id")["correct"] for r in runs]
    total = sum(w * c.reindex(correct[0].index) for w, c in zip(weights, correct))
    if groups is not None:
        label = groups.groupby(runs[0]["pair_id"], sort=False).first()
        total = total[label.reindex(total.index) == subset]
    kept = total.dropna()   # per pair, by pair id
    diff = kept.to_numpy(dtype=float)
    return frame([row(study=STUDY, probe=probe, model=model, condition=condition, subset=subset,
                      metric="pair_accuracy_diff", value=diff.mean() if len(diff) else np.nan,
                      ci=bootstrap_ci(diff, n_resamples=N_BOOT, seed=seed, ids=kept.index.to_numpy()),
                      n=len(diff), chance=0.0)])


def concept_labels(items: pd.DataFrame) -> dict[str, str]:
    """Readable names for predicate concepts: the words after " is " in a target sentence naming them
    ("Glasses" -> "wearing glasses"); other concepts keep their own name."""
    labels = {}
    for word, sentence, pos, obj in zip(items["word_target"], items["sentence_target"], items["pos"],
                                        items["object"]):
        concept = word if pos == "object" else obj
        if concept not in labels and " is " in sentence:
            labels[concept] = sentence.split(" is ", 1)[1].rstrip(" .")
    return labels


def concept_accuracy(items: pd.DataFrame, min_count: int = 10, n_resamples: int = 100,
                     seed: int = 0) -> pd.DataFrame:
    """Pair accuracy per noun and per predicate, over the pairs with the concept in either sentence.

    Only concepts occurring in at least ``min_count`` triplets are kept (the paper's 10).  ``std`` is the standard
    deviation of the accuracy over ``n_resamples`` bootstrap resamples of those pairs (the paper's spread, 100);
    ``ci_low``/``ci_high`` the 95% percentile interval over :data:`N_BOOT` resamples.  Columns: concept, label,
    kind ("noun"/"predicate"), accuracy, std, ci_low, ci_high, n_pairs, n_triplets; sorted by kind and accuracy.
    """
    pairs = pair_results(items)
    pairs = pairs[pairs["correct"].notna()]
    labels = concept_labels(items)
    rows = []
    for kind, column in (("noun", "nouns"), ("predicate", "predicates")):
        exploded = pairs[["pair_id", "correct", column]].explode(column).rename(columns={column: "concept"})
        for concept, group in exploded.groupby("concept", sort=True):
            if 2 * len(group) < min_count:
                continue
            values = group["correct"].to_numpy(dtype=float)
            low, high = bootstrap_ci(values, n_resamples=N_BOOT, seed=seed)
            rows.append({"concept": concept, "label": labels.get(concept, concept) if kind == "predicate"
                         else concept, "kind": kind, "accuracy": float(values.mean()),
                         "std": bootstrap_std(values, n_resamples=n_resamples, seed=seed),
                         "ci_low": low, "ci_high": high, "n_pairs": len(group), "n_triplets": 2 * len(group)})
    columns = ["concept", "label", "kind", "accuracy", "std", "ci_low", "ci_high", "n_pairs", "n_triplets"]
    return pd.DataFrame(rows, columns=columns).sort_values(["kind", "accuracy"], ignore_index=True)


def concept_rows(concepts: pd.DataFrame, *, model: str, condition: str = "full") -> pd.DataFrame:
    """:func:`concept_accuracy` as rows: probe ``nouns`` / ``predicates``, subset the concept's label, n pairs."""
    out = [row(study=STUDY, probe=f"{c.kind}s", model=model, condition=condition, subset=c.label,
               metric="pair_accuracy", value=c.accuracy, ci=(c.ci_low, c.ci_high), n=c.n_pairs, chance=PAIR_CHANCE)
           for c in concepts.itertuples()]
    return frame(out)


def tuple_accuracy(items: pd.DataFrame, min_count: int = TUPLE_MIN_COUNT, seed: int = 0) -> pd.DataFrame:
    """Per-triplet accuracy (chance 0.5) of each (target, distractor) word tuple with at least ``min_count``
    scored triplets (the authors' 5, :data:`TUPLE_MIN_COUNT`), its 95% bootstrap interval over those
    triplets.  Columns: target, distractor, swap, accuracy, ci_low, ci_high, n_triplets."""
    scored = triplet_correct(items)
    scored = scored[scored["correct"].notna()]
    rows = []
    for (target, distractor), group in scored.groupby(["word_target", "word_distractor"], sort=True):
        if len(group) >= min_count:
            values = group["correct"].to_numpy(dtype=float)
            low, high = bootstrap_ci(values, n_resamples=N_BOOT, seed=seed)
            rows.append({"target": target, "distractor": distractor, "swap": SWAP_NAMES[group["pos"].iloc[0]],
                         "accuracy": float(values.mean()), "ci_low": low, "ci_high": high,
                         "n_triplets": len(group)})
    return pd.DataFrame(rows, columns=["target", "distractor", "swap", "accuracy", "ci_low", "ci_high",
                                       "n_triplets"])


def tuple_rows(tuples: pd.DataFrame, *, model: str, condition: str = "full") -> pd.DataFrame:
    """:func:`tuple_accuracy` as rows: probe ``noun tuples`` / ``predicate tuples``, subset "target → distractor"."""
    out = [row(study=STUDY, probe=f"{t.swap} tuples", model=model, condition=condition,
               subset=f"{t.target} → {t.distractor}", metric="triplet_accuracy", value=t.accuracy,
               ci=(t.ci_low, t.ci_high), n=t.n_triplets, chance=TRIPLET_CHANCE) for t in tuples.itertuples()]
    return frame(out)
