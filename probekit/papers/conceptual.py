"""Schiappa et al. 2023, *Probing Conceptual Understanding of Large Visual-Language Models*: the numbers of its
Tables 2, 3, 4, 6, 8, 9 and 10 as result rows (percentages become fractions; γ and Δc stay as printed).

The tables are kept as printed (tab-separated, the paper's model labels, in its row order); :func:`rows` turns
them into the vocabulary of :mod:`probekit.studies.conceptual.study`'s own rows: probe ``probe-r`` (subset = kind),
``probe-c`` (subset = split), ``probe-c-category`` (subset = attribute category, the paper's spelling),
``probe-b`` / ``probe-b-single`` (condition = filler or ``all fillers``, subset = view; the per-filler blocks,
averaged over models, as ``probe-b-pooled`` / ``probe-b-single-pooled`` with model ``all models``), and
``patching`` (Tables 2 and 10; condition ``<encoders>, α = <a>``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from probekit.metrics.background import ALL_FILLERS, ALL_MODELS, DELTA_PAIRS, GAMMA_PAIRS, LABEL, MULTI, POOLED, \
    SINGLE, pair_label
from probekit.metrics.conceptual import CHANCE, STUDY
from probekit.results import frame, row

PAPER = "Schiappa et al. 2023"
#: the paper's model labels -> this package's registry names ("CLIP ViT" is ViT-L/14@336px, "CLIP CNN" RN50x4)
PAPER_MODELS = {"CLIP RN50": "openclip-rn50-openai", "CLIP RN101": "openclip-rn101-openai",
                "CLIP ViT/B-32": "clip-vit-b32", "CLIP ViT-B/16": "clip-vit-b16", "CLIP ViT L/14": "clip-vit-l14",
                "CLIP ViT": "clip-vit-l14-336", "CLIP CNN": "openclip-rn50x4-openai", "FLAVA": "flava",
                "ViLT": "vilt-coco", "BridgeTower": "bridgetower"}
#: Table 10's encoder codes -> the fine-tuning's ``encoders`` names
ENCODERS = {"t": "text", "v": "vision", "vt": "both"}
#: the patching weight of the paper's "CLIP Patched" models (section 5, Implementation: "we linearly interpolate
#: the original CLIP weights with our finetuned weights using an α=0.2, leaning more towards the original weights";
#: Table 2's rows and Table 10's first rows)
PATCH_ALPHA = 0.2


def patch_condition(encoders: str, alpha: float) -> str:
    """The condition of a patched model's rows: ``"text, α = 0.25"``."""
    return f"{encoders}, α = {alpha:g}"


def parse_condition(condition: str) -> tuple[str, float]:
    """The inverse of :func:`patch_condition`: ``"text, α = 0.25"`` -> ``("text", 0.25)``."""
    encoders, alpha = condition.split(", α = ")
    return encoders, float(alpha)


