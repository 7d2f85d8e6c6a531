"""The papers' reported numbers as result rows (``source`` = "<paper>, Table N"), one module per paper.

One way to ask for them: ``reported(paper, table=None)`` of a paper's module (which study's paper it is, the study
declares: :attr:`probekit.studies.declaration.Study.paper`).  A paper module defines ``PAPER`` (the citation used in
``source``) and ``rows() -> DataFrame`` in the schema of :mod:`probekit.results`, values as fractions;
facts that are not numbers (e.g. a table's verb lists) are module constants beside it.
"""

from __future__ import annotations

import functools

import pandas as pd

from probekit.results import frame


@functools.lru_cache(maxsize=None)
def _rows(paper) -> pd.DataFrame:
    """A paper's numbers as result rows, read once (the labs' claims quote them at import)."""
    return frame(paper.rows())


def effect(paper, a: dict, b: dict) -> float:
    """The paper's own effect ``a`` − ``b`` (each the fields of one of its rows, e.g. ``dict(model="MMT",
    subset="all", metric="neg")``), as a fraction: what a lab claim's toy effect is set beside."""
    rows = _rows(paper)

    def value(where: dict) -> float:
        found = rows[(rows[list(where)] == pd.Series(where)).all(axis=1)]
        if len(found) != 1:
            raise KeyError(f"{paper.PAPER} has {len(found)} rows where {where} (one was expected)")
        return float(found["value"].iloc[0])
    return value(a) - value(b)


def reported(paper, table: str | None = None) -> pd.DataFrame:
    """The numbers ``paper`` (a paper's module) reports, as result rows; ``table`` (e.g. ``"Table 4"``) keeps one
    table."""
    rows = _rows(paper).copy()
    if table is not None:
        keep = rows["source"].str.endswith(f", {table}")
        if not keep.any():
            tables = sorted({s.rsplit(", ", 1)[-1] for s in rows["source"]})
            raise KeyError(f"{paper.PAPER} has no {table!r}; its tables here: {', '.join(tables)}")
        rows = rows[keep].reset_index(drop=True)
    return rows
