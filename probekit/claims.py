"""Claims from numbers: the verdicts a discussion may state, decided from result rows and their intervals.

A comparison is stated only when the data resolves it:

* :func:`versus_chance`: ``above chance`` / ``below chance`` when the 95% interval excludes the row's ``chance``,
  else ``not resolved``;
* :func:`within`: the equivalence test (TOST) that an interval lies within a margin around a value;
* :func:`compare`: ``higher`` / ``lower`` when the two rows' intervals do not overlap, else ``not resolved``;
* :func:`difference`: for a paired-difference row (metric ``<metric>_diff``, the interval from a paired
  bootstrap over the same items): ``higher`` / ``lower`` when its interval excludes 0, else ``not resolved``;
* :func:`equivalent`: the same row judged for "no difference": ``no difference`` when its interval lies within
  0 ± a stated margin (TOST, :func:`within`), else :func:`difference`'s verdict.

A row without an interval (a paper's number) never resolves anything.  A :class:`Claim` holds the verdict, the
rows it quotes and a sentence template; the report layer fills the template (``probekit.report.render_claims``),
so numbers are formatted in one place and tests assert on verdicts, never on prose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import pandas as pd

ABOVE, BELOW = "above chance", "below chance"
HIGHER, LOWER = "higher", "lower"
UNRESOLVED = "not resolved"
NO_CHANCE = "no chance level"
NO_DIFFERENCE = "no difference"
VERDICTS = (ABOVE, BELOW, HIGHER, LOWER, UNRESOLVED, NO_CHANCE, NO_DIFFERENCE)


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
    :data:`NO_DIFFERENCE` when its 95% interval lies within the margin (the equivalence test, :func:`within`, which
    takes precedence: an interval that excludes 0 but lies within the margin is a difference too small to count),
    else :func:`difference`'s ``higher`` / ``lower`` when it excludes ``null``, else ``not resolved`` (the interval
    holds ``null`` but reaches past the margin)."""
    return NO_DIFFERENCE if within(r, null, margin) else difference(r, null)


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


def claim(topic: str, verdict: str, templates: Mapping[str, str] | str, rows: Mapping[str, Any] | None = None,
          **words: str) -> Claim:
    """A :class:`Claim` whose template is chosen by its verdict (``templates[verdict]``; a plain string serves
    every verdict).  Rows may be pandas Series or dicts."""
    template = templates if isinstance(templates, str) else templates[verdict]
    quoted = {k: dict(v) for k, v in (rows or {}).items()}
    return Claim(topic=topic, verdict=verdict, template=template, rows=quoted, words=dict(words))


def by_topic(claims, topic: str) -> Claim:
    """The claim about ``topic`` (tests use this to find one claim in a study's list)."""
    found = [c for c in claims if c.topic == topic]
    if len(found) != 1:
        raise KeyError(f"{len(found)} claims about {topic!r}; topics: {[c.topic for c in claims]}")
    return found[0]
