"""Numbers as readers see them: percent, signed points or plain numbers, and "value [low, high] (n = N)" cells.

This is the only place values (fractions in the result rows) become percent.  Metrics whose values are not
fractions (:data:`PLAIN_METRICS`, e.g. Pearson's r or the relative robustness γ) are shown as plain numbers;
a paired difference (metric ``<metric>_diff``) is shown in signed percentage points, and its magnitude (metric
``<metric>_size``, :func:`probekit.report.format.magnitude`) in unsigned ones.  A number with an interval is shown
to the decimals its interval's width allows (:func:`places`: the width to two significant digits; percent and
points with at least one decimal), the same for the value and both bounds.  It sits in the lowest layer so that
everything that writes numbers for readers (the report, the toy zoo's model card) shares it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd

#: metrics whose values are not fractions of 1 (shown with two decimals, never as percent)
PLAIN_METRICS = {"r", "p", "gamma", "gamma_median", "perplexity", "pseudo_perplexity", "delta_c_pts", "count"}
#: the most decimals a number is written with; one that needs more is written in scientific notation ("3.1e-07")
MAX_PLACES = 4


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


def _shown(value: float, metric: str) -> float:
    """A value in the unit it is shown in: percent or points, or as it is for a plain metric."""
    return float(value) if is_plain(metric) else 100 * float(value)


def _unit(metric: str) -> str:
    if metric.endswith("_diff"):
        return "" if is_plain(metric) else " pts"
    if metric.endswith("_size"):
        return " pts" if not is_plain(metric) or metric.endswith("_pts_size") else ""
    return "" if is_plain(metric) else "%"


def number(value, metric: str = "", digits: int = 1, unit: bool = True) -> str:
    """A value as shown for its metric: percent, signed points for ``*_diff``, unsigned points for ``*_size``, or a
    plain number (two decimals); a small non-zero number with more decimals, so that it never reads as 0."""
    if missing(value):
        return "n/a"
    x = _shown(value, metric)
    text = fixed(x, _digits(x, 2 if is_plain(metric) else digits), sign=metric.endswith("_diff"))
    return text + (_unit(metric) if unit else "")


def _digits(x: float, digits: int) -> int:
    """``digits``, or more for a small non-zero number, so that it never prints as 0."""
    if x == 0 or abs(x) >= 10 ** -digits:
        return digits
    return max(digits, 1 - math.floor(math.log10(abs(x))))


def places(low: float, high: float) -> int | None:
    """The decimals that show an interval's width to two significant digits (0.042 wide: 3; 4.2: 1; 42: 0;
    308,666: -4, i.e. to the nearest 10,000); None for an interval of no width (or none)."""
    width = float(high) - float(low)
    if not (math.isfinite(width) and width > 0):
        return None
    return 1 - math.floor(math.log10(width))


def fixed(x: float, decimals: int, sign: bool = False) -> str:
    """``x`` with ``decimals`` decimals (fewer than 0: rounded to tens, thousands, ...), signed if ``sign``; in
    scientific notation with two significant digits beyond :data:`MAX_PLACES`."""
    plus = "+" if sign else ""
    if decimals > MAX_PLACES:
        return f"{x:{plus}.1e}"
    return f"{round(x, decimals):{plus}.{max(decimals, 0)}f}"


def triple(value: float, low: float, high: float, digits: int = 1, sign: bool = False,
           least: int | None = None) -> tuple[str, str, str]:
    """A value and its interval's bounds, all three to the decimals of the interval's width (:func:`places`), at
    least ``least`` of them if given; for an interval of no width, ``digits`` (or more for a small non-zero
    number)."""
    decimals = places(low, high)
    if decimals is None:
        decimals = max(_digits(x, digits) for x in (value, low, high))
    elif least is not None:
        decimals = max(decimals, least)
    return fixed(value, decimals, sign), fixed(low, decimals, sign), fixed(high, decimals, sign)


def interval(value: float, low: float, high: float, digits: int = 1, sign: bool = False,
             least: int | None = None) -> str:
    """"value [low, high]" (:func:`triple`): "+0.7 [-0.7, +2.5]", "410000 [260000, 570000]"."""
    v, lo, hi = triple(value, low, high, digits, sign, least)
    return f"{v} [{lo}, {hi}]"


def shown(r: Mapping[str, Any] | pd.Series, digits: int = 1) -> tuple[str, str, str] | None:
    """A row's value and bounds as shown for its metric (:func:`triple`, without unit), or None without an
    interval: a plain metric to its interval's width, percent and points to it but with at least ``digits``
    decimals (the precision chance levels and thresholds are quoted at: "95.4 [90.1, 99.0]", not "95 [90, 99]"
    under a threshold of 95%)."""
    metric = str(r["metric"])
    if missing(r["value"]) or missing(r["ci_low"]) or missing(r["ci_high"]):
        return None
    plain = is_plain(metric)
    value, low, high = (_shown(r[k], metric) for k in ("value", "ci_low", "ci_high"))
    return triple(value, low, high, 2 if plain else digits,
                  sign=metric.endswith("_diff"), least=None if plain else digits)


def cell(r: Mapping[str, Any] | pd.Series, digits: int = 1, with_n: bool = False, unit: bool = False) -> str:
    """One table cell: "62.3 [55.0, 70.1]" (the interval when there is one, its width setting the decimals:
    :func:`shown`), the value's unit after it if ``unit`` ("62.3% [55.0, 70.1]"), optionally "(n = 120)"."""
    metric = str(r["metric"])
    parts = shown(r, digits)
    if parts is None:
        text = number(r["value"], metric, digits, unit)
    else:
        text = parts[0] + (_unit(metric) if unit else "") + f" [{parts[1]}, {parts[2]}]"
    if with_n and not missing(r.get("n")) and float(r["n"]) >= 0:
        text += f" (n = {int(r['n'])})"
    return text
