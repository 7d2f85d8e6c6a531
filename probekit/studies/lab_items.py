"""The per-item values behind each lab row: what a lab line's verdict was computed from, so it can be pooled over
seeds (:mod:`probekit.studies.lab_pooling`).

A result row computed from items carries them: its interval (:func:`probekit.stats.bootstrap_ci`) holds the values,
the statistic, the resample count and seed, the units it resampled, the item each value is of (its id, where the
metric names its items: an item id, a pair id; else by position) and how the row counts and scales them
(:class:`probekit.stats.Items`), and :func:`probekit.results.row` keeps them in the row's
:data:`~probekit.results.ITEMS` column, which travels with the row while the study selects, renames and
concatenates its rows.  A study's lab :func:`split` s its rows into the rows and their items as a long table
(:data:`ITEM_COLUMNS`: the row's key, how to summarise the values, one line per entry, with the unit its interval
resampled, ``cluster``, where it had ``clusters``).  :func:`rebuilt` computes the row again from its values
(exactly: the same statistic, resamples and seed), :func:`line_items` gives a lab line's arrays.

A row without items is **derived** and stays seed 0's only: it is not a statistic of item values with a bootstrap
interval (e.g. a Fisher interval, a row copied from a table) or its statistic is not an importable function (a
lambda).  :func:`split` names each such row with an interval (:attr:`LabRows.derived`), which the study keeps
(:attr:`LabRows.kept`): a line deciding on it is not pooled (its note says so) and its verdict line is marked
``derived`` (:func:`probekit.studies.lab_holm.lines`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from probekit.registry import load
from probekit.results import ITEMS, Row, StudyResult, empty, without_items
from probekit.stats import Items
from probekit.studies import lab
from probekit.studies.lab import Check, PaperClaim

#: a lab row's key: the result-schema columns that name it
KEY = ["study", "probe", "model", "condition", "subset", "metric"]
Key = tuple[Any, ...]   # a row's values of KEY, in order
#: :func:`arrays`: row key -> (its values, its SUMMARY fields, each item's unit or None, each item's id or None)
Arrays = dict[Key, tuple[np.ndarray, dict[str, Any], "np.ndarray | None", "np.ndarray | None"]]
#: how a row's values are summarised: ``statistic`` ("module:function"), ``count`` ("len" or "finite": the row's
#: ``n``), ``scale`` (1, or 100 for a row in points) and the bootstrap's ``n_resamples`` and ``boot_seed``
SUMMARY = ["statistic", "count", "scale", "n_resamples", "boot_seed"]
#: :func:`split`'s items' columns: a row's key and summary, then one line per entry of its values (``item`` the row of
#: the values, ``item_id`` the item it is of as text, "" where the row named its items by position only
#: (:attr:`probekit.stats.Items.ids`), ``column`` its column: 0 for one value per item, 0/1 for a two-column array
#: such as Table 4's avg; ``cluster`` the item's unit of the cluster bootstrap as text, "" where items were
#: resampled one by one)
ITEM_COLUMNS = [*KEY, *SUMMARY, "item", "item_id", "column", "cluster", "value"]
COUNTS = {"len": len, "finite": lambda v: int(np.isfinite(np.asarray(v, float)).sum())}


def statistic_name(fn: Callable[..., Any]) -> str | None:
    """"module:name" that :func:`probekit.registry.load` turns back into ``fn``; None when there is none (a lambda,
    a partial)."""
    name = f"{getattr(fn, '__module__', '')}:{getattr(fn, '__qualname__', '')}"
    try:
        return name if load(name) is fn else None
    except (ImportError, AttributeError, ValueError):
        return None


@dataclass(frozen=True)
class LabRows:
    """A lab's rows (the result schema, without :data:`~probekit.results.ITEMS`), the values behind them
    (:data:`ITEM_COLUMNS`) and the keys of the rows with an interval but without items (derived, seed 0's only)."""
    rows: pd.DataFrame
    items: pd.DataFrame
    derived: tuple[Key, ...]

    @property
    def kept(self) -> dict[str, Any]:
        """What a study keeps of them in its data beside its lab rows: ``lab_items`` and ``lab_derived``."""
        return {"lab_items": self.items, "lab_derived": self.derived}


def lab_data(found: LabRows | None, checks: list[Check], claims: list[PaperClaim]) -> dict[str, Any]:
    """A study's lab data: ``lab`` (the lab's rows; empty where it did not run, ``found`` None), what it keeps of their
    items (:attr:`LabRows.kept`; nothing where it did not run, so that seed pooling leaves it alone) and
    ``lab_checks`` and ``lab_claims``: ``checks`` and ``claims`` judged on those rows (:func:`probekit.studies.lab.checks`,
    :func:`~probekit.studies.lab.claims`)."""
    rows = empty() if found is None else found.rows
    return {"lab": rows, **({} if found is None else found.kept),
            "lab_checks": lab.checks(rows, checks), "lab_claims": lab.claims(rows, claims)}


def _long(r: Row, found: Items) -> pd.DataFrame:
    """Row ``r``'s items, one line per entry of its values (:data:`ITEM_COLUMNS`)."""
    values = np.asarray(found.values, float).reshape(len(found.values), -1)
    item, column = np.indices(values.shape)
    units, ids = (np.full(len(values), "") if v is None else np.asarray(v).astype(str)
                  for v in (found.clusters, found.ids))
    return pd.DataFrame({
        **{c: r[c] for c in KEY}, "statistic": statistic_name(found.statistic), "count": found.count,
        "scale": float(found.scale), "n_resamples": int(found.n_resamples), "boot_seed": int(found.seed),
        "item": item.ravel(), "item_id": ids[item.ravel()], "column": column.ravel(), "cluster": units[item.ravel()],
        "value": values.ravel()})


def split(rows: pd.DataFrame) -> LabRows:
    """A lab's ``rows`` (with the :data:`~probekit.results.ITEMS` each was computed from, where it was) as
    :class:`LabRows`: the rows, the items of each row with a finite value and interval whose statistic can be
    named (:func:`statistic_name`), and the keys of the other rows with a finite interval (derived)."""
    parts, derived = [], []
    for _, r in rows.iterrows():
        if not np.isfinite([r["value"], r["ci_low"], r["ci_high"]]).all():
            continue
        found = r.get(ITEMS)
        if isinstance(found, Items) and statistic_name(found.statistic):
            parts.append(_long(r, found))
        else:
            derived.append(key(r))
    items = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ITEM_COLUMNS)
    return LabRows(without_items(rows), items, tuple(derived))


