"""The predicate–noun chapter executed on the toy world (the session's executed book): its tables show the rows
it exports, and its discussion is the claims function of those rows."""

from __future__ import annotations

from conftest import notebook_images, notebook_text

from probekit import report
from probekit.results import load, one, select
from probekit.studies.prednoun.claims import claims


def test_chapter_shows_its_rows_beside_the_paper(executed_chapter, executed_book):
    nb = executed_chapter("prednoun")
    text = notebook_text(nb)
    params = next(c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    assert "min_concept_count" in params.source and "perplexity_model" in params.source
    rows = load(executed_book / "prednoun.results.parquet")
    ours = rows[rows["source"] == "ours"]
    for model in ("toy-vilt", "toy-clip"):
        for condition in ("full", "cropped"):
            for probe in ("pairs", "pairs-alt"):
                shown = one(ours, probe=probe, model=model, condition=condition, subset="all",
                            metric="pair_accuracy")
                assert report.cell(shown) in text, (model, condition, probe)  # the table's cell of this row
        for factor in ("bounding box size", "distance from centre", "perplexity"):  # every factor varies now
            r = one(ours, probe="confounds", model=model, subset=factor, metric="r")
            assert r["value"] == r["value"] and report.cell(r) in text, (model, factor)
    for table in ("Table 1", "Table 6", "Table 7", "Table 8", "Table 9"):
        assert f"Nikolaus et al. 2022, {table}" in text
    assert len(select(rows, source="Nikolaus et al. 2022, Table 6")) == 10
    # the discussion is the claims function of the exported rows, sentence for sentence
    assert report.render_claims(claims(rows)) in text
    # example pair, Table 1 bars, per-concept spread (+ wrong pairs and tuple heatmaps when there are any)
    assert notebook_images(nb) >= 3


def test_chapter_shows_the_lab_checks_and_claims(executed_chapter):
    text = notebook_text(executed_chapter("prednoun"))
    for shown in ("target probe, its information scrambled in training", "knock-out, control", "blind (text only)",
                  "trained on everything, control", "toy-vilt-noisy",
                  "toy-clip-unbound", "toy-bert-blind", "Nikolaus et al. 2022, Tables 1 and 6, Sect. 5.1",
                  "Nikolaus et al. 2022, Table 8, Sect. 5.2", "decided by construction"):
        assert shown in text, shown
    assert "not run" not in text.split("Checks (", 1)[1].split("</table>", 1)[0]


def test_chapter_page_is_rendered_with_figures(executed_book):
    page = executed_book / "html" / "book" / "chapters" / "prednoun.html"
    html = page.read_text(encoding="utf-8")
    assert "Predicate–noun dependencies" in html or "Predicate&#8211;noun" in html
    assert html.count("<img") >= 3 and "LXMERT" in html and "toy-vilt" in html
