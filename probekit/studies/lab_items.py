"""The per-item values behind each lab row: what a lab line's verdict was computed from, so it can be pooled over
seeds (:mod:`probekit.studies.lab_pooling`).

Every result row computed from items gets its interval from :func:`probekit.stats.bootstrap_ci`; a study's run
keeps each of those calls (:func:`probekit.stats.keeping`: the values, the statistic, the resample count and seed,
and the value and interval it gave).  :func:`row_items` matches each lab row to the call that computed it — the
same value and interval (and ``n``), as computed or times 100 (a row in points, e.g. Probe-B's Δc) — and keeps its
values as a long table (:data:`ITEM_COLUMNS`: the row's key, how to summarise the values, one line per entry, with
the unit its interval resampled, ``cluster``, where the call had ``clusters``).  No
study changes how it computes a row, and one matcher serves every chapter.  :func:`rebuilt` computes the row again
from its values (exactly: the same statistic, resamples and seed), :func:`line_items` gives a lab line's arrays.

A row no kept call reproduces is **derived** and stays seed 0's only: it is not a statistic of item values with a
bootstrap interval (e.g. a Fisher interval, or a row whose statistic is not an importable function such as a
lambda); :func:`row_items` leaves it out, and a line deciding on it is not pooled (its note says so).  When two
calls gave one row's numbers (two subsets with the same items), the first is kept: either rebuilds the row.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from probekit.registry import load

#: a lab row's key: the result-schema columns that name it
KEY = ["study", "probe", "model", "condition", "subset", "metric"]
#: how a row's values are summarised: ``statistic`` ("module:function"), ``count`` ("len" or "finite": the row's
#: ``n``), ``scale`` (1, or 100 for a row in points) and the bootstrap's ``n_resamples`` and ``boot_seed``
SUMMARY = ["statistic", "count", "scale", "n_resamples", "boot_seed"]
#: :func:`row_items`' columns: a row's key and summary, then one line per entry of its values (``item`` the row of
#: the values, ``column`` its column: 0 for one value per item, 0/1 for a two-column array such as Table 4's avg;
#: ``cluster`` the item's unit of the cluster bootstrap as text, "" where items were resampled one by one)
ITEM_COLUMNS = [*KEY, *SUMMARY, "item", "column", "cluster", "value"]
SCALES = (1.0, 100.0)
COUNTS = {"len": len, "finite": lambda v: int(np.isfinite(np.asarray(v, float)).sum())}


def statistic_name(fn: Callable) -> str | None:
    """"module:name" that :func:`probekit.registry.load` turns back into ``fn``; None when there is none (a lambda,
    a partial)."""
    name = f"{getattr(fn, '__module__', '')}:{getattr(fn, '__qualname__', '')}"
    try:
        return name if load(name) is fn else None
    except (ImportError, AttributeError, ValueError):
        return None


def _close(a, b) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _match(r: Mapping, kept: list[dict]) -> tuple[dict, str, float] | None:
    """The first kept call that computed row ``r`` (its value, interval and ``n``), with its count and scale."""
    for k in kept:
        for scale in SCALES:
            if not (_close(r["value"], scale * k["value"]) and _close(r["ci_low"], scale * k["ci"][0])
                    and _close(r["ci_high"], scale * k["ci"][1])):
                continue
            count = next((c for c, f in COUNTS.items() if f(k["values"]) == r["n"]), None)
            if count is not None:
                return k, count, scale
    return None


def row_items(rows: pd.DataFrame, kept: list[dict]) -> pd.DataFrame:
    """The values behind each row of ``rows`` (a study's lab rows) that a kept :func:`~probekit.stats.bootstrap_ci`
    call computed (:data:`ITEM_COLUMNS`); rows no call reproduces (derived rows) are left out."""
    by_value: dict[float, list[dict]] = {}
    for k in kept:
        if np.isfinite(k["value"]) and statistic_name(k["statistic"]):
            by_value.setdefault(round(k["value"], 9), []).append(k)
    parts = []
    for _, r in rows.iterrows():
        if not np.isfinite([r["value"], r["ci_low"], r["ci_high"]]).all():
            continue
        candidates = [k for s in SCALES for k in by_value.get(round(r["value"] / s, 9), [])]
        found = _match(r, candidates)
        if found is None:
            continue
        k, count, scale = found
        values = np.asarray(k["values"], float).reshape(len(k["values"]), -1)
        item, column = np.indices(values.shape)
        units = np.full(len(values), "") if k.get("clusters") is None else np.asarray(k["clusters"]).astype(str)
        parts.append(pd.DataFrame({
            **{c: r[c] for c in KEY}, "statistic": statistic_name(k["statistic"]), "count": count, "scale": scale,
            "n_resamples": int(k["n_resamples"]), "boot_seed": int(k["seed"]),
            "item": item.ravel(), "column": column.ravel(), "cluster": units[item.ravel()], "value": values.ravel()}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ITEM_COLUMNS)


def _scaled(fn: Callable, scale: float) -> Callable:
    return fn if scale == 1 else lambda v: scale * fn(v)


def summary(spec: Mapping) -> dict:
    """A row's summary (one line of :func:`row_items` or its :data:`SUMMARY` fields) as the ``row_args`` of
    :func:`probekit.studies.lab_pooled.pooled_row` / ``seed_rows``: ``statistic``, ``count``, ``n_resamples``,
    ``seed``."""
    return dict(statistic=_scaled(load(spec["statistic"]), float(spec["scale"])), count=COUNTS[spec["count"]],
                n_resamples=int(spec["n_resamples"]), seed=int(spec["boot_seed"]))


def arrays(items: pd.DataFrame) -> dict[tuple, tuple[np.ndarray, dict, np.ndarray | None]]:
    """Row key -> (its values, one entry per item: a column, or rows of two columns; its :data:`SUMMARY` fields;
    each item's unit, or None where items were resampled one by one, as in a file written without units)."""
    out = {}
    for key, part in items.groupby(KEY, sort=False, dropna=False):
        wide = part.pivot(index="item", columns="column", values="value").sort_index().to_numpy(float)
        units = (part.groupby("item")["cluster"].first().sort_index().to_numpy(str) if "cluster" in part
                 else np.full(len(wide), ""))
        out[tuple(key)] = (wide[:, 0] if wide.shape[1] == 1 else wide, part.iloc[0][SUMMARY].to_dict(),
                           None if (units == "").all() else units)
    return out


def key(r: Mapping) -> tuple:
    return tuple(r[c] for c in KEY)


def rebuilt(values: np.ndarray, spec: Mapping, r: Mapping, clusters: np.ndarray | None = None) -> dict:
    """Row ``r`` computed again from its ``values``, summary ``spec`` and units ``clusters`` (:func:`arrays`): its
    key and chance, the value, interval and ``n`` (with one seed, :func:`probekit.studies.lab_pooled.pooled_row` is
    exactly this)."""
    from probekit.studies.lab_pooled import pooled_row

    return pooled_row({0: values}, **summary(spec), clusters={0: clusters}, **labels(r))


def labels(r: Mapping) -> dict:
    """The fields of row ``r`` that name it (:func:`probekit.results.row`'s labels)."""
    chance = r.get("chance")
    return {**{c: r[c] for c in KEY}, "chance": np.nan if chance is None else chance,
            "source": r.get("source", "ours")}


def deciding_rows(line: Mapping) -> list:
    """The rows a line of ``lab_checks`` / ``lab_claims`` decides on: a check's row; a claim's paired difference,
    or its two rows (None where a row was not run)."""
    if "row" in line:
        return [line["row"]]
    return [line["diff"]] if isinstance(line["diff"], Mapping) else [line["a"], line["b"]]


def line_items(result, line: Mapping) -> list[np.ndarray] | None:
    """The per-item values each deciding row of a lab line (a line of ``result.data["lab_checks"]`` or
    ``["lab_claims"]``) was computed from, in :func:`deciding_rows`' order; None when a row was not run or is
    derived (not rebuilt from items: seed 0's only)."""
    found = arrays(result.data.get("lab_items", pd.DataFrame(columns=ITEM_COLUMNS)))
    rows = deciding_rows(line)
    if not all(isinstance(r, Mapping) and key(r) in found for r in rows):
        return None
    return [found[key(r)][0] for r in rows]


__all__ = ["ITEM_COLUMNS", "KEY", "SUMMARY", "arrays", "deciding_rows", "key", "labels", "line_items", "rebuilt",
           "row_items", "statistic_name", "summary"]
