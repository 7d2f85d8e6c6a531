"""A chapter's result rows, carried out of its executed notebook.

The last cell of every chapter calls :func:`export`, which publishes the study's rows as one output of the
custom MIME type :data:`MIME` (the cell is tagged ``remove-cell``, so readers never see it).  After a successful
run, the book reads them back with :func:`rows_from_notebook` and saves them beside the notebook as
``<chapter>.results.parquet``, the input of the summary page.  The same output carries the toy lab's verdicts
(:func:`probekit.studies.lab_holm.lines`: each line with its Holm-adjusted p; lab rows are not result rows), read back with
:func:`lab_from_notebook`.  The study's per-item rows (``StudyResult.items``), too many for a notebook, go to
``$PROBEKIT_ITEMS_OUT/items.parquet`` when the executor sets that variable (it then keeps them beside the page as
``<chapter>.items.parquet``, with the same all-or-nothing guarantee).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
from IPython.display import display

from probekit.results import COLUMNS, StudyResult, frame, items_frame
from probekit.studies.lab import VERDICT_COLUMNS
from probekit.studies.lab_holm import lines

MIME = "application/vnd.probekit.results+json"
ITEMS_OUT, ITEMS_FILE = "PROBEKIT_ITEMS_OUT", "items.parquet"

def export(result: StudyResult | pd.DataFrame) -> None:
    """Record ``result``'s rows (a StudyResult or a frame of result rows) in the executing notebook."""
    rows = frame(result.rows if isinstance(result, StudyResult) else result)
    payload = {"study": result.study if isinstance(result, StudyResult) else None,
               # NaN -> null (notebooks hold strict JSON); 15 digits, so that a value read back rounds as the page did
               "rows": json.loads(rows.to_json(orient="records", double_precision=15))}
    if isinstance(result, StudyResult):
        found = lines(result.study, result.data.get("lab_checks"), result.data.get("lab_claims"))
        payload["lab"] = json.loads(found.to_json(orient="records", double_precision=15))   # NaN -> null
    display({MIME: payload}, raw=True)
    if isinstance(result, StudyResult) and os.environ.get(ITEMS_OUT):
        items_frame(result.items).to_parquet(Path(os.environ[ITEMS_OUT]) / ITEMS_FILE, index=False)


def rows_from_notebook(nb) -> pd.DataFrame | None:
    """The rows every :func:`export` call of an executed notebook recorded, as one validated frame; None when
    the notebook exported nothing."""
    payloads = [out["data"][MIME] for cell in nb.cells if cell.get("cell_type") == "code"
                for out in cell.get("outputs", []) if MIME in out.get("data", {})]
    if not payloads:
        return None
    return frame(pd.DataFrame([r for p in payloads for r in p["rows"]], columns=COLUMNS))


def lab_from_notebook(nb) -> pd.DataFrame | None:
    """The lab verdict lines every :func:`export` call of an executed notebook recorded; None when it recorded
    none (no lab, or a notebook executed before verdicts were exported)."""
    found = [r for cell in nb.cells if cell.get("cell_type") == "code" for out in cell.get("outputs", [])
             for r in out.get("data", {}).get(MIME, {}).get("lab", [])]
    if not found:
        return None
    return pd.DataFrame(found, columns=[*VERDICT_COLUMNS, *(c for c in dict.fromkeys(k for r in found for k in r)
                                                            if c not in VERDICT_COLUMNS)])
