"""The verbs chapter's findings block (:mod:`probekit.report.findings`): its display code, in the report layer
(``probekit.studies.<study>.findings``, tests/test_layers.py); ``STUDY`` declares ``findings`` from here."""

from __future__ import annotations

from typing import Any

import pandas as pd

from probekit.report.finding import Finding, kept, of_check, of_row, paper_row
from probekit.report.findings import TOY
from probekit.studies import lab
from probekit.studies.verbs import lab as verbs_lab
from probekit.toyworld.svo import PLACE, POSE


def findings(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
    """The headline (verb negatives told apart by the object's place alone) and its control (by the pose) per toy
    model, the ITM head's verb negatives beside the paper's MMT, and whether the headline can be passed at all
    (the swap-trained parent of the lab)."""
    cue: dict[str, Any] = dict(probe=verbs_lab.CUE_PROBE, metric="pairwise")
    out = [of_row(rows, f"**{m}** picks the right image when only the object's place tells the two verbs apart "
                  "(pairwise, the headline)", headline=True, model=m, subset=PLACE, **cue) for m in TOY]
    out += [of_row(rows, f"**{m}** does so when the pose tells them apart (the control)", model=m, subset=POSE, **cue)
            for m in TOY]
    mmt = paper_row(rows, model="MMT", subset="verb", metric="neg", condition="threshold 0.5")
    out.append(of_row(rows, "At the paper's threshold 0.5, **toy-vilt** rejects verb-negative pairs", mmt,
                      model="toy-vilt", probe="svo", subset="verb", metric="neg", condition="threshold 0.5"))
    parent = next(c for c in verbs_lab.CHECKS if c.role == lab.PARENT and c.where == verbs_lab.PLACE)
    out.append(of_check(lines, parent, f"Can the headline be passed? **{parent.model}**, trained on swap negatives, "
                                       "on the same rows"))
    return kept(out)
