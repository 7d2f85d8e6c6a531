"""The verbs chapter executed on the toy world (the session's executed book), and re-executed with new parameters."""

from __future__ import annotations

import re

import nbformat

from probekit import chapters as ch
from conftest import notebook_text, copy_project, toy_params


def test_chapter_reports_both_models_beside_the_paper(executed_chapter):
    nb = executed_chapter("verbs")
    text = notebook_text(nb)
    assert "The paper's Table 4 (its MMT models, not ours)" in text and "MMT-COCO" in text
    assert "The paper's Table 6 (its MMT model, not ours)" in text and "decorate" in text and "tackle" in text
    assert "min_verb_count = 30" in text
    assert "it/s]" not in text  # no progress bar refreshes in the page (chapters run with PROBEKIT_PROGRESS=0)
    assert re.search(r"Of the \d+ rows, \d+ could be scored per model", text)
    # ITM model: thresholded Table 4 and a discussion computed from it; the sentence's number is the table's
    avg = re.search(r"\*\*toy-vilt\*\* \(ITM at 0\.5\): average accuracy (\d+\.\d)% \[(\d+\.\d)%, (\d+\.\d)%\]", text)
    assert avg, "no ITM discussion for toy-vilt"
    assert f"{avg.group(1)} [{avg.group(2)}, {avg.group(3)}]" in text  # the same cell in the rendered table
    assert re.search(r"By negative type its average accuracy runs (verb|subject|object) \d", text)
    # dual encoder: pairwise only, said so
    assert re.search(r"\*\*toy-clip\*\* prefers the positive image, by its image–text similarities, in \d+\.\d%", text)
    assert "choice of image (pairwise)" in text and "toy-clip (threshold" not in text
    images = sum("image/png" in out.get("data", {}) for c in nb.cells for out in c.get("outputs", []))
    assert images >= 2  # Table 4 bars (with the paper's MMT panel), pairwise bars


def test_chapter_reruns_with_new_threshold_and_verb_filter(executed_book, tmp_path):
    project = copy_project(tmp_path / "project", with_outputs=executed_book)
    params, _ = toy_params(project, executed_book / "data")  # same items, warm score cache
    new = ch.resolve(project, "verbs", {**params["verbs"], "models": ["toy-vilt"], "threshold": 0.7,
                                        "min_verb_count": 3, "top_k": 2})
    nb = nbformat.read(ch.execute(project, "verbs", new, progress=False, log=lambda msg: None), as_version=4)
    text = notebook_text(nb)
    assert "ITM accuracy (%) at threshold 0.7" in text and "(ITM at 0.7)" in text
    assert "min_verb_count = 3" in text and "toy-clip" not in text
    assert re.search(r"hardest\s+hardest_acc\s+easiest\s+easiest_acc", text)  # Table 6 of ours, top_k = 2
