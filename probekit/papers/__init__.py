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
