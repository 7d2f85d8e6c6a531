"""The masking chapter's findings block (:mod:`probekit.report.findings`): its display code, in the report layer
(``probekit.studies.<study>.findings``, tests/test_layers.py); ``STUDY`` declares ``findings`` from here."""

from __future__ import annotations

from typing import Any

import pandas as pd

from probekit.report.finding import Finding, kept, of_check, of_claim, of_row, paper_row
from probekit.studies.masking import lab as masking_lab

#: the chance level of the masking study's top-k rows (:func:`probekit.metrics.masking.topk_chance`), not its lab's
#: (what the caption alone allows, :data:`probekit.studies.masking.lab.CHANCE_WORDS`)
TOPK_CHANCE = "5 of the probe's verbs named at random"


def findings(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
    """The masked verb found with the full image (the headline) and what blanking the subject costs, the text-only
    model, the image's gain over the text, and the masked-LM head against the ITM head on the same verbs."""
    topk: dict[str, Any] = dict(probe="top-k", subset="all", chance=TOPK_CHANCE)
    table2 = dict(probe="top-k", subset="SVO-Probes")
    out = [
        of_row(rows, "**toy-vilt** finds the masked verb among its top 5 with the full image (the headline)",
               paper_row(rows, model="ViLBERT", condition="full image", metric="accuracy", **table2), headline=True,
               model="toy-vilt", condition="full image", metric="accuracy", **topk),
        of_row(rows, "Blanking the subject's region changes **toy-vilt**'s top-5 accuracy by (full − blanked)",
               paper_row(rows, model="ViLBERT", condition="full image − subject ablated", metric="accuracy_diff",
                         **table2), headline=True, model="toy-vilt", condition="full image − subject ablated",
               metric="accuracy_diff", **topk),
        of_row(rows, "**toy-bert**, reading the caption alone, finds it among its top 5",
               paper_row(rows, model="BERT", condition="text only", metric="accuracy", **table2),
               model="toy-bert", condition="text only", metric="accuracy", **topk),
        of_row(rows, "The image's gain for **toy-vilt** over the text alone (full image − text only)",
               paper_row(rows, model="ViLBERT", condition="full image − text only", metric="accuracy_diff", **table2),
               model="toy-vilt", condition="full image − text only", metric="accuracy_diff", **topk),
        of_claim(lines, masking_lab.CLAIMS[2], "On the same verb negatives, **toy-vilt**'s masked-LM head against its "
                 "ITM head (MLM − ITM)"),
        of_check(lines, masking_lab.CHECKS[0], "**toy-vilt-noverb**, trained without seeing verbs, finds the masked "
                 "verb among its top 5"),
    ]
    return kept(out)
