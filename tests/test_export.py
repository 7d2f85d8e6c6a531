"""Results out of the book: ``probekit export`` writes a chapter's result rows and its per-item rows as CSV, JSON or
parquet, and the item rows recompute the chapter's numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import copy_project
from probekit import chapters as ch
from probekit.cli import main
from probekit.results import SchemaError, items_frame, one


def test_item_rows_are_validated():
    rows = items_frame([{"study": "verbs", "probe": "svo", "model": "m", "item_id": 3, "correct": 0.5, "x": 1}])
    assert list(rows.columns) == ["study", "probe", "model", "condition", "item_id", "correct", "x"]
    assert rows.loc[0, "item_id"] == "3" and rows.loc[0, "condition"] == ""
    with pytest.raises(SchemaError, match="'correct'"):
        items_frame([{"study": "verbs", "probe": "svo", "model": "m", "item_id": 1, "correct": 2}])
    with pytest.raises(SchemaError, match="lack column"):
        items_frame([{"study": "verbs", "probe": "svo", "item_id": 1, "correct": 1}])


def test_export_writes_rows_and_items_that_recompute_the_verbs_headline(executed_book, executed_chapter, tmp_path,
                                                                        capsys):
    executed_chapter("verbs")
    project = copy_project(tmp_path / "project", with_outputs=executed_book)
    out = tmp_path / "out"
    assert main(["--root", str(project), "export", "verbs", "--items", "--out", str(out)]) == 0
    rows = pd.read_csv(out / "verbs.results.csv", keep_default_na=False, na_values=[""])
    items = pd.read_csv(out / "verbs.items.csv")
    assert len(rows) == len(pd.read_parquet(ch.results_path(project, "verbs")))
    for model in items["model"].unique():
        for subset in ("all", "verb"):
            head = one(rows, model=model, probe="svo", subset=subset, metric="pairwise", source="ours")
            mine = items[(items["model"] == model) & ((items["type"] == subset) if subset != "all" else True)]
            # the rows leave the notebook with 15 significant digits (report.export), the items exactly
            assert np.isclose(mine["correct"].mean(), head["value"], rtol=1e-14, atol=0) and len(mine) == head["n"]
    assert main(["--root", str(project), "export", "verbs", "--format", "json", "--out", str(out)]) == 0
    records = json.loads((out / "verbs.results.json").read_text())
    assert len(records) == len(rows) and np.isclose(records[0]["value"], rows.loc[0, "value"], rtol=0, atol=1e-15)


def test_export_of_a_chapter_never_executed_is_one_line_and_exit_2(tmp_path, capsys):
    project = copy_project(tmp_path / "project")
    assert main(["--root", str(project), "export", "prednoun", "--items", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "prednoun" in err and "probekit run" in err
    assert not (tmp_path / "o").exists()


def test_the_page_links_its_rows_and_items_for_download(executed_book, executed_chapter):
    from bs4 import BeautifulSoup

    executed_chapter("verbs")
    page = executed_book / "html" / "book" / "chapters" / "verbs.html"
    links = {a["href"]: " ".join(a.get_text(" ", strip=True).split())
             for a in BeautifulSoup(page.read_text(), "html.parser").select("a[href]")}
    for name, label in (("verbs.results.parquet", "result rows"), ("verbs.items.parquet", "item rows")):
        href = next(h for h in links if h.endswith(name))
        assert links[href] == label
        assert pd.read_parquet((page.parent / href).resolve()).equals(pd.read_parquet(executed_book / name))
