"""Tables fitted to the text column: a number's interval under it, width estimates, and a table too wide for
the column split into parts that each fit (checked in Chromium by tests/test_book.py)."""

from __future__ import annotations

import pandas as pd

from probekit.report import layout, show


def test_an_interval_goes_on_its_own_line_and_links_stay_links():
    assert layout.cell_html("62.3 [55.0, 70.1] (n = 120)") == \
        '62.3<br><span class="pk-ci">[55.0, 70.1] (n = 120)</span>'
    link = '<a href="verbs.html">pairwise</a>'
    assert layout.cell_html(link) == link and layout.text_width(link) == len("pairwise")


def test_widths_count_the_longer_line_and_wrap_long_text():
    assert layout.text_width("62.3 [55.0, 70.1]") == 12
    assert layout.text_width("a short one") == 11
    assert layout.text_width("the model ranks the matching caption above the swapped one") == layout.WRAP
    assert layout.text_width("x" * 40 + " y") == 40                    # never narrower than its longest word


def test_a_table_too_wide_is_split_into_parts_that_fit_and_a_narrow_one_is_not():
    cells = {f"toy-model-{i}": ["62.3 [55.0, 70.1]", "50.0 [40.0, 60.0]"] for i in range(12)}
    wide = pd.DataFrame(cells, index=pd.Index(["pairwise", "verb negatives"], name="metric"))
    groups = layout.column_groups(wide)
    assert len(groups) > 1 and [i for g in groups for i in g] == list(range(12))   # every column once, in order
    widths = layout.column_widths(wide)
    for g in groups:
        assert layout.index_width(wide) + sum(widths[i] for i in g) <= layout.COLUMN_CHARS
    assert layout.column_groups(wide.iloc[:, :3]) == [[0, 1, 2]]


def test_show_table_numbers_the_parts_of_a_split_table(monkeypatch):
    cells = {f"toy-model-{i}": ["62.3 [55.0, 70.1]"] for i in range(12)}
    shown = []
    monkeypatch.setattr(show, "display", lambda styler: shown.append(styler.to_html()))
    show.show_table(pd.DataFrame(cells, index=["pairwise"]), caption="Pairwise accuracy (%)")
    n = len(layout.column_groups(pd.DataFrame(cells, index=["pairwise"])))
    assert len(shown) == n > 1 and f"Pairwise accuracy (%) (1 of {n})" in shown[0]
    assert all("pairwise" in html and 'class="pk-ci"' in html for html in shown)     # row labels in every part


def test_a_table_shown_twice_is_the_same_html(monkeypatch):
    shown = []
    monkeypatch.setattr(show, "display", lambda styler: shown.append(styler.to_html()))
    table = pd.DataFrame({"toy-vilt": ["62.3 [55.0, 70.1]"]}, index=["pairwise"])
    show.show_table(table, caption="Pairwise accuracy (%)")
    show.show_table(table, caption="Pairwise accuracy (%)")
    show.show_table(table.replace("62.3 [55.0, 70.1]", "62.4 [55.0, 70.1]"), caption="Pairwise accuracy (%)")
    assert shown[0] == shown[1] and shown[2] != shown[0]
