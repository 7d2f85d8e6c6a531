"""Figures from result rows, all in one seaborn theme: bars with 95% intervals, heatmaps, ours beside the paper.

Every function takes result rows (:mod:`probekit.results`), draws on a given axis or a new figure and returns
the figure; values are shown in percent unless the metric is plain (see :mod:`probekit.numbers`).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from probekit.numbers import is_plain
from probekit.theme import CHANCE_STYLE, COLUMN_IN, SMALL

if TYPE_CHECKING:
    from matplotlib.figure import Figure


#: the space around each panel (inches): a caption stands clear of the image above it
PANEL_PAD_IN = 0.06


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], **kwargs: Any) -> tuple[Figure, Any]:
    """``plt.subplots`` for the book: at most the text column wide (:data:`probekit.theme.COLUMN_IN`), so the page
    never scales the figure and its fonts down, and in constrained layout, which keeps titles, legends and colour
    bars inside the figure and apart."""
    width, height = figsize
    fig, axes = plt.subplots(nrows, ncols, figsize=(min(width, COLUMN_IN), height), layout="constrained", **kwargs)
    fig.get_layout_engine().set(h_pad=PANEL_PAD_IN, w_pad=PANEL_PAD_IN)
    return fig, axes


#: an x tick label's longest line (characters) under vertical bars, and a character's mean width (inches) at the
#: theme's font sizes
TICK_CHARS = 12
CHAR_IN = 0.075


def fill(text: str, inches: float) -> str:
    """``text`` on lines about ``inches`` wide at the theme's font sizes."""
    return textwrap.fill(text, max(int(inches / CHAR_IN), TICK_CHARS), break_long_words=False)


def _scale(rows: pd.DataFrame) -> float:
    metrics = set(rows["metric"]) if len(rows) else set()
    return 1.0 if metrics and all(is_plain(m) for m in metrics) else 100.0


def _order(values: pd.Series, given: Sequence | None) -> list:
    present = list(dict.fromkeys(values))
    return [v for v in given if v in present] if given is not None else present


