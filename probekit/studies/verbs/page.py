"""The verbs chapter's own text and figure: how many verb-negative pairs it scored beside the guided-masking paper's
count, how the toy verb negatives are stratified, and the lab's Table 5 comparison (noisier pretraining captions)
drawn beside the paper's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from probekit.metrics import itm
from probekit.numbers import pct
from probekit.report.figures import paper_vs_ours
from probekit.results import select
from probekit.studies.verbs import lab as verbs_lab
from probekit.toyworld import svo

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from probekit.studies.verbs.study import VerbsFacts

#: the paper's pair behind Table 5's claims: MMT pretrained on COCO, and on Conceptual Captions (its Table 4 MMT)
PAPER_TABLE5 = ("MMT-COCO", "MMT")
_METRICS = ["pos", "neg", "avg"]


def verb_pairs_text(facts: VerbsFacts) -> str:
    """The verb-negative pairs with both images, ours beside the guided-masking paper's count."""
    ours, theirs = facts.verb_pairs, facts.guided_masking_verb_pairs
    return (f"Verb negatives with both images: {ours['pos']:,} positive + {ours['neg']:,} negative pairs = "
            f"{ours['all']:,} pairs; the guided-masking paper, on the full SVO-Probes release, scored "
            f"{theirs['pos']:,} + {theirs['neg']:,} = {theirs['all']:,}.")


def cue_text(facts: VerbsFacts) -> str:
    """How the toy verb negatives are drawn: one of each cue per sentence, with the rows per cue; "" on other
    data."""
    if not facts.cue_rows:
        return ""
    place, pose = facts.cue_rows.get(svo.PLACE, 0), facts.cue_rows.get(svo.POSE, 0)
    return (f"Verb negatives are drawn in two strata, one of each per sentence where its subject and object allow: "
            f"{place} rows told apart by the object's place alone (the same pose: the headline) and {pose} by the "
            f"pose alone (the object in the same place: a control), mirrors included. The verb rows over both weigh "
            f"them as drawn, {pct(place / (place + pose))} to {pct(pose / (place + pose))}.")


def table5_rows(lab: pd.DataFrame, paper: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 5's comparison as rows to draw, clean model first: the lab's accuracy on positives, negatives and
    their average (all rows, at the lab's threshold) of toy-vilt and each noisier-caption member, and the paper's
    of MMT pretrained on COCO and on Conceptual Captions."""
    models = [verbs_lab.CLEAN, *verbs_lab.NOISY]
    ours = select(lab, model=models, probe=itm.PROBE, subset="all", metric=_METRICS,
                  condition=itm.condition(verbs_lab.THRESHOLD))
    theirs = select(paper, model=list(PAPER_TABLE5), subset="all", metric=_METRICS)
    rank = {m: i for i, m in enumerate([*models, *PAPER_TABLE5])}
    return tuple(r.sort_values("model", key=lambda s: s.map(rank), kind="stable") for r in (ours, theirs))


def table5_figure(lab: pd.DataFrame, paper: pd.DataFrame) -> Figure | None:
    """The lab's Table 5 rows beside the paper's (:func:`table5_rows`), or None when the lab ran none of them."""
    ours, theirs = table5_rows(lab, paper)
    if not len(ours):
        return None
    return paper_vs_ours(ours, theirs, x="model", hue="metric", hue_order=_METRICS, ylabel="ITM accuracy",
                         ours_title=f"toy zoo, threshold {verbs_lab.THRESHOLD:g}, 95% CI",
                         paper_title="the paper's MMT: COCO vs Conceptual Captions")
