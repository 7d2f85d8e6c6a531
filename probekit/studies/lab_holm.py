"""A chapter's lab judgements as one family: each judged line's p-value, and which verdicts survive Holm's correction.

A line is **judged** when a test decided its verdict: a check with an expected verdict (not a row shown and not
judged, nor one not run), a claim that holds, does not hold or is not resolved (not one not testable, decided by
construction, not comparable or not run).  Its p is that of the test its verdict reports, read off the same 95%
interval the verdict was (:func:`probekit.claims.p_value`, :func:`~probekit.claims.p_within`,
:func:`~probekit.claims.p_beyond`: below 0.05 exactly when the interval resolves the test):

* a check: its row against its floor (a control), against chance (a parent, a blind row), against 0 (a
  knock-in) or, for a target, the
  smaller of "at chance" (within chance ± :data:`probekit.studies.lab.CHANCE_MARGIN`) and "not at chance";
* a claim: its paired difference against 0, or the smaller of "within" and "beyond" its margin (no difference);
  two rows without a paired difference: their difference by the normal approximation (:func:`probekit.claims.p_apart`).

Holm's step-down adjustment (:func:`probekit.claims.holm`) runs over every judged line of a chapter, checks and claims
together; a verdict **survives** when it resolved something (:data:`RESOLVED`) and its adjusted p is below
:data:`ALPHA`.  A verdict that resolved nothing (not resolved, at the floor, not above chance) counts in the family
but has nothing to survive.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from probekit.claims import ABOVE, BELOW, NO_DIFFERENCE, holm, number, p_apart, p_beyond, p_value, p_within
from probekit.results import Row, StudyResult
from probekit.studies import lab
from probekit.studies.lab_items import Key, deciding_rows, key

#: the family-wise level
ALPHA = 0.05
#: the verdicts that reject a null (and so may or may not survive the correction)
RESOLVED = {lab.AT_CHANCE, ABOVE, BELOW, lab.ABOVE_ZERO, lab.BELOW_ZERO, lab.PASSES, lab.FAILS, lab.HOLDS,
            lab.DOES_NOT_HOLD}
#: a claim's verdicts that come from a test
_TESTED = {lab.HOLDS, lab.DOES_NOT_HOLD, lab.NOT_RESOLVED}


def check_p(line: Row) -> float:
    """A check line's p (NaN for a line not judged: shown only, or not run)."""
    r = line["row"]
    if not isinstance(line["expected"], str) or not isinstance(r, Mapping):
        return math.nan
    if line["role"] in lab.FLOORS:
        return p_value(r, lab.FLOORS[line["role"]])
    if line["role"] == lab.KNOCK_IN:
        return p_value(r)
    chance = number(r, "chance")
    if line["role"] == lab.TARGET:
        return min(p_value(r, chance), p_within(r, chance, lab.CHANCE_MARGIN))
    return p_value(r, chance)


def claim_p(line: Row) -> float:
    """A claim line's p (NaN for a claim not judged by a test)."""
    if line["verdict"] not in _TESTED:
        return math.nan
    d = line["diff"]
    if not isinstance(d, Mapping):
        return p_apart(line["a"], line["b"])
    if line["expect"] == NO_DIFFERENCE:
        return min(p_within(d, 0.0, line["margin"]), p_beyond(d, 0.0, line["margin"]))
    return p_value(d)


def family(checks: pd.DataFrame, claims: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``checks`` and ``claims`` (:func:`probekit.studies.lab.checks` / ``claims`` lines of one chapter) with ``p``,
    ``holm`` (the Holm-adjusted p over the chapter's judged lines; NaN for a line not judged) and ``survives``
    (True / False for a resolved verdict, missing otherwise: a nullable boolean)."""
    p = [check_p(line) for _, line in checks.iterrows()] + [claim_p(line) for _, line in claims.iterrows()]
    adjusted = holm(p)
    verdicts = [*checks["verdict"], *claims["verdict"]]
    survives = [bool(h < ALPHA) if v in RESOLVED and not math.isnan(h) else None for v, h in zip(verdicts, adjusted)]
    n = len(checks)
    return tuple(f.assign(p=p[s], holm=adjusted[s], survives=pd.Series(survives[s], index=f.index, dtype="boolean"))
                 for f, s in ((checks, slice(0, n)), (claims, slice(n, None))))


def tally(lines: pd.DataFrame) -> dict[str, int]:
    """How many checks and claims of a chapter's verdict ``lines`` (:func:`lines`) a test judged (a Holm p), and how
    many of their verdicts survive Holm at :data:`ALPHA`."""
    judged = lines[lines["holm"].notna()]
    return dict(**{f"{kind}s": int((judged["kind"] == kind).sum()) for kind in ("check", "claim")},
                survive=int(judged["survives_holm"].astype("boolean").sum()))


def _chance(r: object) -> float:
    return number(r, "chance") if isinstance(r, Mapping) and r.get("chance") is not None else math.nan


def lines(study: str, checks: pd.DataFrame, claims: pd.DataFrame, derived: Collection[Key] = ()) -> pd.DataFrame:
    """The chapter's verdict lines (:func:`probekit.studies.lab.verdict_lines`: its checks, then its claims) with
    ``chance`` (a check's row's chance level; NaN for a claim, judged against 0 or between its rows, and for a row
    without one), ``derived`` (whether a row it decides on is derived, seed 0's only:
    :attr:`probekit.studies.lab_items.LabRows.derived`), ``holm`` (the Holm-adjusted p) and ``survives_holm``, from
    ``checks`` and ``claims`` as :func:`family` judged them and the keys of the lab's ``derived`` rows, so a page
    that reads only the lines (the findings, the summary) has what it says."""
    found = lab.verdict_lines(study, checks, claims)
    both = [*(line for _, line in checks.iterrows()), *(line for _, line in claims.iterrows())]
    return found.assign(
        chance=[*map(_chance, checks["row"]), *[math.nan] * len(claims)],
        derived=[any(isinstance(r, Mapping) and key(r) in derived for r in deciding_rows(line)) for line in both],
        holm=np.asarray([*checks["holm"], *claims["holm"]], float),
        survives_holm=pd.array([*checks["survives"], *claims["survives"]], dtype="boolean"))


def judge(result: StudyResult) -> None:
    """Judge ``result``'s lab once, after its lines were pooled over seeds: ``lab_checks`` and ``lab_claims`` gain
    :func:`family`'s columns (the chapter's one Holm family) and ``result.lab_lines`` its verdict lines
    (:func:`lines`, with ``data["lab_derived"]``), which the page's tables, findings and data file read."""
    checks, claims = family(result.data["lab_checks"], result.data["lab_claims"])
    result.data.update(lab_checks=checks, lab_claims=claims)
    result.lab_lines = lines(result.study, checks, claims, result.data.get("lab_derived", ()))
