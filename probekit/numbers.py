"""Numbers as readers see them: percent, signed points or plain numbers, and "value [low, high] (n = N)" cells.

This is the only place values (fractions in the result rows) become percent.  Metrics whose values are not
fractions (:data:`PLAIN_METRICS`, e.g. Pearson's r or the relative robustness γ) are shown as plain numbers;
a paired difference (metric ``<metric>_diff``) is shown in signed percentage points, and its magnitude (metric
``<metric>_size``, :func:`probekit.report.format.magnitude`) in unsigned ones.  It sits in the lowest layer
so that everything that writes numbers for readers (the report, the toy zoo's model card) shares it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd

#: metrics whose values are not fractions of 1 (shown with two decimals, never as percent)
PLAIN_METRICS = {"r", "p", "gamma", "gamma_median", "perplexity", "pseudo_perplexity", "delta_c_pts", "count"}


def missing(x) -> bool:
    """None, NaN or not a number."""
    try:
        return x is None or math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def pct(value, digits: int = 1) -> str:
    """0.623 -> "62.3%"; NaN -> "n/a"."""
    return "n/a" if missing(value) else f"{100 * float(value):.{digits}f}%"


def is_plain(metric: str) -> bool:
    return metric.removesuffix("_diff").removesuffix("_size") in PLAIN_METRICS


def number(value, metric: str = "", digits: int = 1, unit: bool = True) -> str:
    """A value as shown for its metric: percent, signed points for ``*_diff``, unsigned points for ``*_size``, or a
    plain number."""
    if missing(value):
        return "n/a"
    value = float(value)
    if is_plain(metric):
        if metric.endswith("_diff"):
            return signed(value, 2)
        points = unit and metric.endswith("_pts_size")   # a size of a metric already in points: say so
        return f"{value:.{_digits(value, 2)}f}" + (" pts" if points else "")
    if metric.endswith("_diff"):
        return signed(100 * value, digits) + (" pts" if unit else "")
    if metric.endswith("_size"):
        return f"{100 * value:.{_digits(100 * value, digits)}f}" + (" pts" if unit else "")
    return f"{100 * value:.{_digits(100 * value, digits)}f}" + ("%" if unit else "")


def signed(x: float, digits: int = 1) -> str:
    """-0.03 -> "-0.03" (not "-0.0"), 2.14 -> "+2.1": a signed number with ``digits`` decimals, or more when needed
    to show that a small non-zero number is not 0."""
    return f"{x:+.{_digits(x, digits)}f}"


def _digits(x: float, digits: int) -> int:
    """``digits``, or more for a small non-zero number, so that it never prints as 0 (at most 4 decimals)."""
    if x == 0 or abs(x) >= 10 ** -digits:
        return digits
    return min(4, max(digits, 1 - math.floor(math.log10(abs(x)))))


def cell(r: Mapping[str, Any] | pd.Series, digits: int = 1, with_n: bool = False, unit: bool = False) -> str:
    """One table cell: "62.3 [55.0, 70.1]" (the interval when there is one), optionally "(n = 120)"."""
    metric = str(r["metric"])
    text = number(r["value"], metric, digits, unit)
    if not (missing(r["ci_low"]) or missing(r["ci_high"])):
        text += f" [{number(r['ci_low'], metric, digits, False)}, {number(r['ci_high'], metric, digits, False)}]"
    if with_n and not missing(r.get("n")) and float(r["n"]) >= 0:
        text += f" (n = {int(r['n'])})"
    return text
