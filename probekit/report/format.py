"""Numbers as readers see them: percent formatting, "value [low, high]" cells, wide tables, claim sentences.

This is the only place values (fractions in the result rows) become percent.  Metrics whose values are not
fractions (:data:`PLAIN_METRICS`, e.g. Pearson's r or the relative robustness γ) are shown as plain numbers;
a paired difference (metric ``<metric>_diff``) is shown in signed percentage points.
"""

from __future__ import annotations

import math
import string
from typing import Any, Mapping, Sequence

import pandas as pd

from probekit.claims import Claim

#: metrics whose values are not fractions of 1 (shown with two decimals, never as percent)
PLAIN_METRICS = {"r", "p", "gamma", "perplexity", "pseudo_perplexity", "delta_c_pts", "count"}


def _nan(x) -> bool:
    try:
        return x is None or math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def pct(value, digits: int = 1) -> str:
    """0.623 -> "62.3%"; NaN -> "n/a"."""
    return "n/a" if _nan(value) else f"{100 * float(value):.{digits}f}%"


def is_plain(metric: str) -> bool:
    return metric.removesuffix("_diff") in PLAIN_METRICS


def number(value, metric: str = "", digits: int = 1, unit: bool = True) -> str:
    """A value as shown for its metric: percent, signed points for ``*_diff``, or a plain number."""
    if _nan(value):
        return "n/a"
    value = float(value)
    if is_plain(metric):
        return signed(value, 2) if metric.endswith("_diff") else f"{value:.{_digits(value, 2)}f}"
    if metric.endswith("_diff"):
        return signed(100 * value, digits) + (" pts" if unit else "")
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
    if not (_nan(r["ci_low"]) or _nan(r["ci_high"])):
        text += f" [{number(r['ci_low'], metric, digits, False)}, {number(r['ci_high'], metric, digits, False)}]"
    if with_n and not _nan(r.get("n")) and float(r["n"]) >= 0:
        text += f" (n = {int(r['n'])})"
    return text


def table(rows: pd.DataFrame, index: Sequence[str] | str, columns: Sequence[str] | str, digits: int = 1,
          with_n: bool = False, order: Mapping[str, Sequence] | None = None) -> pd.DataFrame:
    """Result rows -> a wide table of :func:`cell` strings (index × columns), in the rows' order of appearance
    unless ``order`` gives a level's order (e.g. ``{"metric": ["avg", "pos", "neg"]}``)."""
    index = [index] if isinstance(index, str) else list(index)
    columns = [columns] if isinstance(columns, str) else list(columns)
    shown = rows.assign(_cell=[cell(r, digits, with_n) for _, r in rows.iterrows()])
    wide = shown.pivot_table(index=index, columns=columns, values="_cell", aggfunc="first", sort=False)
    for level, values in (order or {}).items():
        for axis, names in ((0, index), (1, columns)):
            if level in names:
                present = (wide.index if axis == 0 else wide.columns).get_level_values(level)
                rank = {v: i for i, v in enumerate(values)}
                keys = sorted(range(len(present)), key=lambda i: rank.get(present[i], len(rank)))
                wide = wide.iloc[keys] if axis == 0 else wide.iloc[:, keys]
    wide = wide.fillna("")
    wide.columns.names = [None if len(columns) == 1 else c for c in wide.columns.names]
    return wide


def counts(rows: pd.DataFrame, index: Sequence[str] | str, columns: Sequence[str] | str) -> pd.DataFrame:
    """The ``n`` of every cell of :func:`table`, as integers."""
    wide = rows.pivot_table(index=index, columns=columns, values="n", aggfunc="first", sort=False)
    return wide.fillna(-1).astype(int).replace(-1, "")


class _RowView:
    """A row inside a claim template: "{a}" is its cell with unit and n, "{a.value}" its value, "{a.n}" its n."""

    def __init__(self, r: Mapping[str, Any]):
        self._r = r

    def __format__(self, spec: str) -> str:
        return cell(self._r, with_n=True, unit=True)

    @property
    def value(self) -> str:
        return number(self._r["value"], str(self._r["metric"]))

    @property
    def n(self) -> str:
        return "n/a" if _nan(self._r.get("n")) else str(int(self._r["n"]))

    @property
    def ci(self) -> str:
        m = str(self._r["metric"])
        return f"[{number(self._r['ci_low'], m, unit=False)}, {number(self._r['ci_high'], m, unit=False)}]"

    @property
    def chance(self) -> str:
        return number(self._r["chance"], str(self._r["metric"]))


def render_claim(c: Claim) -> str:
    """A claim's sentence with its rows and words filled in."""
    values = {**dict(c.words), **{k: _RowView(v) for k, v in c.rows.items()}, "verdict": c.verdict}
    names = {f[1].split(".")[0].split("[")[0] for f in string.Formatter().parse(c.template) if f[1]}
    missing = names - set(values)
    if missing:
        raise KeyError(f"claim {c.topic!r}: template names {sorted(missing)} that are neither rows nor words")
    return c.template.format(**values)


def render_claims(claims: Sequence[Claim], bullet: str = "- ") -> str:
    """The discussion: one bullet per claim, as Markdown."""
    return "\n".join(bullet + render_claim(c) for c in claims)
