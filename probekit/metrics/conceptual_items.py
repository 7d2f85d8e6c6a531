"""Item rows (:func:`probekit.results.items_frame`) of the conceptual probes (Schiappa et al. 2023): what each
scored item adds to Probe-R's and Probe-C's accuracies, and Probe-B's per-item class scores.

The functions take the per-item tables of the scores (:func:`~probekit.studies.conceptual.scores.score_probe_r`,
``score_probe_c``, ``score_probe_b``) and the probes' item tables for the texts and images; they score nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from probekit.metrics.background import LABEL, MULTI, VIEWS
from probekit.results import items_frame

STUDY = "conceptual"


def probe_r_items(scored: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Probe-R's item rows: one per row of ``score_probe_r`` (an image; for the kinds scored on a group's
    role-alone images one row per group and kind, ``item_id`` "<group>-<kind>", ``image`` empty, ``n_images`` the
    images averaged), with its prompts, logits, ``confidence`` and ``correct`` (1 when the correct prompt's logit
    is strictly higher): the mean of ``correct`` over a model and kind's rows is its ``acc`` row (subset = kind)."""
    own = items.set_index("item_id")
    by_group = items.drop_duplicates(["group_id", "kind"]).set_index(["group_id", "kind"])
    keys = pd.MultiIndex.from_arrays([scored["group_id"], scored["kind"]])
    out = scored.copy()
    for column in ("correct_prompt", "wrong_prompt"):
        out[column] = out["item_id"].map(own[column]).fillna(pd.Series(by_group[column].reindex(keys).to_numpy(),
                                                                       index=out.index))
    out["image"] = out["item_id"].map(own["image"])
    return items_frame(out, study=STUDY, probe="probe-r")


def probe_c_items(scored: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Probe-C's item rows: one per 2x2 group of ``score_probe_c`` (``item_id`` the group), with its images and
    captions, the four logits ``s_ij`` = f(image_i, caption_j), ``text_correct``, ``image_correct``,
    ``group_correct`` (Winoground's, strict) and ``correct`` = ``group_correct``: the mean of ``correct`` over a
    model and split's (category's) rows is its ``group`` row, of ``text_correct`` / ``image_correct`` its ``text`` /
    ``image`` row."""
    out = scored.rename(columns={"text": "text_correct", "image": "image_correct", "group": "group_correct"})
    own = items.set_index("group_id")
    for column in ("image_0", "image_1", "caption_0", "caption_1"):
        out[column] = out["group_id"].map(own[column])
    return items_frame(out.assign(item_id=out["group_id"], correct=out["group_correct"]), study=STUDY,
                       probe="probe-c")


def probe_b_items(scored: pd.DataFrame) -> pd.DataFrame:
    """Probe-B's item rows: one per item, model, filler (``condition``) and view (``view``: x0, x̃0, x̃1), with the
    ``candidates`` scored (class names), their ``scores`` (logits, in that order), which are ``positive`` (the
    image's objects; for a single-object item its ``target``), ``confidence`` (mean softmax confidence of the
    positives), ``ap`` (the item's average precision, multi-object items) and ``correct`` (the single-object item's
    1/0 accuracy, NaN for a multi-object item).

    Probe-B's ``map`` is not a mean of ``correct``: it is recomputed from the score columns, the mean over a model,
    filler and view's multi-object rows of ``probekit.metrics.background.average_precision(positive, scores)``
    (the ``ap`` column); the single-object ``acc`` rows (probe ``probe-b-single``) are means of ``correct``."""
    parts = []
    for view in VIEWS:
        single = scored["single_object"].to_numpy(bool)
        h = scored[f"h_{view}"].to_numpy(dtype=float)
        parts.append(scored[["model", "item_id", "filler", "single_object", "target", "candidates", "positive"]].assign(
            view=LABEL[view], scores=scored[f"scores_{view}"], confidence=scored[f"conf_{view}"],
            ap=np.where(single, np.nan, h), correct=np.where(single, h, np.nan)))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return items_frame(out.rename(columns={"filler": "condition"}), study=STUDY, probe=MULTI)


#: :func:`group_anatomy`'s columns: per model and category, the share of groups in which ...
ANATOMY = {"one_caption": "one caption is preferred under both images (text score 0)",
           "one_image": "one image is preferred under both captions (image score 0)",
           "matched_higher": "the matched pairs outscore the swapped ones, s00 + s11 > s01 + s10 (needed for the "
                             "group score)"}


def group_anatomy(items: pd.DataFrame) -> pd.DataFrame:
    """Why a Probe-C group score sits where it does: per model and category (composition groups of the item rows
    of :func:`probe_c_items`), n, the group score and the shares of :data:`ANATOMY`, and the caption preferred
    under both images most often (``preferred``, its share among those groups ``preferred_share``).

    Scores without an image–caption interaction (s_ij = a_i + b_j: a caption prior plus an image prior) prefer one
    caption under both images and one image under both captions in every group, so their text, image and group
    scores are 0, below the 1/6 chance of independent scores (where each share is 1/2); a group needs the
    matched pairs to outscore the swapped ones."""
    s = items.dropna(subset=["s00", "s01", "s10", "s11"])
    s = s[s["split"] == "composition"] if "split" in s else s
    d = s.assign(one_caption=(s["s00"] > s["s01"]) == (s["s10"] > s["s11"]),
                 one_image=(s["s00"] > s["s10"]) == (s["s01"] > s["s11"]),
                 matched_higher=(s["s00"] + s["s11"]) > (s["s01"] + s["s10"]),
                 favourite=np.where(s["s00"] > s["s01"], s["caption_0"], s["caption_1"]))
    out = []
    for (model, category), g in d.groupby(["model", "category"], sort=False):
        words = g.loc[g["one_caption"], "favourite"].str.split().str[1]   # "a striped bottle" -> "striped"
        top = words.value_counts()
        out.append(dict(model=model, category=category, n=len(g), group=float(g["group_correct"].mean()),
                        **{k: float(g[k].mean()) for k in ANATOMY},
                        preferred=top.index[0] if len(top) else "",
                        preferred_share=float(top.iloc[0] / len(words)) if len(top) else float("nan")))
    return pd.DataFrame(out)
