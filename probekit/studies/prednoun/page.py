"""What the predicate–noun chapter shows beyond the shared report calls: its tables beside the paper's, example
pairs with the target's (green) and distractor's (red) boxes, the per-concept spread (Fig. 3/5) and the (target,
distractor) heatmaps (Fig. 6), and on the toy world the limbs' yardstick and split.  Every function takes a
:class:`probekit.results.StudyResult` of :mod:`probekit.studies.prednoun.study` (or its :class:`~probekit.studies.prednoun.study.PrednounFacts`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from PIL import Image

from probekit.data.prednoun import box_to_pixels
from probekit.papers import prednoun as paper
from probekit.report.figures import CHANCE_STYLE, heatmap, paper_vs_ours, subplots
from probekit.numbers import cell, pct
from probekit.report.format import table as wide
from probekit.report.show import show_table, show_text
from probekit.claims import ABOVE, BELOW, NO_CHANCE, UNRESOLVED, versus_chance
from probekit.results import StudyResult, concat, one_or_none, select
from probekit.studies.lab import PARENT, TARGET
from probekit.studies.prednoun.lab import LIMBS_PROBE
from probekit.studies.prednoun.study import RELEASED, PrednounFacts
from probekit.toymodels import zoo
from probekit.toyworld.prednoun import LIMBS_ALIKE, LIMBS_DIFFER

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_LAYOUT = {  # table number: (probe, conditions, subsets, columns, our models (fact))
    1: ("pairs", ["full", "cropped"], ["all"], "condition", "main_models"),
    7: ("pairs-alt", ["full", "cropped"], ["all"], "condition", "main_models"),
    8: ("pairs", ["full", "cropped"], ["noun", "predicate"], ["condition", "subset"], "main_models"),
    6: ("pairs", ["full"], ["all"], "condition", "clip_models"),
}
# the last level listed sorts the outermost columns
_ORDER = {"subset": list(paper.FACTORS) + ["noun", "predicate"], "condition": ["full", "cropped"],
          "metric": ["r", "p"]}


def _both(result: StudyResult, number: int, **where: Any) -> pd.DataFrame:
    ours = select(result.ours(), **where)
    theirs = select(result.reported(), source=f"{paper.PAPER}, Table {number}", **where)
    return concat([ours, theirs])


def table(result: StudyResult, number: int) -> pd.DataFrame:
    """Our rows beside the paper's Table ``number`` (1, 6, 7, 8: pair accuracy; 9: the confounds' r and p)."""
    if number not in (*_LAYOUT, 9):
        raise ValueError(f"no Table {number} in the predicate–noun chapter; tables: 1, 6, 7, 8, 9")
    theirs = list(select(result.reported(), source=f"{paper.PAPER}, Table {number}")["model"])
    if number == 9:
        rows = _both(result, 9, probe="confounds", model=list(result.facts.main_models) + theirs)
        return wide(rows, ["source", "model"], ["subset", "metric"], order=_ORDER)
    probe, conditions, subsets, columns, models = _LAYOUT[number]
    rows = _both(result, number, probe=probe, condition=conditions, subset=subsets, metric="pair_accuracy",
                 model=list(getattr(result.facts, models)) + theirs)
    shown = wide(rows, ["source", "model"], columns, order=_ORDER, with_n=True)   # the paper's rows have no n
    if number == 6:
        shown[["architecture", "pretraining data"]] = [paper.TABLE6_MODELS.get(m, ("", "")) for _, m in shown.index]
    return shown


def released_table(result: StudyResult, number: int) -> pd.DataFrame:
    """The paper's Table ``number`` (1, 2, 7, 8) recomputed from the authors' released outputs (with intervals),
    beside the numbers the paper prints (none for Table 2, whose models are the CTRL_* folders)."""
    if number not in (1, 2, 7, 8):
        raise ValueError(f"the released outputs give Tables 1, 2, 7 and 8, not Table {number}")
    probe, conditions, subsets, columns, _ = _LAYOUT[1 if number == 2 else number]
    released = select(result.reported(), source=RELEASED)
    ctrl = [m for m in result.facts.released if m.startswith("CTRL_")]
    models = ctrl if number == 2 else [m for m in result.facts.released if m not in ctrl]
    where = dict(probe=probe, condition=conditions, subset=subsets, metric="pair_accuracy", model=models)
    rows = concat([select(released, **where),
                   select(result.reported(), source=f"{paper.PAPER}, Table {number}", **where)])
    return wide(rows, ["source", "model"], columns, order=_ORDER)


def accuracy_figure(result: StudyResult) -> Figure | None:
    """Table 1 as bars: our pair accuracy (95% intervals) on full and cropped images beside the paper's."""
    where = dict(probe="pairs", subset="all", metric="pair_accuracy", condition=["full", "cropped"])
    ours = select(result.ours(), model=result.facts.main_models, **where)
    theirs = select(result.reported(), source=f"{paper.PAPER}, Table 1", **where)
    return paper_vs_ours(ours, theirs, x="model", hue="condition", hue_order=["full", "cropped"], figsize=(10, 3.4))


