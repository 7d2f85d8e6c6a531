"""Putting tables, figures, text and discussions on a chapter's page (IPython display), one style for all."""

from __future__ import annotations

import base64
import hashlib
import io
import struct

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from probekit.report import layout
from probekit.report.format import render_claims
from probekit.theme import DPI, PIXEL_RATIO

TABLE_CLASS = "probekit-table"
SHORT_CELL = 32  # characters: "100.0 [100.0, 100.0] (n = 1000)" fits


def show_table(table: pd.DataFrame, caption: str | None = None) -> None:
    """A table in the book's one table style (caption above, index bold, no row striping by pandas), each
    number's interval on a line under it; a table wider than the text column is shown as several, each with
    the row labels and the caption numbered "(1 of 2)", ... (:mod:`probekit.report.layout`)."""
    groups = layout.column_groups(table)
    for k, columns in enumerate(groups):
        part = f"({k + 1} of {len(groups)})" if len(groups) > 1 else ""
        _show_one(table.iloc[:, list(columns)], " ".join(t for t in (caption, part) if t) or None)


def _show_one(table: pd.DataFrame, caption: str | None) -> None:
    # the table's HTML id from its content, not pandas' random one, so that a page rebuilt from the same numbers
    # is the same file
    uuid = hashlib.sha256(f"{caption}\n{table.to_csv()}".encode()).hexdigest()[:8]
    styler = table.style.set_uuid(uuid).set_table_attributes(f'class="{TABLE_CLASS}"').format(layout.cell_html)
    # short cells (a number with its interval) stay on one line each; long text wraps, in a column kept readable
    if table.index.is_unique and table.columns.is_unique:  # pandas styles cells by label
        styler = styler.set_td_classes(table.map(lambda v: "pk-short" if len(str(v)) <= SHORT_CELL else "pk-text"))
    if caption:
        styler = styler.set_caption(caption)
    styler = styler.set_table_styles([{"selector": "caption", "props": "caption-side: top; text-align: left;"},
                                      {"selector": "th.row_heading", "props": "font-weight: bold;"}], overwrite=False)
    display(styler)


def show_figure(fig) -> None:
    """Show a figure once and release it (a returned figure is not drawn a second time): a PNG at
    :data:`probekit.theme.PIXEL_RATIO` × the theme's resolution, shown at its display size (the output's width
    and height metadata, which the book's image tag carries)."""
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
