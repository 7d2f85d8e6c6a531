"""Metrics of the conceptual-understanding probes (Schiappa et al. 2023): compatibility scores, Probe-R, Probe-C
and the patching sweep's zero-shot accuracy (Probe-B is in :mod:`probekit.metrics.background`).

Every model is reduced to one compatibility score ``f(image, prompt)`` on a logit scale, the quantity the
paper feeds to a softmax (asked of the model by :mod:`probekit.studies.conceptual.scores`; which head gives it is
decided by ``probekit.scorers.head_for(scorer, "compatibility")``):

* dual encoders (the ``similarity`` head: CLIP, SigLIP, FLAVA's contrastive head) give the scaled
  image-text cosine logit;
* image-text-matching cross-encoders (``match`` only: ViLT, BLIP, BridgeTower) give the log-odds of their
  match probability, ``log p - log(1 - p)``.

A softmax over the two prompts of a Probe-R item is then ``sigmoid(f_correct - f_wrong)``; for an ITM model
this equals ``p1(1-p2) / (p1(1-p2) + p2(1-p1))``, i.e. the two match probabilities normalised against each
other.  The ``score_*`` functions of :mod:`probekit.studies.conceptual.scores` return one row per item from
those scores; the ``*_rows`` functions here summarise them per model (and kind, split, category...) as result
rows (:mod:`probekit.results`, values as fractions) with percentile bootstrap intervals from :mod:`probekit.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from probekit.data.conceptual import GROUPED_KINDS
from probekit.results import frame, row
from probekit.stats import bootstrap_ci

STUDY = "conceptual"
#: where an exact 0 or 1 goes: beyond every other float32 probability (the smallest one; half the gap below 1)
_P_LOW, _P_HIGH = float(np.finfo(np.float32).smallest_subnormal) / 2, 1 - float(np.finfo(np.float32).epsneg) / 2
#: chance levels: a two-way softmax (μ(c), accuracy) 1/2; Winoground text and image 1/4, group 1/6
CHANCE = {"mu_c": 0.5, "acc": 0.5, "text": 0.25, "image": 0.25, "group": 1 / 6}
#: the column naming the unit a summary's interval resamples (:func:`summary_rows`)
UNIT = "group_id"
#: what names a scored table's rows (its items, :attr:`probekit.stats.Items.ids`): the first of these it has
#: (``item_id``; a Probe-C table, a row per 2x2 group, its ``group_id``); a table with neither: by position
ID_COLUMNS = ("item_id", UNIT)


# --------------------------------------------------------------------------------------------- scoring
def log_odds(p) -> np.ndarray:
    """``log p - log(1 - p)`` of match probabilities.  Only an exact 0 or 1 is moved (to the float32 neighbours the
    scorers' probabilities are stored in), so two probabilities the model tells apart keep distinct log-odds: no
    tie is created by clipping.  Probabilities the model itself saturates at 1 stay tied."""
    p = np.clip(np.asarray(p, dtype=float), _P_LOW, _P_HIGH)
    return np.log(p) - np.log1p(-p)


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
              n_resamples: int = 1000, scale: float = 1.0, clusters=None, ids=None) -> dict:
    """Point estimate, 95% bootstrap interval (over ``clusters``' units where given, one label per row; its items
    named by ``ids``, one per row, where given) and count of ``statistic`` over the rows of ``values`` (NaN rows
    dropped), multiplied by ``scale``: ``{"value", "ci", "n"}``."""
    values = np.asarray(values, dtype=float)
    keep = ~np.isnan(values).reshape(len(values), -1).any(axis=1) if len(values) else np.zeros(0, bool)
    values = values[keep]
    if len(values) == 0:
        return {"value": np.nan, "ci": (np.nan, np.nan), "n": 0}
    units, named = (None if x is None else np.asarray(x)[keep] for x in (clusters, ids))
    ci = bootstrap_ci(values, statistic, n_resamples=n_resamples, seed=seed, clusters=units, ids=named)
    return {"value": scale * float(statistic(values)), "ci": ci.scaled(scale), "n": len(values)}


@dataclass(frozen=True)
class Stat:
    """One summary of a scored table: ``metric`` of the ``columns`` by ``statistic`` (times ``scale``), with its
    chance level (a number, or a function of the scored rows summarised: a chance level that depends on the items,
    e.g. Probe-B's random ranking), optionally under its own ``subset`` (e.g. a Probe-B view)."""

    metric: str
    columns: tuple[str, ...]
    statistic: Callable[[np.ndarray], float] = np.mean
    scale: float = 1.0
    chance: float | Callable[[pd.DataFrame], float] = np.nan
    subset: str | None = None


def summary_rows(scored: pd.DataFrame, by: Mapping[str, str], stats: Sequence[Stat], seed: int = 0,
                 **fixed) -> pd.DataFrame:
    """One result row per group x :class:`Stat`; ``by`` maps a schema column (``model``, ``subset``,
    ``condition``) to the scored table's column it groups on; ``fixed`` sets the other schema columns.  Where the
    table has a ``group_id`` (Probe-R's items of one relation, Probe-C's 2x2 groups) the intervals resample groups
    whole (:data:`UNIT`)."""
    cols = list(by.values())
    out = []
    for key, grp in scored.groupby(cols, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        labels = {k: str(v) for k, v in zip(by, key)}
        for s in stats:
            vals = grp[list(s.columns)].to_numpy(dtype=float)
            # the chance level of the rows summarised (those without a NaN, as :func:`summarize` keeps)
            chance = s.chance(grp[~np.isnan(vals).any(axis=1)]) if callable(s.chance) else s.chance
            vals = vals[:, 0] if len(s.columns) == 1 else vals
            where = {**fixed, **labels, **({"subset": s.subset} if s.subset is not None else {})}
            units = grp[UNIT].to_numpy() if UNIT in grp else None
            named = next((grp[c].to_numpy() for c in ID_COLUMNS if c in grp), None)
            out.append(row(study=STUDY, metric=s.metric, chance=chance,
                           **summarize(vals, s.statistic, seed, scale=s.scale, clusters=units, ids=named), **where))
    return frame(out)


def _mean(metric: str, column: str) -> Stat:
    return Stat(metric, (column,), chance=CHANCE.get(metric, np.nan))


# --------------------------------------------------------------------------------------------- Probe-R


def group_means(scored: pd.DataFrame) -> pd.DataFrame:
    """Per-item metrics from the logits; for the ``GROUPED_KINDS`` (the images of the subject or object alone) the
    authors' aggregation: the logits averaged over a group's readable images, then one softmax per group (item_id
    ``<group>-<kind>``, ``n_images`` the images averaged)."""
    grouped = scored["kind"].isin(GROUPED_KINDS)
    alone = scored[grouped].dropna(subset=["logit_correct", "logit_wrong"])
    means = (alone.groupby(["model", "group_id", "kind"], sort=False)
             .agg(logit_correct=("logit_correct", "mean"), logit_wrong=("logit_wrong", "mean"),
                  n_images=("item_id", "size")).reset_index())
    means["item_id"] = means["group_id"] + "-" + means["kind"]
    out = pd.concat([scored[~grouped].assign(n_images=1), means], ignore_index=True)[
        ["item_id", "group_id", "kind", "model", "logit_correct", "logit_wrong", "n_images"]]
    return out.assign(**probe_r_item_metrics(out["logit_correct"], out["logit_wrong"]))


def probe_r_item_metrics(logit_correct, logit_wrong) -> dict:
    """Per item: ``confidence`` σ(correct − wrong) and ``correct``, 1 when the correct prompt's logit is strictly
    higher (the paper: "the confidence of the correct prompt is higher"; a tie is wrong); NaN where one is missing."""
    c, w = np.asarray(logit_correct, float), np.asarray(logit_wrong, float)
    bad = np.isnan(c) | np.isnan(w)
    conf = np.where(bad, np.nan, sigmoid(c - w))
    acc = np.where(bad, np.nan, (c > w).astype(float))
    return {"confidence": conf, "correct": acc}


def probe_r_rows(scored: pd.DataFrame, seed: int = 0, by: Mapping[str, str] | None = None, **fixed) -> pd.DataFrame:
    """Table 3: mean confidence of the correct prompt μ(c) (``mu_c``) and accuracy (``acc``) per model and kind
    (probe ``probe-r``, subset = kind)."""
    return summary_rows(scored, by or {"model": "model", "subset": "kind"},
                        [_mean("mu_c", "confidence"), _mean("acc", "correct")], seed, **{"probe": "probe-r", **fixed})


# --------------------------------------------------------------------------------------------- Probe-C
def winoground(s00, s01, s10, s11) -> dict:
    """Winoground scores of 2x2 groups; ``s_ij = f(image_i, caption_j)`` and caption_i describes image_i.

    text: each image prefers its own caption; image: each caption prefers its own image; group: both.  Every
    preference is strict, as in the paper's definition (Winoground's, f(p₁, x₁) > f(p₂, x₁)...): a tie fails.
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


PROBE_C_STATS = (_mean("mu_c", "confidence"), _mean("image", "image"), _mean("text", "text"), _mean("group", "group"))


def probe_c_rows(scored: pd.DataFrame, seed: int = 0, by: Mapping[str, str] | None = None, **fixed) -> pd.DataFrame:
    """Tables 4 and 6: μ(c), image, text and group scores per model and split (probe ``probe-c``, subset =
    split); ``by={"model": "model", "subset": "category"}, probe="probe-c-category"`` gives Table 6."""
    return summary_rows(scored, by or {"model": "model", "subset": "split"}, PROBE_C_STATS, seed,
                        **{"probe": "probe-c", **fixed})


# ------------------------------------------------------------------------------------------ general task


def zero_shot_rows(scored: pd.DataFrame, seed: int = 0, subset: str = "general", **fixed) -> pd.DataFrame:
    """Top-k accuracy rows of :func:`zero_shot_scores` (chance k / number of classes)."""
    k = scored.attrs.get("classes", np.nan)
    stats = [Stat(c, (c,), chance=int(c[3:]) / k) for c in scored.columns if c.startswith("top")]
    return summary_rows(scored.assign(_subset=subset), {"subset": "_subset"}, stats, seed, **fixed)
