"""Metrics of the conceptual-understanding probes (Schiappa et al. 2023): Probe-R, Probe-C and Probe-B.

Every model is reduced to one compatibility score ``f(image, prompt)`` on a logit scale, the quantity the
paper feeds to a softmax:

* dual encoders (``"similarity"`` capability: CLIP, SigLIP, FLAVA's contrastive head) give the scaled
  image-text cosine logit;
* image-text-matching cross-encoders (``"match"`` only: ViLT, BLIP, BridgeTower) give the log-odds of their
  match probability, ``log p - log(1 - p)``.

A softmax over the two prompts of a Probe-R item is then ``sigmoid(f_correct - f_wrong)``; for an ITM model
this equals ``p1(1-p2) / (p1(1-p2) + p2(1-p1))``, i.e. the two match probabilities normalised against each
other.  ``score_*`` functions run a scorer over an item table and return one row per item; the ``*_table``
functions summarise those rows per model (and split, kind, filler...) with percentile bootstrap intervals
from :mod:`probekit.stats`.  Scores are percentages (0-100) in the summaries, as in the paper's tables.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from probekit.stats import bootstrap_ci

_EPS = 1e-6


# --------------------------------------------------------------------------------------------- scoring
def score_mode(scorer) -> str:
    """``"similarity"`` for dual encoders (preferred when a model has both heads, as the authors scored
    FLAVA with its contrastive logits), else ``"match"``."""
    caps = set(scorer.capabilities)
    if "similarity" in caps:
        return "similarity"
    if "match" in caps:
        return "match"
    raise ValueError(f"model {scorer.name!r} can neither match nor compare image and text "
                     f"(capabilities: {sorted(caps)}); Probe-R/C/B need one of them")


def log_odds(p) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), _EPS, 1 - _EPS)
    return np.log(p) - np.log1p(-p)


def pair_logits(scorer, images: Sequence, texts: Sequence[str], chunk: int = 256) -> np.ndarray:
    """``f(images[i], texts[i])`` for each i on a logit scale (see the module docstring).

    For dual encoders the pairs are scored in chunks: the unique images and texts of a chunk are encoded
    once and the needed entries are picked from their similarity matrix."""
    if len(images) != len(texts):
        raise ValueError(f"{len(images)} images but {len(texts)} texts")
    images = [str(x) if isinstance(x, (str, os.PathLike)) else x for x in images]
    ok = np.array([_has_image(x) for x in images], dtype=bool)
    out = np.full(len(images), np.nan)
    if not ok.any():
        return out
    if not ok.all():  # images that could not be fetched: NaN, left out of every metric
        out[ok] = pair_logits(scorer, [x for x, k in zip(images, ok) if k], [t for t, k in zip(texts, ok) if k], chunk)
        return out
    if score_mode(scorer) == "match":
        return log_odds(scorer.match(list(images), list(texts)))
    for start in range(0, len(images), chunk):
        imgs, txts = images[start:start + chunk], list(texts[start:start + chunk])
        if all(isinstance(x, str) for x in imgs):
            uimg = list(dict.fromkeys(imgs))
            ii = [uimg.index(x) for x in imgs]
        else:  # PIL images: no de-duplication
            uimg, ii = imgs, list(range(len(imgs)))
        utxt = list(dict.fromkeys(txts))
        sim = np.asarray(scorer.similarity(uimg, utxt), dtype=float)
        out[start:start + len(imgs)] = sim[ii, [utxt.index(t) for t in txts]]
    return out


def _has_image(x) -> bool:
    return x is not None and not (isinstance(x, float) and np.isnan(x)) and x != ""


def class_logits(scorer, images: Sequence, prompts: Sequence[str]) -> np.ndarray:
    """``f(image, prompt)`` for every image x every class prompt: an (N, K) array."""
    images, prompts = [str(x) for x in images], list(prompts)
    if not images:
        return np.empty((0, len(prompts)))
    if score_mode(scorer) == "similarity":
        return np.asarray(scorer.similarity(images, prompts), dtype=float)
    flat_i = [im for im in images for _ in prompts]
    flat_t = [p for _ in images for p in prompts]
    return log_odds(scorer.match(flat_i, flat_t)).reshape(len(images), len(prompts))


def class_prompts(classes: Iterable[str]) -> dict[str, str]:
    """One prompt per class name when a dataset brings none: the noun phrase "a <class>" / "an <class>"
    (the toy world's captions are noun phrases of this form)."""
    return {c: f"{'an' if c[:1].lower() in 'aeiou' else 'a'} {c}" for c in classes}


def softmax(x, axis=-1) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    z = np.exp(x - np.nanmax(x, axis=axis, keepdims=True))
    return z / np.nansum(z, axis=axis, keepdims=True)


def sigmoid(x) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


# ------------------------------------------------------------------------------------------- summaries
def summarize(values, statistic: Callable[[np.ndarray], float] = np.mean, seed: int = 0,
              n_resamples: int = 1000, scale: float = 100.0) -> dict:
    """Point estimate, 95% bootstrap interval and count of ``statistic`` over the rows of ``values``
    (NaN rows dropped), multiplied by ``scale``."""
    values = np.asarray(values, dtype=float)
    keep = ~np.isnan(values).reshape(len(values), -1).any(axis=1) if len(values) else np.zeros(0, bool)
    values = values[keep]
    if len(values) == 0:
        return {"value": np.nan, "lo": np.nan, "hi": np.nan, "n": 0}
    lo, hi = bootstrap_ci(values, statistic, n_resamples=n_resamples, seed=seed)
    return {"value": scale * float(statistic(values)), "lo": scale * lo, "hi": scale * hi, "n": len(values)}


def _table(scored: pd.DataFrame, by: list[str], metrics: dict[str, tuple], seed: int) -> pd.DataFrame:
    """One row per group x metric: ``metrics`` maps a name to (columns, statistic, scale)."""
    rows = []
    for key, grp in scored.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        for name, (cols, stat, scale) in metrics.items():
            vals = grp[list(cols)].to_numpy(dtype=float)
            vals = vals[:, 0] if len(cols) == 1 else vals
            rows.append({**dict(zip(by, key)), "metric": name, **summarize(vals, stat, seed, scale=scale)})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, index: list[str], digits: int = 1) -> pd.DataFrame:
    """Pivot a summary into one column per metric holding ``"value [lo, hi]"`` strings for display."""
    t = table.copy()
    t["cell"] = [f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(v) else "–"
                 for v, lo, hi in zip(t["value"], t["lo"], t["hi"])]
    out = t.pivot_table(index=index, columns="metric", values="cell", aggfunc="first", sort=False)
    order = list(dict.fromkeys(t["metric"]))
    return out[[c for c in order if c in out.columns]]