def _axis(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    fig, ax = subplots(figsize=figsize)
    return fig, ax


def bar_ci(rows: pd.DataFrame, x: str, hue: str | None = None, *, ax=None, order: Sequence | None = None,
           hue_order: Sequence | None = None, chance: bool = True, title: str | None = None,
           ylabel: str | None = None, horizontal: bool = False, hatch: str | None = None, legend: bool = True,
           figsize=None):
    """Bars of ``value`` per ``x`` (and ``hue``), with the rows' 95% intervals as error bars and each bar
    group's chance level as a dashed line.  One row per (x, hue)."""
    scale = _scale(rows)
    xs = _order(rows[x], order)
    hues = _order(rows[hue], hue_order) if hue else [None]
    fig, ax = _axis(ax, figsize or ((4.5, 0.35 * len(xs) * len(hues) + 1.2) if horizontal
                                     else (1.2 + 0.5 * len(xs) * len(hues) + 0.4 * len(xs), 3.2)))
    width = 0.8 / len(hues)
    colours = sns.color_palette(n_colors=max(len(hues), 1))
    pos = np.arange(len(xs))
    for j, h in enumerate(hues):
        part = rows if h is None else rows[rows[hue] == h]
        part = part.drop_duplicates(x).set_index(x).reindex(xs)
        value = part["value"].to_numpy(float) * scale
        low = value - part["ci_low"].to_numpy(float) * scale
        high = part["ci_high"].to_numpy(float) * scale - value
        where = pos + (j - (len(hues) - 1) / 2) * width
        draw = ax.barh if horizontal else ax.bar
        draw(where, value, width, color=colours[j], hatch=hatch, edgecolor="white" if hatch else None,
             label=None if h is None else str(h))
        has = np.isfinite(low) & np.isfinite(high) & np.isfinite(value)
        if has.any():  # a paper's number has no interval: no error bar at all, not a zero-width one
            err = [np.clip(low[has], 0, None), np.clip(high[has], 0, None)]
            ax.errorbar(value[has] if horizontal else where[has], where[has] if horizontal else value[has],
                        **{"xerr" if horizontal else "yerr": err}, fmt="none", ecolor="0.2", lw=1, capsize=2)
        if chance and "chance" in part:
            for p, c in zip(where, part["chance"].to_numpy(float)):
                if np.isfinite(c):
                    line = ax.vlines if horizontal else ax.hlines
                    line(c * scale, p - width / 2, p + width / 2, **CHANCE_STYLE)
    if horizontal:
        ax.set_yticks(pos, [str(v) for v in xs])
        ax.invert_yaxis()
    else:  # a long label on lines of a few words, so that the labels of narrow groups stay apart
        ax.set_xticks(pos, [textwrap.fill(str(v), TICK_CHARS, break_long_words=False, break_on_hyphens=False)
                            for v in xs])
    unit = "" if scale == 1 else " (%)"
    label = (ylabel or ", ".join(dict.fromkeys(rows["metric"]))) + unit
    (ax.set_xlabel if horizontal else ax.set_ylabel)(label)
    if scale == 100:
        (ax.set_xlim if horizontal else ax.set_ylim)(0, 100)
    if title:
        ax.set_title(title)
    if legend and hue and len(hues) > 1:   # beside the axes: inside, it would cover bars that reach 100%
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


def against_chance(value: np.ndarray, chance: np.ndarray, top: float = 100.0) -> np.ndarray:
    """Where each value stands between 0 and its chance level (-1 … 0) or between chance and ``top`` (0 … 1): the
    colour of a heatmap centred on each cell's own chance (0: at chance; NaN chance: 0, no colour; NaN value:
    NaN, a blank cell)."""
    value, chance = np.asarray(value, float), np.asarray(chance, float)
    below = (value - chance) / np.where(chance > 0, chance, np.nan)
    above = (value - chance) / np.where(top > chance, top - chance, np.nan)
    out = np.clip(np.where(value < chance, below, np.where(value > chance, above, 0.0)), -1, 1)
    return np.where(np.isnan(value), np.nan, np.where(np.isnan(chance), 0.0, out))


def heatmap(rows: pd.DataFrame, index: str, columns: str, *, ax=None, index_order: Sequence | None = None,
            column_order: Sequence | None = None, title: str | None = None, annot: bool = True, cmap: str = "vlag_r",
            figsize=None):
    """``value`` as an index × columns heatmap (percent unless plain), annotated; NaN cells left blank.  Percent
    cells are coloured by where they stand against their own chance level (:func:`against_chance`): white at
    chance, blue towards 100%, red towards 0%, whatever the chance (16.7% or 50%); a cell without a chance level
    is left white."""
    scale = _scale(rows)
    wide = rows.pivot_table(index=index, columns=columns, values="value", aggfunc="first", sort=False) * scale
    wide = wide.reindex(index=_order(pd.Series(wide.index), index_order),
                        columns=_order(pd.Series(wide.columns), column_order))
    longest = max((len(str(v)) for v in wide.index), default=0)   # the row labels stand left of the cells
    own = ax is None
    fig, ax = _axis(ax, figsize or (2.0 + 0.75 * wide.shape[1] + CHAR_IN * longest, 1.0 + 0.4 * wide.shape[0]))
    fmt = ".0f" if scale == 100 else ".2f"
    if scale == 100:
        chance = (rows.pivot_table(index=index, columns=columns, values="chance", aggfunc="first", sort=False,
                                   dropna=False).reindex_like(wide) * scale) if "chance" in rows else wide * np.nan
        colour = pd.DataFrame(against_chance(wide, chance), index=wide.index, columns=wide.columns)
        sns.heatmap(colour, ax=ax, annot=wide.map(lambda v: "" if np.isnan(v) else f"{v:{fmt}}") if annot else False, fmt="", cmap=cmap,
                    center=0, vmin=-1, vmax=1, linewidths=0.5, annot_kws={"fontsize": SMALL},
                    cbar_kws={"ticks": [-1, 0, 1]})
        ax.collections[0].colorbar.set_ticklabels(["0%", "chance", "100%"])
    else:
        sns.heatmap(wide, ax=ax, annot=annot, fmt=fmt, cmap=cmap, linewidths=0.5, annot_kws={"fontsize": SMALL})
    ax.grid(False)   # the theme's grid would cross the blank cells
    ax.tick_params(axis="y", rotation=0)   # row labels read across, not stacked end to end
    ax.set_xlabel(columns)
    ax.set_ylabel(index)
    if title and own:   # above the colour bar too, on lines no wider than the figure
        fig.suptitle(fill(title, fig.get_figwidth()), fontsize=plt.rcParams["axes.titlesize"])
    elif title:
        ax.set_title(title)
    return fig


#: the least gap between two tick labels (px)
LABEL_GAP_PX = 2


def thin_ticks(ax, ticks: Sequence[float], labels: Sequence[str]) -> None:
    """Put ``labels`` at the x ``ticks`` of ``ax``, leaving blank each that would touch the last one kept, left to
    right (close values, α = 0.2 and 0.3 in a narrow panel, stay apart).  Call it when everything else is drawn
    (it lays the figure out)."""
    ax.set_xticks(ticks, labels)
    ax.figure.draw_without_rendering()
    renderer, kept, shown = ax.figure.canvas.get_renderer(), None, []
    for label in ax.get_xticklabels():
        box = label.get_window_extent(renderer)
        touches = kept is not None and box.padded(LABEL_GAP_PX).overlaps(kept)
        shown.append("" if touches else label.get_text())
        kept = kept if touches else box
    ax.set_xticks(ticks, shown)


def paper_vs_ours(ours: pd.DataFrame, paper: pd.DataFrame, x: str, hue: str | None = None, *,
                  order: Sequence | None = None, hue_order: Sequence | None = None, ours_title: str = "ours",
                  paper_title: str = "the paper", ylabel: str | None = None, figsize=None) -> Figure:
    """Two panels on one y scale, each as wide as its bar groups and its title on lines that fit it, their bar
    groups in one order (``order``, or ours then the paper's others): our rows with intervals, and the paper's rows
    (hatched, no intervals); one legend beside the right panel, and one beside ours
    too when its ``hue`` values are not the paper's."""
    if order is None:   # both panels in one order: ours, then the paper's others
        order = list(dict.fromkeys([*ours[x], *paper[x]]))
    n_ours, n_paper = (max(len(set(rows[x])), 1) for rows in (ours, paper))
    fig, axes = subplots(1, 2, figsize=figsize or (2 * (1.5 + 0.6 * max(n_ours, n_paper) * 2), 3.2), sharey=True,
                         gridspec_kw={"width_ratios": [n_ours, n_paper]})
    panel = 0.75 * fig.get_figwidth() / (n_ours + n_paper)   # inches per bar group, less the labels and legend
    apart = hue is not None and set(ours[hue]) != set(paper[hue])
    bar_ci(ours, x, hue, ax=axes[0], order=order, hue_order=hue_order, title=fill(ours_title, panel * n_ours),
           ylabel=ylabel, legend=not len(paper) or apart)
    if len(paper):
        bar_ci(paper, x, hue, ax=axes[1], order=order, hue_order=hue_order, title=fill(paper_title, panel * n_paper),
               ylabel=ylabel, hatch="//")
        axes[1].set_ylabel("")   # the shared scale is labelled once, on the left
    else:
        axes[1].set_axis_off()
    return fig
