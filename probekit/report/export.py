"""A chapter's result rows, carried out of its executed notebook.

The last cell of every chapter calls :func:`export`, which publishes the study's rows as one output of the
custom MIME type :data:`MIME` (the cell is tagged ``remove-cell``, so readers never see it).  After a successful
run, the book reads them back with :func:`rows_from_notebook` and saves them beside the notebook as
``<chapter>.results.parquet``, the input of the summary page.  The same output carries the toy lab's verdicts
(:func:`lab_verdicts`; lab rows are not result rows), read back with :func:`lab_from_notebook`.
"""

from __future__ import annotations

import json

import pandas as pd
from IPython.display import display

from probekit.results import COLUMNS, StudyResult, frame

MIME = "application/vnd.probekit.results+json"
#: one line per lab check or claim: ``as_expected`` is True/False for a judged check, None for a claim, a check
#: shown but not judged (a text floor) or one not run
LAB_COLUMNS = ["study", "kind", "what", "verdict", "as_expected"]


def lab_verdicts(result: StudyResult) -> pd.DataFrame:
    """The study's lab checks and claims (``data["lab_checks"]``, ``data["lab_claims"]``) as verdict lines;
    empty when the run had no lab."""
    from probekit.studies.lab import EXPECTED, NOT_RUN
    out = []
    checks, claims = result.data.get("lab_checks"), result.data.get("lab_claims")
    for _, c in (checks if checks is not None else pd.DataFrame()).iterrows():
        judged = EXPECTED[c["role"]] is not None and c["verdict"] != NOT_RUN
        out.append(dict(study=result.study, kind="check", what=f"{c['model']}: {c['what']} ({c['role']})",
                        verdict=c["verdict"], as_expected=bool(c["ok"]) if judged else None))
    for _, c in (claims if claims is not None else pd.DataFrame()).iterrows():
        out.append(dict(study=result.study, kind="claim", what=c["claim"], verdict=c["verdict"], as_expected=None))
    return pd.DataFrame(out, columns=LAB_COLUMNS)


def export(result: StudyResult | pd.DataFrame) -> None:
    """Record ``result``'s rows (a StudyResult or a frame of result rows) in the executing notebook."""
    rows = frame(result.rows if isinstance(result, StudyResult) else result)
    payload = {"study": result.study if isinstance(result, StudyResult) else None,
               # NaN -> null (notebooks hold strict JSON); 15 digits, so that a value read back rounds as the page did
               "rows": json.loads(rows.to_json(orient="records", double_precision=15))}
    if isinstance(result, StudyResult):
        payload["lab"] = lab_verdicts(result).to_dict(orient="records")
    display({MIME: payload}, raw=True)


def rows_from_notebook(nb) -> pd.DataFrame | None:
    """The rows every :func:`export` call of an executed notebook recorded, as one validated frame; None when
    the notebook exported nothing."""
    payloads = [out["data"][MIME] for cell in nb.cells if cell.get("cell_type") == "code"
                for out in cell.get("outputs", []) if MIME in out.get("data", {})]
    if not payloads:
        return None
    return frame(pd.DataFrame([r for p in payloads for r in p["rows"]], columns=COLUMNS))


def lab_from_notebook(nb) -> pd.DataFrame | None:
    """The lab verdicts every :func:`export` call of an executed notebook recorded (:data:`LAB_COLUMNS`); None
    when it recorded none (no lab, or a notebook executed before verdicts were exported)."""
    found = [r for cell in nb.cells if cell.get("cell_type") == "code" for out in cell.get("outputs", [])
             for r in out.get("data", {}).get(MIME, {}).get("lab", [])]
    return pd.DataFrame(found, columns=LAB_COLUMNS) if found else None