# --------------------------------------------------------------------------------------------- Probe-R
PROBE_R_KINDS = ("subject_swap", "predicate_swap", "subject_only")


def score_probe_r(scorer, items: pd.DataFrame) -> pd.DataFrame:
    """Per item: logits of the correct and the wrong prompt, confidence of the correct one (softmax over
    the two) and whether it wins."""
    f_c = pair_logits(scorer, items["image"].tolist(), items["correct_prompt"].tolist())
    f_w = pair_logits(scorer, items["image"].tolist(), items["wrong_prompt"].tolist())
    out = items[["item_id", "group_id", "kind"]].copy()
    out["model"] = scorer.name
    out["logit_correct"], out["logit_wrong"] = f_c, f_w
    return out.assign(**probe_r_item_metrics(f_c, f_w))


def probe_r_item_metrics(logit_correct, logit_wrong) -> dict:
    c, w = np.asarray(logit_correct, float), np.asarray(logit_wrong, float)
    bad = np.isnan(c) | np.isnan(w)
    conf = np.where(bad, np.nan, sigmoid(c - w))
    acc = np.where(bad, np.nan, (c > w).astype(float))
    return {"confidence": conf, "correct": acc}


def probe_r_table(scored: pd.DataFrame, by=("model", "kind"), seed: int = 0) -> pd.DataFrame:
    """Table 3: mean confidence of the correct prompt μ(c) and accuracy, per model and kind."""
    return _table(scored, list(by), {"mu_c": (["confidence"], np.mean, 100.0),
                                     "acc": (["correct"], np.mean, 100.0)}, seed)


