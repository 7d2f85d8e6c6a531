"""The guided-masking chapter: its source is thin and folded, and executed on the toy world (the session's
executed book) it shows our rows beside the paper's, the figures, and exports its rows."""

from __future__ import annotations

from pathlib import Path

import jupytext

from conftest import notebook_images, notebook_text
from probekit.results import load, select

SOURCE = Path(__file__).resolve().parents[1] / "book" / "src" / "masking.md"


def test_chapter_source_is_parameters_one_run_and_report_calls():
    from probekit.chapters.params import write_parameters
    nb = jupytext.read(SOURCE)
    write_parameters(nb, "masking")   # the parameters cell as executed: written from the study's dataclass
    code = [c for c in nb.cells if c.cell_type == "code"]
    tags = [set(c.metadata.get("tags", [])) for c in code]
    assert tags[0] == {"parameters"}
    assert all(t & {"hide-input", "remove-cell"} for t in tags[1:])
    assert code[-1].source.strip() == "report.export(result)" and tags[-1] == {"remove-cell"}
    lines = [line for c in code for line in c.source.splitlines() if line.strip()]
    assert len(lines) <= 80
    assert sum("masking.run(" in line for line in lines) == 1
    assert not [line for line in lines if line.lstrip().startswith("def ") or "lambda" in line or "plt." in line]
    # the lab: its parameter, and its two sections (checks, then the paper's claims) before the discussion
    assert any(line.split("=")[0].strip() == "lab_models" for line in code[0].source.splitlines())
    text = SOURCE.read_text(encoding="utf-8")
    headings = ["## Does the probe measure what it claims?", "## The papers' claims under controlled conditions",
                "## Discussion"]
    assert all(text.count(h) == 1 for h in headings)
    assert [text.index(h) for h in headings] == sorted(text.index(h) for h in headings)
    # each lab table and the count of judgements read what the run judged (one Holm family)
    assert text.count("lab_report.checks_table(result.data[\"lab_checks\"], result.study)") == 1
    assert text.count("lab_report.claims_table(result.data[\"lab_claims\"], result.study)") == 1
    assert text.count("lab_report.judgements(result.lab_lines)") == 1
    # nothing left of the old toy world's prose
    assert not any(old in text for old in ("12 verbs", "41.7", "7 verbs", "kick mostly", "one cell"))


def test_chapter_executed_on_the_toy_world(executed_chapter, executed_book):
    nb = executed_chapter("masking")
    rows = load(executed_book / "masking.results.parquet")   # the file the chapter's last call wrote
    top = select(rows, source="ours", probe="top-k", metric="accuracy")
    assert set(top["condition"]) == {"full image", "subject ablated", "image ablated", "text only"}
    assert len(select(rows, source="ours", probe="top-k", metric="accuracy_diff", model="toy-vilt")) == 5
    heads = select(rows, source="ours", probe="verb choice", model="toy-vilt", subset="verb")
    assert set(heads["condition"]) == {"MLM head", "ITM head", "MLM head − ITM head", "MLM head only",
                                       "ITM head only"} and len(set(heads["n"])) == 1
    # the same pairs split by what tells their verbs apart: the parts hold every pair once
    cues = select(rows, source="ours", probe="verb choice", model="toy-vilt", condition="MLM head")
    assert set(cues["subset"]) == {"verb", "the object's place", "the pose"}
    assert cues.loc[cues["subset"] != "verb", "n"].sum() == heads["n"].iloc[0]
    assert len(select(rows, source="ours", probe="itm", subset="all")) == 3 * 4     # avg, avg_pooled, pos, neg
    assert len(select(rows, source="ours", probe="itm", subset="verb", metric="avg_pooled")) == 3
    assert len(select(rows, source="ours", probe="top-k", metric="word_accuracy")) == 4
    assert len(select(rows, source="Beňová et al. 2024, Table 2")) > 0
    text = notebook_text(nb)
    assert "Traceback" not in text and "Warning" not in text
    assert notebook_images(nb) >= 2   # accuracy beside the paper's, and the examples
    html = (executed_book / "html" / "book" / "chapters" / "masking.html").read_text(encoding="utf-8")
    assert "toy-vilt" in html and html.count("<img") >= 2
    assert "Does the probe measure what it claims?" in html and "toy-vilt-noverb" in html
