"""The report layer: result rows -> what a reader sees (tables, figures, discussion sentences).

Nothing below this layer lays out tables or draws (numbers and cells are formatted by ``probekit.numbers``,
which the toy zoo's model card shares); nothing here computes a metric.
"""

from probekit.numbers import cell, number, pct
from probekit.report.export import export
from probekit.report.figures import bar_ci, heatmap, paper_vs_ours
from probekit.report.format import counts, render_claim, render_claims, table
from probekit.report.show import show_claims, show_figure, show_table, show_text
from probekit.theme import theme

theme()

__all__ = ["bar_ci", "heatmap", "paper_vs_ours", "theme", "cell", "counts", "number", "pct", "render_claim",
           "render_claims", "table", "show_claims", "show_figure", "show_table", "show_text", "export"]
