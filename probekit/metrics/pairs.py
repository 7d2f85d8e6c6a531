"""Counter-balanced pair metrics of the predicate–noun study (Nikolaus et al. 2022).

Input is the ``prednoun`` item table joined with two score columns, ``s_target`` = s(I, S_target) and
``s_distractor`` = s(I, S_distractor) (see :func:`probekit.data.prednoun.score_triplets`).  A triplet is right when
``s_target > s_distractor`` (a tie is wrong); a pair (rows sharing ``pair_id``) is right when both its triplets
are, so a model that ignores the image is right on at most one of them and chance is 0.25.  Triplets without a
score (unreadable image) are left out, and so is the pair they belong to; every table says how many were used.
Outputs are tidy DataFrames with one row per group.
"""

from __future__ import annotations

import pandas as pd

from probekit.stats import bootstrap_ci, bootstrap_std

PAIR_CHANCE = 0.25
TRIPLET_CHANCE = 0.5
SWAP_NAMES = {"subject": "noun", "object": "predicate"}


def triplet_correct(items: pd.DataFrame) -> pd.DataFrame:
    """``items`` plus ``correct``: 1.0 when s_target > s_distractor, 0.0 otherwise, NaN where a score is missing."""
    out = items.copy()
    valid = out["s_target"].notna() & out["s_distractor"].notna()
    out["correct"] = (out["s_target"] > out["s_distractor"]).astype(float).where(valid)
    return out


def pair_results(items: pd.DataFrame) -> pd.DataFrame:
    """One row per pair: pair_id, pos, correct (both triplets right), the two triplets' correctness, and the
    concepts the pair involves (nouns and predicates of either sentence)."""
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
    concepts = [pair_concepts(*row) for row in zip(first["pos"], first["subject"], first["object"],
                                                      first["word_target"], first["word_distractor"])]
    nouns, predicates = [n for n, _ in concepts], [p for _, p in concepts]
    out["nouns"], out["predicates"] = nouns, predicates
    return out


def pair_concepts(pos: str, subject: str, obj: str, word_target: str, word_distractor: str
                  ) -> tuple[list[str], list[str]]:
    """Nouns and predicates appearing in either sentence of a triplet's pair.

    A noun swap (pos "subject") has two nouns (word_target, word_distractor) and one predicate (``object``); a
    predicate swap (pos "object") has one noun (``subject``) and two predicates (word_target, word_distractor).
    """
    if pos == "subject":
        return sorted({word_target, word_distractor}), [obj]
    return [subject], sorted({word_target, word_distractor})


def _mean(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.mean()) if len(values) else float("nan")


def accuracy(items: pd.DataFrame, by: str | list[str] | None = None, n_resamples: int = 0,
             seed: int = 0) -> pd.DataFrame:
    """Pair accuracy and per-triplet accuracy, overall or per group of ``by`` (e.g. ``"swap"``, or ``["model",
    "image_condition"]`` for a table of several runs; a pair never spans two groups).

    Columns: [by...], pair_accuracy, triplet_accuracy, n_pairs, n_triplets, n_unscored (triplets without scores),
    and with ``n_resamples`` > 0 the 95% bootstrap interval of the pair accuracy (ci_low, ci_high) over pairs.
    """
    keys = [by] if isinstance(by, str) else list(by or [])
    items = items.assign(swap=items["pos"].map(SWAP_NAMES))
    rows = []
    for group, t in (items.groupby(keys, sort=True) if keys else [((), items)]):
        group = group if isinstance(group, tuple) else (group,)
        p = pair_results(t)
        t = triplet_correct(t)
        row = {**dict(zip(keys, group)), "pair_accuracy": _mean(p["correct"]),
               "triplet_accuracy": _mean(t["correct"]), "n_pairs": int(p["correct"].notna().sum()),
               "n_triplets": int(t["correct"].notna().sum()), "n_unscored": int(t["correct"].isna().sum())}
        if n_resamples:
            row["ci_low"], row["ci_high"] = bootstrap_ci(p["correct"].dropna().to_numpy(), n_resamples=n_resamples,
                                                         seed=seed)
        rows.append(row)
    return pd.DataFrame(rows)


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
    deviation of the accuracy over ``n_resamples`` bootstrap resamples of those pairs (the paper's 100).
    Columns: concept, label, kind ("noun"/"predicate"), accuracy, std, n_pairs, n_triplets; sorted by kind and
    accuracy.
    """
    pairs = pair_results(items)
    pairs = pairs[pairs["correct"].notna()]
    labels = concept_labels(items)
    rows = []
    for kind, column in (("noun", "nouns"), ("predicate", "predicates")):
        exploded = pairs[["pair_id", "correct", column]].explode(column).rename(columns={column: "concept"})
        for concept, group in exploded.groupby("concept", sort=True):
            n_triplets = 2 * len(group)
            if n_triplets < min_count:
                continue
            values = group["correct"].to_numpy(dtype=float)
            rows.append({"concept": concept, "label": labels.get(concept, concept) if kind == "predicate"
                         else concept, "kind": kind, "accuracy": float(values.mean()),
                         "std": bootstrap_std(values, n_resamples=n_resamples, seed=seed),
                         "n_pairs": len(group), "n_triplets": n_triplets})
    columns = ["concept", "label", "kind", "accuracy", "std", "n_pairs", "n_triplets"]
    out = pd.DataFrame(rows, columns=columns)
    return out.sort_values(["kind", "accuracy"], ignore_index=True)


def tuple_accuracy(items: pd.DataFrame, min_count: int = 10) -> pd.DataFrame:
    """Per-triplet accuracy for each (target, distractor) word tuple with at least ``min_count`` scored triplets
    (chance 0.5).  Columns: target, distractor, swap, accuracy, n_triplets."""
    scored = triplet_correct(items)
    scored = scored[scored["correct"].notna()]
    rows = []
    for (target, distractor), group in scored.groupby(["word_target", "word_distractor"], sort=True):
        if len(group) >= min_count:
            rows.append({"target": target, "distractor": distractor,
                         "swap": SWAP_NAMES[group["pos"].iloc[0]],
                         "accuracy": float(group["correct"].mean()), "n_triplets": len(group)})
    return pd.DataFrame(rows, columns=["target", "distractor", "swap", "accuracy", "n_triplets"])


def tuple_matrix(tuples: pd.DataFrame) -> pd.DataFrame:
    """``tuple_accuracy`` as a target × distractor matrix (NaN where a tuple has too few triplets), for a heatmap."""
    return tuples.pivot(index="target", columns="distractor", values="accuracy")
