"""The guided-masking chapter executed on the toy world (the session's executed book)."""

import re


from conftest import notebook_text, notebook_images


def test_masking_chapter_reports_accuracy_drops_examples_and_itm(executed_chapter, executed_book):
    nb = executed_chapter("masking")
    text = notebook_text(nb)
    # our accuracy table: every condition, with a bootstrap interval and n, for the toy ViLT
    assert "Top-5 verb accuracy, ours" in text
    for label in ("Guided masking", "Vision ablation", "Masking whole image", "BERT (text only)"):
        assert label in text
    assert re.search(r"\d+\.\d% \[\d+\.\d%, \d+\.\d%\] \(n=\d+\)", text)
    # the paper's Tables 1-3 beside ours
    assert "73.9%" in text and "81.1%" in text and "95.4%" in text and "The paper's models" in text
    # drops with paired intervals, and the ITM contrast
    assert re.search(r"[+-]\d+\.\d pts \[[+-]\d+\.\d, [+-]\d+\.\d\]", text)
    assert "ITM accuracy, ours" in text
    # discussion computed from the numbers names the model and its full-image accuracy
    assert re.search(r"\*\*toy-vilt\*\* finds the verb among its top 5 in \d+\.\d% of captions", text)
    assert notebook_images(nb) >= 2   # the accuracy figure and the examples
    html = (executed_book / "html" / "book" / "chapters" / "masking.html").read_text()
    assert "Guided masking" in html and "toy-vilt" in html and "<img" in html
