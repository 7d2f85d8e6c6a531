"""The one seaborn theme of every probekit figure (the book's and the toy model card's), its chance-line style, and
the page a figure is shown on: the book's text column is :data:`COLUMN_PX` wide at a 1,400-px window and a wider
image is scaled down to it, so a figure at most :data:`COLUMN_IN` inches wide at :data:`DPI` (saved with its
:data:`PAD_IN` margins) shows a font of s points as s × DPI / 72 px on screen."""

from __future__ import annotations

CONTEXT = "notebook"
STYLE = "whitegrid"
PALETTE = "colorblind"
CHANCE_STYLE = dict(color="0.35", lw=1, ls="--")

#: the text column's width at a 1,400-px window (px; Sphinx book theme), the figures' resolution (dots per inch),
#: the margin a figure is saved with on each side (inches) and the widest figure that fits the column with them
COLUMN_PX = 836
DPI = 100
PAD_IN = 0.08
COLUMN_IN = COLUMN_PX / DPI - 2 * PAD_IN
#: a page's figure is a PNG of this many pixels per display pixel (saved at PIXEL_RATIO × DPI, shown at its size
#: at DPI): sharp on high-density screens and where the page scales it down
PIXEL_RATIO = 2
#: the least font size of any figure text (points): 12.5 px on screen, below the theme's tick labels (9.35 pt) and
#: above the page's 11-px floor for figure text (its table text is 13.6 px)
SMALL = 9


def theme() -> None:
    """Set the theme (called on import of :mod:`probekit.report`, and by the model card's figure)."""
    import seaborn as sns
    sns.set_theme(context=CONTEXT, style=STYLE, palette=PALETTE, font_scale=0.85,
                  rc={"figure.dpi": DPI, "savefig.bbox": "tight", "savefig.pad_inches": PAD_IN,
                      "axes.titlesize": 10})