_TABLE3 = """\
CLIP RN50	69.77	72.14	51.33	51.13	61.19	61.69	78.44	89.10
CLIP ViT L/14	71.59	73.68	52.44	52.59	59.09	58.67	84.17	93.23
CLIP ViT-B/16	71.08	73.40	52.84	53.37	61.69	62.07	79.62	89.96
CLIP ViT/B-32	69.00	71.21	53.02	53.53	58.83	58.56	82.21	92.32
CLIP ViT	72.09	74.27	53.52	53.97	59.53	59.14	83.97	93.50
CLIP RN101	70.62	73.28	54.01	55.11	60.66	60.83	79.08	91.17
CLIP RN50x64	72.79	74.79	56.66	58.03	64.10	64.88	78.10	87.15
CLIP CNN	72.71	75.59	56.35	58.14	62.31	62.81	78.29	90.77
CLIP RN50x16	73.91	76.57	58.08	60.52	59.80	59.79	83.03	94.05
CLIP Patched (V)	78.58	81.41	59.36	62.27	66.56	68.07	81.32	90.79
FLAVA	76.79	79.09	64.65	68.29	64.40	65.56	84.19	90.12
ViLT	76.41	78.45	64.77	69.00	54.84	54.78	94.23	99.10
CLIP Patched (VT)	80.56	84.46	64.53	71.12	67.63	70.07	81.74	92.40
CLIP Patched (T)	82.37	86.25	66.28	72.55	67.93	70.51	79.76	90.70
BridgeTower	83.03	89.01	72.93	82.04	71.73	78.90	76.58	94.38
"""
_TABLE4 = """\
CLIP ViT	69.69	33.06	52.82	26.64	88.15	61.96	81.89	58.05
CLIP RN50	69.47	33.41	54.60	26.92	87.00	61.40	80.17	56.81
CLIP ViT-B/16	69.23	34.29	52.23	26.94	88.02	63.53	81.44	59.12
CLIP ViT L/14	69.41	33.73	52.36	27.01	87.89	61.93	81.31	57.86
CLIP RN101	69.24	34.95	51.82	27.42	86.99	61.75	80.58	57.46
CLIP RN50x64	70.44	35.21	52.89	27.95	87.75	63.09	80.55	58.27
CLIP ViT/B-32	69.79	34.71	53.85	27.96	87.75	62.01	80.92	57.65
CLIP RN50x16	69.77	35.51	53.24	28.07	87.91	63.12	82.23	59.38
CLIP CNN	69.75	36.07	54.56	28.79	87.24	61.29	81.24	57.06
FLAVA	67.45	60.93	39.65	33.09	83.85	82.66	70.08	65.37
CLIP Patched (T)	71.94	40.96	58.79	33.83	89.58	68.81	84.36	65.19
CLIP Patched (V)	73.65	42.30	59.10	34.48	89.79	66.17	84.00	62.45
CLIP Patched (VT)	73.65	44.53	61.92	37.18	90.30	70.01	85.41	66.83
ViLT	79.02	53.74	66.84	46.65	90.78	73.82	85.88	70.26
BridgeTower	81.88	65.95	75.02	59.28	90.05	77.44	87.63	74.54
"""
_TABLE6A = """\
CLIP RN50	47.74	68.84	39.20	18.18	13.64	0.00	21.07	35.45	13.14	34.71	60.75	30.18	0.00	0.00	0.00
CLIP RN50x64	53.77	82.41	49.25	4.55	13.64	0.00	20.08	36.28	13.97	39.64	70.61	36.29	100.00	100.00	100.00
CLIP RN101	48.74	70.35	39.20	18.18	63.64	18.18	37.60	43.97	24.30	32.35	55.23	27.02	0.00	100.00	0.00
CLIP ViT	53.27	71.36	46.73	18.18	77.27	18.18	20.91	38.26	15.62	45.17	69.03	40.43	100.00	0.00	0.00
CLIP ViT-B/16	45.73	76.88	40.70	27.27	77.27	22.73	28.84	66.94	24.05	41.03	62.92	35.90	0.00	0.00	0.00
CLIP ViT L/14	53.77	75.88	47.74	31.82	72.73	27.27	18.43	16.28	11.82	41.62	69.43	37.67	100.00	0.00	0.00
CLIP CNN	57.29	76.38	49.75	31.82	68.18	31.82	25.21	47.93	19.01	37.67	56.80	30.77	0.00	100.00	0.00
CLIP Patched (T)	41.71	79.40	37.69	31.82	68.18	31.82	37.27	61.98	31.74	46.94	54.83	36.09	100.00	100.00	100.00
CLIP ViT/B-32	40.20	74.37	35.68	18.18	13.64	4.55	23.22	58.02	20.08	39.05	60.75	33.93	100.00	100.00	100.00
CLIP Patched (V)	44.72	76.38	39.70	40.91	90.91	40.91	31.65	60.74	27.19	53.06	60.16	43.20	100.00	100.00	100.00
CLIP Patched (VT)	48.74	72.86	42.21	50.00	81.82	40.91	34.55	61.57	29.67	52.47	57.00	42.60	100.00	0.00	0.00
FLAVA	73.87	47.24	43.22	86.36	81.82	68.18	39.67	24.88	10.33	65.09	42.60	37.67	100.00	100.00	100.00
CLIP RN50x16	52.76	83.92	49.75	9.09	13.64	9.09	21.98	42.98	14.71	40.83	62.72	35.11	100.00	100.00	100.00
BridgeTower	68.34	80.40	65.33	95.45	90.91	90.91	32.23	52.07	24.79	57.79	64.89	49.90	100.00	100.00	100.00
ViLT	38.19	53.27	28.64	90.91	95.45	86.36	4.79	18.43	1.57	57.59	67.46	51.28	100.00	100.00	100.00
"""
_TABLE6B = """\
CLIP RN50	100.00	100.00	100.00	3.69	23.88	2.56	21.21	47.95	17.11	0.00	20.69	0.00	0.00	0.00	0.00
CLIP RN50x64	100.00	100.00	100.00	9.46	22.92	6.25	18.83	33.40	12.37	3.45	20.69	0.00	0.00	0.00	0.00
CLIP RN101	100.00	100.00	100.00	9.13	27.88	5.45	20.96	37.63	12.72	3.45	31.03	3.45	50.00	0.00	0.00
CLIP ViT	100.00	100.00	100.00	10.26	38.94	6.41	24.13	42.98	18.85	6.90	6.90	0.00	50.00	0.00	0.00
CLIP ViT-B/16	0.00	100.00	0.00	8.01	21.63	3.21	15.69	28.33	7.73	6.90	17.24	0.00	100.00	0.00	0.00
CLIP ViT L/14	0.00	100.00	0.00	13.46	37.02	8.49	24.84	45.11	19.34	3.45	6.90	0.00	50.00	0.00	0.00
CLIP CNN	100.00	100.00	100.00	12.82	39.58	8.81	17.51	33.43	10.62	0.00	6.90	0.00	0.00	0.00	0.00
CLIP Patched (T)	0.00	0.00	0.00	6.25	22.92	3.04	20.40	43.08	16.09	3.45	10.34	0.00	50.00	50.00	0.00
CLIP ViT/B-32	0.00	0.00	0.00	7.85	26.60	4.97	13.63	34.47	7.05	0.00	3.45	0.00	50.00	0.00	0.00
CLIP Patched (V)	0.00	100.00	0.00	10.10	28.04	6.41	16.29	44.60	10.42	0.00	6.90	0.00	50.00	50.00	50.00
CLIP Patched (VT)	0.00	0.00	0.00	7.37	23.24	5.45	25.14	45.67	17.03	3.45	27.59	3.45	0.00	50.00	0.00
FLAVA	0.00	0.00	0.00	34.62	3.37	2.72	48.66	16.09	12.60	31.03	3.45	3.45	0.00	0.00	0.00
CLIP RN50x16	100.00	100.00	100.00	7.85	19.87	4.49	22.93	54.13	18.88	3.45	20.69	0.00	0.00	0.00	0.00
BridgeTower	100.00	100.00	100.00	7.53	32.53	6.41	25.54	49.06	20.40	0.00	17.24	0.00	0.00	100.00	0.00
ViLT	0.00	100.00	0.00	5.13	20.99	2.56	17.44	45.36	14.75	6.90	27.59	3.45	0.00	0.00	0.00
"""
_TABLE8_FILLERS = """\
black	74.24	73.57	75.28	1.08	1.02	1.16	0.81	-0.80	0.01
noise	74.37	71.38	71.76	1.00	0.99	1.18	2.08	-0.62	1.46
gray	74.38	73.47	75.96	1.09	1.02	1.19	0.95	-0.98	-0.03
scene	74.34	71.36	71.71	1.01	0.99	1.25	1.81	-0.69	1.12
"""
_TABLE8_MODELS = """\
CLIP RN50	65.05	65.47	60.30	1.00	1.02	0.99	-0.05	4.86	4.82
CLIP ViT/B-32	68.77	67.49	61.10	0.95	0.99	0.98	0.40	5.12	5.52
CLIP CNN	63.23	63.56	63.46	1.12	1.02	1.10	0.46	2.64	3.11
CLIP RN101	64.56	65.00	63.80	1.09	1.02	1.08	0.21	2.79	3.00
CLIP ViT-B/16	69.97	68.54	65.15	0.99	0.98	1.02	0.36	2.92	3.28
FLAVA	72.05	74.47	66.75	0.98	1.05	0.94	0.00	0.01	0.01
CLIP ViT L/14	70.98	69.38	68.99	1.04	0.98	1.08	0.94	1.17	2.12
CLIP ViT	71.05	70.94	71.50	1.08	1.01	1.08	0.70	0.52	1.22
ViLT	83.49	71.38	83.26	1.00	0.87	1.62	6.68	-6.61	0.08
BridgeTower	81.85	81.88	83.40	1.05	1.06	1.23	-0.79	-0.42	-1.22
"""
_TABLE9_FILLERS = """\
noise	54.26	53.58	63.07	1.17	0.99	1.18
scene	49.85	53.41	58.15	1.17	1.08	1.09
black	56.80	55.74	68.02	1.21	0.98	1.23
gray	57.24	55.28	68.40	1.21	0.97	1.25
"""
_TABLE9_MODELS = """\
BridgeTower	77.36	76.14	77.70	1.01	0.98	1.02
FLAVA	56.33	59.16	58.32	1.03	1.06	0.99
CLIP ViT/B-32	46.19	50.50	54.20	1.17	1.10	1.07
CLIP ViT-B/16	51.12	51.31	60.30	1.18	1.01	1.17
CLIP ViT L/14	56.27	54.18	67.16	1.19	0.96	1.24
CLIP RN50	45.79	48.64	55.68	1.21	1.07	1.14
CLIP ViT	59.31	56.08	71.76	1.21	0.95	1.28
CLIP RN101	46.48	47.92	57.32	1.23	1.03	1.20
CLIP RN50x16	53.88	50.92	66.18	1.23	0.95	1.30
CLIP RN50x64	56.86	53.70	70.04	1.23	0.95	1.30
CLIP CNN	50.08	49.66	62.18	1.24	1.00	1.25
ViLT	54.73	55.82	72.09	1.33	1.02	1.30
"""
_TABLE2 = """\
ViLT	–	76.00	79.02	69.00
BridgeTower	–	85.00	81.86	82.20
FLAVA	56.83	47.12	67.45	68.29
CLIP ViT B32	63.60	51.93	69.67	53.52
CLIP Patched (T)	57.85	67.85	71.94	71.14
CLIP Patched (V)	61.45	54.66	73.65	61.40
CLIP Patched (VT)	54.61	64.27	73.65	71.20
"""
_TABLE10 = """\
v	0.2	31.52	54.67	53.17	61.45	87.73
v	0.3	32.58	55.61	53.97	58.25	85.69
v	0.4	33.29	56.40	54.89	54.19	82.72
v	0.5	34.15	57.31	55.60	49.36	78.87
v	0.6	34.43	57.62	55.94	44.04	73.96
vt	0.2	42.19	64.30	62.45	54.62	83.05
t	0.2	47.18	67.86	66.62	57.42	85.14
vt	0.3	49.58	69.83	68.00	44.92	73.93
vt	0.4	50.11	70.14	68.78	34.95	63.07
vt	0.5	51.57	71.12	70.35	27.00	52.54
vt	0.6	53.38	72.62	71.77	20.98	43.88
t	0.3	56.31	74.56	73.55	50.69	79.35
t	0.4	62.51	78.57	78.29	44.39	72.39
t	0.5	70.36	83.55	83.21	38.66	66.23
t	0.6	74.63	86.26	85.62	33.54	60.21
"""


