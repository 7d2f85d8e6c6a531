"""Probe-B metrics (Schiappa et al. 2023, Tables 8 and 9): recognition before and after the background is
replaced, as result rows.

Each item is seen in three views: x0 (the original; for single-object items the background filled around every
annotated object), the patched x̃0 (the original with one filler square on the background) and the filled x̃1
(everything but the kept objects replaced), see :mod:`probekit.fillers`.  h is the average precision over the
class prompts (multi-object images, probe ``probe-b``) or the 1/0 accuracy of the kept object against the absent
classes (single-object images, probe ``probe-b-single``), each row with its chance level on its items (a random
ranking's expected average precision, :func:`chance_map`; one of the candidate classes, :func:`chance_single`); γ
is the relative robustness (> 1: better after the change), the mean per-item ratio h(x̃) / h(x) of average
precision (Table 8) or of the target's softmax confidence (Table 9), and Δc the mean change in softmax confidence
of the present objects, in percentage points.  A ratio of confidences is unbounded (an item whose target has a
confidence near 0 in x can outweigh all the others), so single-object rows also give ``gamma_median``, the median
of the same ratios (not in the paper).
Rows: condition = filler, subset = the view (``x0``, ``x̃0``, ``x̃1``) or the pair of views (``(x0, x̃1)``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from probekit.metrics.conceptual import Stat, summary_rows
from probekit.results import concat, empty

VIEWS = ("x0", "x0_patch", "x1_fill")  # original x0, patched x̃0, background-filled x̃1
LABEL = {"x0": "x0", "x0_patch": "x̃0", "x1_fill": "x̃1"}
GAMMA_PAIRS = (("x0", "x1_fill"), ("x0", "x0_patch"), ("x0_patch", "x1_fill"))
DELTA_PAIRS = (("x0", "x0_patch"), ("x0_patch", "x1_fill"), ("x0", "x1_fill"))
#: the model / condition of rows pooled over every model / every filler (the paper's averaged tables)
ALL_MODELS, ALL_FILLERS = "all models", "all fillers"
MULTI, SINGLE = "probe-b", "probe-b-single"
#: the probes of rows pooled over models (model ``all models``), kept apart so every ``probe-b`` row is one model's
POOLED = {MULTI: "probe-b-pooled", SINGLE: "probe-b-single-pooled"}


def pair_label(a: str, b: str) -> str:
    return f"({LABEL[a]}, {LABEL[b]})"


TIES = ("later", "pessimistic")


def average_precision(positive, scores, ties: str = "later") -> float:
    """Average precision of one ranking: the mean, over the positives, of the precision at each positive's
    rank (classes sorted by decreasing score).  NaN without positives.

    Tied scores: ``"later"`` (the default) ranks the later class first, as the authors' ``output.argsort()[::-1]``
    does: the reverse of an ascending order that keeps tied classes in their order, so ``average_precision([1, 0],
    [0.5, 0.5])`` is 0.5 (the negative, class 1, ranks first).  numpy's default argsort (quicksort) is not stable in
    general: for ``[0.5, 0.5]`` it returns ``[0, 1]`` (so the authors' ranking is ``[1, 0]``), but on longer arrays
    with ties it can return tied indices in another order (numpy 2.4 with AVX-512 already does on five elements), so
    on those the authors' ranking among ties depends on their numpy and CPU; probekit reverses a stable sort, the
    authors' result wherever their sort kept tied indices in order.  ``"pessimistic"`` puts negatives first among
    ties (the lowest AP any order gives)."""
    if ties not in TIES:
        raise ValueError(f"ties={ties!r}; valid: {', '.join(TIES)}")
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    if positive.sum() == 0 or np.isnan(scores).any():
        return float("nan")
    order = np.argsort(scores, kind="stable")[::-1] if ties == "later" else np.lexsort((positive, -scores))
    hits = positive[order]
    ranks = np.flatnonzero(hits) + 1
    return float(np.mean(np.arange(1, len(ranks) + 1) / ranks))


def random_ranking_ap(n: int, k: int) -> float:
    """The expected :func:`average_precision` of a ranking drawn uniformly at random over ``n`` classes of which
    ``k`` are positives (``k`` ≥ 1): a positive at rank r counts itself with probability 1/n per rank, mean H_n / n
    (H_n the n-th harmonic number), and each other positive above it with probability (r - 1) / (n - 1), mean
    (n - H_n) / (n (n - 1)); so H_n / n + (k - 1) (n - H_n) / (n (n - 1)).  1 when every class is a positive."""
    if n == 1:
        return 1.0
    harmonic = float(np.sum(1.0 / np.arange(1, n + 1)))
    return harmonic / n + (k - 1) * (n - harmonic) / (n * (n - 1))


def chance_map(scored: pd.DataFrame) -> float:
    """Probe-B's mAP chance level on the multi-object rows ``scored`` (their ``candidates`` and ``positive``
    columns): the mean over the items of :func:`random_ranking_ap`; NaN without those columns or rows."""
    if not len(scored) or not {"candidates", "positive"} <= set(scored.columns):
        return float("nan")
    return float(np.mean([random_ranking_ap(len(c), int(np.sum(p)))
                          for c, p in zip(scored["candidates"], scored["positive"])]))


def chance_single(scored: pd.DataFrame) -> float:
    """The single-object accuracy's chance level on the rows ``scored``: the mean over the items of 1 / the number
    of classes the target is named against (its ``candidates``); NaN without that column or rows."""
    if not len(scored) or "candidates" not in scored.columns:
        return float("nan")
    return float(np.mean([1.0 / len(c) for c in scored["candidates"]]))


def relative_robustness(h, h_tilde, average=np.mean) -> float:
    """γ = 1 - (h(x) - h(x̃)) / h(x) = h(x̃) / h(x), the mean of the per-item ratios as the authors aggregate it
    (items with h(x) = 0 left out).  h: average precision (multi-object), the target's confidence (single).
    ``average=np.median`` gives the median ratio instead (probekit's addition, metric ``gamma_median``)."""
    h, h_tilde = np.asarray(h, dtype=float), np.asarray(h_tilde, dtype=float)
    ok = h > 0
    return float(average(h_tilde[ok] / h[ok])) if ok.any() else float("nan")


def probe_b_candidates(row, classes: Sequence[str]) -> list[str]:
    """Class names a Probe-B image is scored against, in the order of ``classes``: all classes for multi-object
    items; for single-object items the target and the classes absent from the original image (the paper's
    Probe-B_R prompts), the target in its own place (the order decides ties, :func:`single_object_correct`)."""
    if not row["single_object"]:
        return list(classes)
    present = set(row["labels"]) - {row["target"]}
    return [c for c in classes if c not in present]


def single_object_correct(logits, target: int) -> float:
    """Single-object accuracy of one image (Table 9): 1.0 when ``np.argmax(logits) == target``, the authors'
    ``argmax == label``.  Among tied maxima numpy's argmax takes the first, so a tie is won by the class that comes
    first in the candidates' (the classes') order: logits [0, 3, 3] over [bird, dog, car] give 1 for dog and 0 for
    car.  NaN when a logit is missing."""
    z = np.asarray(logits, dtype=float)
    return float("nan") if np.isnan(z).any() else float(int(np.argmax(z)) == target)


def mean_difference(v: np.ndarray) -> float:
    """Δc of rows (confidence in one view, in the other): the mean of column 0 minus column 1 (a named function, so
    a lab row of it can be computed again from its items: :mod:`probekit.studies.lab_items`)."""
    return float(np.mean(v[:, 0] - v[:, 1]))


def _stats(single: bool) -> list[Stat]:
    h = "acc" if single else "map"
    ratio_of = "conf" if single else "h"  # Table 9's γ: the per-item ratio of the target's confidence
    stats = [Stat(h, (f"h_{v}",), chance=chance_single if single else chance_map, subset=LABEL[v]) for v in VIEWS]
    for a, b in GAMMA_PAIRS:
        stats.append(Stat("gamma", (f"{ratio_of}_{a}", f"{ratio_of}_{b}"),
                          lambda v: relative_robustness(v[:, 0], v[:, 1]), subset=pair_label(a, b)))
    for a, b in GAMMA_PAIRS if single else ():   # a ratio of confidences is unbounded: give its median as well
        stats.append(Stat("gamma_median", (f"conf_{a}", f"conf_{b}"),
                          lambda v: relative_robustness(v[:, 0], v[:, 1], np.median), subset=pair_label(a, b)))
    for a, b in DELTA_PAIRS:
        stats.append(Stat("delta_c_pts", (f"conf_{a}", f"conf_{b}"), mean_difference, scale=100.0,
                          subset=pair_label(a, b)))
    return stats


def probe_b_rows(scored: pd.DataFrame, by: dict[str, str] | None = None, seed: int = 0, **fixed) -> pd.DataFrame:
    """Tables 8 (multi-object: mAP, probe ``probe-b``) and 9 (single object: accuracy, ``probe-b-single``): h
    for x0, x̃0, x̃1; γ for (x0, x̃1), (x0, x̃0), (x̃0, x̃1); Δc (points) for the same pairs as the paper.
    Call it on the multi- and single-object rows separately; ``by`` defaults to model x filler."""
    single = bool(scored["single_object"].all()) if len(scored) else False
    return summary_rows(scored, by or {"model": "model", "condition": "filler"}, _stats(single), seed,
                        **{"probe": SINGLE if single else MULTI, **fixed})


def probe_b_all_rows(scored: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Both splits per model x filler, and the multi-object rows pooled over models (per filler, probe
    ``probe-b-pooled``) and over fillers (per model, condition ``all fillers``), as the paper reports Table 8."""
    multi, single = scored[~scored["single_object"]], scored[scored["single_object"]]
    parts = [probe_b_rows(multi, seed=seed), probe_b_rows(single, seed=seed),
             probe_b_rows(multi, {"condition": "filler"}, seed, model=ALL_MODELS, probe=POOLED[MULTI]),
             probe_b_rows(multi, {"model": "model"}, seed, condition=ALL_FILLERS)]
    return concat(parts)


def object_context_rows(scored: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean change in confidence c0 - c̃1 (points) per object of the single-object split, pooled over models
    and fillers (probe ``probe-b-object``, subset = object): which objects lean most on their context (the
    paper's Figure 6)."""
    single = scored[scored["single_object"]].assign(_all=ALL_MODELS)
    stat = Stat("delta_c_pts", ("conf_x0", "conf_x1_fill"), mean_difference, scale=100.0)
    if not len(single):
        return empty()
    return summary_rows(single, {"model": "_all", "subset": "target"}, [stat], seed, probe="probe-b-object",
                        condition=ALL_FILLERS)
