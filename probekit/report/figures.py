"""Figures from result rows, all in one seaborn theme: bars with 95% intervals, heatmaps, ours beside the paper.

Every function takes result rows (:mod:`probekit.results`), draws on a given axis or a new figure and returns
the figure; values are shown in percent unless the metric is plain (see :mod:`probekit.numbers`).
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from probekit.numbers import is_plain
from probekit.theme import CHANCE_STYLE


def _scale(rows: pd.DataFrame) -> float:
    metrics = set(rows["metric"]) if len(rows) else set()
    return 1.0 if metrics and all(is_plain(m) for m in metrics) else 100.0


def _order(values: pd.Series, given: Sequence | None) -> list:
    present = list(dict.fromkeys(values))
    return [v for v in given if v in present] if given is not None else present


def _axis(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize)
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
    (ax.set_yticks if horizontal else ax.set_xticks)(pos, [str(v) for v in xs])
    if horizontal:
        ax.invert_yaxis()
    unit = "" if scale == 1 else " (%)"
    label = (ylabel or ", ".join(dict.fromkeys(rows["metric"]))) + unit
    (ax.set_xlabel if horizontal else ax.set_ylabel)(label)
    if scale == 100:
        (ax.set_xlim if horizontal else ax.set_ylim)(0, 100)
    if title:
        ax.set_title(title)
    if legend and hue and len(hues) > 1:   # beside the axes: inside, it would cover bars that reach 100%
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


def heatmap(rows: pd.DataFrame, index: str, columns: str, *, ax=None, index_order: Sequence | None = None,
            column_order: Sequence | None = None, title: str | None = None, annot: bool = True, cmap: str = "vlag_r",
            center: float | None = None, figsize=None):
    """``value`` as an index × columns heatmap (percent unless plain), annotated; NaN cells left blank.
    ``center`` defaults to the rows' common chance level, so colour says above or below chance."""
    scale = _scale(rows)
    wide = rows.pivot_table(index=index, columns=columns, values="value", aggfunc="first", sort=False) * scale
    wide = wide.reindex(index=_order(pd.Series(wide.index), index_order),
                        columns=_order(pd.Series(wide.columns), column_order))
    if center is None:
        chances = rows["chance"].dropna().unique()
        center = float(chances[0]) * scale if len(chances) == 1 else None
    fig, ax = _axis(ax, figsize or (1.5 + 0.75 * wide.shape[1], 1.0 + 0.4 * wide.shape[0]))
    sns.heatmap(wide, ax=ax, annot=annot, fmt=".0f" if scale == 100 else ".2f", cmap=cmap, center=center,
                vmin=0 if scale == 100 else None, vmax=100 if scale == 100 else None, linewidths=0.5,
                cbar_kws={"label": "%" if scale == 100 else ""}, annot_kws={"fontsize": 8})
    ax.set_xlabel(columns)
    ax.set_ylabel(index)
    if title:
        ax.set_title(title)
    return fig


def paper_vs_ours(ours: pd.DataFrame, paper: pd.DataFrame, x: str, hue: str | None = None, *,
                  order: Sequence | None = None, hue_order: Sequence | None = None, ours_title: str = "ours",
                  paper_title: str = "the paper", ylabel: str | None = None, figsize=None):
    """Two panels on one y scale: our rows with intervals, and the paper's rows (hatched, no intervals); one
    legend, beside the right panel."""
    n_x = max(len(set(ours[x])) if len(ours) else 1, len(set(paper[x])) if len(paper) else 1)
    fig, axes = plt.subplots(1, 2, figsize=figsize or (2 * (1.5 + 0.6 * n_x * 2), 3.2), sharey=True)
    bar_ci(ours, x, hue, ax=axes[0], order=order, hue_order=hue_order, title=ours_title, ylabel=ylabel,
           legend=not len(paper))
    if len(paper):
        bar_ci(paper, x, hue, ax=axes[1], order=order, hue_order=hue_order, title=paper_title, ylabel=ylabel,
               hatch="//")
    else:
        axes[1].set_axis_off()
    fig.tight_layout()
    return fig