def _parse(block: str) -> list[list[str]]:
    return [line.split("\t") for line in block.strip("\n").split("\n")]


def _value(text: str) -> float:
    return float(text) if text not in ("–", "") else np.nan


def _rows(block: str, table: str, columns, **fixed):
    """``columns``: per value column, a dict of the schema fields it sets (metric, subset, ...)."""
    out = []
    for first, *values in _parse(block):
        for spec, text in zip(columns, values):
            value = _value(text)
            if np.isnan(value):
                continue
            fields = {"model": first, **fixed, **spec}
            metric = fields.pop("metric")
            scale = fields.pop("scale", 100.0)
            out.append(row(study=STUDY, metric=metric, value=value / scale, source=f"{PAPER}, {table}",
                           chance=CHANCE.get(metric, np.nan) if fields.get("probe") in ("probe-r", "probe-c") else
                           np.nan, **fields))
    return out


def _b_columns(h: str, with_delta: bool) -> list[dict]:
    cols: list[dict[str, Any]] = [dict(metric=h, subset=LABEL[v]) for v in ("x0", "x0_patch", "x1_fill")]
    cols += [dict(metric="gamma", subset=pair_label(a, b), scale=1.0) for a, b in GAMMA_PAIRS]
    if with_delta:
        cols += [dict(metric="delta_c_pts", subset=pair_label(a, b), scale=1.0) for a, b in DELTA_PAIRS]
    return cols