def _draw(ax: Axes, r: pd.Series, scored: bool) -> None:
    ax.set_axis_off()
    if r["image"] is None or (isinstance(r["image"], float) and math.isnan(r["image"])):
        return
    img = Image.open(r["image"]).convert("RGB")
    ax.imshow(img)
    for box, colour in ((r["target_box"], "tab:green"), (r["distractor_box"], "tab:red")):
        left, top, right, bottom = box_to_pixels(box, *img.size)
        ax.add_patch(plt.Rectangle((left, top), right - left, bottom - top, fill=False, lw=2, color=colour))
    if scored:
        ax.set_title(f"✓ {r['sentence_target']}: {r['s_target']:.2f}\n"
                     f"✗ {r['sentence_distractor']}: {r['s_distractor']:.2f}", fontsize=9)
    else:
        ax.set_title(f"✓ {r['sentence_target']}\n✗ {r['sentence_distractor']}", fontsize=9)


def example_pair(result: StudyResult) -> Figure | None:
    """The first pair: example and counter-example, the target's box green, the distractor's red."""
    items = result.data["items"]
    fig, axes = subplots(1, 2, figsize=(7, 3.8))
    for ax, (_, r) in zip(axes, items[items["pair_id"] == items["pair_id"].iloc[0]].iterrows()):
        _draw(ax, r, scored=False)
    return fig


def wrong_pairs(result: StudyResult, model: str, condition: str = "full", limit: int = 2) -> Figure | None:
    """Up to ``limit`` pairs ``model`` gets wrong (default template), each sentence with its score; None if none."""
    scores = select(result.data["scores"], model=model, condition=condition, template="default")
    triplet_right = scores["s_target"] > scores["s_distractor"]
    wrong = list(dict.fromkeys(scores.loc[~triplet_right, "pair_id"]))[:limit]
    if not wrong:
        return None
    fig, axes = subplots(len(wrong), 2, figsize=(7, 3.9 * len(wrong)), squeeze=False)
    for row_axes, pair_id in zip(axes, wrong):
        for ax, (_, r) in zip(row_axes, scores[scores["pair_id"] == pair_id].iterrows()):
            _draw(ax, r, scored=True)
    fig.suptitle(model, fontsize=10)
    return fig


def concepts(result: StudyResult, released: bool = False) -> Figure | None:
    """Fig. 3/5: pair accuracy per noun and per predicate, ± the std over the bootstrap resamples (the paper's
    spread), of our models or (``released``) of the authors' released outputs; None when no concept is frequent
    enough."""
    per = result.data["released_concepts" if released else "concepts"]
    kinds = [k for k in ("noun", "predicate") if len(per) and (per["kind"] == k).any()]
    if not kinds:
        return None
    sizes = [per.loc[per["kind"] == k, "label"].nunique() for k in kinds]
    fig, axes = subplots(len(kinds), 1, figsize=(7, 1.2 + 0.35 * sum(sizes)), squeeze=False,
                         gridspec_kw={"height_ratios": sizes})
    models = list(dict.fromkeys(per["model"]))
    colours = dict(zip(models, sns.color_palette(n_colors=len(models))))
    for ax, kind in zip(axes[:, 0], kinds):
        part = per[per["kind"] == kind]
        y = {label: i for i, label in enumerate(part.groupby("label")["accuracy"].mean().sort_values().index)}
        for j, m in enumerate(models):
            s = part[part["model"] == m]
            offset = (j - (len(models) - 1) / 2) * 0.25
            ax.errorbar(100 * s["accuracy"], [y[label] + offset for label in s["label"]], xerr=100 * s["std"],
                        fmt="o", ms=4, capsize=2, color=colours[m], label=m)
        ax.axvline(100 * paper.PAIR_CHANCE, **CHANCE_STYLE)
        ax.set_yticks(range(len(y)), list(y))
        ax.set_xlim(-2, 102)
        ax.set_title(f"{kind}s")
    axes[-1, 0].set_xlabel(f"pair accuracy (%), ± std over {result.params['n_resamples']} resamples")
    axes[0, 0].legend(loc="lower left")
    return fig


