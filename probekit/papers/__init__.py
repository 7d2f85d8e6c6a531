"""The papers' reported numbers as result rows (``source`` = "<paper>, Table N"), one module per paper.

One way to ask for them: ``reported(study, table=None)``.  A paper module defines ``PAPER`` (the citation used
in ``source``) and ``rows() -> DataFrame`` in the schema of :mod:`probekit.results`, values as fractions;
facts that are not numbers (e.g. a table's verb lists) are module constants beside it.
"""

from __future__ import annotations

import pandas as pd

from probekit.registry import Registry
from probekit.results import frame

#: study -> the module holding its paper's numbers
PAPERS = Registry("study with a paper", {
    "verbs": "probekit.papers.svo_probes",
    "prednoun": "probekit.papers.prednoun",
    "masking": "probekit.papers.guided_masking",
    "conceptual": "probekit.papers.conceptual",
})


def paper(study: str):
    """The module of ``study``'s paper."""
    return PAPERS.load(study)


def effect(study: str, a: dict, b: dict) -> float:
    """The paper's own effect ``a`` − ``b`` (each the fields of one of its rows, e.g. ``dict(model="MMT",
    subset="all", metric="neg")``), as a fraction: what a lab claim's toy effect is set beside."""
    rows = frame(paper(study).rows())

    def value(where: dict) -> float:
        found = rows[(rows[list(where)] == pd.Series(where)).all(axis=1)]
        if len(found) != 1:
            raise KeyError(f"{study}'s paper has {len(found)} rows where {where} (one was expected)")
        return float(found["value"].iloc[0])
    return value(a) - value(b)


def reported(study: str, table: str | None = None) -> pd.DataFrame:
    """The numbers ``study``'s paper reports, as result rows; ``table`` (e.g. ``"Table 4"``) keeps one table."""
    rows = frame(paper(study).rows())
    if table is not None:
        keep = rows["source"].str.endswith(f", {table}")
        if not keep.any():
            tables = sorted({s.rsplit(", ", 1)[-1] for s in rows["source"]})
            raise KeyError(f"{study}'s paper has no {table!r}; its tables here: {', '.join(tables)}")
        rows = rows[keep].reset_index(drop=True)
    return rows
