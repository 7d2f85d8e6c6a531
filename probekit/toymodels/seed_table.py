"""The seed comparison kept beside a zoo's checkpoints (``seed_verdicts.csv``): its file, its columns and what the
model card reads of it.  :mod:`probekit.studies.lab_seeds` writes it (it runs every study's lab once per zoo)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from probekit.scorers.registry import TOY_CHECKPOINTS

SEEDS_FILE = "seed_verdicts.csv"   # the comparison kept beside a zoo's checkpoints (the model card shows it)
LINE = ["study", "kind", "what", "models"]
LINE_COLUMNS = [*LINE, "agree", "waits_for"]   # a table's columns that are not a zoo's
ROWS = " rows"   # suffix of a zoo's column of numbers: ``<zoo> rows`` (a line's ``rows``, lab.verdict_lines)


def read(folder: str | Path | None = None) -> pd.DataFrame | None:
    """The comparison kept beside a zoo's checkpoints (default: the shipped ones); None when there is none."""
    path = Path(folder if folder is not None else TOY_CHECKPOINTS) / SEEDS_FILE
    return pd.read_csv(path) if path.is_file() else None


def zoo_columns(table: pd.DataFrame) -> list[str]:
    """A comparison's verdict columns, one per zoo, in the order they were compared (the reference zoo first)."""
    return [c for c in table.columns if c not in LINE_COLUMNS and not c.endswith(ROWS)]


def agreeing(table: pd.DataFrame, kind: str) -> tuple[int, int]:
    """(lines of this kind that keep their verdict under every zoo, lines of this kind compared)."""
    mine = table[(table["kind"] == kind) & table["agree"].notna()]
    return int(mine["agree"].astype(bool).sum()), len(mine)