def _scaled(fn: Callable[[np.ndarray], float], scale: float) -> Callable[[np.ndarray], float]:
    return fn if scale == 1 else lambda v: scale * fn(v)


def summary(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A row's summary (one line of :func:`split`'s items or its :data:`SUMMARY` fields) as the ``row_args`` of
    :func:`probekit.studies.lab_pooled.pooled_row` / ``seed_rows``: ``statistic``, ``count``, ``n_resamples``,
    ``seed``."""
    return dict(statistic=_scaled(load(spec["statistic"]), float(spec["scale"])), count=COUNTS[spec["count"]],
                n_resamples=int(spec["n_resamples"]), seed=int(spec["boot_seed"]))


def arrays(items: pd.DataFrame) -> Arrays:
    """Row key -> (its values, one entry per item: a column, or rows of two columns; its :data:`SUMMARY` fields;
    each item's unit, or None where items were resampled one by one, as in a file written without units; each
    item's id, or None where the row named its items by position only, as in a file written without ids)."""
    out: Arrays = {}
    for key, part in items.groupby(KEY, sort=False, dropna=False):
        wide = part.pivot(index="item", columns="column", values="value").sort_index().to_numpy(float)
        units, ids = (_per_item(part, c, len(wide)) for c in ("cluster", "item_id"))
        out[tuple(key)] = (wide[:, 0] if wide.shape[1] == 1 else wide, part.iloc[0][SUMMARY].to_dict(), units, ids)
    return out


def _per_item(part: pd.DataFrame, column: str, n: int) -> np.ndarray | None:
    """Each of a row's ``n`` items' text in ``column`` of its lines, in item order; None where it is "" throughout
    or the table has no such column."""
    found = part.groupby("item")[column].first().sort_index().to_numpy(str) if column in part else np.full(n, "")
    return None if (found == "").all() else found


def key(r: Row) -> Key:
    return tuple(r[c] for c in KEY)


def rebuilt(values: np.ndarray, spec: Mapping[str, Any], r: Row, clusters: np.ndarray | None = None) -> dict[str, Any]:
    """Row ``r`` computed again from its ``values``, summary ``spec`` and units ``clusters`` (:func:`arrays`): its
    key and chance, the value, interval and ``n`` (with one seed, :func:`probekit.studies.lab_pooled.pooled_row` is
    exactly this)."""
    from probekit.studies.lab_pooled import pooled_row

    return pooled_row({0: values}, **summary(spec), clusters={0: clusters}, **labels(r))


def labels(r: Row) -> dict[str, Any]:
    """The fields of row ``r`` that name it (:func:`probekit.results.row`'s labels)."""
    chance = r.get("chance")
    return {**{c: r[c] for c in KEY}, "chance": np.nan if chance is None else chance,
            "source": r.get("source", "ours")}


def deciding_rows(line: Row) -> list[Row | None]:
    """The rows a line of ``lab_checks`` / ``lab_claims`` decides on: a check's row; a claim's paired difference,
    or its two rows (None where a row was not run)."""
    if "row" in line:
        return [line["row"]]
    return [line["diff"]] if isinstance(line["diff"], Mapping) else [line["a"], line["b"]]


def line_items(result: StudyResult, line: Row) -> list[np.ndarray] | None:
    """The per-item values each deciding row of a lab line (a line of ``result.data["lab_checks"]`` or
    ``["lab_claims"]``) was computed from, in :func:`deciding_rows`' order; None when a row was not run or is
    derived (not rebuilt from items: seed 0's only)."""
    found = arrays(result.data.get("lab_items", pd.DataFrame(columns=ITEM_COLUMNS)))
    rows = deciding_rows(line)
    known = [r for r in rows if isinstance(r, Mapping) and key(r) in found]
    if len(known) < len(rows):
        return None
    return [found[key(r)][0] for r in known]


__all__ = ["ITEM_COLUMNS", "KEY", "SUMMARY", "Arrays", "Key", "LabRows", "arrays", "deciding_rows", "key", "labels",
           "line_items",
           "rebuilt", "split", "statistic_name", "summary"]
