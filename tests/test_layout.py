"""A table on the page: a number's interval under it, names kept whole, verdict chips, the width estimate that
sends a table to the page's full width, and every table shown whole with its caption once (its layout in the
browser is checked in Chromium by tests/test_pages_layout.py)."""

from __future__ import annotations

import pandas as pd

from probekit.report import layout, show


def test_an_interval_goes_on_its_own_line_and_links_stay_links():
    assert layout.cell_html("62.3 [55.0, 70.1] (n = 120)") == \
        '62.3<br><span class="pk-ci">[55.0, 70.1] (n = 120)</span>'
    link = '<a href="verbs.html">pairwise</a>'
    assert layout.cell_html(link) == link and layout.text_width(link) == len("pairwise")


def test_a_name_with_a_dash_or_a_slash_is_kept_whole_and_tags_are_left_alone():
    word = '<span class="pk-word">{}</span>'.format
    assert layout.cell_html("toy-vilt-hardneg vs toy-vilt") == f"{word('toy-vilt-hardneg')} vs {word('toy-vilt')}"
    assert layout.cell_html("CLIP ViT-B/16, 2.1–3.0 points") == f"CLIP {word('ViT-B/16,')} {word('2.1–3.0')} points"
    assert layout.cell_html('<a href="pred-noun.html">toy-clip</a>: a - b') == \
        f'<a href="pred-noun.html">{word("toy-clip")}</a>: a - b'             # the link's address untouched
    assert layout.cell_html("LXMERT") == "LXMERT" and layout.visible(layout.cell_html("a-b")) == "a-b"


def test_a_verdict_chip_is_classed_by_its_verdict():
    assert layout.chip("does not hold") == '<span class="pk-chip pk-does-not-hold">does not hold</span>'
    assert layout.chip("holds") == '<span class="pk-chip pk-holds">holds</span>'


def test_widths_count_the_longer_line_and_wrap_long_text():
    assert layout.text_width("62.3 [55.0, 70.1]") == 12
    assert layout.text_width("a short one") == 11
    assert layout.text_width("the model ranks the matching caption above the swapped one and the other") == \
        layout.WRAP
    assert layout.text_width("x" * 40 + " y") == 40                    # never narrower than its longest word


def test_a_table_wider_than_the_column_is_wide_and_a_narrow_one_is_not():
    cells = {f"toy-model-{i}": ["62.3 [55.0, 70.1]", "50.0 [40.0, 60.0]"] for i in range(12)}
    wide = pd.DataFrame(cells, index=pd.Index(["pairwise", "verb negatives"], name="metric"))
    # 12 columns of 12 characters and 3 of padding, beside "verb negatives" and its padding
    assert layout.width(wide) == 12 * 15 + 14 + 3 and layout.is_wide(wide)
    assert not layout.is_wide(wide.iloc[:, :3])


def _shown(monkeypatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(show, "display", lambda obj: shown.append(obj.data))
    return shown


def test_show_table_shows_a_wide_table_whole_with_its_caption_once(monkeypatch):
    shown = _shown(monkeypatch)
    cells = {f"toy-model-{i}": ["62.3 [55.0, 70.1]"] for i in range(12)}
    show.show_table(pd.DataFrame(cells, index=["pairwise"]), caption="Pairwise accuracy (%) & more")
    show.show_table(pd.DataFrame(cells, index=["pairwise"]).iloc[:, :2])
    assert len(shown) == 2 and shown[0].count("<table") == 1 and shown[0].count('class="pk-ci"') == 12
    assert shown[0].startswith('<div class="pk-table pk-wide"><div class="pk-caption">Pairwise accuracy (%) '
                               '&amp; more</div><div class="pk-scroll" role="region" tabindex="0"')
    assert shown[0].count("Pairwise accuracy") == 2 and "<caption" not in shown[0]    # the caption, its box's label
    assert shown[1].startswith('<div class="pk-table"><div class="pk-scroll">')
    assert '<span class="pk-word">toy-model-11</span>' in shown[0]                    # headers kept whole too
    named = pd.DataFrame({"toy-vilt": ["62.3"]}, index=pd.Index(["α = 0.2"], name="fine-tuned, patched at"))
    show.show_table(named.rename_axis(columns="toy-model"))
    assert '<span class="pk-word">fine-tuned,</span> patched at</th>' in shown[2]     # and the labels' names
    assert '<span class="pk-word">toy-model</span></th>' in shown[2]


def test_a_table_shown_twice_is_the_same_html(monkeypatch):
    shown = _shown(monkeypatch)
    table = pd.DataFrame({"toy-vilt": ["62.3 [55.0, 70.1]"]}, index=["pairwise"])
    show.show_table(table, caption="Pairwise accuracy (%)")
    show.show_table(table, caption="Pairwise accuracy (%)")
    show.show_table(table.replace("62.3 [55.0, 70.1]", "62.4 [55.0, 70.1]"), caption="Pairwise accuracy (%)")
    assert shown[0] == shown[1] and shown[2] != shown[0]