# --------------------------------------------------------------------------------------------- Probe-C
def winoground(s00, s01, s10, s11) -> dict:
    """Winoground scores of 2x2 groups; ``s_ij = f(image_i, caption_j)`` and caption_i describes image_i.

    text: each image prefers its own caption; image: each caption prefers its own image; group: both.
    confidence: mean over the two images of the softmax (over the two captions) of the correct caption."""
    s00, s01, s10, s11 = (np.asarray(s, dtype=float) for s in (s00, s01, s10, s11))
    bad = np.isnan(s00) | np.isnan(s01) | np.isnan(s10) | np.isnan(s11)
    text = (s00 > s01) & (s11 > s10)
    image = (s00 > s10) & (s11 > s01)
    group = text & image
    conf = (sigmoid(s00 - s01) + sigmoid(s11 - s10)) / 2

    def nan_where_bad(x):
        return np.where(bad, np.nan, np.asarray(x, dtype=float))

    return {"text": nan_where_bad(text), "image": nan_where_bad(image), "group": nan_where_bad(group),
            "confidence": nan_where_bad(conf)}


def score_probe_c(scorer, items: pd.DataFrame) -> pd.DataFrame:
    """Per 2x2 group: the four logits and the Winoground text/image/group scores and μ(c)."""
    i0, i1 = items["image_0"].tolist(), items["image_1"].tolist()
    c0, c1 = items["caption_0"].tolist(), items["caption_1"].tolist()
    n = len(items)
    s = pair_logits(scorer, i0 + i0 + i1 + i1, c0 + c1 + c0 + c1)
    s00, s01, s10, s11 = s[:n], s[n:2 * n], s[2 * n:3 * n], s[3 * n:]
    out = items[["group_id", "split", "category"]].copy()
    out["model"] = scorer.name
    out["s00"], out["s01"], out["s10"], out["s11"] = s00, s01, s10, s11
    return out.assign(**winoground(s00, s01, s10, s11))


def probe_c_table(scored: pd.DataFrame, by=("model", "split"), seed: int = 0) -> pd.DataFrame:
    """Tables 4 and 6: μ(c), image, text and group scores per model and split (or category)."""
    return _table(scored, list(by), {"mu_c": (["confidence"], np.mean, 100.0),
                                     "image": (["image"], np.mean, 100.0),
                                     "text": (["text"], np.mean, 100.0),
                                     "group": (["group"], np.mean, 100.0)}, seed)


# --------------------------------------------------------------------------------------------- Probe-B
def average_precision(positive, scores) -> float:
    """Average precision of one ranking: the mean, over the positives, of the precision at each positive's
    rank (classes sorted by decreasing score; ties broken pessimistically).  NaN without positives."""
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    if positive.sum() == 0 or np.isnan(scores).any():
        return float("nan")
    order = np.lexsort((positive, -scores))  # by score desc, negatives before positives on ties
    hits = positive[order]
    ranks = np.flatnonzero(hits) + 1
    return float(np.mean(np.arange(1, len(ranks) + 1) / ranks))


def relative_robustness(h, h_tilde, per_item: bool = True) -> float:
    """γ = 1 - (h(x) - h(x̃)) / h(x) = h(x̃) / h(x).  ``per_item``: mean of the per-item ratios (how the
    authors aggregate average precision; items with h(x) = 0 are left out); else the ratio of the means
    (used for accuracy, where one item's h is 0 or 1)."""
    h, h_tilde = np.asarray(h, dtype=float), np.asarray(h_tilde, dtype=float)
    if per_item:
        ok = h > 0
        return float(np.mean(h_tilde[ok] / h[ok])) if ok.any() else float("nan")
    return float(np.mean(h_tilde) / np.mean(h)) if np.mean(h) > 0 else float("nan")


VIEWS = ("x0", "x0_patch", "x1_fill")  # original x0, patched x̃0, background-filled x̃1


def probe_b_candidates(row, classes: Sequence[str]) -> list[str]:
    """Class names a Probe-B image is scored against: all classes for multi-object items; for single-object
    items the target plus the classes absent from the original image (the paper's Probe-B_R prompts)."""
    if not row["single_object"]:
        return list(classes)
    present = set(row["labels"])
    return [row["target"]] + [c for c in classes if c not in present]


