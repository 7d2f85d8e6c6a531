"""Result rows as readers see them: wide tables of cells, counts, claim sentences (numbers and cells themselves are
formatted by :mod:`probekit.numbers`)."""

from __future__ import annotations

import string
from typing import Any, Mapping, Sequence

import pandas as pd

from probekit.claims import Claim
from probekit.numbers import cell, missing, number, shown


def magnitude(r: Mapping[str, Any]) -> dict:
    """A paired-difference row (metric ``<metric>_diff``) as its magnitude (metric ``<metric>_size``, shown in
    unsigned points by :func:`probekit.numbers.number`): value |v|, the interval mirrored when v < 0.  Any other
    row is returned unchanged."""
    r = dict(r)
    metric = str(r["metric"])
    if not metric.endswith("_diff"):
        return r
    size = metric.removesuffix("_diff") + "_size"
    if missing(r["value"]) or float(r["value"]) >= 0:
        return {**r, "metric": size}
    low, high = r.get("ci_low"), r.get("ci_high")
    return {**r, "metric": size, "value": -float(r["value"]),
            "ci_low": None if high is None or missing(high) else -float(high),
            "ci_high": None if low is None or missing(low) else -float(low)}


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
        return "n/a" if missing(self._r.get("n")) else str(int(self._r["n"]))

    @property
    def ci(self) -> str:
        parts = shown(self._r)
        return "[n/a, n/a]" if parts is None else f"[{parts[1]}, {parts[2]}]"

    @property
    def size(self) -> str:
        """A paired difference as a magnitude, unsigned, with its interval: "64.8 pts [60.1, 69.2]" for +0.648 and
        for −0.648 alike (the interval mirrored for a negative value), so that the sentence's own word ("drop",
        "gain", "lowers", "raises", chosen by the verdict, i.e. the sign) says the direction."""
        return cell(magnitude(self._r), with_n=True, unit=True)

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
