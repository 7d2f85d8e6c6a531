"""The conceptual page's own figures, tables and texts (its data paragraph, the fine-tuning notice, the sweep's text
and table, the patching table); its figures: the Probe-B views of one image, the fine-tuning losses and the α sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from probekit.metrics.background import LABEL, VIEWS
from probekit.report.figures import fill, subplots, thin_ticks
from probekit.numbers import cell
from probekit.report.format import table
from probekit.results import select
from probekit.theme import COLUMN_IN

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from probekit.claims import Claim
    from probekit.studies.conceptual.facts import ConceptualFacts

#: the sweep table's columns: Probe-R predicate swaps, Probe-C composition swaps and the held-out task, their
#: scores and paired changes from the original model
SWEEP_SUBSETS = ["probe-r predicate_swap", "probe-c composition", "general"]
SWEEP_METRICS = ["mu_c", "acc", "group", "top1", "mu_c_diff", "group_diff", "top1_diff"]


def views_panel(example: pd.DataFrame) -> Figure:
    """One Probe-B image as the model sees it: the original x0 (top left), then a column per filler and a row per
    view, x̃0 (patched) and x̃1 (filled), under x0 where the item is single-object (x0 is background-removed too).
    ``example``: rows of ``filler`` and the paths of the three views (``StudyResult.data["probe_b_example"]``)."""
    views = list(VIEWS[1:] if example["x0"].iloc[0] == example["original"].iloc[0] else VIEWS)
    fillers = list(example["filler"])
    fig, axes = subplots(len(views), len(fillers) + 1, figsize=(min(COLUMN_IN, 1.75 * (len(fillers) + 1)),
                                                                1.85 * len(views)), squeeze=False)
    panels = [(axes[0, 0], "original", example["original"].iloc[0])]
    panels += [(axes[i, j + 1], f"{LABEL[v]} {f}", p) for i, v in enumerate(views)
               for j, (f, p) in enumerate(zip(fillers, example[v]))]
    for ax, name, path in panels:
        ax.imshow(plt.imread(path))
        ax.set_title(name)
    for ax in axes.flat:
        ax.axis("off")
    return fig


def training_loss(history: pd.DataFrame, window: int = 5) -> Figure:
    """The fine-tuning loss (ITM + contrastive, rolling mean over ``window`` steps) per encoder setting."""
    smooth = history.assign(loss=history.groupby("encoders")["loss"].transform(
        lambda s: s.rolling(window, min_periods=1).mean()))
    fig, ax = subplots(figsize=(4.2, 3.2))
    sns.lineplot(smooth, x="step", y="loss", hue="encoders", ax=ax)
    ax.set_title("training loss (ITM + contrastive)")
    return fig


#: the α-sweep figure's default panels: (subset, metric, label), the probes' and the held-out task's
SWEEP_PANELS = (("probe-r predicate_swap", "mu_c", "Probe-R predicate swap μ(c)"),
                ("probe-c composition", "group", "Probe-C composition group"),
                ("general", "top1", "held-out task top-1"))
#: how far apart the encoder settings' points stand at one α (a share of the α axis), so that intervals do not cover
#: each other
DODGE = 0.025


def alpha_sweep(sweep: pd.DataFrame, panels: Sequence[tuple[str, str, str]] = SWEEP_PANELS) -> Figure:
    """Each metric along the patching weight α, one panel per metric (its own y scale, which holds every point's
    95% interval and α = 0, the original model), one line per encoder setting with its intervals (one legend above
    the panels), α on the x axis.  ``sweep``: patching rows with ``encoders`` and ``alpha`` columns; ``panels``:
    (subset, metric, label), one panel each.  An α label that would touch its neighbour's is left out
    (:func:`probekit.report.figures.thin_ticks`)."""
    fig, axes = subplots(1, len(panels), figsize=(COLUMN_IN, 3.0), squeeze=False)
    encoders = list(dict.fromkeys(sweep["encoders"]))
    alphas = sorted(set(sweep["alpha"]))
    colours = dict(zip(encoders, sns.color_palette(n_colors=max(len(encoders), 1))))
    for ax, (subset, metric, label) in zip(axes[0], panels):
        rows = sweep[(sweep["subset"] == subset) & (sweep["metric"] == metric)]
        for k, enc in enumerate(encoders):
            part = rows[rows["encoders"] == enc].sort_values("alpha")
            x = part["alpha"].to_numpy(float) + (k - (len(encoders) - 1) / 2) * DODGE * max(alphas[-1], 1)
            y, low, high = (100 * part[c].to_numpy(float) for c in ("value", "ci_low", "ci_high"))
            ax.errorbar(x, y, yerr=[y - low, high - y], marker="o", ms=4, lw=1.2, capsize=2, color=colours[enc],
                        label=enc)
        ax.set_xlabel("α")
        ax.set_title(fill(label, fig.get_figwidth() / len(panels)))
    axes[0, 0].set_ylabel("%")
    handles, names = axes[0, 0].get_legend_handles_labels()
    if handles:   # none without rows
        fig.legend(handles, names, loc="outside upper center", ncols=len(names),
                   title="encoders fine-tuned (α = 0: the original model; bars: 95% intervals)")
    for ax in axes[0]:
        thin_ticks(ax, alphas, [f"{a:g}" for a in alphas])
    return fig


def data_text(facts: ConceptualFacts) -> str:
    """The page's data paragraph: item counts, unreadable images and the head that scored each model."""
    unreadable = ", ".join(f"{k} {v}" for k, v in facts.unreadable.items())
    heads = ", ".join(f"`{m}` ({h})" for m, h in facts.heads.items())
    return (f"**Data** ({facts.dataset}): Probe-R {facts.probe_r_items} comparisons in "
            f"{facts.probe_r_groups} groups, Probe-C {facts.probe_c_groups} groups, Probe-B "
            f"{facts.probe_b_images} images ({facts.probe_b_single} in the single-object split). Unreadable images, left "
            f"out of every score: {unreadable}. **Models** (the head giving the compatibility score): {heads}."
            + (f" No scene images were found, so the filler(s) {', '.join(facts.fillers_left_out)} are left out."
               if facts.fillers_left_out else "")
            + (f" Probe-B items with an empty object mask, left out: {len(facts.empty_masks)} "
               f"({', '.join(facts.empty_masks[:5])}{', …' if len(facts.empty_masks) > 5 else ''})."
               if facts.empty_masks else "")
            + (f" Items with no unrelated scene picture, left out of the scene filler: "
               f"{len(facts.no_unrelated_scene)}." if facts.no_unrelated_scene else ""))


