"""The tables once wider than their box at 1,280 px, reshaped (probekit/report/long_tables.py, the lab's two
tables in probekit/report/lab.py), rendered by ``report.show_table`` with the book's CSS and measured in headless
Chromium: at 1,280 px none is wider than its box, and each still holds every number it did.

The conceptual and masking tables are built from the committed result files, as the chapters build them.  The lab
tables are rebuilt from the committed verdict lines (``<study>.lab.parquet``) and the chapters' own check and claim
definitions: a line keeps the rows it was decided on but not their chance level, so each check's row is given one of
the same width ("50.0%"), and a claim decided on a paired difference shows that row on both sides.  The verbs
coverage table's records (scoring, not results) are hand-made like the page's, with the long head names of a real
checkpoint and every kind of dropped row."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pandas as pd
import pytest

from browser import browser, measure, output, page  # noqa: F401 (browser: the fixture)
from probekit.report import lab as lab_report, long_tables, show, table
from probekit.results import load, select
from probekit.studies import lab, lab_holm
from probekit.studies.conceptual.study import readings_table

CHAPTERS = Path(__file__).resolve().parents[1] / "book" / "chapters"


def _lines(study: str, kind: str) -> pd.DataFrame:
    lines = pd.read_parquet(CHAPTERS / f"{study}.lab.parquet")
    return lines[lines["kind"] == kind].reset_index(drop=True)


def _checks(study: str) -> pd.DataFrame:
    """The study's checks as its lab found them, from its committed verdict lines."""
    out = []
    for c, line in zip(importlib.import_module(f"probekit.studies.{study}.lab").CHECKS, _lines(study, "check").iloc):
        rows = json.loads(line["rows"])
        row = {**rows[0], "chance": 0.5} if rows else None
        expected = None if line["verdict"] == lab.BY_DESIGN else lab.EXPECTED[c.role]
        out.append(dict(model=c.model, role=c.role, what=c.what, row=row, verdict=line["verdict"], expected=expected,
                        ok=expected is None or line["verdict"] == expected))
    return pd.DataFrame(out)


def _claims(study: str) -> pd.DataFrame:
    """The study's claims as its lab found them, from its committed verdict lines."""
    out = []
    for c, line in zip(importlib.import_module(f"probekit.studies.{study}.lab").CLAIMS, _lines(study, "claim").iloc):
        rows = json.loads(line["rows"]) or [None]
        a, b = ({**r, "chance": None, "condition": side[1].get("condition", "")} if r else None
                for r, side in zip((rows * 2)[:2] if len(rows) < 2 else rows, (c.a, c.b)))
        out.append(dict(claim=c.claim, source=c.source, a_model=c.a[0], b_model=c.b[0], a=a, b=b,
                        diff=rows[0] if c.diff else None, expect=c.expect, margin=c.margin, reason=c.reason,
                        gains=[], chance_floor=c.chance_floor, paper_effect=c.paper_effect, verdict=line["verdict"]))
    return pd.DataFrame(out)


def _coverage() -> pd.DataFrame:
    counts = dict(rows=1240, scored=1200, missing_pos_image=12, missing_neg_image=20, unreadable_image=3,
                  mixed_flags=5, **{"unreadable images": 2, "triplets kept": 41, "verbs ranked": 24})
    return pd.DataFrame({
        "toy-vilt": dict(family="vilt", head="match", **{"scored as": "ITM at threshold 0.5", "head of checkpoint":
                         "match: sigmoid of ViltForImageAndTextRetrieval's single rank logit; checkpoint toy:toy-vilt"},
                         **counts, images=""),
        "clip-vit-b32": dict(family="clip", head="similarity", **{"scored as": "choice of image (pairwise)",
                             "head of checkpoint": "similarity: logit_scale x cosine of projected CLS/pooled "
                                                   "embeddings; checkpoint openai/clip-vit-base-patch32"},
                             **{**counts, "missing_pos_image": 0},
                             images="images preprocessed in the loader: clip does not run on cuda tensors (its "
                                    "pixels came back on cpu)"),
    }).T


