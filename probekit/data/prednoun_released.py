"""The per-item outputs Nikolaus et al. (2022) released with their code, read so that probekit's own metrics
(:mod:`probekit.metrics.pairs`) recompute their tables, now with bootstrap intervals.

Their repository (``mitjanikolaus/multimodal-predicate-noun-dependencies``, no licence: nothing of it ships with
probekit; the files are downloaded at run time and cached under ``<data_dir>/prednoun/released/<MODEL>/``) holds
one CSV per model and condition, ``runs/sentence-semantics/<MODEL>/results{,_cropped_images}{,_alt_sentences}.csv``.
The seven models of their Table 1 have all four; the five ``CTRL_*`` models of Table 2 (one pretraining setup,
several architectures) only the default template, on full and cropped images.

Assumed layout (the authors' evaluation script writes it so): row ``i`` of a CSV is entry ``i`` of
``eval_set.json`` (every field of the entry) plus the model's outputs, of which probekit reads only

* ``id``: the entry's id, checked against the evaluation set's ids in order (the alignment everything rests on);
* ``prob_target_match`` and ``prob_distractor_match``: s(I, S_target) and s(I, S_distractor).

Everything else about an item (sentences, words, boxes) comes from ``eval_set.json`` as validated by
:mod:`probekit.data.prednoun`.  A file without one of these columns, with another row count or another id order
raises :class:`ReleasedOutputError` naming the file and the problem.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from probekit.data.prednoun import eval_set_path, items_from_entries, read_eval_set

BASE_URL = ("https://raw.githubusercontent.com/mitjanikolaus/multimodal-predicate-noun-dependencies/main/"
            "runs/sentence-semantics")
#: the authors' folder name -> the model's name in the paper's tables (Table 1, 7, 8)
MODELS = {"LXMERT": "LXMERT", "UNITER": "UNITER", "VILBERT": "ViLBERT", "VILT": "ViLT", "Oscar": "Oscar",
          "VINVL": "VinVL", "CLIP": "CLIP"}
#: Table 2's models (controlled pretraining), named as the authors' table script names them (``_BASE`` dropped)
CTRL_MODELS = {"CTRL_LXMERT": "CTRL_LXMERT", "CTRL_UNITER_BASE": "CTRL_UNITER", "CTRL_VILBERT_BASE": "CTRL_VILBERT",
               "CTRL_VISUALBERT_BASE": "CTRL_VISUALBERT", "CTRL_VL-BERT_BASE": "CTRL_VL-BERT"}
REQUIRED = ("id", "prob_target_match", "prob_distractor_match")
CONDITIONS = ("full", "cropped")
TEMPLATES = ("default", "alt")


class ReleasedOutputError(ValueError):
    """A released CSV that does not fit the assumed layout; the message names the file and the problem."""


def display_name(folder: str) -> str:
    """The model's name in the paper's tables for one of the authors' folders."""
    return {**MODELS, **CTRL_MODELS}[folder]


def runs(folder: str) -> list[tuple[str, str]]:
    """The released (condition, template) runs of one folder: four for Table 1's models, two for CTRL_*."""
    if folder in MODELS:
        return [(c, t) for t in TEMPLATES for c in CONDITIONS]
    if folder in CTRL_MODELS:
        return [(c, "default") for c in CONDITIONS]
    raise ValueError(f"no released outputs for {folder!r}; the authors' folders: "
                     f"{', '.join([*MODELS, *CTRL_MODELS])}")


def file_name(condition: str, template: str) -> str:
    """``results{,_cropped_images}{,_alt_sentences}.csv``, as the authors' evaluation script names its output."""
    if condition not in CONDITIONS or template not in TEMPLATES:
        raise ValueError(f"condition must be one of {CONDITIONS} and template one of {TEMPLATES}, "
                         f"got {condition!r}, {template!r}")
    return ("results" + ("_cropped_images" if condition == "cropped" else "")
            + ("_alt_sentences" if template == "alt" else "") + ".csv")


def released_file(folder: str, condition: str, template: str, data_dir: str | os.PathLike,
                  base_url: str = BASE_URL) -> Path:
    """The cached CSV of one run, downloaded from ``base_url`` the first time."""
    from probekit.data.download import fetch_file

    name = file_name(condition, template)
    dest = Path(data_dir) / "prednoun" / "released" / folder / name
    return fetch_file(f"{base_url.rstrip('/')}/{folder}/{name}", dest, what=f"the authors' {folder}/{name}")


def read_released(path: str | os.PathLike, items: pd.DataFrame) -> pd.DataFrame:
    """``items`` (the whole evaluation set, in the release's order) with ``s_target`` and ``s_distractor`` read
    from one released CSV, checked against the assumed layout (module docstring)."""
    path = Path(path)
    try:
        table = pd.read_csv(path, index_col=False, dtype={"id": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ReleasedOutputError(f"{path}: not a readable CSV ({err})") from None
    for column in REQUIRED:
        if column not in table.columns:
            raise ReleasedOutputError(f"{path}: no column {column!r} (needed: {', '.join(REQUIRED)}; found: "
                                      f"{', '.join(map(str, table.columns))})")
    if len(table) != len(items):
        raise ReleasedOutputError(f"{path}: {len(table)} rows, but the evaluation set has {len(items)} entries; "
                                  "row i must be entry i")
    ids, expected = table["id"].astype(str).to_numpy(), items["item_id"].astype(str).to_numpy()
    if (ids != expected).any():
        i = int(np.flatnonzero(ids != expected)[0])
        raise ReleasedOutputError(f"{path}: row {i} has id {ids[i]!r} where the evaluation set's entry {i} has "
                                  f"id {expected[i]!r}; row i must be entry i")
    scores = {}
    for column in REQUIRED[1:]:
        values = pd.to_numeric(table[column], errors="coerce")
        if values.isna().any():
            i = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise ReleasedOutputError(f"{path}: row {i}, column {column!r}: {table[column].iloc[i]!r} is not a "
                                      "number")
        scores[column] = values.to_numpy(dtype=float)
    return items.assign(s_target=scores["prob_target_match"], s_distractor=scores["prob_distractor_match"])


def load_released(folders, data_dir: str | os.PathLike, base_url: str = BASE_URL
                  ) -> dict[tuple[str, str, str], pd.DataFrame]:
    """Every released run of ``folders`` as scored items, keyed (paper's model name, condition, template);
    the evaluation set is the cached ``eval_set.json`` of the ``eval-set`` dataset (downloaded if missing)."""
    data_dir = Path(data_dir)
    items = items_from_entries(read_eval_set(eval_set_path(data_dir)))
    out = {}
    for folder in folders:
        for condition, template in runs(folder):
            path = released_file(folder, condition, template, data_dir, base_url)
            out[(display_name(folder), condition, template)] = read_released(path, items).assign(
                model=display_name(folder), condition=condition, template=template)
    return out