def finetune_notice(facts: ConceptualFacts) -> str:
    """The fine-tuning section's note when it was not asked for, and its warning when it was skipped or ImageNet
    fell back to the toy task ("" if none applies)."""
    if not facts.finetune_requested:
        return "*Fine-tuning skipped (`finetune_model` is empty).*"
    if facts.finetune_skipped:
        return f"> **Warning: fine-tuning skipped.** {facts.finetune_skipped}."
    if facts.general_fallback:
        return f"> **Warning: not the paper's general task.** {facts.general_fallback}."
    return ""


def sweep_text(facts: ConceptualFacts, params: Mapping[str, Any]) -> str:
    """The patching section's data paragraph."""
    sweep = facts.sweep
    assert sweep is not None  # set wherever the sweep ran
    epochs = params["finetune_steps"] * sweep.finetune_batch / max(sweep.triplets, 1)
    return (f"Fine-tuned `{params['finetune_model']}` on {sweep.triplets} triplets for {params['finetune_steps']} "
            f"steps of {sweep.finetune_batch} ({epochs:.1f} epochs; the authors: 40 epochs of RelComp) "
            f"({params['finetune_optimizer']}, lr {params['finetune_lr']}) per encoder setting{seeds_text(facts)}; "
            f"held-out task: {sweep.general_task} ({sweep.general_items} images); the sweep is evaluated on "
            f"{sweep.sweep_probe_r} Probe-R comparisons and {sweep.sweep_probe_c} Probe-C groups.")


def seeds_text(facts: ConceptualFacts) -> str:
    """How many fine-tuning seeds the sweep's rows are pooled over ("" for one)."""
    fseeds = facts.sweep.finetune_seeds if facts.sweep else []
    if len(fseeds) < 2:
        return ""
    return (f", once per fine-tuning seed ({', '.join(map(str, fseeds))}; the same items): a patched model's row is "
            f"the mean over the {len(fseeds)} seeds with a two-level bootstrap interval (seeds, then the items, drawn once for all seeds), its n "
            "the items over all seeds")


def sweep_table(ours: pd.DataFrame) -> pd.DataFrame:
    """The patching sweep as one table: a row per encoder setting and α (and paired change), a column per probe
    and metric."""
    sweep = select(ours, probe="patching", subset=SWEEP_SUBSETS, metric=SWEEP_METRICS)
    return table(sweep, "condition", ["subset", "metric"])


#: the patching claims' measures (:func:`probekit.studies.conceptual.claims.patching_claims`), as columns
PATCHING_COLUMNS = {"mu_c_diff": "predicate-swap μ(c): change", "top1_diff": "held-out task top-1: change"}


def patching_table(claims: Sequence[Claim]) -> pd.DataFrame:
    """The patching claims as one table instead of a bullet each: a row per fine-tuned setting and α, a column per
    measure, each cell the paired change from the original model [95% CI] (n) and its verdict (higher, lower or
    not resolved, from the claim)."""
    cells: dict[str, dict[str, str]] = {}
    for c in claims:
        r = c.rows.get("a")
        if r is not None and r["metric"] in PATCHING_COLUMNS:
            setting = str(r["condition"]).removesuffix(" − original")
            cells.setdefault(setting, {})[PATCHING_COLUMNS[r["metric"]]] = (
                f"{cell(r, with_n=True, unit=True)}: {c.verdict}")
    columns = [v for v in PATCHING_COLUMNS.values() if any(v in row for row in cells.values())]
    return pd.DataFrame.from_dict(cells, orient="index", columns=columns).fillna("").rename_axis(
        "fine-tuned, patched at")


def patching_reported(claims: Sequence[Claim]) -> list[Claim]:
    """The patching claims :func:`patching_table` does not hold (the paper's own numbers), still sentences."""
    return [c for c in claims if c.rows.get("a") is None or c.rows["a"]["metric"] not in PATCHING_COLUMNS]