def score_probe_b(scorer, derived: pd.DataFrame, classes: Sequence[str],
                  prompts: dict[str, str]) -> pd.DataFrame:
    """Per item x filler: h (AP over the class prompts, or 1/0 accuracy for single-object items) and mean
    softmax confidence of the present objects, for each of x0, x̃0 and x̃1.

    ``derived`` is :func:`probekit.fillers.derive_probe_b`'s table (one row per item x filler with the
    paths of the three views); ``prompts`` maps each class name to its prompt text."""
    classes = list(classes)
    cls_index = {c: k for k, c in enumerate(classes)}
    paths = list(dict.fromkeys(p for v in VIEWS for p in derived[v].astype(str)))
    logits = class_logits(scorer, paths, [prompts[c] for c in classes])
    row_of = {p: i for i, p in enumerate(paths)}
    rows = []
    for rec in derived.to_dict("records"):
        cand = [cls_index[c] for c in probe_b_candidates(rec, classes)]
        wanted = [rec["target"]] if rec["single_object"] else list(rec["labels"])
        pos = np.array([classes[k] in wanted for k in cand])
        out = {"model": scorer.name, "item_id": rec["item_id"], "filler": rec["filler"],
               "single_object": bool(rec["single_object"]), "target": rec["target"]}
        for v in VIEWS:
            z = logits[row_of[str(rec[v])]][cand]
            p = softmax(z)
            if rec["single_object"]:
                h = np.nan if np.isnan(z).any() else float(z[0] > np.max(z[1:], initial=-np.inf))
            else:
                h = average_precision(pos, z)
            out[f"h_{v}"] = h
            out[f"conf_{v}"] = float(np.mean(p[pos])) if pos.any() else np.nan
        rows.append(out)
    return pd.DataFrame(rows)


def probe_b_table(scored: pd.DataFrame, by=("model", "filler"), seed: int = 0) -> pd.DataFrame:
    """Tables 8 (multi-object: mAP) and 9 (single object: accuracy): h for x0, x̃0, x̃1; relative
    robustness γ for (x0, x̃1), (x0, x̃0), (x̃0, x̃1); mean change in confidence (percentage points) for
    (c0 - c̃0), (c̃0 - c̃1), (c0 - c̃1).  Call it on the multi- and single-object rows separately."""
    single = bool(scored["single_object"].all()) if len(scored) else False
    per_item = not single

    def gamma(a, b):
        return (["h_" + a, "h_" + b], lambda v: relative_robustness(v[:, 0], v[:, 1], per_item), 1.0)

    def delta(a, b):
        return (["conf_" + a, "conf_" + b], lambda v: float(np.mean(v[:, 0] - v[:, 1])), 100.0)

    h = "acc" if single else "mAP"
    metrics = {f"{h} x0": (["h_x0"], np.mean, 100.0), f"{h} x̃0": (["h_x0_patch"], np.mean, 100.0),
               f"{h} x̃1": (["h_x1_fill"], np.mean, 100.0),
               "γ (x0,x̃1)": gamma("x0", "x1_fill"), "γ (x0,x̃0)": gamma("x0", "x0_patch"),
               "γ (x̃0,x̃1)": gamma("x0_patch", "x1_fill"),
               "Δc (c0−c̃0)": delta("x0", "x0_patch"), "Δc (c̃0−c̃1)": delta("x0_patch", "x1_fill"),
               "Δc (c0−c̃1)": delta("x0", "x1_fill")}
    return _table(scored, list(by), metrics, seed)


def rank_objects(scored: pd.DataFrame, by: str = "target") -> pd.DataFrame:
    """Mean change in confidence c0 - c̃1 (percentage points) per object of the single-object split,
    largest first: which objects lean most on their context (the paper's Figure 6)."""
    single = scored[scored["single_object"]]
    t = (single.assign(delta=100 * (single["conf_x0"] - single["conf_x1_fill"]))
         .groupby(["model", by])["delta"].agg(["mean", "count"]).reset_index())
    return t.sort_values("mean", ascending=False)

