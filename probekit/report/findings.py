"""What each chapter found, the block its page opens with: one function per study from its result rows (ours and
the papers') and its toy-lab verdict lines, each returning 3–6 :class:`~probekit.report.finding.Finding` s, the
headline first; :func:`show` puts them on the page with the headline figure, :func:`show_lead` opens the
discussion with the headline.

Every number is a row's (:mod:`probekit.report.finding` says which rule gives each verdict); a finding whose row
the run did not produce is left out, so a run on other data or without the lab gets the findings it has.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from probekit.report.figures import bar_ci
from probekit.report.finding import (Finding, kept, lead, of_check, of_claim, of_row, paper_difference, paper_row,
                                     render)
from probekit.report.show import show_figure, show_text
from probekit.results import select
from probekit.studies import STUDIES, lab
from probekit.studies.conceptual import lab as conceptual_lab
from probekit.studies.masking import lab as masking_lab
from probekit.studies.prednoun import lab as prednoun_lab
from probekit.studies.verbs import lab as verbs_lab
from probekit.toyworld.prednoun import LIMBS_ALIKE, LIMBS_DIFFER
from probekit.toyworld.svo import PLACE, POSE

#: the paper's model set beside each toy model (the same architecture: a cross-encoder, a dual encoder)
PREDNOUN_PAPER = {"toy-vilt": "ViLT", "toy-clip": "CLIP"}
CONCEPTUAL_PAPER = {"toy-vilt": "ViLT", "toy-clip": "CLIP ViT/B-32"}
TOY = ("toy-vilt", "toy-clip")


def verbs(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
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


def prednoun(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
    """Binding on the look-alike pairs (the headline) and on pairs whose limbs differ, per toy model, beside the
    paper's full-image pair accuracy; the cropped topline's gain; the 2 × 2's architecture claim."""
    pairs: dict[str, Any] = dict(probe=prednoun_lab.LIMBS_PROBE, condition="full", metric="pair_accuracy")
    out = [of_row(rows, f"**{m}** binds each pose to its agent where the limbs look alike, so only relating bust to "
                  "limbs tells (pair accuracy, full images, the headline)",
                  paper_row(rows, model=PREDNOUN_PAPER[m], probe="pairs", condition="full", subset="all",
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


#: the chance level of the masking study's top-k rows (:func:`probekit.metrics.masking.topk_chance`), not its lab's
#: (what the caption alone allows, :data:`probekit.report.lab.CHANCE_WORDS`)
TOPK_CHANCE = "5 of the probe's verbs named at random"
#: the chance level of the masking lab's rows: the best the caption alone allows (:mod:`probekit.studies.masking.lab`)
CAPTION_CHANCE = "the best from the caption alone"


def masking(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
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
                 "verb among its top 5", chance=CAPTION_CHANCE),
    ]
    return kept(out)


def conceptual(rows: pd.DataFrame, lines: pd.DataFrame | None = None) -> list[Finding]:
    """Probe-R predicate swaps and Probe-C composition groups (headlines) per toy model beside the paper's ViLT
    and CLIP ViT-B/32, the paper's context finding and its fine-tuning claim as the toy lab judged them."""
    probes = [("Probe-R: **{m}** prefers the true relation to one with an unlikely predicate (accuracy)",
               conceptual_lab.R_PRED, "acc"),
              ("Probe-C: **{m}** matches both images and both captions of a composition swap (group score)",
               conceptual_lab.C_COMP, "group")]
    out = [of_row(rows, text.format(m=m), paper_row(rows, model=CONCEPTUAL_PAPER[m], metric=metric, **where),
                  headline=True, model=m, metric=metric, **where)
           for text, where, metric in probes for m in TOY]
    context, finetune = conceptual_lab.CLAIMS[-1], conceptual_lab.CLAIMS[0]
    out.append(of_claim(lines, context, "Probe-B: replacing **toy-clip**'s background by an unrelated scene "
                        "changes its confidence by (Δc(x0, x̃1), points; the paper: about the same, here within "
                        f"± {conceptual_lab.CONTEXT_MARGIN:g})"))
    out.append(of_claim(lines, finetune, "Fine-tuning **toy-clip** on swap negatives, patched at the paper's "
                        "α = 0.2, changes its Probe-R μ(c) by"))
    return kept(out)


BY_STUDY = {"verbs": verbs, "prednoun": prednoun, "masking": masking, "conceptual": conceptual}


def of_result(result) -> list[Finding]:
    """A run's findings (a :class:`probekit.results.StudyResult`): its rows and its lab's verdict lines."""
    return BY_STUDY[result.study](result.rows, result.lab_lines)


def headline_figure(rows: pd.DataFrame, study: str):
    """The study's headline rows (the summary page's, :attr:`probekit.studies.Study.headlines`) of every model,
    shares with their 95% intervals and chance; None where the run has none."""
    heads = [h for h in STUDIES[study].headlines if not h["metric"].endswith("_diff")]
    several = len({h["probe"] for h in heads}) > 1
    parts = [select(rows, source="ours", **h).assign(headline=_label(h, several)) for h in heads]
    shown = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if not len(shown):
        return None
    bars, groups = len(shown), shown["headline"].nunique()
    return bar_ci(shown, x="headline", hue="model", ylabel="headline score", title="95% CI; dashed: chance",
                  figsize=(max(4.5, 1.2 + 0.5 * bars + 0.4 * groups), 3.2))


def _label(head: dict, probe: bool) -> str:
    """A headline's name under its bars: its condition (unless the plain one) and subset, after its probe where the
    headlines come from several."""
    what = ", ".join(v for v in (head.get("condition", ""), head["subset"]) if v not in ("", "full"))
    return f"{head['probe']}: {what}" if probe else what


def show(result) -> None:
    """The findings block: the findings as a list, then the headline figure."""
    show_text(render(of_result(result)))
    figure = headline_figure(result.rows, result.study)
    if figure is not None:
        show_figure(figure)


def show_lead(result) -> None:
    """The discussion's first paragraph: the headline findings."""
    show_text(lead(of_result(result)))
