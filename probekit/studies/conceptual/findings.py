"""The conceptual chapter's findings block (:mod:`probekit.report.findings`): its display code, in the report layer
(``probekit.studies.<study>.findings``, tests/test_layers.py); ``STUDY`` declares ``findings`` from here."""

from __future__ import annotations

import pandas as pd

from probekit.report.finding import Finding, kept, of_claim, of_row, paper_row
from probekit.report.findings import TOY
from probekit.studies.conceptual import lab as conceptual_lab

#: the paper's model set beside each toy model (the same architecture: a cross-encoder, a dual encoder)
PAPER = {"toy-vilt": "ViLT", "toy-clip": "CLIP ViT/B-32"}


def findings(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
    """Probe-R predicate swaps and Probe-C composition groups (headlines) per toy model beside the paper's ViLT
    and CLIP ViT-B/32, the paper's context finding and its fine-tuning claim as the toy lab judged them."""
    probes = [("Probe-R: **{m}** prefers the true relation to one with an unlikely predicate (accuracy)",
               conceptual_lab.R_PRED, "acc"),
              ("Probe-C: **{m}** matches both images and both captions of a composition swap (group score)",
               conceptual_lab.C_COMP, "group")]
    out = [of_row(rows, text.format(m=m), paper_row(rows, model=PAPER[m], metric=metric, **where),
                  headline=True, model=m, metric=metric, **where)
           for text, where, metric in probes for m in TOY]
    context, finetune = conceptual_lab.CLAIMS[-1], conceptual_lab.CLAIMS[0]
    out.append(of_claim(lines, context, "Probe-B: replacing **toy-clip**'s background by an unrelated scene "
                        "changes its confidence by (Δc(x0, x̃1), points; the paper: about the same, here within "
                        f"± {conceptual_lab.CONTEXT_MARGIN:g})"))
    out.append(of_claim(lines, finetune, "Fine-tuning **toy-clip** on swap negatives, patched at the paper's "
                        "α = 0.2, changes its Probe-R μ(c) by"))
    return kept(out)