def tuples(result: StudyResult, released: bool = False) -> Figure | None:
    """Fig. 6: triplet accuracy of each (target, distractor) tuple, one heatmap per model and swap, of our models
    or (``released``) of the authors' released outputs; None when no tuple is frequent enough."""
    per = result.data["released_tuples" if released else "tuples"]
    if not len(per):
        return None
    models, swaps = list(dict.fromkeys(per["model"])), [s for s in ("noun", "predicate") if (per["swap"] == s).any()]
    fig, axes = subplots(len(models), len(swaps), figsize=(4.6 * len(swaps), 3.8 * len(models)), squeeze=False)
    for i, m in enumerate(models):
        for j, swap in enumerate(swaps):
            part = per[(per["model"] == m) & (per["swap"] == swap)]
            heatmap(part.assign(value=part["accuracy"], metric="triplet_accuracy", chance=0.5), "target",
                    "distractor", ax=axes[i, j], title=f"{m}: {swap} swaps")
            axes[i, j].tick_params(axis="x", rotation=90)   # many distractors: their names stand, not side by side
    return fig


def limbs_note(facts: PrednounFacts, metric: str) -> str:
    """A caption's ending on the toy world: at most what binding by the limbs' colour alone reaches in ``metric``
    ("pair_accuracy" or "triplet_accuracy"); "" on other data."""
    limbs = facts.limbs_only
    return (f"; binding by the limbs' colour alone: at most {pct(limbs[metric])} expected on these items (a coin flip "
            f"on the look-alike ones may land above it)" if limbs else "")


def strata_text(facts: PrednounFacts) -> str:
    """How the toy items' pairs are drawn: how many in each stratum (two kinds whose limbs look alike, or differ),
    what the "all" rows then weigh; "" on other data."""
    if not facts.limbs_pairs:
        return ""
    alike, differ = facts.limbs_pairs.get(LIMBS_ALIKE, 0), facts.limbs_pairs.get(LIMBS_DIFFER, 0)
    return (f"The pairs are drawn in two strata, so that each part of the probe has its own n: {alike} pairs of two "
            f"kinds whose limbs look alike (only the busts tell whose pose is whose: the headline) and {differ} of "
            f"kinds whose limbs differ (the limbs tell: a control). The rows over all pairs weigh the two parts "
            f"{pct(alike / (alike + differ))} to {pct(differ / (alike + differ))}, as drawn, not as often as the "
            "world's kinds fall together.")


def limbs_rows(result: StudyResult) -> pd.DataFrame:
    """Toy world: the full-image rows of the chapter's and the lab's models split by whether the two agents' limbs
    look alike (probe ``pairs-limbs``; not the lab's 2 x 2), one per model, subset and metric."""
    split = concat([select(result.ours(), probe=LIMBS_PROBE, condition="full"),
                    select(result.data["lab"], probe=LIMBS_PROBE, condition="full")])
    return split.drop_duplicates(["model", "subset", "metric"])


def show_limbs_split(result: StudyResult) -> None:
    """Toy world: pair and triplet accuracy on full images of the chapter's and the lab's models, by whether the two
    agents' limbs look alike; a line saying why not elsewhere."""
    split = limbs_rows(result)
    if not len(split):
        show_text("Not split: only the toy world draws agents whose limbs tell their kind up to a pair.")
        return
    show_table(wide(split, "model", ["subset", "metric"],
                    with_n=True), caption=("Pair accuracy (chance 25%) and triplet accuracy (chance 50%) on full "
                                           "images by whether the two agents' limbs look alike, value [95% CI] (n)"))


#: where the two agents of a pair stand by their limbs, in words
_LIMBS_WHERE = {LIMBS_DIFFER: "the two agents' limbs differ", LIMBS_ALIKE: "their limbs look alike"}
_VERSUS = {ABOVE: "above chance", BELOW: "below chance", UNRESOLVED: "not resolved from chance",
           NO_CHANCE: "without a chance level"}


def parent_by_limbs(checks: pd.DataFrame, split: pd.DataFrame) -> str:
    """Where each knock-out's parent (the parent lines of the lab's ``checks``, named with the targets whose zoo
    parent it is) is above chance on full-image triplets, by whether the two agents' limbs look alike (``split``:
    :func:`limbs_rows`), each part judged against its chance level by its 95% interval
    (:func:`probekit.claims.versus_chance`); "" without those rows."""
    out = []
    for model in dict.fromkeys(checks.loc[checks["role"] == PARENT, "model"]):
        found = [(where, one_or_none(split, model=model, subset=subset, metric="triplet_accuracy"))
                 for subset, where in _LIMBS_WHERE.items()]
        parts = [f"{_VERSUS[versus_chance(r)]} where {where}, {cell(r, with_n=True, unit=True)}"
                 for where, r in found if r is not None]
        of = [f"`{m}`" for m in dict.fromkeys(checks.loc[checks["role"] == TARGET, "model"])
              if getattr(zoo.ALL.get(m), "parent", None) == model]
        if parts:
            out.append(f"The parent of {' and '.join(of) or 'a knock-out'}, `{model}`, told the binding, on "
                       "full-image triplet accuracy: " + "; ".join(parts) + ".")
    return " ".join(out)
