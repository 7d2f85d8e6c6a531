"""A chapter's data files, written by the call that ends it.

The last cell of every chapter calls :func:`export`, which writes the study's result rows, its lab's verdict lines
(``StudyResult.lab_lines``, judged by the run: :func:`probekit.studies.lab_holm.lines`, each line with its
Holm-adjusted p; lab rows are not result rows) and its
per-item rows (``StudyResult.items``) as parquet files, every number at full precision, into the folder the executor
names in ``$PROBEKIT_OUT`` (:data:`OUT`): :data:`RESULTS_FILE`, :data:`LAB_FILE` (none without verdict lines) and
:data:`ITEMS_FILE`.  The executor keeps them beside the page (``<chapter>.results.parquet``, ``.lab.parquet``,
``.items.parquet``) only when every cell ran; nothing is read back from the notebook's outputs, which only show
the results.  The kernel is another process: the variable is the one channel to it that neither shows on the page
nor changes what a rebuild writes there.  A notebook run by hand (the variable unset) writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from probekit.results import StudyResult, frame, items_frame, save

OUT = "PROBEKIT_OUT"
RESULTS_FILE, LAB_FILE, ITEMS_FILE = "results.parquet", "lab.parquet", "items.parquet"


def export(result: StudyResult | pd.DataFrame) -> None:
    """Write ``result``'s data files (a StudyResult, or a frame of result rows) into ``$PROBEKIT_OUT`` when the
    executor set it (:func:`write`)."""
    if os.environ.get(OUT):
        write(result, Path(os.environ[OUT]))


def write(result: StudyResult | pd.DataFrame, folder: Path) -> list[Path]:
    """Write into ``folder`` the result rows of ``result`` and, for a StudyResult, its lab's verdict lines (when it
    has any) and its item rows; the paths written."""
    folder = Path(folder)
    written = [save(frame(result.rows if isinstance(result, StudyResult) else result), folder / RESULTS_FILE)]
    if isinstance(result, StudyResult):
        tables = {LAB_FILE: result.lab_lines} if len(result.lab_lines) else {}
        for name, table in {**tables, ITEMS_FILE: items_frame(result.items)}.items():
            table.to_parquet(folder / name, index=False)
            written.append(folder / name)
    return written
