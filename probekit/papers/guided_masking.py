"""Beňová et al. 2024, *Beyond Image-Text Matching: Verb Understanding in Multimodal Transformers Using Guided
Masking*: its reported numbers as result rows (region-feature models through VOLTA).

* Table 1: image-text matching on the *verb-negative* pairs of SVO-Probes (probe ``itm``, subset ``verb``, the
  name of that negative type in our rows) under the image conditions ``full image``, ``subject ablated``,
  ``image ablated``: metrics ``pos``, ``neg`` and ``avg_pooled``, the table's average, which pools all pairs
  (0.954 on 11,571 positives and 0.209 on 22,322 negatives give 0.463), not the balanced ``avg`` of our rows;
  ``n`` = those counts.
* Tables 2 (SVO-Probes) and 3 (V-COCO): top-5 verb accuracy (probe ``top-k``, metric ``accuracy``) under the
  same conditions and ``text only``, subset the dataset (``SVO-Probes``, ``V-COCO``); the paper's text-only
  row is BERT-base, listed here as model ``BERT``.  Beside them, the drops the tables imply (metric
  ``accuracy_diff``, condition "full image − <condition>", per model; the text-only side is BERT): differences
  of the table's own numbers, lined up with ours.

The paper gives no intervals, so ``ci_low``/``ci_high`` are NaN, and no per-cell counts beyond Table 1's, so
``n`` is NaN elsewhere.
"""

from __future__ import annotations

import pandas as pd

from probekit.results import frame, row

PAPER = "Beňová et al. 2024"
STUDY = "masking"
MODELS = ("ViLBERT", "LXMERT", "UNITER", "VisualBERT")
TEXT_MODEL = "BERT"
IMAGE_CONDITIONS = ("full image", "subject ablated", "image ablated")

# How many verb-negative pairs of SVO-Probes the guided-masking paper (Table 1) could still score after image
# links broke: all, positive and negative pairs, against the original paper's 34k / 11k / 23k.
GUIDED_MASKING_VERB_PAIRS = {"all": 33893, "pos": 11571, "neg": 22322}

_TABLE1 = {  # model: {condition: (pooled avg, pos, neg)}, verb negatives only
    "ViLBERT": {"full image": (.463, .954, .209), "subject ablated": (.565, .634, .530),
                "image ablated": (.652, .083, .947)},
    "LXMERT": {"full image": (.450, .955, .188), "subject ablated": (.475, .865, .272),
               "image ablated": (.553, .455, .604)},
    "UNITER": {"full image": (.472, .945, .227), "subject ablated": (.442, .956, .175),
               "image ablated": (.431, .852, .212)},
    "VisualBERT": {"full image": (.471, .944, .226), "subject ablated": (.463, .916, .229),
                   "image ablated": (.583, .403, .677)},
}
_TOP5 = {  # table: model: (full image, subject ablated, image ablated); text only (BERT) per table
    "Table 2": {"ViLBERT": (.739, .715, .629), "LXMERT": (.746, .716, .596),
                "UNITER": (.744, .722, .625), "VisualBERT": (.743, .722, .599)},
    "Table 3": {"ViLBERT": (.811, .798, .725), "LXMERT": (.805, .792, .735),
                "UNITER": (.813, .795, .763), "VisualBERT": (.802, .785, .748)},
}
_TEXT_ONLY = {"Table 2": .361, "Table 3": .585}
DATASETS = {"Table 2": "SVO-Probes", "Table 3": "V-COCO"}


def rows() -> pd.DataFrame:
    counts = GUIDED_MASKING_VERB_PAIRS
    out = [row(study=STUDY, probe="itm", model=m, condition=c, subset="verb", metric=metric, value=v, chance=.5,
               n=counts[part], source=f"{PAPER}, Table 1")
           for m, conds in _TABLE1.items() for c, values in conds.items()
           for metric, part, v in zip(("avg_pooled", "pos", "neg"), ("all", "pos", "neg"), values)]
    for table, models in _TOP5.items():
        source = f"{PAPER}, {table}"
        subset = DATASETS[table]
        out += [row(study=STUDY, probe="top-k", model=m, condition=c, subset=subset, metric="accuracy", value=v,
                    source=source) for m, values in models.items() for c, v in zip(IMAGE_CONDITIONS, values)]
        out.append(row(study=STUDY, probe="top-k", model=TEXT_MODEL, condition="text only", subset=subset,
                       metric="accuracy", value=_TEXT_ONLY[table], source=source))
        for m, (full, *ablated) in models.items():
            others = {**dict(zip(IMAGE_CONDITIONS[1:], ablated)), "text only": _TEXT_ONLY[table]}
            out += [row(study=STUDY, probe="top-k", model=m, condition=f"full image − {c}", subset=subset,
                        metric="accuracy_diff", value=round(full - v, 3), chance=0.0, source=source)
                    for c, v in others.items()]
    return frame(out)
