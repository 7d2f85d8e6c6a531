"""A table on the page: each cell as shown (a number's interval on a line of its own, names kept whole, a verdict
as a chip), and whether the table is wide enough to take the page's full width.

The browser lays the table out, whole, in a box of its own that scrolls sideways where the page is too narrow
(``book/_static/probekit.css``).  Widths are estimated in characters of the table's font (the book's tables are
set at 0.85 em): the text column of the book's theme at a 1,280-px window holds about :data:`COLUMN_CHARS` of
them; a wider table takes the full width (class ``pk-wide``: over the page's table of contents, about 1.36 times
the column, as the theme's own ``full-width`` blocks, whose script fails on a page without a table of contents;
``book/_static/probekit.js`` folds the contents while one is in view), checked in Chromium by
tests/test_pages_layout.py.
"""

from __future__ import annotations

import html
import re

import pandas as pd

COLUMN_CHARS = 105  # characters of table text that fit the text column at 1,280 px, padding included
PADDING = 3         # characters' worth of cell padding and border per column
WRAP = 32           # a cell of words wraps to about this many characters (its column is at least 16 em)
INTERVAL = re.compile(r"^(?P<value>\S+) (?P<ci>\[[^\]]*\])(?P<rest>.*)$")
TAG = re.compile(r"(<[^>]+>)")
WORD = re.compile(r"[^\s<>]+")
#: a place other than a space where a browser may break a word ("toy-vilt", "ViT-B/16", "2.1–3.0")
BREAK = re.compile(r"[-/–—]")


def whole_words(text: str) -> str:
    """HTML in which every word that holds a dash or a slash is kept on one line (``<span class="pk-word">``), so
    that a name breaks only at a space, never as "toy-" over "vilt"; tags (a link around a name) left as they are."""
    parts = TAG.split(text)
    return "".join(p if TAG.fullmatch(p) else WORD.sub(_whole, p) for p in parts)


def _whole(m: re.Match) -> str:
    word = m[0]
    return f'<span class="pk-word">{word}</span>' if BREAK.search(word) and BREAK.sub("", word) else word


def cell_html(value) -> str:
    """A cell or label as the page shows it: "62.3 [55.0, 70.1] (n = 120)" puts its interval (and n) on a second,
    smaller line; any other cell as it is (the book's cells may hold links), with its names kept whole."""
    text = "" if value is None else str(value)
    m = INTERVAL.match(text)
    if not m:
        return whole_words(text)
    rest = m["rest"].strip()
    return f'{m["value"]}<br><span class="pk-ci">{m["ci"]}{" " + rest if rest else ""}</span>'


def visible(value) -> str:
    """A cell's text as read: tags (a link around a label) removed, entities decoded."""
    return html.unescape(TAG.sub("", "" if value is None else str(value)))


def chip(verdict: str) -> str:
    """A verdict as a small label coloured by its class ("does not hold" -> class ``pk-does-not-hold``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", verdict.lower()).strip("-")
    return f'<span class="pk-chip pk-{slug}">{html.escape(verdict)}</span>'


def text_width(value) -> int:
    """How wide a cell or label is, in characters, once laid out: the longer line of a number and its interval,
    a run of words wrapped at about :data:`WRAP` (never narrower than its longest word)."""
    text = visible(value)
    m = INTERVAL.match(text)
    if m:
        return max(len(m["value"]), len(m["ci"]) + len(m["rest"]))
    longest = max((len(w) for w in text.split()), default=0)
    return len(text) if len(text) <= WRAP else max(WRAP, longest)


def _label_width(label) -> int:
    return max((text_width(p) for p in (label if isinstance(label, tuple) else (label,))), default=0)


def width(table: pd.DataFrame) -> int:
    """The table's laid-out width in characters: each column's widest cell or header, and each level of row
    labels, padding included."""
    index = [max([text_width(v) for v in table.index.get_level_values(level)] +
                 [_label_width(table.index.names[level] or "")]) + PADDING for level in range(table.index.nlevels)]
    columns = [max([_label_width(label)] + [text_width(v) for v in table.iloc[:, i]]) + PADDING
               for i, label in enumerate(table.columns)]
    return sum(index) + sum(columns)


def is_wide(table: pd.DataFrame) -> bool:
    """Whether the table is wider than the text column (it then takes the page's full width)."""
    return width(table) > COLUMN_CHARS