def _tables() -> dict[str, pd.DataFrame]:
    """Every reshaped table, by the caption it is shown under."""
    conceptual, masking = (load(CHAPTERS / f"{s}.results.parquet") for s in ("conceptual", "masking"))
    ours = select(conceptual, source="ours")
    single = long_tables.probe_b(select(ours, probe=["probe-b-single", "probe-b-single-pooled"]))
    multi = long_tables.probe_b(select(ours, probe=["probe-b", "probe-b-pooled"]))
    itm = select(masking, probe="itm", source="ours")
    shown = {"verbs: per model, the head": long_tables.coverage(_coverage()),
             "masking: ITM accuracy on verb negatives": long_tables.by_condition(
                 select(itm, subset="verb"), ["avg_pooled", "pos", "neg"], with_n=True),
             "masking: ITM accuracy on all negative types": long_tables.by_condition(
                 select(itm, subset="all"), ["avg", "avg_pooled", "pos", "neg"], with_n=True),
             "conceptual: single-object views": single[0], "conceptual: single-object view pairs": single[1],
             "conceptual: multi-object views": multi[0], "conceptual: multi-object view pairs": multi[1],
             "conceptual: rows as printed and with the reading undone": long_tables.readings(
                 readings_table(conceptual))}
    for study in ("verbs", "prednoun", "masking", "conceptual"):
        checks, claims = lab_holm.family(_checks(study), _claims(study))   # as the study's run judged them
        shown[f"{study}: knock-out and blind checks"] = lab_report.checks_table(checks, study)
        shown[f"{study}: the papers' claims"] = lab_report.claims_table(claims, study)
    return shown


def test_every_reshaped_table_fits_its_box_at_1280_px(browser, monkeypatch, tmp_path):
    tables = _tables()
    html: list[str] = []
    monkeypatch.setattr(show, "display", lambda obj: html.append(output(obj.data)))
    for caption, shown in tables.items():
        show.show_table(shown, caption=caption)
    got = measure(browser, page(tmp_path / "tables.html", "".join(html)), 1280)
    assert got["tables"] == len(tables)
    assert got["wide"] == [], f"wider than their box at 1280 px: {got['wide']}"


def test_the_measurement_sees_the_old_wide_single_object_table(browser, monkeypatch, tmp_path):
    """The single-object table as the chapter showed it (model × filler by metric and view, twelve columns) is
    wider than its box at 1,280 px, measured the same way."""
    ours = select(load(CHAPTERS / "conceptual.results.parquet"), source="ours",
                  probe=["probe-b-single", "probe-b-single-pooled"])
    html: list[str] = []
    monkeypatch.setattr(show, "display", lambda obj: html.append(output(obj.data)))
    show.show_table(table(ours, ["model", "condition"], ["metric", "subset"], digits=2), caption="single-object")
    got = measure(browser, page(tmp_path / "old.html", html[0]), 1280)
    assert got["wide"] == ["single-object"]


def test_the_reshaped_tables_keep_every_number():
    """Each reshaped table holds the cells of the wide one it replaces: the same numbers, none lost or doubled."""
    conceptual = load(CHAPTERS / "conceptual.results.parquet")
    single = select(conceptual, source="ours", probe=["probe-b-single", "probe-b-single-pooled"])
    wide = table(single, ["model", "condition"], ["metric", "subset"], digits=2)
    views, pairs = long_tables.probe_b(single)
    assert sorted(_cells(wide)) == sorted(_cells(views) + _cells(pairs))
    readings = readings_table(conceptual)
    assert sorted(_cells(table(readings, ["model", "probe", "subset"], ["source", "metric"], digits=2))) == \
        sorted(_cells(long_tables.readings(readings)))
    itm = select(load(CHAPTERS / "masking.results.parquet"), probe="itm", source="ours", subset="verb")
    assert sorted(_cells(table(itm, ["model", "condition"], "metric", with_n=True))) == \
        sorted(_cells(long_tables.by_condition(itm, ["avg_pooled", "pos", "neg"], with_n=True)))


def _cells(t: pd.DataFrame) -> list[str]:
    return [v for v in t.to_numpy().ravel() if v != ""]


def test_the_coverage_table_says_each_dropped_row_and_image_and_none_when_nothing_was():
    shown = long_tables.coverage(_coverage())
    assert shown.loc["toy-vilt", "rows scored"] == "1200 of 1240"
    assert shown.loc["toy-vilt", "rows dropped"] == ("12 for a missing positive image; 20 for a missing negative "
                                                     "image; 3 for an unreadable image; 5 for a mixed flag set; "
                                                     "2 unreadable images")
    assert shown.loc["clip-vit-b32", "rows dropped"].startswith("20 for a missing negative image")
    nothing = _coverage().assign(**{k: 0 for k in [*long_tables.DROPPED, "unreadable images"]}, images="")
    assert set(long_tables.coverage(nothing)["rows dropped"]) == {"none"}
    assert "images" not in long_tables.coverage(nothing).columns
