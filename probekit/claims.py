"""Claims from numbers: the verdicts a discussion may state, decided from result rows and their intervals.

A comparison is stated only when the data resolves it:

* :func:`versus_chance`: ``above chance`` / ``below chance`` when the 95% interval excludes the row's ``chance``,
  else ``not resolved``;
* :func:`within`: the equivalence test (TOST) that an interval lies within a margin around a value;
* :func:`compare`: ``higher`` / ``lower`` when the two rows' intervals do not overlap, else ``not resolved``;
* :func:`difference`: for a paired-difference row (metric ``<metric>_diff``, the interval from a paired
  bootstrap over the same items): ``higher`` / ``lower`` when its interval excludes 0, else ``not resolved``;
* :func:`equivalent`: the same row judged for "no difference": ``no difference`` when its interval lies within
  0 ± a stated margin (TOST, :func:`within`), ``higher`` / ``lower`` only when it lies wholly beyond the margin,
  else ``not resolved``;
* :func:`p_value`, :func:`p_within`, :func:`p_beyond`: the p-value of each of these tests, read off the same 95%
  interval (so p < 0.05 exactly when the interval resolves the test), and :func:`holm`: Holm's step-down adjustment
  of a family of them.

A row without an interval (a paper's number) never resolves anything.  A :class:`Claim` holds the verdict, the
rows it quotes and a sentence template; the report layer fills the template (``probekit.report.render_claims``),
so numbers are formatted in one place and tests assert on verdicts, never on prose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import pandas as pd

from probekit.stats import ITEMS

ABOVE, BELOW = "above chance", "below chance"
HIGHER, LOWER = "higher", "lower"
UNRESOLVED = "not resolved"
NO_CHANCE = "no chance level"
NO_DIFFERENCE = "no difference"
VERDICTS = (ABOVE, BELOW, HIGHER, LOWER, UNRESOLVED, NO_CHANCE, NO_DIFFERENCE)
#: a claim's sentence: one template per verdict, or one for every verdict
Templates = Mapping[str, str] | str


def number(r: Any, key: str) -> float:
    """``r[key]`` (a mapping or series) or ``r.key`` as a float, NaN where it is None (no interval, say)."""
    value = r[key] if isinstance(r, (Mapping, pd.Series)) else getattr(r, key)
    return float(value) if value is not None else math.nan


def _has_interval(r) -> bool:
    return not (math.isnan(number(r, "ci_low")) or math.isnan(number(r, "ci_high")))


def versus_chance(r) -> str:
    """Where a row's 95% interval lies relative to its chance level."""
    chance = number(r, "chance")
    if math.isnan(chance):
        return NO_CHANCE
    return {HIGHER: ABOVE, LOWER: BELOW}.get(difference(r, chance), UNRESOLVED)


def within(r, centre: float, margin: float) -> bool:
    """Whether a row's 95% interval lies within ``centre`` ± ``margin``: two one-sided tests (TOST), each at the
    2.5% level, that the value is neither below ``centre - margin`` nor above ``centre + margin`` (equivalence;
    False without an interval)."""
    return _has_interval(r) and centre - margin <= number(r, "ci_low") and number(r, "ci_high") <= centre + margin


def compare(a, b) -> str:
    """``higher`` when a's interval lies wholly above b's, ``lower`` when wholly below, else ``not resolved``."""
    if not (_has_interval(a) and _has_interval(b)):
        return UNRESOLVED
    if number(a, "ci_low") > number(b, "ci_high"):
        return HIGHER
    if number(a, "ci_high") < number(b, "ci_low"):
        return LOWER
    return UNRESOLVED


def difference(r, null: float = 0.0) -> str:
    """Sign of a paired difference whose interval excludes ``null``; else ``not resolved``."""
    if not _has_interval(r):
        return UNRESOLVED
    if number(r, "ci_low") > null:
        return HIGHER
    if number(r, "ci_high") < null:
        return LOWER
    return UNRESOLVED


def equivalent(r, margin: float, null: float = 0.0) -> str:
    """A paired difference judged for "no difference" within ``null`` ± ``margin`` (in the row's unit):
    :data:`NO_DIFFERENCE` when its 95% interval lies within the margin (the equivalence test, :func:`within`: an
    interval that excludes 0 but lies within the margin is a difference too small to count), ``higher`` / ``lower``
    when it lies wholly beyond the margin (above ``null + margin`` / below ``null - margin``), else ``not resolved``
    (it reaches past the margin on one side and into it on the other)."""
    if within(r, null, margin):
        return NO_DIFFERENCE
    if difference(r, null + margin) == HIGHER:
        return HIGHER
    return LOWER if difference(r, null - margin) == LOWER else UNRESOLVED


#: the normal quantile of a two-sided 95% interval: a bound lies this many standard errors from the value
Z95 = 1.959963984540054


def _facing(r, other: float) -> float:
    """The standard error of a row's value read off its interval's half facing ``other``."""
    value = number(r, "value")
    return (value - number(r, "ci_low") if other <= value else number(r, "ci_high") - value) / Z95


