"""Tables as a reader sees them, in headless Chromium at 1,280 and 390 px: a page made of the book's own tables
(``report.show_table`` on the committed result files) and the book's CSS.  At 1,280 px every table fits its box;
at 390 px the page does not scroll sideways (a wide table scrolls in its own box); at both, no word of a table
cell is broken across lines or sticks out of its cell ("LX/ME/RT", a header one letter per line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import browser, measure, output, page  # noqa: F401 (browser: the fixture)
from probekit.report import layout, show, summary, table
from probekit.results import load, select

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = REPO / "book" / "chapters"

#: running text with a long name in code, as the chapters write a model's or a file's name
TEXT = ("<p>The knock-out <code>toy-vilt-hardneg-without-the-verb-of-the-caption-and-its-object_removed</code> is "
        "trained like its parent.</p>")


def _tables(monkeypatch) -> list[str]:
    """The HTML of tables the book shows, each in a notebook output: the summary's lab overview and claims table
    (every verdict of the committed lab files, both wider than the text column) and headline table, and the paper's
    confound table of the prednoun chapter (eight columns of r and p)."""
    shown: list[str] = []
    monkeypatch.setattr(show, "display", lambda obj: shown.append(output(obj.data)))
    lab = summary.load_lab(CHAPTERS)
    overview = summary.lab_overview(lab)
    assert layout.is_wide(overview)
    show.show_table(overview, caption="The toy lab: the papers' claims tested on the toy zoo")
    claims = summary.lab_claims(lab)
    show.show_table(summary.with_chips(summary.seed_agreement(claims)), caption="Every claim the toy lab tested")
    results = summary.load_results(CHAPTERS)
    rows = summary.headline_rows(results, summary.headlines(list(results)), summary.wholes(list(results)))
    show.show_table(summary.summary_table(rows), caption="Headline probes of every executed chapter")
    prednoun = load(CHAPTERS / "prednoun.results.parquet")
    confounds = table(select(prednoun, probe="confounds", source="Nikolaus et al. 2022, Table 9"), "model",
                      ["subset", "metric"])
    assert confounds.shape[1] >= 8 and layout.is_wide(confounds)
    show.show_table(confounds, caption="Confounds (Nikolaus et al. 2022, Table 9): r and p per model")
    return shown


def test_tables_fit_at_1280_px_and_scroll_in_their_box_at_390_px_with_no_word_broken(browser, monkeypatch, tmp_path):
    tables = _tables(monkeypatch)
    assert all(html.count('class="pk-caption"') == 1 for html in tables)           # a caption once, no parts
    url = page(tmp_path / "tables.html", TEXT + "".join(tables))
    wide = measure(browser, url, 1280)
    assert wide["tables"] == 4 and wide["wide"] == [] and wide["broken"] == []
    phone = measure(browser, url, 390)
    assert phone["page"] <= phone["window"], f"the page scrolls sideways: {phone['page']} px in {phone['window']}"
    assert phone["broken"] == []
    assert phone["wide"], "at 390 px the confound table is wider than the phone: it should scroll in its box"
    sticky = browser.evaluate("getComputedStyle(document.querySelector('tbody th.row_heading')).position")
    assert sticky == "sticky"


def test_the_measurement_sees_a_name_broken_and_a_page_that_scrolls_sideways(browser, tmp_path):
    """The old style (a break between any two letters) and a table with no box of its own, measured the same way."""
    old = "td.any { overflow-wrap: anywhere; } td.one-line { white-space: nowrap; }"
    body = ("<table><tr>" + '<td class="any">toy-vilt-hardneg</td>' * 20 + "</tr></table>"
            "<table><tr>" + '<td class="one-line">LXMERT</td>' * 30 + "</tr></table>")
    got = measure(browser, page(tmp_path / "old.html", body, old), 390)
    assert "toy-vilt-hardneg" in got["broken"] and "LXMERT" not in got["broken"]
    assert got["page"] > got["window"] and len(got["wide"]) == 1   # the names broken letter by letter fit


def test_the_measurement_sees_a_wide_table_clipped_by_its_notebook_output(browser, monkeypatch, tmp_path):
    """Without the book's rule that lets a wide table's notebook output show it whole, the summary's lab overview
    scrolls inside the output at 1,280 px (its Holm column out of view), measured the same way."""
    css = (REPO / "book" / "_static" / "probekit.css").read_text()
    rule = "div.output:has(> div.pk-wide) { overflow-x: visible; }"
    assert rule in css
    html = _tables(monkeypatch)[0]
    got = measure(browser, page(tmp_path / "clipped.html", html, css.replace(rule, "")), 1280)
    assert got["wide"] == ["The toy lab: the papers' claims tested on the toy zoo"]


#: what the book's theme gives a Markdown page's table that the stand-in lacks: Sphinx's inline code on one line
#: (its basic.css) and each table in a box of its own that scrolls sideways (pydata-sphinx-theme)
SPHINX = "span.pre { white-space: nowrap; } .pst-scrollable-table-container { overflow-x: auto; }"


def _markdown_page(path: Path, text: str) -> str:
    """``text`` (MyST Markdown) as the book renders it (MyST's parser; each table in the theme's box) in the stand-in
    with the book's CSS; its URL."""
    from docutils.core import publish_parts
    from myst_parser.parsers.docutils_ import Parser

    body = publish_parts(text, parser=Parser(), writer_name="html5", settings_overrides={
        "myst_enable_extensions": ["colon_fence", "deflist"], "report_level": 4})["body"]
    body = body.replace("<table", '<div class="pst-scrollable-table-container"><table').replace("</table>",
                                                                                               "</table></div>")
    return page(path, body, (REPO / "book" / "_static" / "probekit.css").read_text() + SPHINX)


@pytest.mark.parametrize("name", ["methods", "rerunning"])
def test_the_hand_written_tables_keep_every_name_whole_at_390_px(browser, tmp_path, name):
    got = measure(browser, _markdown_page(tmp_path / f"{name}.html", (REPO / "book" / f"{name}.md").read_text()), 390)
    assert got["tables"] >= 1 and got["broken"] == [] and got["page"] <= got["window"]


def test_a_hand_written_tables_name_with_a_dash_breaks_at_390_px_unless_kept_whole(browser, tmp_path):
    """The methods page's ties row: "predicate–noun:" broke at its dash; in a pk-word span it stays whole."""
    row = ("| metric | tie rule | source |\n|---|---|---|\n| {} triplet and pair accuracy | a tie is wrong | authors' "
           "evaluation script: `prob_target_match > prob_distractor_match` |\n")
    plain = measure(browser, _markdown_page(tmp_path / "plain.html", row.format("predicate–noun:")), 390)
    assert plain["broken"] == ["predicate–noun:"]
    whole = row.format('<span class="pk-word">predicate–noun:</span>')
    assert measure(browser, _markdown_page(tmp_path / "whole.html", whole), 390)["broken"] == []
