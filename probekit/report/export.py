"""A chapter's result rows, carried out of its executed notebook.

The last cell of every chapter calls :func:`export`, which publishes the study's rows as one output of the
custom MIME type :data:`MIME` (the cell is tagged ``remove-cell``, so readers never see it).  After a successful
run, the book reads them back with :func:`rows_from_notebook` and saves them beside the notebook as
``<chapter>.results.parquet``, the input of the summary page.
"""

from __future__ import annotations

import json

import pandas as pd
from IPython.display import display

from probekit.results import COLUMNS, StudyResult, frame

MIME = "application/vnd.probekit.results+json"


def export(result: StudyResult | pd.DataFrame) -> None:
    """Record ``result``'s rows (a StudyResult or a frame of result rows) in the executing notebook."""
    rows = frame(result.rows if isinstance(result, StudyResult) else result)
    payload = {"study": result.study if isinstance(result, StudyResult) else None,
               # NaN -> null (notebooks hold strict JSON); 15 digits, so that a value read back rounds as the page did
               "rows": json.loads(rows.to_json(orient="records", double_precision=15))}
    display({MIME: payload}, raw=True)


def rows_from_notebook(nb) -> pd.DataFrame | None:
    """The rows every :func:`export` call of an executed notebook recorded, as one validated frame; None when
    the notebook exported nothing."""
    payloads = [out["data"][MIME] for cell in nb.cells if cell.get("cell_type") == "code"
                for out in cell.get("outputs", []) if MIME in out.get("data", {})]
    if not payloads:
        return None
    return frame(pd.DataFrame([r for p in payloads for r in p["rows"]], columns=COLUMNS))
