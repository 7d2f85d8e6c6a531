"""The verbs chapter executed on the toy world (the session's executed book), and re-executed with new parameters:
its exported rows are the study's, and its page has the tables and figures those rows call for."""

from __future__ import annotations


import nbformat
import pandas as pd

from probekit import chapters as ch
from probekit.report.show import TABLE_CLASS
from probekit.results import load, select
from probekit.studies.verbs import study as verbs
from conftest import copy_project, notebook_images, notebook_text, toy_params

TABLE4, TABLE5 = "Hendricks & Nematzadeh 2021, Table 4", "Hendricks & Nematzadeh 2021, Table 5"


def tables(nb) -> int:
    """How many tables (``report.show_table``, each whole) the page shows."""
    html = "".join(str(out.get("data", {}).get("text/html", "")) for cell in nb.cells for out in cell.get("outputs", []))
    return html.count(f'class="{TABLE_CLASS}"')


def expected_page(rows: pd.DataFrame, lab: bool) -> tuple[int, int]:
    """(tables, figures) the chapter shows for its exported rows; ``lab``: the lab ran its default models (then it
    draws the Table 5 comparison)."""
    ours = rows[rows["source"] == "ours"]
    thresholded = select(ours, metric="avg")["model"].nunique()
    with_verbs = select(ours, probe="svo-verbs")["model"].nunique()
    # tables: overview, coverage; Table 4 + n; paper and its n; pairwise; per verb; Table 6; lab checks, claims
    n_tables = 2 + (2 if thresholded else 0) + 2 + 1 + with_verbs + 1 + 2
    # figures: the findings' headline figure; ours vs the paper per thresholded model; pairwise; per verb; the lab's
    # Table 5 comparison
    return n_tables, 1 + thresholded + 1 + with_verbs + lab


def test_chapter_exports_the_studys_rows_and_shows_them(executed_chapter, executed_book):
    nb = executed_chapter("verbs")
    rows = load(executed_book / "verbs.results.parquet")   # the file the chapter's last call wrote
    assert rows is not None and set(rows["study"]) == {"verbs"}
    assert set(rows[rows["source"] == "ours"]["model"]) == {"toy-vilt", "toy-clip"}
    assert {TABLE4, TABLE5} <= set(rows["source"])
    assert set(select(rows, source="ours", model="toy-vilt", metric="avg")["condition"]) == {"threshold 0.5"}
    assert set(select(rows, source="ours", model="toy-clip", probe="svo")["metric"]) == {"pairwise"}
    # the page's numbers are exactly what the study computes with the same parameters (warm score cache)
    params, _ = toy_params(executed_book / "project", executed_book / "data")
    again = verbs.run(verbs.Params(**params["verbs"])).rows
    pd.testing.assert_frame_equal(rows.reset_index(drop=True), again.reset_index(drop=True))
    assert (tables(nb), notebook_images(nb)) == expected_page(rows, lab=True)
    # the lab sections show the checks and the claims with their verdicts (never a zoo number here)
    text = notebook_text(nb)
    assert "target probe, its information scrambled in training" in text and "blind (text only)" in text
    assert "`toy-clip-noverb` scrambles the verb in training rather than removing it" in text
    assert "decided by construction" in text
    assert not [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("name") == "stderr"]


def test_chapter_reruns_with_new_threshold_and_verb_filter(executed_book, tmp_path):
    project = copy_project(tmp_path / "project", with_outputs=executed_book)
    params, _ = toy_params(project, executed_book / "data")  # same items, warm score cache
    new = ch.resolve("verbs", {**params["verbs"], "models": ["toy-vilt"], "threshold": 0.7,
                                        "min_triplet_negatives": 3, "top_k": 2, "lab_models": []})
    nb = nbformat.read(ch.execute(project, "verbs", new, progress=False, log=lambda msg: None), as_version=4)
    rows = load(ch.results_path(project, "verbs"))
    ours = rows[rows["source"] == "ours"]
    assert set(ours["model"]) == {"toy-vilt"}
    assert set(select(ours, metric=["avg", "pos"])["condition"]) == {"threshold 0.7"}
    per_verb = select(ours, probe="svo-verbs")
    assert len(per_verb) >= 2 and set(per_verb["condition"]) == {"threshold 0.7"} and (per_verb["n"] >= 3).all()
    assert (tables(nb), notebook_images(nb)) == expected_page(rows, lab=False)
