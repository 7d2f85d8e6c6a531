"""The built book: every chapter executes on the toy world, a re-run with a new parameter shows up in the
HTML, and the pages load in a real (headless Chromium) browser with their figures and no console errors."""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
from html import unescape
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from browser import Browser, chromium
from conftest import copy_project
from probekit import chapters as ch
from probekit.report import cell, summary


def _text(html: str) -> str:
    """Visible text of an HTML page, whitespace collapsed."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html)))


def test_every_chapter_executes_and_renders(executed_book, executed_chapter):
    for chapter in ch.CHAPTERS:
        nb = executed_chapter(chapter)
        assert nb.metadata["probekit"]["chapter"] == chapter
        page = executed_book / "html" / "book" / "chapters" / f"{chapter}.html"
        assert ch.title(executed_book / "project", chapter) in _text(page.read_text())
    assert "How this page was made" in _text((executed_book / "html" / "book" / "chapters" / "verbs.html").read_text())


def _article(page: Path) -> BeautifulSoup:
    return BeautifulSoup(page.read_text(), "html.parser").find("article")


def _chapter_pages(executed_book: Path) -> list[Path]:
    """The rendered page of every chapter executed in the session, and the summary page."""
    pages = executed_book / "html" / "book" / "chapters"
    return [pages / f"{c}.html" for c in [ch.SUMMARY, *ch.CHAPTERS] if (executed_book / f"{c}.ipynb").exists()]


def test_code_is_folded_the_parameters_too(executed_book, executed_chapter):
    executed_chapter("summary")
    for page in _chapter_pages(executed_book):
        cells = _article(page).select("div.cell")
        assert cells, page.name
        for div in cells:
            source = div.select_one("div.cell_input")
            if source is None:               # input removed (remove-input)
                continue
            folded = source.find_parent("details") is not None   # a chapter's first screen is its findings
            assert folded, f"{page.name}: {source.get_text()[:80]!r} is not folded"
        if page.stem != ch.SUMMARY:
            assert len([d for d in cells if "tag_parameters" in d["class"]]) == 1, page.name


def test_no_warnings_tracebacks_or_stderr_on_any_page(executed_book, executed_chapter):
    executed_chapter("summary")
    for page in _chapter_pages(executed_book):
        article = _article(page)
        assert not article.select("div.output.stderr"), page.name
        text = article.get_text(" ")
        for word in ("Warning", "Traceback", "IPython.core.display"):
            assert word not in text, f"{page.name}: ...{text[max(0, text.find(word) - 200):text.find(word) + 200]}"
        nb = executed_chapter(page.stem)
        assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"], page.name


def _summary_table(page: Path) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """The summary page's table: {(headline probe, model): cell text} (empty cells left out), and
    {headline probe: the href of its link}."""
    table = _article(page).select_one("table.probekit-table")
    models = [th.get_text(strip=True) for th in table.select("thead tr")[0].select("th")[1:]]
    cells, links = {}, {}
    for tr in table.select("tbody tr"):
        label = " ".join(tr.select_one("th").get_text(" ", strip=True).split())   # names are spans of their own
        links[label] = tr.select_one("th a")["href"]
        for model, td in zip(models, tr.select("td")):
            if model != "chance" and td.get_text(strip=True):
                cells[(label, model)] = td.get_text(" ", strip=True)   # the interval is on a line of its own
    return cells, links


def _expected_summary(chapters_dir: Path) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """What the summary must show, computed from the result files alone."""
    found = summary.load_results(chapters_dir)
    rows = summary.headline_rows(found, summary.headlines(list(found)))
    cells = {(r[summary.LABEL], r["model"]): cell(r, with_n=True) for _, r in rows.iterrows()}
    return cells, {r[summary.LABEL]: f"{r['study']}.html" for _, r in rows.iterrows()}


def test_summary_lists_every_model_and_headline_probe(executed_book, executed_chapter):
    executed_chapter("summary")
    page = executed_book / "html" / "book" / "chapters" / "summary.html"
    expected = _expected_summary(executed_book)
    executed = [c for c in ch.CHAPTERS if (executed_book / f"{c}.results.parquet").exists()]
    assert executed and expected[0], "no chapter's headline rows to summarize"
    assert _summary_table(page) == expected
    listed = {li.select_one("a")["href"]: li.select_one("strong") is None
              for li in _article(page).select("li") if li.select_one("a[href$='.html']")}
    assert listed == {f"{c}.html": c in executed for c in ch.CHAPTERS}  # "not executed" in bold otherwise


def test_rerun_with_new_parameter_value_appears_in_html(executed_book, executed_chapter, tmp_path):
    executed_chapter("verbs")  # fails with the chapter's error if the session's run failed
    project = copy_project(tmp_path / "project", with_outputs=executed_book)
    data = executed_book / "data"
    page = project / "_build" / "html" / "book" / "chapters" / "verbs.html"
    cmd = [sys.executable, "-m", "probekit.cli", "--root", str(project), "run", "verbs",
           "-p", "limit", "37", "-p", "data_dir", str(data / "data"), "-p", "cache_dir", str(data / "scores"),
           "--profile", "toy"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = _text(page.read_text())
    assert "limit = 37" in text                      # the injected-parameters cell
    assert "Parameters given:" in text
    assert "-p limit 37" in text                     # the re-run command of the run card
    assert "limit = 37" not in _text((executed_book / "html" / "book" / "chapters" / "verbs.html").read_text())
    # the summary page was re-executed from the new result file
    before, _ = _summary_table(executed_book / "html" / "book" / "chapters" / "summary.html")
    after, links = _summary_table(page.with_name("summary.html"))
    assert (after, links) == _expected_summary(project / "book" / "chapters")
    verbs = {k for k, href in links.items() if href == "verbs.html"}
    assert verbs and {k: v for k, v in after.items() if k[0] in verbs} != {k: v for k, v in before.items()
                                                                           if k[0] in verbs}
    # the other chapters' pages were kept, not re-executed
    for chapter in ("prednoun", "masking", "conceptual"):
        src = executed_book / f"{chapter}.ipynb"
        if src.exists():
            assert (project / "book" / "chapters" / f"{chapter}.ipynb").read_bytes() == src.read_bytes()


# ------------------------------------------------------------------------------------ headless Chromium

@pytest.fixture
def served_book(executed_book):
    """The built HTML served over http on 127.0.0.1 (as GitHub Pages would serve it)."""
    handler = functools.partial(_QuietHandler, directory=str(executed_book / "html"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


#: a page's layout at the window's width: the text column's width, every table wider than its box (its scrolling
#: container; a table wider than the text column takes the page's full width, report.layout), every image, code
#: block or figure wider than the column, and every table with no text in its body
LAYOUT = """(() => {
  const col = document.querySelector('article.bd-article') || document.querySelector('main');
  const width = col.clientWidth;
  const box = el => el.closest('.pk-scroll') || el.closest('.pk-wide') || col;
  const wide = Array.from(col.querySelectorAll('table, img, pre, svg, .cell_output > div'))
    .filter(el => !el.querySelector('.pk-wide'))
    .map(el => ({tag: el.tagName, w: Math.ceil(Math.max(el.scrollWidth, el.getBoundingClientRect().width)),
                 box: box(el).clientWidth,
                 text: ((el.closest('.pk-table') || el).querySelector('.pk-caption, caption') || el)
                   .textContent.slice(0, 80)}))
    .filter(e => e.w > e.box + 1);
  const empty = Array.from(col.querySelectorAll('table'))
    .filter(t => !Array.from(t.querySelectorAll('tbody td')).some(td => td.textContent.trim()))
    .map(t => ((t.querySelector('caption') || t).textContent || '').slice(0, 80));
  return {width, wide, empty};
})()"""
PAGES = ["book/intro.html", "book/methods.html", "book/rerunning.html",
         *[f"book/chapters/{c}.html" for c in (ch.SUMMARY, *ch.CHAPTERS)]]


def test_every_page_fits_the_text_column_at_1400_px_with_no_empty_table(served_book, executed_chapter, tmp_path):
    for chapter in (*ch.CHAPTERS, ch.SUMMARY):
        executed_chapter(chapter)
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    browser = Browser(chromium(), profile, width=1400)
    try:
        for page in PAGES:
            browser.open(f"{served_book}/{page}")
            layout = browser.evaluate(LAYOUT)
            assert layout["width"] > 500, page
            assert layout["wide"] == [], f"{page}: wider than their box: {layout['wide']}"
            assert layout["empty"] == [], f"{page}: tables with nothing in them: {layout['empty']}"
            assert "IPython.core.display" not in browser.evaluate("document.body.innerText"), page
    finally:
        browser.close()


IMAGES = ("Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null)))"
          ".then(() => Array.from(document.images).map(i => ({src: i.src, w: i.naturalWidth})))")


def test_pages_load_in_chromium_with_figures(served_book, executed_chapter, tmp_path):
    exe = chromium()
    if exe is None:
        pytest.fail("Debian's chromium is not installed (the README's test command installs it)")
    executed_chapter("verbs")
    executed_chapter("summary")
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    browser = Browser(exe, profile)
    try:
        for page, needs_figure in (("book/intro.html", False), ("book/chapters/summary.html", True),
                                   ("book/chapters/verbs.html", True)):
            browser.open(f"{served_book}/{page}")
            shot = tmp_path / (page.replace("/", "_") + ".png")
            browser.screenshot(shot)
            assert shot.stat().st_size > 10_000, f"blank screenshot of {page}"
            assert browser.console_errors() == [], page
            assert browser.evaluate("document.querySelector('main h1, article h1') !== null"), page
            images = browser.evaluate(IMAGES)
            broken = [i["src"] for i in images if i["w"] == 0]
            assert broken == [], f"{page}: images not loaded: {broken}"
            if needs_figure:
                figures = [i for i in images if "/_images/" in i["src"]]
                assert figures, f"{page} shows no figure"
    finally:
        browser.close()
