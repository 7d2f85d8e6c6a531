"""The conceptual-understanding chapter executed on the toy world (the session's executed book), and once more
with other parameters."""

import re

import nbformat

from probekit import chapters as ch
from conftest import notebook_text, notebook_images, copy_project, toy_params


def test_conceptual_chapter_shows_every_probe_the_paper_and_the_patching_sweep(executed_chapter, executed_book):
    nb = executed_chapter("conceptual")
    text = notebook_text(nb)
    # Probe-R: every comparison kind for both toy models, with bootstrap intervals, and the paper's Table 3
    for kind in ("predicate_swap", "subject_swap", "subject_only"):
        assert kind in text
    assert re.search(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", text)
    assert "The paper's Table 3" in text and "89.01" in text and "BridgeTower" in text
    assert re.search(r"`toy-vilt` picks the true relation over an unlikely predicate in \d+\.\d% of images", text)
    # Probe-C: Winoground scores per split, per category, and the paper's Tables 4 and 6
    assert "composition" in text and "object" in text and "The paper's Table 4" in text and "59.28" in text
    assert "The paper's Table 6" in text
    assert re.search(r"`toy-clip`: group score \d+\.\d% on composition swaps vs \d+\.\d% on object swaps", text)
    # Probe-B: every filler, mAP/γ/Δc, single-object accuracy, and the paper's Tables 8 and 9
    for filler in ("black", "gray", "noise", "scene"):
        assert filler in text
    assert "mAP x̃1" in text and "γ (x0,x̃1)" in text and "Δc (c0−c̃1)" in text and "acc x̃1" in text
    assert "The paper's Table 8" in text and "83.49" in text and "The paper's Table 9" in text and "77.36" in text
    # fine-tuning and patching: the sweep for every encoder setting and alpha, the paper's Tables 2 and 10
    assert "general top1" in text and "Probe-R predicate_swap mu_c" in text
    assert "The paper's Table 2" in text and "74.63" in text
    assert re.search(r"Fine-tuning \*\*both encoders \(VT\)\*\*: predicate-swap μ\(c\) goes from \d+\.\d%", text)
    assert notebook_images(nb) >= 6
    html = (executed_book / "html" / "book" / "chapters" / "conceptual.html").read_text()
    assert "Probe-R" in html and "toy-clip" in html and "<img" in html


def test_conceptual_chapter_reruns_with_other_fillers_and_no_finetuning(tmp_path, executed_book):
    project = copy_project(tmp_path / "project")
    params, _ = toy_params(project, executed_book / "data")
    params = {**params["conceptual"], **ch.resolve(project, "conceptual", {"fillers": "gray", "finetune_model": "",
                                                                            "limit": 24})}
    out = ch.execute(project, "conceptual", params, progress=False, log=lambda m: None)
    text = notebook_text(nbformat.read(out, as_version=4))
    assert "Fine-tuning skipped" in text
    table = text[text.index("background removed (multi-object images)"):text.index("The paper's Table 8")]
    assert "gray" in table and "black" not in table and "noise" not in table
    assert "Probe-R 24 comparisons" in text
