"""The prednoun chapter's findings block (:mod:`probekit.report.findings`): its display code, in the report layer
(``probekit.studies.<study>.findings``, tests/test_layers.py); ``STUDY`` declares ``findings`` from here."""

from __future__ import annotations

from typing import Any

import pandas as pd

from probekit.report.finding import Finding, kept, of_claim, of_row, paper_difference, paper_row
from probekit.report.findings import TOY
from probekit.studies.prednoun import lab as prednoun_lab
from probekit.toyworld.prednoun import LIMBS_ALIKE, LIMBS_DIFFER

#: the paper's model set beside each toy model (the same architecture: a cross-encoder, a dual encoder)
PAPER = {"toy-vilt": "ViLT", "toy-clip": "CLIP"}


def findings(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
    """Binding on the look-alike pairs (the headline) and on pairs whose limbs differ, per toy model, beside the
    paper's full-image pair accuracy; the cropped topline's gain; the 2 × 2's architecture claim."""
    pairs: dict[str, Any] = dict(probe=prednoun_lab.LIMBS_PROBE, condition="full", metric="pair_accuracy")
    out = [of_row(rows, f"**{m}** binds each pose to its agent where the limbs look alike, so only relating bust to "
                  "limbs tells (pair accuracy, full images, the headline)",
                  paper_row(rows, model=PAPER[m], probe="pairs", condition="full", subset="all",
                            metric="pair_accuracy"), headline=True, model=m, subset=LIMBS_ALIKE, **pairs)
           for m in TOY]
    out += [of_row(rows, f"**{m}** where the limbs differ (the limbs alone tell; the control)", model=m,
                   subset=LIMBS_DIFFER, **pairs) for m in TOY]
    vilt = dict(model="ViLT", probe="pairs", subset="all", metric="pair_accuracy")
    out.append(of_row(rows, "Cropping to the target (the topline) changes **toy-vilt**'s pair accuracy by",
                      paper_difference(rows, {**vilt, "condition": "cropped"}, {**vilt, "condition": "full"},
                                       "pair_accuracy_diff"),
                      model="toy-vilt", probe="pairs", condition="cropped − full", subset="all",
                      metric="pair_accuracy_diff"))
    out.append(of_claim(lines, prednoun_lab.CLAIMS[1], "The paper's architecture claim on the toy zoo, with swap "
                        "negatives in both: **toy-clip-hardneg** − **toy-vilt-hardneg**, look-alike pairs"))
    return kept(out)