def rows() -> pd.DataFrame:
    r_kinds = ("subject_swap", "predicate_swap", "subject_only", "subject_only_relations")
    t3 = [dict(metric=m, subset=k) for k in r_kinds for m in ("mu_c", "acc")]
    t4 = [dict(metric=m, subset=s) for s in ("composition", "object") for m in ("mu_c", "image", "text", "group")]
    t6a = [dict(metric=m, subset=c) for c in ("age", "color", "expression", "gender", "material")
           for m in ("image", "text", "group")]
    t6b = [dict(metric=m, subset=c) for c in ("pattern", "shape", "size", "texture", "visibility")
           for m in ("image", "text", "group")]
    t2 = [dict(subset="imagenet", metric="top1"), dict(subset="relcomp", metric="image"),
          dict(subset="probe-c composition", metric="mu_c"), dict(subset="probe-r", metric="mu_c")]
    t10 = [dict(subset="relcomp", metric=m) for m in ("group", "image", "text")]
    t10 += [dict(subset="imagenet", metric=m) for m in ("top1", "top5")]
    out = (_rows(_TABLE3, "Table 3", t3, probe="probe-r") + _rows(_TABLE4, "Table 4", t4, probe="probe-c")
           + _rows(_TABLE6A, "Table 6", t6a, probe="probe-c-category")
           + _rows(_TABLE6B, "Table 6", t6b, probe="probe-c-category")
           + [dict(r, condition=r["model"], model=ALL_MODELS) for r in
              _rows(_TABLE8_FILLERS, "Table 8", _b_columns("map", True), probe=POOLED[MULTI])]
           + _rows(_TABLE8_MODELS, "Table 8", _b_columns("map", True), probe=MULTI, condition=ALL_FILLERS)
           + [dict(r, condition=r["model"], model=ALL_MODELS) for r in
              _rows(_TABLE9_FILLERS, "Table 9", _b_columns("acc", False), probe=POOLED[SINGLE])]
           + _rows(_TABLE9_MODELS, "Table 9", _b_columns("acc", False), probe=SINGLE, condition=ALL_FILLERS)
           + _rows(_TABLE2, "Table 2", t2, probe="patching"))
    for code, alpha, *values in _parse(_TABLE10):
        line = "\t".join(["CLIP ViT/B-32", *values])
        out += _rows(line, "Table 10", t10, probe="patching", condition=patch_condition(ENCODERS[code], float(alpha)))
    return frame(out)


