"""The toy laboratory: what the model zoo's controlled comparisons say, decided from result rows alone.

The zoo (``probekit.toymodels.zoo.ZOO``) is trained on one stream with one factor changed at a time, plus
knock-outs trained with one kind of information scrambled (the shipped ones) or removed
(:mod:`probekit.toyworld.knockouts`' recipes) and a blind (text-only) baseline.  Each study names, in its
``<study>_lab`` module:

* :class:`Check` s, for "Does the probe measure what it claims?": a knock-out's **target** row (the probe that needs
  the scrambled or removed information) must sit at chance (its 95% interval within chance ± :data:`CHANCE_MARGIN`, an
  equivalence test; an interval that holds chance but is wider is **not resolved**) while its **parent** (the same recipe with the information) is
  above chance on it, its **control** rows must pass (:data:`FLOORS`: 0.85 for a knock-out, 0.90 for a **trained**
  model, one that saw every kind of information, on the same control probe; judged like every other verdict from
  the 95% interval: **passes** when it lies at or above the floor, **fails** when below it, **at the floor** when it
  holds the floor), and the **blind** model
  must not beat chance on any counterbalanced choice probe; on a probe whose wrong answers are unlikely *by the
  paper's design* (Probe-R), the blind row is the probe's **text floor**: shown with its verdict against chance,
  not judged, since a text model that knows which relations occur is meant to be able to beat chance there;
* :class:`PaperClaim` s, for "The papers' claims under controlled conditions": a claim quoted from a paper about
  training conditions or architectures, tested as row ``a`` vs row ``b`` by one rule (:func:`claim_verdict`):
  **not testable** where a setting it compares did not learn (:func:`unlearned`); a claim of a difference
  **holds** when its interval (a paired difference's, else the two rows' not overlapping) excludes 0 in the claimed
  direction, **does not hold** when it excludes 0 the other way; a claim of no difference (``expect``
  :data:`NO_DIFFERENCE`, within its ``margin``) **holds** when the interval lies within ± margin, **does not hold**
  only when wholly outside it; anything else is **not resolved**.  A claim the toy world's drawing settles is
  **decided by construction**, one whose rows stand on different items or chance levels **not comparable**: shown,
  never judged, with the ``reason``.  Each chapter's judged lines are one family for Holm's correction
  (:mod:`probekit.studies.lab_holm`).

Rows are selected by ``model`` plus a ``where`` mapping of result-schema columns (probe, subset, metric,
condition).  A row the run did not produce (a model left out of ``lab_models``) gives **not run**.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from probekit.claims import (ABOVE, BELOW, HIGHER, LOWER, NO_CHANCE, NO_DIFFERENCE, UNRESOLVED, compare, difference,
                             equivalent, number, versus_chance, within)
from probekit.results import MaybeRow, Row, select

TARGET, CONTROL, BLIND, PARENT, FLOOR, TRAINED = "target", "control", "blind", "parent", "text floor", "trained"
KNOCK_IN, ABOVE_ZERO, BELOW_ZERO = "knock-in", "above 0", "below 0"   # its difference row must lie above 0
#: the floor a control row's 95% interval must lie at or above: a knock-out's, and a model's trained with every kind
#: of information (:func:`versus_floor`)
FLOORS = {CONTROL: 0.85, TRAINED: 0.90}
#: "at chance" means the 95% interval lies within chance ± this margin (absolute, a fraction: 5 points)
CHANCE_MARGIN = 0.05
AT_CHANCE, PASSES, FAILS, AT_FLOOR, NOT_ABOVE = "at chance", "passes", "fails", "at the floor", "not above chance"
HOLDS, DOES_NOT_HOLD, NOT_RESOLVED, BY_CONSTRUCTION = "holds", "does not hold", "not resolved", "decided by construction"
NOT_RUN, NOT_COMPARABLE, NOT_TESTABLE = "not run", "not comparable", "not testable"
#: a blind row on items it cannot win (one sentence over two images, or a counterbalanced pair): shown, not judged
BY_DESIGN = "not above chance by construction"
#: the verdict a knock-out / blind check should get for the probe to be doing its job
EXPECTED = {TARGET: AT_CHANCE, CONTROL: PASSES, TRAINED: PASSES, BLIND: NOT_ABOVE, PARENT: ABOVE, KNOCK_IN: ABOVE_ZERO,
            FLOOR: None}   # None: not judged


@dataclass(frozen=True)
class Check:
    """One row a knock-out, its parent, a fully trained model or the blind model is judged on."""
    model: str
    role: str                        # TARGET, PARENT, CONTROL, TRAINED, BLIND or FLOOR
    what: str                        # the probe in words, e.g. "verb negatives, pairwise"
    where: Mapping[str, str] = field(default_factory=dict)
    #: a blind row on items a text-only scorer cannot win whatever it learned (it ties between two images, or
    #: prefers one sentence under both images of a counterbalanced pair): not a check that passes, so not judged;
    #: above chance there, it flags a broken scorer or item table
    by_construction: bool = False


@dataclass(frozen=True)
class PaperClaim:
    """A paper's claim tested on two rows of the zoo (``a`` should be ``expect`` than ``b``)."""
    claim: str                       # the claim, quoted as a fact from the paper
    source: str                      # where the paper says it, e.g. "Hendricks & Nematzadeh 2021, Table 5"
    a: tuple[str, Mapping[str, str]]
    b: tuple[str, Mapping[str, str]]
    expect: str = HIGHER             # HIGHER or LOWER
    diff: tuple[str, Mapping[str, str]] | None = None   # a paired-difference row a − b, when the study has one
    by_construction: bool = False    # a claim about concepts, which a drawn world decides by construction
    not_comparable: bool = False     # a and b stand on different items or chance levels: shown, not judged
    #: why a claim is decided by construction or not comparable, shown beside its rows
    reason: str = ""
    #: for ``expect`` :data:`NO_DIFFERENCE`: the equivalence margin, in the unit of the ``diff`` row
    margin: float | None = None
    #: what the claim presupposes was learned: rows that must each lie above their chance level (above 0 for a row
    #: without one, e.g. a setting's own gain on what it was trained for, a paired difference from the model it
    #: started from); where one does not the claim is :data:`NOT_TESTABLE` (:func:`unlearned`)
    learned: tuple[tuple[str, Mapping[str, str]], ...] = ()
    #: ``a`` and ``b`` show what their settings learned, so the claim presupposes it (:func:`unlearned`); off for
    #: rows without such a floor (one class's accuracy at a threshold), whose claim names its ``learned`` rows
    chance_floor: bool = True
    #: the paper's own effect, in the unit of the ``diff`` row, shown beside the toy's (e.g. 0.177: +17.7 points)
    paper_effect: float | None = None

    def __post_init__(self) -> None:
        if self.expect == NO_DIFFERENCE and (self.margin is None or self.diff is None):
            raise ValueError(f"a no-difference claim needs a paired difference and a margin: {self.claim!r}")


