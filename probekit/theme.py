"""The one seaborn theme of every probekit figure (the book's and the toy model card's) and its chance-line
style."""

from __future__ import annotations

CONTEXT = "notebook"
STYLE = "whitegrid"
PALETTE = "colorblind"
CHANCE_STYLE = dict(color="0.35", lw=1, ls="--")


def theme() -> None:
    """Set the theme (called on import of :mod:`probekit.report`, and by the model card's figure)."""
    import seaborn as sns
    sns.set_theme(context=CONTEXT, style=STYLE, palette=PALETTE, font_scale=0.85,
                  rc={"figure.dpi": 100, "savefig.bbox": "tight", "axes.titlesize": 10})
