"""One finding of a chapter, as its findings block opens the page: a sentence, the number it rests on (value,
95% interval, n), its verdict and the paper's number beside it.

A finding's verdict comes from the rules the rest of the book uses, never a new one: a share against its chance
level by :func:`probekit.studies.lab.check_verdict` (``at chance`` only where the equivalence test puts the interval
within chance ± :data:`probekit.studies.lab.CHANCE_MARGIN`; above or below chance where it excludes chance; else
``not resolved``), a paired difference by :func:`probekit.claims.difference` (``higher`` / ``lower`` where its
interval excludes 0, else ``not resolved``), and a toy-lab line by the verdict the lab gave it.  Numbers are
written by :mod:`probekit.numbers`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from probekit.claims import difference
from probekit.numbers import cell, missing, number
from probekit.results import one_or_none, select
from probekit.studies import STUDIES, lab
from probekit.studies.lab_pooled import disagreeing
from probekit.studies.lab_pooling import ONE, POOLED, TUNED

#: the row fields a finding keeps (those of a result row a sentence quotes)
FIELDS = ("model", "condition", "subset", "metric", "value", "ci_low", "ci_high", "n", "chance", "source")


@dataclass(frozen=True)
class Finding:
    """``text``: what was measured, in words (the numbers are added when rendered); ``row``: the row it rests on;
    ``verdict``: the rule's word; ``paper``: the paper's row beside it (``model``, ``metric``, ``value``,
    ``source``), None where the paper reports no number for it; ``headline``: one of the chapter's headlines (the
    discussion opens with these); ``chance``: what the row's chance level is, where a page states another beside
    it (masking: 5 of the probe's verbs named at random, where its lab's is what the caption alone allows)."""

    text: str
    row: Mapping[str, Any]
    verdict: str
    paper: Mapping[str, Any] | None = None
    headline: bool = False
    chance: str = ""

    @property
    def value(self) -> float:
        return float(self.row["value"])

    @property
    def ci(self) -> tuple[float, float]:
        return float(self.row["ci_low"]), float(self.row["ci_high"])

    @property
    def n(self) -> int | None:
        return None if missing(self.row.get("n")) else int(self.row["n"])

    @property
    def paper_value(self) -> float | None:
        return None if self.paper is None else float(self.paper["value"])


def _kept(r) -> dict:
    r = dict(r)
    return {k: r[k] for k in FIELDS if k in r}


def against_chance(r) -> str:
    """A share's verdict against its chance level: the knock-out target's rule (:func:`lab.check_verdict`)."""
    return lab.check_verdict(r, lab.TARGET)


def of_row(rows: pd.DataFrame, text: str, paper=None, headline: bool = False, chance: str = "",
           **where) -> Finding | None:
    """The finding on our one row matching ``where`` (None where the run has none): a paired difference (metric
    ``*_diff``) judged against 0, any other row against its chance level (``chance``: what that level is)."""
    r = one_or_none(select(rows, source="ours"), **where)
    if r is None:
        return None
    verdict = difference(r) if str(r["metric"]).endswith("_diff") else against_chance(r)
    return Finding(text, _kept(r), verdict, None if paper is None else _kept(paper), headline, chance)


def paper_row(rows: pd.DataFrame, **where) -> pd.Series | None:
    """The paper's one row matching ``where`` (any source but ours), None where it reports none."""
    return one_or_none(rows[rows["source"] != "ours"], **where)


def paper_difference(rows: pd.DataFrame, a: Mapping, b: Mapping, metric: str) -> dict | None:
    """The paper's a − b (two of its rows, e.g. cropped − full) as a row of metric ``metric``, None without both."""
    ra, rb = paper_row(rows, **a), paper_row(rows, **b)
    if ra is None or rb is None:
        return None
    return {"model": ra["model"], "metric": metric, "value": float(ra["value"]) - float(rb["value"]),
            "source": ra["source"]}


def _line(lines: pd.DataFrame | None, kind: str, models: str, what) -> pd.Series | None:
    if lines is None or not len(lines):
        return None
    found = lines[(lines["kind"] == kind) & (lines["models"] == models) & lines["what"].map(what)]
    return found.iloc[0] if len(found) == 1 else None