def _one_sided(r, bound: float, above: bool) -> float:
    """The one-sided p that the row's value lies above (``above``) or below ``bound``, by the normal approximation
    with the standard error read off the interval's half facing ``bound`` ((value - ci_low) / Z95 when ``bound``
    lies below the value, (ci_high - value) / Z95 when above), so p < 0.025 exactly when the interval's end on that
    side excludes ``bound``; NaN without an interval."""
    if not _has_interval(r):
        return math.nan
    gap = number(r, "value") - bound if above else bound - number(r, "value")   # how far the value lies past it
    se = _facing(r, bound)
    if se <= 0:                                                # a zero-width side: decided by the gap's sign
        return 0.0 if gap > 0 else 1.0 if gap < 0 else 0.5
    return 0.5 * math.erfc(gap / se / math.sqrt(2))


def _doubled(p: float) -> float:
    """A one-sided p doubled onto a two-sided 95% interval's scale, capped at 1 (NaN stays NaN)."""
    return p if math.isnan(p) else min(1.0, 2 * p)


def p_value(r, null: float = 0.0) -> float:
    """The two-sided p that the row's value differs from ``null`` (:func:`difference`, :func:`versus_chance`),
    on its 95% interval's scale: below 0.05 exactly when the interval excludes ``null``."""
    return _doubled(min(_one_sided(r, null, True), _one_sided(r, null, False)))


def p_within(r, centre: float, margin: float) -> float:
    """The equivalence test's p (TOST, :func:`within`): the larger of the two one-sided p's that the value lies
    above ``centre - margin`` and below ``centre + margin``, doubled onto the 95% interval's scale (below 0.05
    exactly when the interval lies within the margin)."""
    return _doubled(max(_one_sided(r, centre - margin, True), _one_sided(r, centre + margin, False)))


def p_beyond(r, centre: float, margin: float) -> float:
    """The p that the value lies beyond ``centre`` ± ``margin`` (the smaller one-sided p, above ``centre + margin``
    or below ``centre - margin``), on the same scale (below 0.05 exactly when the interval lies wholly outside)."""
    return _doubled(min(_one_sided(r, centre + margin, True), _one_sided(r, centre - margin, False)))


def p_apart(a, b) -> float:
    """The two-sided p that two rows on different items differ (:func:`compare`): their difference over the root
    of the summed squared standard errors (each read off the half of its interval facing the other's value), by
    the normal approximation; more liberal than :func:`compare`'s non-overlapping intervals, which decide the
    verdict.  NaN without both intervals."""
    if not (_has_interval(a) and _has_interval(b)):
        return math.nan
    gap = number(a, "value") - number(b, "value")
    se = math.hypot(_facing(a, number(b, "value")), _facing(b, number(a, "value")))
    if se <= 0:
        return 0.0 if gap else 1.0
    return math.erfc(abs(gap) / se / math.sqrt(2))


def holm(p) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, in their order: the i-th smallest (from 0) times
    (m - i), made non-decreasing, capped at 1; m counts the finite p's, and a NaN stays NaN (a line not judged).
    A test survives at level α when its adjusted p is below α (the family-wise error stays below α)."""
    p = [float(x) for x in p]
    finite = sorted((x, i) for i, x in enumerate(p) if not math.isnan(x))
    out, running = [math.nan] * len(p), 0.0
    for rank, (x, i) in enumerate(finite):
        running = max(running, min(1.0, (len(finite) - rank) * x))
        out[i] = running
    return out


@dataclass(frozen=True)
class Claim:
    """One sentence of a discussion.

    ``verdict``: one of :data:`VERDICTS` (or a study's own word, e.g. ``"paper's order"``), the thing tests check.
    ``template``: the sentence, with ``{name}`` for a quoted row (rendered "62.3% [55.0, 70.1] (n = 120)"),
    ``{name.value}`` for its value alone, ``{name.n}`` for its n, and ``{word}`` for ``words[word]``.
    ``rows``: the quoted rows by name (schema dicts); ``words``: plain strings (model names, labels).
    ``topic``: what the claim is about, for tests and tables (e.g. ``"toy-vilt: positives vs negatives"``).
    """

    topic: str
    verdict: str
    template: str
    rows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    words: Mapping[str, str] = field(default_factory=dict)


def claim(topic: str, verdict: str, templates: Templates, rows: Mapping[str, Any] | None = None,
          **words: str) -> Claim:
    """A :class:`Claim` whose template is chosen by its verdict (``templates[verdict]``; a plain string serves
    every verdict).  Rows may be pandas Series or dicts."""
    template = templates if isinstance(templates, str) else templates[verdict]
    quoted = {k: {f: x for f, x in dict(v).items() if f != ITEMS} for k, v in (rows or {}).items()}   # numbers only
    return Claim(topic=topic, verdict=verdict, template=template, rows=quoted, words=dict(words))


def by_topic(claims, topic: str) -> Claim:
    """The claim about ``topic`` (tests use this to find one claim in a study's list)."""
    found = [c for c in claims if c.topic == topic]
    if len(found) != 1:
        raise KeyError(f"{len(found)} claims about {topic!r}; topics: {[c.topic for c in claims]}")
    return found[0]