def find(rows: pd.DataFrame, model: str, where: Mapping[str, str]) -> pd.Series | None:
    """The one row of ``model`` matching ``where``; None when the run produced none; an error when several match
    (the check or claim is defined too loosely)."""
    if not len(rows):
        return None
    found = select(rows, model=model, **where)
    if len(found) > 1:
        raise KeyError(f"{len(found)} lab rows of {model} match {dict(where)}; a check or claim must name one row")
    return found.iloc[0] if len(found) else None


def versus_floor(r: Row, floor: float) -> str:
    """A control row against its floor: :data:`PASSES` when its 95% interval lies at or above ``floor``,
    :data:`FAILS` when wholly below, :data:`AT_FLOOR` when it holds ``floor`` (or has no interval): a point value
    on either side of the floor by less than its interval says neither."""
    low, high = number(r, "ci_low"), number(r, "ci_high")
    if low >= floor:
        return PASSES
    return FAILS if high < floor else AT_FLOOR


def check_verdict(r: Row | None, role: str, by_construction: bool = False) -> str:
    """A check's verdict from its row's 95% interval: against a floor for a control; against 0 for a knock-in;
    for a blind row, whether it beats chance; otherwise :data:`AT_CHANCE` when the interval lies within chance ±
    :data:`CHANCE_MARGIN` (an equivalence test), above or below chance when it excludes chance, and :data:`NOT_RESOLVED`
    when it holds chance but reaches past the margin; a blind row ``by_construction`` not above chance: :data:`BY_DESIGN`."""
    if r is None or role in FLOORS:
        return NOT_RUN if r is None else versus_floor(r, FLOORS[role])
    if role == KNOCK_IN:
        return {HIGHER: ABOVE_ZERO, LOWER: BELOW_ZERO}.get(difference(r), NOT_RESOLVED)
    vs = versus_chance(r)
    if role in (BLIND, FLOOR):
        return ABOVE if vs == ABOVE else BY_DESIGN if by_construction else NOT_ABOVE
    if vs != NO_CHANCE and within(r, number(r, "chance"), CHANCE_MARGIN):
        return AT_CHANCE
    return {UNRESOLVED: NOT_RESOLVED}.get(vs, vs)


