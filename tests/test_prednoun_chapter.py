"""The predicate–noun chapter executed on the toy world (the session's executed book)."""

from __future__ import annotations

import re

from conftest import notebook_text


def test_chapter_reports_every_model_beside_the_paper(executed_chapter):
    nb = executed_chapter("prednoun")
    text = notebook_text(nb)
    params = next(c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    assert "min_concept_count" in params.source and "perplexity_model" in params.source
    for model in ("toy-vilt", "toy-clip"):
        # the discussion is computed per model, from its own numbers
        assert re.search(rf"\*\*{model}\*\* gets \d\.\d\d of pairs right on full images", text), model
    for paper_row in ("ViLT (paper)", "CLIP (paper)", "LXMERT (paper)", "CLIP RN50 yfcc15m (paper)"):
        assert paper_row in text
    assert "cropped predicate" in text and "bounding box size" in text and "distance from centre" in text
    images = sum("image/png" in out.get("data", {}) for c in nb.cells for out in c.get("outputs", []))
    assert images >= 3  # example pair, accuracy bars, per-concept plot (+ the tuple heatmap when tuples are common)
    assert images >= 4 or "No tuple has" in text


def test_chapter_page_is_rendered_with_figures(executed_book):
    page = executed_book / "html" / "book" / "chapters" / "prednoun.html"
    html = page.read_text(encoding="utf-8")
    assert "Predicate–noun dependencies" in html or "Predicate&#8211;noun" in html
    assert html.count("<img") >= 3 and "ViLT (paper)" in html and "toy-vilt" in html