def of_check(lines: pd.DataFrame | None, check: lab.Check, text: str) -> Finding | None:
    """The finding on a toy-lab check's verdict line (``StudyResult.lab_lines``), with the chance level its row
    was judged against (in the words its study's lab declares, :attr:`probekit.studies.declaration.Study.chance_words`);
    None where the lab has none."""
    line = _line(lines, "check", check.model, lambda w: w.startswith(f"{check.model}: {check.what} ("))
    return None if line is None else _of_line(line, text, STUDIES[line["study"]].chance_words)


def of_claim(lines: pd.DataFrame | None, claim: lab.PaperClaim, text: str) -> Finding | None:
    """The finding on a paper's claim as the toy lab judged it (its paired difference, its verdict), with the
    paper's own effect beside it where the claim names one."""
    line = _line(lines, "claim", f"{claim.a[0]}|{claim.b[0]}", lambda w: w == claim.claim)
    if line is None:
        return None
    found = _of_line(line, text)
    if found is None or claim.paper_effect is None:
        return found
    paper = {"model": "", "metric": found.row["metric"], "value": claim.paper_effect, "source": claim.source}
    return Finding(found.text, found.row, found.verdict, paper)


def _of_line(line: pd.Series, text: str, chance: str = "") -> Finding | None:
    """The finding on a verdict line: its first deciding row, with the line's chance level where it has one."""
    rows = json.loads(line["rows"]) if isinstance(line["rows"], str) else []
    if not rows:
        return None
    level = line.get("chance")
    row = rows[0] if missing(level) else {**rows[0], "chance": float(level)}
    return Finding(text + seeds(line), row, str(line["verdict"]), chance=chance)


def seeds(line: Mapping) -> str:
    """What a lab line rests on (its ``seeds_kind``, ``seeds`` and ``seeds_disagree``:
    :func:`probekit.studies.lab_pooling.pool`), for its finding: " (pooled over training seeds 0 and 1, which
    disagree: seed 0 above chance, seed 1 not resolved)", " (pooled over training seeds 0 and 1, which agree)", " (one
    training seed)", its note for a line pooled over fine-tuning seeds, or "" for a line judged with no other seed's
    items at hand."""
    kind = line.get("seeds_kind")
    if kind == POOLED:
        disagree = {e["seed"]: e["verdict"] for e in json.loads(line["seeds_disagree"])}
        said = f"which disagree: {disagreeing(disagree)}" if disagree else "which agree"
        return f" (pooled over training seeds {' and '.join(map(str, json.loads(line['seeds'])))}, {said})"
    if kind == TUNED:
        return f" ({line['seeds_note']})"
    return " (one training seed)" if kind == ONE else ""


def kept(found: Sequence[Finding | None]) -> list[Finding]:
    """The findings a run has (a row it did not produce gives none)."""
    return [f for f in found if f is not None]


def sentence(f: Finding) -> str:
    """One finding as Markdown: its text, the number with interval and n, the verdict (with the chance level it
    was judged against, and what that level is where the finding says) and the paper's number."""
    r = f.row
    what = f": {f.chance}" if f.chance else ""
    chance = "" if missing(r.get("chance")) or str(r["metric"]).endswith("_diff") else (
        f" (chance {number(r['chance'], str(r['metric']))}{what})")
    if f.paper is None:
        paper = "the paper reports no number for this"
    else:
        who = f"the paper's {f.paper['model']}" if f.paper.get("model") else "the paper"
        paper = f"{who}: {number(f.paper['value'], str(f.paper['metric']))} ({f.paper['source']})"
    return f"{f.text}: **{cell(r, with_n=True, unit=True)}**, *{f.verdict}*{chance}; {paper}."


#: under the findings: how to read them
LEGEND = ("*Each number is value [95% CI] (n); its verdict is the book's rule: against chance by the equivalence "
          f"test (at chance only when the interval lies within chance ± {100 * lab.CHANCE_MARGIN:g} points), a "
          "paired difference by whether its interval excludes 0, a toy-lab line by the lab's verdict; \"not "
          "resolved\" where the interval decides neither way.*")


def render(found: Sequence[Finding]) -> str:
    """The findings block: one bullet per finding (Markdown)."""
    if not found:
        return "*No findings: the run produced none of the rows they rest on.*"
    return "\n".join(f"- {sentence(f)}" for f in found) + "\n\n" + LEGEND


def lead(found: Sequence[Finding]) -> str:
    """The discussion's opening: the headline findings, each a sentence (Markdown); "" when there are none."""
    heads = [sentence(f) for f in found if f.headline]
    return ("**The headline.** " + " ".join(heads)) if heads else ""
