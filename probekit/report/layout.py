"""Fitting a table to the page's text column: a number's interval under it, long text wrapped, and a table
still too wide split into several, each repeating the row labels.

Widths are estimated in characters of the table's font (the book's tables are set at 0.85 em); the text column of
the book's theme at a 1,400-px window holds about :data:`COLUMN_CHARS` of them (measured in Chromium; the page
test checks every table of the book against the real column).
"""

from __future__ import annotations

import html
import re
from typing import Sequence

import pandas as pd

COLUMN_CHARS = 120  # characters of table text that fit the text column, padding included
PADDING = 3         # characters' worth of cell padding and border per column
WRAP = 28           # a cell of words wraps to about this many characters
INTERVAL = re.compile(r"^(?P<value>\S+) (?P<ci>\[[^\]]*\])(?P<rest>.*)$")
TAG = re.compile(r"<[^>]+>")


def cell_html(value) -> str:
    """A cell as the page shows it: "62.3 [55.0, 70.1] (n = 120)" puts its interval (and n) on a second, smaller
    line; any other cell as it is (the book's cells may hold links)."""
    text = "" if value is None else str(value)
    m = INTERVAL.match(text)
    if not m:
        return text
    rest = m["rest"].strip()
    return f'{m["value"]}<br><span class="pk-ci">{m["ci"]}{" " + rest if rest else ""}</span>'


def visible(value) -> str:
    """A cell's text as read: tags (a link around a label) removed, entities decoded."""
    return html.unescape(TAG.sub("", "" if value is None else str(value)))


def text_width(value) -> int:
    """How wide a cell or label is, in characters, once laid out: the longer line of a number and its interval,
    a run of words wrapped at about :data:`WRAP` (never narrower than its longest word)."""
    text = visible(value)
    m = INTERVAL.match(text)
    if m:
        return max(len(m["value"]), len(m["ci"]) + len(m["rest"]))
    words = re.split(r"[\s]+", text)
    longest = max((len(w) for w in words), default=0)
    return len(text) if len(text) <= WRAP else max(WRAP, longest)


def _label_width(label) -> int:
    parts = label if isinstance(label, tuple) else (label,)
    return max((max((len(w) for w in re.split(r"[\s\-]+", visible(p))), default=0) for p in parts), default=0)


def column_widths(table: pd.DataFrame) -> list[int]:
    """The laid-out width of each column (its widest cell or its header, whichever is wider), padding included."""
    return [max([_label_width(label)] + [text_width(v) for v in table.iloc[:, i]]) + PADDING
            for i, label in enumerate(table.columns)]


def index_width(table: pd.DataFrame) -> int:
    labels = [v for level in range(table.index.nlevels) for v in table.index.get_level_values(level)]
    per_level = [max([text_width(v) for v in table.index.get_level_values(level)] +
                     [_label_width(table.index.names[level] or "")]) + PADDING
                 for level in range(table.index.nlevels)]
    return sum(per_level) if labels else 0


def column_groups(table: pd.DataFrame, limit: int = COLUMN_CHARS) -> list[Sequence[int]]:
    """The table's columns in consecutive groups, each of which fits ``limit`` characters beside the row labels
    (a single column wider than that is a group of its own); one group when the whole table fits."""
    room = max(limit - index_width(table), 1)
    groups: list[list[int]] = [[]]
    used = 0
    for i, width in enumerate(column_widths(table)):
        if groups[-1] and used + width > room:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += width
    return [g for g in groups if g]
