"""The one shape of every result in probekit: tidy rows of :data:`COLUMNS`, and what a study returns.

Every metric returns rows of this schema, the papers' reported numbers are rows of it (``source`` names the
paper), and every chapter saves its rows beside its notebook for the summary page.

=========  =====================================================================================================
column     meaning
=========  =====================================================================================================
study      the chapter: ``verbs``, ``prednoun``, ``masking``, ``conceptual``
probe      the probe or table inside the study (e.g. ``svo``, ``probe-r``, ``table1``)
model      registry name (ours) or the paper's model name (``source`` != ``ours``)
condition  how the input was changed (e.g. ``full``, ``cropped``, ``subject ablated``, a filler); ``""`` if none
subset     which items (e.g. a negative type, a verb, a concept, ``all``)
metric     what was computed (e.g. ``pos``, ``neg``, ``avg``, ``pairwise``, ``pair_accuracy``, ``group``, ``r``)
value      the number, as a fraction for accuracies and probabilities (percent only in the report layer)
ci_low     lower end of its 95% interval (NaN when there is none, e.g. a paper's number)
ci_high    upper end of its 95% interval
n          how many units the value is computed over (NaN/-1 unknown: a paper's number without its count)
chance     what a model answering at random gets (NaN where the metric has no chance level)
source     ``ours``, or the paper the row is copied from (e.g. ``Hendricks & Nematzadeh 2021, Table 4``)
=========  =====================================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np
import pandas as pd

from probekit.stats import ITEMS as ITEMS   # re-exported: the rows' column of their items

if TYPE_CHECKING:
    from probekit.claims import Claim

COLUMNS = ["study", "probe", "model", "condition", "subset", "metric", "value", "ci_low", "ci_high", "n",
           "chance", "source"]
KEYS = ["study", "probe", "model", "condition", "subset", "metric", "source"]  # the text columns: what a row is
OURS = "ours"
#: an optional column after :data:`COLUMNS`: what each row was computed from (:class:`probekit.stats.Items`, carried
#: by its interval, :func:`row`), None for a row that was not (a paper's, a derived one).  It travels with the rows
#: while a study computes them (selected, renamed, concatenated) and never leaves it: a study's lab keeps it as its
#: items table (:func:`probekit.studies.lab_items.split`), :class:`StudyResult` and :func:`save` drop it
_FLOAT = ["value", "ci_low", "ci_high", "chance"]
#: one result row as a study reads it: a row of a results frame (a pd.Series, read by column) or its dict
Row = Mapping[str, Any]
MaybeRow = Row | None   # a row, or None where the run produced none
#: columns and the values they must hold (:func:`select`'s keywords), e.g. a study's headline
Where = dict[str, Any]


class SchemaError(ValueError):
    """Rows that do not fit the result schema; the message names the column and the fix."""


def row(*, study: str, probe: str, model: str, metric: str, value: float, condition: str = "", subset: str = "all",
        ci: tuple[float, float] = (np.nan, np.nan), n: int | float = np.nan, chance: float = np.nan,
        source: str = OURS) -> dict[str, Any]:
    """One result row as a dict (keyword-only, so a call names every field it sets); an interval that carries its
    items (:func:`probekit.stats.bootstrap_ci`'s) gives the row its :data:`ITEMS`."""
    items = getattr(ci, "items", None)
    return dict(study=study, probe=probe, model=model, condition=condition, subset=subset, metric=metric,
                value=float(value), ci_low=float(ci[0]), ci_high=float(ci[1]), n=n, chance=float(chance),
                source=source, **({} if items is None else {ITEMS: items}))


def frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, **defaults: Any) -> pd.DataFrame:
    """Rows -> a validated DataFrame with exactly :data:`COLUMNS` in order.

    ``defaults`` fill columns the rows do not set (e.g. ``study="verbs"``); a column still missing, an unknown
    column, a non-numeric value or an interval that does not hold its value raises :class:`SchemaError`.
    """
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if df.empty and not len(df.columns):
        df = pd.DataFrame(columns=COLUMNS)
    for key, value in defaults.items():
        if key not in df.columns:
            df[key] = value
        else:
            df[key] = df[key].fillna(value) if value is not None else df[key]
    for key, value in (("condition", ""), ("subset", "all"), ("ci_low", np.nan), ("ci_high", np.nan),
                       ("n", np.nan), ("chance", np.nan), ("source", OURS)):
        if key not in df.columns:
            df[key] = value
    missing = [c for c in COLUMNS if c not in df.columns]
    extra = [c for c in df.columns if c not in (*COLUMNS, ITEMS)]
    if missing:
        raise SchemaError(f"result rows lack column(s) {missing}; every metric row needs {COLUMNS}")
    if extra:
        raise SchemaError(f"result rows have column(s) {extra} outside the schema {COLUMNS}; keep per-item "
                          "details in StudyResult.data, not in the rows")
    df = df[[*COLUMNS, *([ITEMS] if ITEMS in df.columns else [])]].reset_index(drop=True)
    if ITEMS in df.columns:   # a row concatenated from a frame without items: None, not NaN
        df[ITEMS] = df[ITEMS].astype(object).where(df[ITEMS].notna(), None)
    for c in KEYS:
        df[c] = df[c].fillna("").astype(str)
    for c in _FLOAT + ["n"]:
        try:
            df[c] = pd.to_numeric(df[c]).astype(float)
        except (TypeError, ValueError) as err:
            raise SchemaError(f"result column {c!r} must be numeric ({err})") from None
    bad = df[(df["ci_low"] > df["value"] + 1e-9) | (df["ci_high"] < df["value"] - 1e-9)]
    if len(bad):
        r = bad.iloc[0]
        raise SchemaError(f"interval [{r.ci_low}, {r.ci_high}] does not hold value {r.value} "
                          f"({r.study}/{r.probe}/{r.model}/{r.condition}/{r.subset}/{r.metric})")
    return df


