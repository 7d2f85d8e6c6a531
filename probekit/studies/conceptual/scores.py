"""What the conceptual study asks a model: ``f(image, text)`` on a logit scale for Probe-R's prompts, Probe-C's 2x2
groups, Probe-B's class prompts and the held-out task's classes (the compatibility head,
:func:`probekit.scorers.head_for`: log-odds of a match probability, or a dual encoder's scaled similarity).
:mod:`probekit.metrics.conceptual` and :mod:`probekit.metrics.background` turn these into metrics and rows and never
call a model."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import pandas as pd

from probekit.metrics.background import VIEWS, average_precision, probe_b_candidates, single_object_correct
from probekit.metrics.conceptual import group_means, log_odds, softmax, winoground
from probekit.scorers.base import Scorer
from probekit.scorers.heads import head_for


def pair_logits(scorer: Scorer, images: Sequence[Any], texts: Sequence[str], chunk: int = 256) -> np.ndarray:
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
    if head_for(scorer, "compatibility") == "match":
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


def _has_image(x: object) -> bool:
    return x is not None and not (isinstance(x, float) and np.isnan(x)) and x != ""


def class_logits(scorer: Scorer, images: Sequence[Any], prompts: Sequence[str]) -> np.ndarray:
    """``f(image, prompt)`` for every image x every class prompt: an (N, K) array."""
    images, prompts = [str(x) for x in images], list(prompts)
    if not images:
        return np.empty((0, len(prompts)))
    if head_for(scorer, "compatibility") == "similarity":
        return np.asarray(scorer.similarity(images, prompts), dtype=float)
    flat_i = [im for im in images for _ in prompts]
    flat_t = [p for _ in images for p in prompts]
    return log_odds(scorer.match(flat_i, flat_t)).reshape(len(images), len(prompts))


def score_probe_r(scorer: Scorer, items: pd.DataFrame) -> pd.DataFrame:
    """Per item: logits of the correct and the wrong prompt, confidence of the correct one (softmax over
    the two) and whether it wins; the kinds scored on a group's role-alone images (``GROUPED_KINDS``) as one row
    per group, as :func:`group_means` computes them."""
    f_c = pair_logits(scorer, items["image"].tolist(), items["correct_prompt"].tolist())
    f_w = pair_logits(scorer, items["image"].tolist(), items["wrong_prompt"].tolist())
    out = items[["item_id", "group_id", "kind"]].copy()
    out["model"] = scorer.name
    out["logit_correct"], out["logit_wrong"] = f_c, f_w
    return group_means(out)


def score_probe_c(scorer: Scorer, items: pd.DataFrame) -> pd.DataFrame:
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


def zero_shot_scores(scorer: Scorer, items: pd.DataFrame, prompts: dict[str, str], top: Sequence[int] = (1, 5)
                     ) -> pd.DataFrame:
    """Per image (``item_id``): whether zero-shot classification against one prompt per class puts the true
    label in the top k (columns ``top1``, ``top5``...; only k up to the number of classes).  The gold class's rank
    counts every other class scored at least as high, so a tie counts against it (probekit's rule)."""
    classes = list(prompts)
    items = items[items["image"].notna()]
    logits = class_logits(scorer, items["image"].tolist(), [prompts[c] for c in classes])
    gold = np.array([classes.index(lbl) for lbl in items["label"]])
    rank = (logits >= logits[np.arange(len(gold)), gold][:, None]).sum(1) - 1  # others scored at least as high
    out = pd.DataFrame({"item_id": items["item_id"].astype(str).to_numpy()})
    for k in top:
        if k <= len(classes):
            out[f"top{k}"] = (rank < k).astype(float)
    out.attrs["classes"] = len(classes)
    return out


def score_probe_b(scorer: Scorer, derived: pd.DataFrame, classes: Sequence[str],
                  prompts: dict[str, str]) -> pd.DataFrame:
    """Per item x filler: h (AP over the class prompts, or 1/0 accuracy for single-object items), mean softmax
    confidence of the present objects and the logits (``scores_<view>``, over ``candidates``, ``positive`` saying
    which are the image's objects), for each of x0, x̃0 and x̃1.

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
               "single_object": bool(rec["single_object"]), "target": rec["target"],
               "candidates": [classes[k] for k in cand], "positive": pos.tolist()}
        for v in VIEWS:
            z = logits[row_of[str(rec[v])]][cand]
            p = softmax(z)
            if rec["single_object"]:
                h = single_object_correct(z, int(np.flatnonzero(pos)[0]))
            else:
                h = average_precision(pos, z)
            out[f"h_{v}"], out[f"scores_{v}"] = h, z.tolist()
            out[f"conf_{v}"] = float(np.mean(p[pos])) if pos.any() else np.nan
        rows.append(out)
    return pd.DataFrame(rows)