def has_learned(r: Row | None) -> bool:
    """Whether a row shows its setting learned: its 95% interval lies above its chance level, or above 0 for a row
    without one (a gain); False for a row not run (None)."""
    if r is None:
        return False
    vs = versus_chance(r)
    return vs == ABOVE if vs != NO_CHANCE else difference(r) == HIGHER


def unlearned(a: MaybeRow, b: MaybeRow, gains: Sequence[MaybeRow], expect: str, chance_floor: bool) -> list[MaybeRow]:
    """The rows a claim presupposes learned that did not (None for one not run): each of ``gains`` (its
    ``learned`` rows, in order) not learned; and with ``chance_floor``, ``a`` and ``b`` when neither learned (two
    settings that learned nothing of a probe differ in nothing they learned), or for a no-difference claim each
    one that did not (two at chance are alike by the floor, not by what they learned)."""
    missed = [g for g in gains if not has_learned(g)]
    if chance_floor:
        flat = [r for r in (a, b) if not has_learned(r)]
        missed += flat if expect == NO_DIFFERENCE or len(flat) == 2 else []
    return missed


def claim_verdict(c: PaperClaim, a: MaybeRow, b: MaybeRow, diff: MaybeRow = None, gains: Sequence[MaybeRow] = ()) -> str:
    """One rule for every claim: :data:`NOT_RUN` without both rows; :data:`BY_CONSTRUCTION` or
    :data:`NOT_COMPARABLE` as the claim is marked; :data:`NOT_TESTABLE` where a row it presupposes learned did not
    (:func:`unlearned`; ``gains``: ``c.learned``'s rows, in order); then from the paired difference (else the two
    rows' intervals) :data:`HOLDS` when it excludes 0 in the claimed direction and :data:`DOES_NOT_HOLD` the other
    way; for a no-difference claim (only by a difference row) :data:`HOLDS` when it lies within ± ``c.margin`` and
    :data:`DOES_NOT_HOLD` when wholly outside it; else :data:`NOT_RESOLVED`."""
    if a is None or b is None:
        return NOT_RUN
    if c.by_construction:
        return BY_CONSTRUCTION
    if c.not_comparable:
        return NOT_COMPARABLE
    if len(gains) != len(c.learned) or unlearned(a, b, gains, c.expect, c.chance_floor):
        return NOT_TESTABLE
    if c.expect == NO_DIFFERENCE:
        assert c.margin is not None  # __post_init__ requires one for NO_DIFFERENCE
        found = equivalent(diff, c.margin) if diff is not None else UNRESOLVED
        return {NO_DIFFERENCE: HOLDS, UNRESOLVED: NOT_RESOLVED}.get(found, DOES_NOT_HOLD)
    found = difference(diff) if diff is not None else compare(a, b)
    if found == UNRESOLVED:
        return NOT_RESOLVED
    return HOLDS if found == c.expect else DOES_NOT_HOLD


