"""Whether a rebuild's numbers are a page's: each number compared at the precision that suits it.

* A result row's value and interval bounds are the same when a page writes them with the same digits
  (:func:`probekit.numbers.shown`: to the decimals the interval's width allows, at least :data:`DIGITS` of a
  percent, the most any page writes; a row without an interval as :func:`probekit.numbers.number` writes it), or
  differ by less than :data:`EDGE` of the last digit written (float noise across a rounding edge); its ``n`` when
  equal.  A bound near 0 thus takes its interval's precision, not its own: the Δc bound −0.0408855 or −0.0408809 on
  an interval 10 points wide is written "-0" either way, while a change a page would show is a difference.
* A lab line's rows (its columns ``rows`` and ``*_rows``, JSON) likewise, row by row; its Holm-adjusted p to the
  two significant digits its cell shows.
* An item row's numbers, which no page shows, within :data:`~probekit.studies.lab.SAME_RTOL` relative to their
  column's largest magnitude: float noise in a score near 0 is noise of the column's scale, not of the score's.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pandas as pd

from probekit.numbers import is_plain, missing, number, shown
from probekit.studies.lab import SAME_ATOL, SAME_RTOL, same_value

#: a result row's numbers, each compared on its own (the tally counts them)
NUMBERS = ["value", "ci_low", "ci_high", "n"]
#: the most decimals a page writes a percent (or points) with (the long tables, the paper's tables)
DIGITS = 2
#: the share of a number's last written digit within which two values are the same though they round apart
EDGE = 0.01
#: said of the comparison on the terminal
TOLERANCE = (f"as the pages write them (a percent to its interval's precision, at least {DIGITS} decimals; "
             f"a rounding edge crossed by less than {EDGE:g} of the last digit)")


def as_shown(r: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """A result row's :data:`NUMBERS` as a page writes them, ``n`` exactly."""
    metric = str(r["metric"])
    value, low, high = shown(r, DIGITS) or (number(r[k], metric, DIGITS, unit=False) for k in NUMBERS[:3])
    return value, low, high, "n/a" if missing(r["n"]) else repr(float(r["n"]))


def last_digit(text: str) -> float:
    """The place of a written number's last digit ("62.35" -> 0.01, "-0" -> 1, "3.1e-07" -> 1e-08)."""
    digits, _, exponent = text.partition("e")
    return 10.0 ** (int(exponent or 0) - len(digits.partition(".")[2]))


def same_numbers(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[bool]:
    """For each of :data:`NUMBERS`, whether ``new`` shows it as ``old`` does (:func:`as_shown`), or crosses a
    rounding edge by float noise only: by less than :data:`EDGE` of its last digit (the page and its files are
    then kept as they were, which agree)."""
    unit = 1.0 if is_plain(str(old["metric"])) else 100.0
    def same(key: str, a: str, b: str) -> bool:
        if a == b:
            return True
        if key == "n" or missing(old[key]) or missing(new[key]):
            return False
        return unit * abs(float(old[key]) - float(new[key])) < EDGE * min(last_digit(a), last_digit(b))
    return [same(k, a, b) for k, a, b in zip(NUMBERS, as_shown(old), as_shown(new))]


def same_row_lists(a: str | None, b: str | None) -> bool:
    """Whether two JSON lists of rows (a lab line's deciding rows, or its rows per seed) hold the same rows: the
    same fields, their texts equal and their numbers as shown (:func:`same_numbers`)."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return not isinstance(a, str) and not isinstance(b, str)   # none on either side (None, NaN)
    ra, rb = json.loads(a), json.loads(b)
    return len(ra) == len(rb) and all(
        x.keys() == y.keys() and all(x[k] == y[k] for k in x if k not in NUMBERS) and all(same_numbers(x, y))
        for x, y in zip(ra, rb))


def _p(p: Any) -> str:
    return "n/a" if missing(p) else f"{float(p):.2g}"


def _scale(column: pd.Series) -> float:
    """The largest finite magnitude of a column's numbers (numbers, or lists of them); 0 for none."""
    if pd.api.types.is_numeric_dtype(column):
        found = np.abs(column.to_numpy(float))
        return float(np.nanmax(found, initial=0.0, where=np.isfinite(found)))
    largest = 0.0
    for v in column:
        if isinstance(v, str):
            continue
        try:
            found = np.abs(np.asarray(v, dtype=float)).ravel()
        except (TypeError, ValueError):
            continue
        largest = max(largest, float(np.max(found, initial=0.0, where=np.isfinite(found))))
    return largest


def same_column(name: str, old: pd.Series, new: pd.Series) -> bool:
    """Whether a table's column holds the same entries in a rebuild: rows as JSON as shown, a Holm-adjusted p to
    two significant digits, anything else (item rows: numbers, texts, lists) :func:`same_value` with an absolute
    tolerance of :data:`SAME_RTOL` of the column's scale (at least :data:`SAME_ATOL`) (:func:`_scale`)."""
    if name == "rows" or name.endswith("_rows"):
        return all(same_row_lists(a, b) for a, b in zip(old.tolist(), new.tolist()))
    if name == "holm":
        return [_p(p) for p in old] == [_p(p) for p in new]
    atol = max(SAME_ATOL, SAME_RTOL * max(_scale(old), _scale(new)))
    return all(same_value(a, b, atol=atol) for a, b in zip(old.tolist(), new.tolist()))


__all__ = ["NUMBERS", "DIGITS", "TOLERANCE", "as_shown", "last_digit", "same_numbers", "same_row_lists", "same_column"]
