"""Hendricks & Nematzadeh (2021), "Probing Image–Language Transformers for Verb Understanding" (SVO-Probes).

Its MMT models are ViLBERT-like transformers pretrained on Conceptual Captions, scored by their ITM head at
threshold 0.5.  As result rows (``probe="svo"``, ``condition="threshold 0.5"``, the vocabulary of
:mod:`probekit.metrics.itm`, values as fractions, no intervals):

* Table 4: accuracy on positives, negatives and their average, overall and per negative type, for seven
  models; ``n`` is the table's "# examples" row (given rounded to thousands, e.g. "48k" -> 48000).
* Table 5: MMT pretrained on COCO (model "MMT-COCO"), only the cells the paper reports; no counts.

Table 6 (MMT's hardest and easiest verbs, over the SVO triplets with at least 30 negative images) is a pair of
word sets, not numbers: the paper lists each alphabetically and does not rank within it, so
:data:`HARDEST_VERBS` and :data:`EASIEST_VERBS` are sets and :func:`table6` shows them in alphabetical order.
"""

from __future__ import annotations

import pandas as pd

from probekit.results import frame

PAPER = "Hendricks & Nematzadeh 2021"
CONDITION = "threshold 0.5"
MODELS = ["MMT", "Merged-MMT", "Lang-MMT", "Image-MMT", "SMT", "No-MRM-MMT", "No-MLM-MMT"]
# (subset, metric): percent per model of MODELS
_TABLE4 = {
    ("all", "avg"): [64.3, 64.7, 68.1, 64.3, 52.4, 69.5, 60.8],
    ("all", "pos"): [93.8, 94.4, 80.2, 91.6, 49.1, 85.4, 92.3],
    ("all", "neg"): [34.8, 35.0, 56.0, 37.0, 55.6, 53.7, 29.3],
    ("subject", "avg"): [67.0, 69.1, 71.5, 68.2, 52.6, 73.5, 64.8],
    ("subject", "pos"): [94.4, 94.9, 82.1, 92.1, 47.7, 87.4, 93.9],
    ("subject", "neg"): [39.5, 43.2, 60.9, 44.2, 57.5, 59.7, 35.8],
    ("verb", "avg"): [60.8, 60.7, 64.5, 59.7, 51.8, 65.5, 57.4],
    ("verb", "pos"): [93.8, 94.4, 80.2, 91.6, 49.1, 85.6, 92.5],
    ("verb", "neg"): [27.8, 27.0, 48.9, 27.8, 54.6, 45.5, 22.4],
    ("object", "avg"): [73.4, 74.1, 77.7, 75.6, 53.9, 80.1, 69.5],
    ("object", "pos"): [94.4, 94.9, 81.4, 91.5, 50.7, 86.2, 93.6],
    ("object", "neg"): [52.4, 53.3, 74.1, 59.6, 57.0, 74.1, 45.5],
}
# Table 4's "# examples" row, in thousands
_EXAMPLES_K = {("all", "avg"): 48, ("all", "pos"): 12, ("all", "neg"): 36,
               ("subject", "avg"): 8, ("subject", "pos"): 3, ("subject", "neg"): 5,
               ("verb", "avg"): 34, ("verb", "pos"): 11, ("verb", "neg"): 23,
               ("object", "avg"): 11, ("object", "pos"): 3, ("object", "neg"): 8}
# Table 5: MMT pretrained on COCO, the cells the paper reports
_TABLE5_MMT_COCO = {("all", "avg"): 68.0, ("all", "pos"): 75.2, ("all", "neg"): 60.9, ("subject", "neg"): 66.0,
                    ("verb", "neg"): 55.5, ("object", "neg"): 73.4}

#: Table 6: MMT's ten hardest and ten easiest verbs, as sets (the paper does not rank within them)
HARDEST_VERBS = frozenset({"argue", "beat", "break", "burn", "buy", "cast", "comb", "crash", "cut", "decorate"})
EASIEST_VERBS = frozenset({"tackle", "reach", "arrive", "pitch", "accept", "congratulate", "lead", "present",
                           "celebrate", "attend"})
#: Table 6's filter: SVO triplets (not verbs) with at least this many negative images
TABLE6_MIN_NEGATIVES = 30
#: the paper's order of difficulty by negative type (MMT's average accuracy 60.8 < 67.0 < 73.4)
NEGATIVE_ORDER = ["verb", "subject", "object"]


def _row(model: str, subset: str, metric: str, percent: float, n: float, table: str) -> dict:
    return dict(study="verbs", probe="svo", model=model, condition=CONDITION, subset=subset, metric=metric,
                value=percent / 100, n=n, chance=0.5, source=f"{PAPER}, {table}")


def rows() -> pd.DataFrame:
    """Tables 4 and 5 as result rows."""
    out = [_row(model, subset, metric, values[i], _EXAMPLES_K[subset, metric] * 1000, "Table 4")
           for (subset, metric), values in _TABLE4.items() for i, model in enumerate(MODELS)]
    out += [_row("MMT-COCO", subset, metric, value, float("nan"), "Table 5")
            for (subset, metric), value in _TABLE5_MMT_COCO.items()]
    return frame(out)


def table6() -> pd.DataFrame:
    """Table 6's two sets side by side, each in alphabetical order (no rank: the rows are not ranks)."""
    return pd.DataFrame({"hardest (set)": sorted(HARDEST_VERBS), "easiest (set)": sorted(EASIEST_VERBS)},
                        index=[""] * len(HARDEST_VERBS))