def checks(rows: pd.DataFrame, defined: list[Check]) -> pd.DataFrame:
    """One line per check: model, role, what, the row, its verdict and whether that is the expected one (always
    True for a :data:`FLOOR` row, which is shown, not judged)."""
    out = []
    for c in defined:
        r = find(rows, c.model, c.where)
        verdict = check_verdict(r, c.role, c.by_construction)
        expected = None if verdict == BY_DESIGN else EXPECTED[c.role]
        out.append(dict(model=c.model, role=c.role, what=c.what, row=None if r is None else dict(r),
                        verdict=verdict, expected=expected, ok=expected is None or verdict == expected))
    return pd.DataFrame(out, columns=["model", "role", "what", "row", "verdict", "expected", "ok"])


def claims(rows: pd.DataFrame, defined: list[PaperClaim]) -> pd.DataFrame:
    """One line per paper claim: the claim, its source, the two rows (and the difference row) and the verdict."""
    out = []
    for c in defined:
        a, b = find(rows, *c.a), find(rows, *c.b)
        diff = find(rows, *c.diff) if c.diff else None
        gains = [find(rows, *g) for g in c.learned]
        verdict = claim_verdict(c, a, b, diff, gains)
        out.append(dict(claim=c.claim, source=c.source, a_model=c.a[0], b_model=c.b[0],
                        a=None if a is None else dict(a), b=None if b is None else dict(b),
                        diff=None if diff is None else dict(diff), expect=c.expect, margin=c.margin,
                        reason=c.reason, gains=[None if g is None else dict(g) for g in gains],
                        chance_floor=c.chance_floor, paper_effect=c.paper_effect, verdict=verdict))
    return pd.DataFrame(out, columns=["claim", "source", "a_model", "b_model", "a", "b", "diff", "expect", "margin",
                                      "reason", "gains", "chance_floor", "paper_effect", "verdict"])


#: :func:`verdict_lines`' columns
VERDICT_COLUMNS = ["study", "kind", "what", "models", "verdict", "as_expected", "rows"]
#: what a line judged over seeds adds (:data:`probekit.studies.lab_pooling.SEED_COLUMNS`): each seed's rows (JSON),
#: each seed's verdict, whether they agree, "seeds disagree: ..." (or why the line is not pooled), and what the note
#: says as fields: its kind, its seeds and the seeds that disagree with their verdicts (:func:`~.lab_pooling.pool`)
SEED_FIELDS = ["seed_rows", "seed_verdicts", "seeds_agree", "seeds_note", "seeds_kind", "seeds", "seeds_disagree"]


def _seeds(line: Row) -> dict[str, Any]:
    return {k: line[k] for k in SEED_FIELDS if k in line}


#: the result-row fields a verdict line keeps of the rows it was decided from
ROW_FIELDS = ("model", "metric", "value", "ci_low", "ci_high", "n")


def deciding(*found: Row | None) -> str:
    """The rows a verdict was decided from, as JSON (a list of :data:`ROW_FIELDS` mappings; "[]" when a row was
    not run). The same numbers give the same text, so two runs' lines can be matched on it."""
    rows = [r for r in found if isinstance(r, dict)]
    return "[]" if len(rows) < len(found) else json.dumps([{k: r.get(k) for k in ROW_FIELDS} for r in rows], default=float)


#: tolerances within which two runs' deciding numbers (fractions) are the same: float noise between builds, up to
#: ~1e-4 relative in the fine-tuned CLIPs' rows, far below what a page shows (0.1 points = 1e-3)
SAME_RTOL, SAME_ATOL = 1e-4, 1e-6


