"""Confounds of the predicate–noun study (Nikolaus et al. 2022, Section 5.4 and Table 9).

Each triplet's preference for the target, ``s(I, S_target) - s(I, S_distractor)``, is correlated (Pearson r and
its two-sided p) with the difference between target and distractor in

- box size: area of the target's box minus the distractor's (fractions of the image, so in [-1, 1]);
- distance from the image centre: of the target box's centre minus of the distractor box's;
- sentence perplexity: pseudo-perplexity of the target sentence minus of the distractor under a masked LM.

A positive r for box size means the model prefers the sentence about the bigger person; a negative r for
distance means it prefers the one nearer the centre.  :func:`confound_rows` gives, per factor, a row of metric
``r`` (chance 0, n triplets) and one of metric ``p``.  The two triplets of a pair carry mirrored covariates (the
example's target is the counter-example's distractor), so they are not independent: r's 95% interval is a
cluster bootstrap over pairs (:func:`probekit.stats.bootstrap_ci`, ``clusters`` = ``pair_id``), not Fisher's z
over triplets, which counts each pair twice.  ``p`` is Pearson's over triplets, as the paper's Table 9 computes
it, shown beside the paper's; the verdict on a confound is the interval's.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from probekit.results import frame, row
from probekit.stats import bootstrap_ci

FACTORS = {"box_size": "bounding box size", "centre_distance": "distance from centre", "perplexity": "perplexity"}


def box_size(box: Sequence[float]) -> float:
    """Area of an ``[x, y, w, h]`` box given in fractions of the image (its share of the image)."""
    return float(box[2]) * float(box[3])


def centre_distance(box: Sequence[float]) -> float:
    """Euclidean distance of the box's centre from the image centre, in fractions of the image side."""
    x, y, w, h = (float(v) for v in box)
    return math.hypot(x + w / 2 - 0.5, y + h / 2 - 0.5)


def pearson_r(rows: np.ndarray) -> float:
    """Pearson r of the two columns of ``rows`` (NaN when fewer than 3 rows or a constant column leave it
    undefined): the statistic :func:`confound_rows` bootstraps."""
    x, y = rows[:, 0], rows[:, 1]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def pearson(x, y) -> tuple[float, float, int]:
    """Pearson r, two-sided p and n over the rows where both are finite; NaNs when fewer than 3 rows or a
    constant input make r undefined."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan"), int(len(x))
    result = stats.pearsonr(x, y)
    return float(result.statistic), float(result.pvalue), int(len(x))


def confound_differences(items: pd.DataFrame, perplexity: pd.Series | dict | None = None) -> pd.DataFrame:
    """Per triplet: ``score_diff`` and the target-minus-distractor differences of each factor.

    ``items`` needs pair_id, s_target, s_distractor, target_box, distractor_box, sentence_target and
    sentence_distractor;
    ``perplexity`` maps sentence -> pseudo-perplexity (without it the perplexity column is left out).
    """
    out = pd.DataFrame({"item_id": items["item_id"].to_numpy(), "pair_id": items["pair_id"].to_numpy(),
                        "score_diff": (items["s_target"] - items["s_distractor"]).to_numpy(dtype=float)})
    out["box_size"] = [box_size(t) - box_size(d) for t, d in zip(items["target_box"], items["distractor_box"])]
    out["centre_distance"] = [centre_distance(t) - centre_distance(d)
                              for t, d in zip(items["target_box"], items["distractor_box"])]
    if perplexity is not None:
        lookup = dict(perplexity)
        out["perplexity"] = [lookup.get(t, np.nan) - lookup.get(d, np.nan)
                             for t, d in zip(items["sentence_target"], items["sentence_distractor"])]
    return out


def confound_rows(items: pd.DataFrame, perplexity: pd.Series | dict | None = None, *, model: str,
                  condition: str = "full", study: str = "prednoun", seed: int = 0) -> pd.DataFrame:
    """The paper's Table 9 for one model and condition: per factor (subset, e.g. "bounding box size"), a row of
    metric ``r`` (value NaN where r is undefined; its interval resampling pairs) and one of metric ``p``, probe
    ``confounds``, n triplets."""
    diffs = confound_differences(items, perplexity)
    out = []
    for factor, name in FACTORS.items():
        if factor in diffs:
            r, p, n = pearson(diffs["score_diff"], diffs[factor])
            both = diffs[np.isfinite(diffs[["score_diff", factor]]).all(axis=1)]
            ci = (bootstrap_ci(both[["score_diff", factor]].to_numpy(float), pearson_r, seed=seed,
                               clusters=both["pair_id"].to_numpy()) if np.isfinite(r) else (np.nan, np.nan))
            labels: dict[str, Any] = dict(study=study, probe="confounds", model=model, condition=condition,
                                          subset=name, n=n)
            out.append(row(metric="r", value=r, ci=ci, chance=0.0, **labels))
            out.append(row(metric="p", value=p, **labels))
    return frame(out)