#: the models whose printed numbers carry a reading of the authors' code (:mod:`probekit.metrics.authors_code`)
FLAVA_SWAPPED, VIEWS_SWAPPED = ("FLAVA",), ("ViLT", "BridgeTower")
UNDONE = " (reading undone)"


def undo_readings(rows_: pd.DataFrame) -> pd.DataFrame:
    """The paper's rows that its code's two readings touch, with the reading undone (source ``<table> (reading
    undone)``): FLAVA's text and image scores exchanged back (Tables 4, 6; its μ(c), in the authors' code a softmax
    over the two images, cannot be recomputed from the table and is left out); ViLT's and BridgeTower's x̃0 and x̃1
    exchanged back in the per-model rows of Tables 8 and 9 (h and the pairs with x0 exchanged, Δc(x̃0, x̃1) negated;
    γ(x̃0, x̃1), a mean of per-item ratios, cannot be inverted from the table and is left out)."""
    out = []
    swap_text = {"text": "image", "image": "text"}
    swap_view = {LABEL["x0_patch"]: LABEL["x1_fill"], LABEL["x1_fill"]: LABEL["x0_patch"],
                 pair_label("x0", "x0_patch"): pair_label("x0", "x1_fill"),
                 pair_label("x0", "x1_fill"): pair_label("x0", "x0_patch")}
    between = pair_label("x0_patch", "x1_fill")
    for r in rows_.to_dict("records"):
        table = r["source"].removeprefix(f"{PAPER}, ")
        if table in ("Table 4", "Table 6") and r["model"] in FLAVA_SWAPPED and r["metric"] in swap_text:
            out.append({**r, "metric": swap_text[r["metric"]]})
        elif table in ("Table 8", "Table 9") and r["model"] in VIEWS_SWAPPED and r["condition"] == ALL_FILLERS:
            if r["subset"] in swap_view:
                out.append({**r, "subset": swap_view[r["subset"]]})
            elif r["subset"] == between and r["metric"] == "delta_c_pts":
                out.append({**r, "value": -r["value"]})
            else:
                continue
        else:
            continue
        out[-1]["source"] = r["source"] + UNDONE
    return frame(out)


def count(rows_: pd.DataFrame, a: dict, b: dict) -> tuple[int, int]:
    """(how many of the paper's models have a higher value in cell ``a`` than in cell ``b``, how many have
    both): ``a`` and ``b`` select rows by schema columns, e.g. ``dict(subset="subject_swap", metric="acc")``."""
    def values(where):
        sel = rows_
        for k, v in where.items():
            sel = sel[sel[k] == v]
        return sel.set_index("model")["value"]

    va, vb = values(a), values(b)
    both = va.index.intersection(vb.index)
    return int((va[both] > vb[both]).sum()), len(both)