def same_value(u: Any, v: Any, rtol: float = SAME_RTOL, atol: float = SAME_ATOL) -> bool:
    """Whether two values of a result row are the same: numbers within ``rtol`` relative or ``atol`` absolute
    (NaN equals NaN), lists element by element (e.g. top-k words), anything else equal (None or a nullable
    column's NA equals either)."""
    if isinstance(u, (list, tuple, np.ndarray)) or isinstance(v, (list, tuple, np.ndarray)):
        try:
            return len(u) == len(v) and all(same_value(a, b, rtol, atol) for a, b in zip(u, v))
        except TypeError:
            return False
    if isinstance(u, float) or isinstance(v, float):
        try:
            u, v = float(u), float(v)
        except (TypeError, ValueError):
            return False
        return (math.isnan(u) and math.isnan(v)) or math.isclose(u, v, rel_tol=rtol, abs_tol=atol)
    return bool((pd.isna(u) and pd.isna(v)) if any(x is None or x is pd.NA for x in (u, v)) else u == v)


def same_rows(a: str, b: str, rtol: float = SAME_RTOL) -> bool:
    """Whether two :func:`deciding` texts hold the same rows: each field :func:`same_value` (so a rebuild's float
    noise does not make a line "another run")."""
    ra, rb = json.loads(a), json.loads(b)
    return len(ra) == len(rb) and all(same_value(x.get(k), y.get(k), rtol) for x, y in zip(ra, rb) for k in {*x, *y})


def verdict_lines(study: str, found_checks: pd.DataFrame | None, found_claims: pd.DataFrame | None) -> pd.DataFrame:
    """A study's judged checks (:func:`checks`) and claims (:func:`claims`) as one line each: the check's model,
    probe and role or the claim's text (``what``), the models it reads, its verdict, ``as_expected`` (True/False
    for a judged check; None for a claim, a check shown but not judged, or one not run) and ``rows``: what the
    verdict was decided from (:func:`deciding`: a check's row; a claim's paired-difference row, or its two rows).
    A lab judged over seeds (:mod:`probekit.studies.lab_pooling`) adds its lines' :data:`SEED_FIELDS`."""
    out = []
    for _, c in (found_checks if found_checks is not None else pd.DataFrame()).iterrows():
        judged = isinstance(c["expected"], str) and c["verdict"] != NOT_RUN
        out.append(dict(study=study, kind="check", what=f"{c['model']}: {c['what']} ({c['role']})",
                        models=c["model"], verdict=c["verdict"], as_expected=bool(c["ok"]) if judged else None,
                        rows=deciding(c["row"]), **_seeds(c)))
    for _, c in (found_claims if found_claims is not None else pd.DataFrame()).iterrows():
        pair = [c["diff"]] if isinstance(c["diff"], dict) else [c["a"], c["b"]]
        out.append(dict(study=study, kind="claim", what=c["claim"], models=f"{c['a_model']}|{c['b_model']}",
                        verdict=c["verdict"], as_expected=None, rows=deciding(*pair), **_seeds(c)))
    pooled = any(set(SEED_FIELDS) <= set(f.columns) for f in (found_checks, found_claims) if f is not None)
    return pd.DataFrame(out, columns=[*VERDICT_COLUMNS, *(SEED_FIELDS if pooled else [])])


__all__ = ["Check", "PaperClaim", "checks", "claims", "check_verdict", "versus_floor", "claim_verdict", "has_learned",
           "unlearned", "verdict_lines", "deciding", "SEED_FIELDS", "same_rows", "SAME_RTOL", "SAME_ATOL", "CHANCE_MARGIN", "VERDICT_COLUMNS", "ROW_FIELDS", "FLOORS",
           "TARGET", "CONTROL", "TRAINED", "BLIND", "PARENT", "FLOOR", "AT_CHANCE", "PASSES", "FAILS", "AT_FLOOR",
           "NOT_ABOVE", "HOLDS", "DOES_NOT_HOLD", "NOT_RESOLVED", "BY_CONSTRUCTION", "BY_DESIGN", "NOT_RUN", "HIGHER", "LOWER",
           "BELOW", "NO_DIFFERENCE", "NOT_COMPARABLE", "NOT_TESTABLE", "KNOCK_IN", "ABOVE_ZERO", "BELOW_ZERO"]
