"""Tables the chapters once showed wide, in long format or with fewer columns, so that each fits the text column
(or the page's full width) at 1,280 px: the verbs chapter's coverage per model, the masking chapter's ITM accuracy
per condition, the conceptual chapter's Probe-B views and view pairs, and its two readings of the paper's rows."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from probekit.papers.conceptual import UNDONE
from probekit.report.format import table

#: the verbs coverage record's counts of rows dropped whole (:func:`probekit.metrics.itm.coverage`), in words
DROPPED = {"missing_pos_image": "a missing positive image", "missing_neg_image": "a missing negative image",
           "unreadable_image": "an unreadable image", "mixed_flags": "a mixed flag set"}


def coverage(records: pd.DataFrame) -> pd.DataFrame:
    """Per model (the verbs study's ``data["coverage"]``, one record per model): the head that answered with its
    checkpoint, family and how it was scored, in one cell; rows scored of all, rows dropped whole and why ("none" when no row
    and no image was), and the triplets kept with the verbs they rank (and the loader's note on the images)."""
    def dropped(r) -> str:
        why = [f"{int(r[k])} for {words}" for k, words in DROPPED.items() if int(r[k])]
        images = int(r["unreadable images"])
        return "; ".join(why + ([f"{images} unreadable image{'s' if images != 1 else ''}"] if images else [])) or "none"
    out = pd.DataFrame({
        "head (checkpoint; family; scored as)": [f"{r['head of checkpoint']}; {r['family']} family; scored as "
                                                 f"{r['scored as']}" for _, r in records.iterrows()],
        "rows scored": [f"{int(r['scored'])} of {int(r['rows'])}" for _, r in records.iterrows()],
        "rows dropped": [dropped(r) for _, r in records.iterrows()],
        "triplets kept, verbs ranked": [f"{int(t)} triplets, {int(v)} verbs" for t, v in
                                        zip(records["triplets kept"], records["verbs ranked"])],
    }, index=pd.Index(records.index, name="model"))
    if "images" in records and records["images"].astype(bool).any():
        out["images"] = records["images"]
    return out


def by_condition(rows: pd.DataFrame, metrics: Sequence[str], with_n: bool = False) -> pd.DataFrame:
    """ITM accuracy rows as model × metric by condition, one column per image condition: each model's rows
    together, in the order the models come, its metrics in ``metrics``' order (any other after them)."""
    models = {m: k for k, m in enumerate(dict.fromkeys(rows["model"]))}
    rank = {m: k for k, m in enumerate(metrics)}
    ordered = rows.assign(_model=rows["model"].map(models), _metric=rows["metric"].map(rank).fillna(len(rank)))
    ordered = ordered.sort_values(["_model", "_metric"], kind="stable")
    return table(ordered, index=["model", "metric"], columns="condition", with_n=with_n)


def probe_b(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Probe-B rows as two tables: model × filler by view (mAP or accuracy of x0, x̃0, x̃1), and model × filler ×
    view pair by metric (γ, its median, Δc): the pair metrics side by side, not one column per metric and pair."""
    pairs = rows["subset"].str.startswith("(")
    views = table(rows[~pairs], ["model", "condition"], ["metric", "subset"], digits=2)
    return views, table(rows[pairs], ["model", "condition", "subset"], "metric", digits=2)


#: the columns of the readings table: the paper's row as printed, with the reading undone, ours as its code reads
READINGS = ("as printed", "reading undone", "ours, as the authors' code reads")


def readings(rows: pd.DataFrame, undone: str = UNDONE) -> pd.DataFrame:
    """The readings table (:func:`probekit.studies.conceptual.study.readings_table`) in long format: model × probe (with the
    paper's table) × metric × view by reading — the paper's row as printed, with the reading undone (its source ends
    with ``undone``), and ours as the authors' code reads it (probe "… (authors' code)")."""
    ours = rows["source"] == "ours"
    reading = [READINGS[2] if o else READINGS[1] if s.endswith(undone) else READINGS[0]
               for o, s in zip(ours, rows["source"])]
    table_of = rows["source"].str.removesuffix(undone).str.rsplit(", ", n=1).str[-1]
    probe = [p.removesuffix(" (authors' code)") + ("" if o else f" ({t})")
             for p, o, t in zip(rows["probe"], ours, table_of)]
    long = rows.assign(reading=reading, probe=probe)
    return table(long, ["model", "probe", "metric", "subset"], "reading", digits=2, order={"reading": list(READINGS)})