def without_items(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` without their :data:`ITEMS` column."""
    return rows.drop(columns=ITEMS, errors="ignore")


def empty() -> pd.DataFrame:
    return frame([])


def concat(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Several row frames -> one validated frame."""
    parts = [p for p in parts if p is not None and len(p)]
    return frame(pd.concat(parts, ignore_index=True)) if parts else empty()


def select(rows: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """Rows whose columns equal the given values (a list/tuple/set value means "one of")."""
    mask = pd.Series(True, index=rows.index)
    for key, value in where.items():
        if key not in rows.columns:
            raise SchemaError(f"select: no column {key!r}; columns are {list(rows.columns)}")
        mask &= rows[key].isin(list(value)) if isinstance(value, (list, tuple, set, frozenset)) else rows[key] == value
    return rows[mask]


def one(rows: pd.DataFrame, **where: Any) -> pd.Series:
    """The single row matching ``where``; a clear error when none or several match."""
    found = select(rows, **where)
    if len(found) != 1:
        raise KeyError(f"{len(found)} result rows match {where}; expected exactly one")
    return found.iloc[0]


def one_or_none(rows: pd.DataFrame, **where: Any) -> pd.Series | None:
    """The single row matching ``where``, or None when none or several match (a claim then says nothing)."""
    found = select(rows, **where)
    return found.iloc[0] if len(found) == 1 else None


#: the columns every per-item row has (one row per scored item, model and condition); a study adds its own after
#: them (texts, image paths, scores, prediction).  ``correct`` is what the item adds to its accuracy (1, 0, 1/2
#: for a tie scored half), NaN where the item was not scored; a study's accuracies are means of it.  Each study's
#: ``FROM_ITEMS`` says which column, over which rows, its headlines average (:class:`FromItems`).
ITEM_COLUMNS = ["study", "probe", "model", "condition", "item_id", "correct"]


def items_frame(items: pd.DataFrame | Iterable[Mapping[str, Any]], **defaults: Any) -> pd.DataFrame:
    """Per-item rows -> a validated DataFrame with :data:`ITEM_COLUMNS` first (``defaults`` fill missing ones;
    ``condition`` defaults to "")."""
    df = items.copy() if isinstance(items, pd.DataFrame) else pd.DataFrame(list(items))
    if df.empty and not len(df.columns):
        df = pd.DataFrame(columns=ITEM_COLUMNS)
    for key, value in {"condition": "", **defaults}.items():
        if key not in df.columns:
            df[key] = value
    missing = [c for c in ITEM_COLUMNS if c not in df.columns]
    if missing:
        raise SchemaError(f"item rows lack column(s) {missing}; every item row needs {ITEM_COLUMNS}")
    for c in ITEM_COLUMNS[:5]:
        df[c] = df[c].astype(str)
    df["correct"] = pd.to_numeric(df["correct"]).astype(float)
    if ((df["correct"] < 0) | (df["correct"] > 1)).any():
        raise SchemaError("item column 'correct' must lie in [0, 1] (NaN: not scored)")
    return df[ITEM_COLUMNS + [c for c in df.columns if c not in ITEM_COLUMNS]].reset_index(drop=True)


def concat_items(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Several item-row frames -> one validated frame (no parts: an empty one), as :func:`concat` for rows."""
    parts = [p for p in parts if p is not None]
    return items_frame(pd.concat(parts, ignore_index=True) if parts else [])


@dataclass(frozen=True)
class FromItems:
    """How a study's result row is rebuilt from its item rows (``probekit export --items``): the mean of ``column``
    over one model's item rows whose columns equal ``where`` (NaN entries left out: items not scored, or a pair
    counted on another row); with ``minus``, a paired difference: per ``item_id``, the value under ``where`` minus
    the value under ``minus``, averaged over the items both hold.  Each study lists its headlines' in
    ``FROM_ITEMS`` (:attr:`probekit.studies.Study.from_items`)."""

    where: Mapping[str, str]
    column: str = "correct"
    minus: Mapping[str, str] | None = None

    def value(self, items: pd.DataFrame, model: str) -> float:
        def part(where: Mapping[str, str]) -> pd.Series:
            mask = items["model"] == model
            for key, wanted in where.items():  # a column the rows lack (``cue`` off the toy world): none match
                mask &= (items[key] == wanted) if key in items else False
            return items[mask].set_index("item_id")[self.column]
        picked = part(self.where) if self.minus is None else part(self.where) - part(self.minus)
        return float(picked.dropna().mean())


def save(rows: pd.DataFrame, path: str | Path) -> Path:
    """Write rows as parquet (atomically: a reader never sees half a file)."""
    from probekit.files import replaced
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced(path) as tmp:
        without_items(frame(rows)).to_parquet(tmp, index=False)
    return path


def load(path: str | Path) -> pd.DataFrame:
    return frame(pd.read_parquet(path))


@dataclass
class StudyResult:
    """What ``probekit.studies.<study>.run`` returns.

    ``rows``: every number of the study in the result schema, ours and the papers'.
    ``data``: what figures and example panels need beyond the rows (per-item tables, image paths, matrices).
    ``facts``: counts and settings the page states (dataset sizes, skipped items, which head scored what), a frozen
    dataclass of the study's own (e.g. :class:`probekit.studies.verbs.study.VerbsFacts`), read as attributes
    (``result.facts.rows``) so that a misspelt name fails in a unit test, not on the executed page.
    ``claims``: the discussion's sentences, each a :class:`probekit.claims.Claim` computed from ``rows``.
    ``items``: one row per scored item of ours (:data:`ITEM_COLUMNS`, then the study's own columns), exported
    beside the page as ``<chapter>.items.parquet`` (``probekit export --items``).
    ``lab_lines``: its lab's verdict lines, judged once by the run (:func:`probekit.studies.lab_holm.judge`), which
    the page's findings and data file read; empty for a run without a lab.
    """

    study: str
    params: dict[str, Any]
    rows: pd.DataFrame
    data: dict[str, Any] = field(default_factory=dict)
    facts: Any = None
    claims: list[Claim] = field(default_factory=list)
    items: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=ITEM_COLUMNS))
    lab_lines: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __post_init__(self) -> None:
        self.rows = without_items(self.rows)   # what the rows were computed from stays in the study (ITEMS)

    def ours(self) -> pd.DataFrame:
        return self.rows[self.rows["source"] == OURS]

    def reported(self) -> pd.DataFrame:
        return self.rows[self.rows["source"] != OURS]
