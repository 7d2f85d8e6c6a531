"""Nikolaus et al. 2022, *Do Vision-and-Language Transformers Learn Grounded Predicate-Noun Dependencies?*: its
reported numbers as result rows, in the vocabulary of :mod:`probekit.studies.prednoun.study`.

* Table 1 (default template) and Table 7 (alternative template, "the man wears glasses"): pair accuracy
  (probe ``pairs`` / ``pairs-alt``, metric ``pair_accuracy``, chance 0.25) on ``full`` images and ``cropped``
  to the target, subset ``all``.
* Table 8: the same split by what the distractor swaps (subset ``noun`` / ``predicate``).
* Table 6: pair accuracy on full images of open_clip checkpoints (models named "CLIP <architecture> <pretraining
  data>"); their architecture and pretraining data are :data:`TABLE6_MODELS`.
* Table 9: Pearson r (metric ``r``, chance 0) and its p (metric ``p``) between each triplet's score difference
  and a confound (probe ``confounds``, condition ``full``, subset the factor, :data:`FACTORS`).

The paper gives no intervals and no per-cell counts, so ``ci_low``/``ci_high``/``n`` are NaN.
"""

from __future__ import annotations

import pandas as pd

from probekit.results import frame, row

PAPER = "Nikolaus et al. 2022"
STUDY = "prednoun"
PAIR_CHANCE = 0.25
#: Table 9's factors, in the paper's order; the last needs an object detector (the paper's Faster R-CNN)
FACTORS = ("bounding box size", "distance from centre", "perplexity", "object detector confidence")

_TABLE1 = {"LXMERT": (0.57, 0.69), "UNITER": (0.54, 0.64), "ViLBERT": (0.28, 0.66), "ViLT": (0.40, 0.75),
           "Oscar": (0.32, 0.67), "VinVL": (0.30, 0.76), "CLIP": (0.20, 0.59)}
_TABLE7 = {"LXMERT": (0.55, 0.70), "UNITER": (0.54, 0.66), "ViLBERT": (0.26, 0.67), "ViLT": (0.34, 0.72),
           "Oscar": (0.32, 0.65), "VinVL": (0.30, 0.74), "CLIP": (0.21, 0.58)}
# full noun, full predicate, cropped noun, cropped predicate
_TABLE8 = {"LXMERT": (0.60, 0.55, 0.78, 0.62), "UNITER": (0.60, 0.50, 0.76, 0.56),
           "ViLBERT": (0.27, 0.28, 0.74, 0.59), "ViLT": (0.44, 0.37, 0.80, 0.72),
           "Oscar": (0.36, 0.30, 0.75, 0.62), "VinVL": (0.33, 0.28, 0.83, 0.71), "CLIP": (0.21, 0.19, 0.69, 0.52)}
# open_clip (architecture, pretraining data) -> pair accuracy on full images
_TABLE6 = {("RN101", "yfcc15m"): 0.18, ("RN101", "openai"): 0.21, ("RN50", "cc12m"): 0.18,
           ("RN50", "openai"): 0.20, ("RN50", "yfcc15m"): 0.17, ("ViT-B-32", "laion2b_e16"): 0.21,
           ("ViT-B-32", "laion400m_e31"): 0.20, ("ViT-B-32", "laion400m_e32"): 0.19, ("ViT-B-32", "openai"): 0.20,
           ("ViT-L-14-336", "openai"): 0.20}
#: Table 6's model name -> (architecture, pretraining data)
TABLE6_MODELS = {f"CLIP {arch} {data}": (arch, data) for arch, data in _TABLE6}
# r (p) of the score difference against each of FACTORS
_TABLE9 = {"LXMERT": ((-0.03, 0.12), (0.03, 0.08), (-0.01, 0.48), (0.30, 0.00)),
           "UNITER": ((-0.09, 0.00), (0.09, 0.00), (0.05, 0.01), (0.26, 0.00)),
           "ViLBERT": ((0.11, 0.00), (-0.16, 0.00), (0.05, 0.02), (0.22, 0.00)),
           "ViLT": ((-0.01, 0.73), (0.03, 0.13), (0.05, 0.02), (0.26, 0.00)),
           "Oscar": ((0.12, 0.00), (-0.17, 0.00), (0.06, 0.00), (0.15, 0.00)),
           "VinVL": ((0.12, 0.00), (-0.12, 0.00), (0.05, 0.01), (0.04, 0.05)),
           "CLIP": ((0.14, 0.00), (-0.24, 0.00), (0.08, 0.00), (0.17, 0.00))}


def _pairs(table: str, probe: str, model: str, condition: str, value: float, subset: str = "all") -> dict:
    return row(study=STUDY, probe=probe, model=model, condition=condition, subset=subset, metric="pair_accuracy",
               value=value, chance=PAIR_CHANCE, source=f"{PAPER}, {table}")


def rows() -> pd.DataFrame:
    out = [_pairs(table, probe, m, c, v) for table, probe, values in (("Table 1", "pairs", _TABLE1),
                                                                      ("Table 7", "pairs-alt", _TABLE7))
           for m, accs in values.items() for c, v in zip(("full", "cropped"), accs)]
    out += [_pairs("Table 8", "pairs", m, c, v, subset=s) for m, accs in _TABLE8.items()
            for (c, s), v in zip((("full", "noun"), ("full", "predicate"), ("cropped", "noun"),
                                  ("cropped", "predicate")), accs)]
    out += [_pairs("Table 6", "pairs", f"CLIP {arch} {data}", "full", v) for (arch, data), v in _TABLE6.items()]
    for m, values in _TABLE9.items():
        for factor, (r, p) in zip(FACTORS, values):
            out.append(row(study=STUDY, probe="confounds", model=m, condition="full", subset=factor, metric="r",
                           value=r, chance=0.0, source=f"{PAPER}, Table 9"))
            out.append(row(study=STUDY, probe="confounds", model=m, condition="full", subset=factor, metric="p",
                           value=p, source=f"{PAPER}, Table 9"))
    return frame(out)
