"""The retrained seeds' per-item values kept beside a zoo's checkpoints (``seed_items.parquet``): its file, the
zoo it belongs to and the seed that zoo was trained with.

Seed 0's weights ship; the other seeds ship as numbers only (weights are capped at 40 MB).  The file holds, for
every retrained zoo ``python -m probekit.studies.lab_seeds DIR ... --items`` ran, the values each lab row was
computed from: one line per (seed, row key, item, column) with its value and how the row summarises its values
(:data:`probekit.studies.lab_items.ITEM_COLUMNS` after ``seed``).  When it is there, the pages judge every lab line
pooled over this zoo's seed and the file's (:mod:`probekit.studies.lab_pooling`); when it is not, as today."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from probekit.scorers.registry import TOY_CHECKPOINTS

ITEMS_FILE = "seed_items.parquet"
#: the columns stored as categories (repeated strings), so the file stays small
CATEGORIES = ["study", "probe", "model", "condition", "subset", "metric", "statistic", "count", "cluster", "item_id"]


def zoo() -> Path:
    """The zoo the lab scores: ``$PROBEKIT_TOY_CHECKPOINTS`` when set, else the shipped checkpoints."""
    return Path(os.environ.get("PROBEKIT_TOY_CHECKPOINTS") or TOY_CHECKPOINTS)


def zoo_seed(folder: str | Path | None = None) -> int:
    """The seed a zoo was trained with (its training.json; 0 when it records none)."""
    record = Path(folder if folder is not None else zoo()) / "training.json"
    seed = json.loads(record.read_text()).get("seed") if record.is_file() else None
    return int(seed) if seed is not None else 0


def read(folder: str | Path | None = None) -> pd.DataFrame | None:
    """The per-seed items kept beside a zoo's checkpoints (default: the zoo in use); None when there are none."""
    path = Path(folder if folder is not None else zoo()) / ITEMS_FILE
    return read_file(path) if path.is_file() else None


def read_file(path: str | Path) -> pd.DataFrame:
    """A file :func:`write` wrote (its categories back as strings)."""
    found = pd.read_parquet(path)   # a file written before items carried ids has no item_id: read as position ids
    return found.assign(**{c: found[c].astype(str) for c in CATEGORIES if c in found})


def write(items: pd.DataFrame, path: str | Path) -> Path:
    """Write ``items`` (a ``seed`` column and the lab items' columns) as the compact parquet file ``path``."""
    out = items.assign(**{c: items[c].astype("category") for c in CATEGORIES},
                       seed=items["seed"].astype("int16"), item=items["item"].astype("int32"),
                       column=items["column"].astype("int8"))
    out.to_parquet(path, index=False, compression="zstd")
    return Path(path)
