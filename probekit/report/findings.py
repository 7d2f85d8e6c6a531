"""What each chapter found, the block its page opens with: the function its study declares (``findings``,
:class:`probekit.studies.declaration.Study`, in the study's ``findings`` module) of its result rows (ours and the
papers') and its toy-lab verdict lines, returning 3–6 :class:`~probekit.report.finding.Finding` s, the headline
first (none for a study that declares no findings); :func:`show` puts them on the page with the headline figure,
:func:`show_lead` opens the discussion with the headline.

Every number is a row's (:mod:`probekit.report.finding` says which rule gives each verdict); a finding whose row
the run did not produce is left out, so a run on other data or without the lab gets the findings it has.
"""

from __future__ import annotations

import pandas as pd

from probekit.registry import load
from probekit.report.figures import bar_ci
from probekit.report.finding import Finding, lead, render
from probekit.report.show import show_figure, show_text
from probekit.results import select
from probekit.studies import STUDIES

#: the toy models the verbs, predicate–noun and conceptual findings name (beside the papers' models)
TOY = ("toy-vilt", "toy-clip")


def of_result(result) -> list[Finding]:
    """A run's findings (a :class:`probekit.results.StudyResult`): its study's ``findings`` of its rows and its lab's
    verdict lines."""
    study = STUDIES[result.study]
    return load(study.findings)(result.rows, result.lab_lines) if study.findings else []


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
