"""Putting tables, figures, text and discussions on a chapter's page (IPython display), one style for all."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import struct

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

from probekit.report import layout
from probekit.report.format import render_claims
from probekit.theme import DPI, PIXEL_RATIO

TABLE_CLASS = "probekit-table"
SHORT_CELL = 32  # characters: "100.0 [100.0, 100.0] (n = 1000)" fits


def show_table(table: pd.DataFrame, caption: str | None = None) -> None:
    """A table in the book's one table style, whole however wide: its caption once above it, the table in a box
    of its own that scrolls sideways where the page is narrower than the table, its first column staying in view
    (``book/_static/probekit.css``); a table wider than the text column takes the page's full width.  Row labels
    bold, each number's interval on a line under it, names never broken inside (:func:`layout.cell_html`);
    short cells (a number with its interval) on one line each, long text wrapped at spaces in a readable column."""
    # the table's HTML id from its content, not pandas' random one, so that a page rebuilt from the same numbers
    # is the same file
    uuid = hashlib.sha256(f"{caption}\n{table.to_csv()}".encode()).hexdigest()[:8]
    names = lambda axis: [None if n is None else layout.cell_html(n) for n in axis.names]   # headers of the labels
    table = table.rename_axis(index=names(table.index), columns=names(table.columns))
    styler = (table.style.set_uuid(uuid).set_table_attributes(f'class="{TABLE_CLASS}"').format(layout.cell_html)
              .format_index(layout.cell_html, axis=0).format_index(layout.cell_html, axis=1))
    if table.index.is_unique and table.columns.is_unique:  # pandas styles cells by label
        styler = styler.set_td_classes(table.map(
            lambda v: "pk-short" if len(layout.visible(v)) <= SHORT_CELL else "pk-text"))
    label = f' role="region" tabindex="0" aria-label="{html.escape(caption)}"' if caption else ""
    head = f'<div class="pk-caption">{html.escape(caption)}</div>' if caption else ""
    full = " pk-wide" if layout.is_wide(table) else ""
    display(HTML(f'<div class="pk-table{full}">{head}<div class="pk-scroll"{label}>{styler.to_html()}</div></div>'))


def show_figure(fig) -> None:
    """Show a figure once and release it (a returned figure is not drawn a second time): a PNG at
    :data:`probekit.theme.PIXEL_RATIO` × the theme's resolution, shown at its display size (the output's width
    and height metadata, which the book's image tag carries); nothing for None (a figure function with nothing to
    draw, e.g. no concept shown often enough)."""
    if fig is None:
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI * PIXEL_RATIO)
    plt.close(fig)
    png = buf.getvalue()
    width, height = struct.unpack(">II", png[16:24])   # the PNG header's IHDR chunk
    display({"image/png": base64.b64encode(png).decode("ascii")}, raw=True,
            metadata={"image/png": {"width": round(width / PIXEL_RATIO), "height": round(height / PIXEL_RATIO)}})


def show_text(text: str) -> None:
    """``text`` as Markdown; nothing for an empty text (an empty Markdown output renders as its repr,
    "<IPython.core.display.Markdown object>")."""
    if text.strip():
        display(Markdown(text))


def show_claims(claims) -> None:
    """The discussion: each claim's sentence as a bullet."""
    display(Markdown(render_claims(claims) if claims else "*Nothing to state: no model was scored.*"))
