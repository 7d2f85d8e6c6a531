"""The guided-masking chapter's own figure (example images with the subject's box, the subject-ablated input the
model saw, and the top-k predictions with probabilities under every condition), its data paragraph and tables, the
table of both heads on the same verb pairs, and the captions of the lab's two tables."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from PIL import Image

from probekit.metrics.head_choice import DIFF, ITM, MLM, ONLY, SUBSET, discordant_count
from probekit.numbers import pct
from probekit.report.figures import subplots
from probekit.report.format import table
from probekit.report.show import show_table, show_text
from probekit.results import StudyResult
from probekit.theme import COLUMN_IN, SMALL
from probekit.toyworld import vocab

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from probekit.studies.masking.study import MaskingFacts

CONDITIONS = ("full image", "subject ablated", "image ablated", "text only")


#: a prediction line's width beside the two images, and a sentence's above an image (characters, at the theme's
#: least font size)
LINE_CHARS, TITLE_CHARS = 56, 26


def _prediction_lines(item: Any, preds: pd.DataFrame) -> list[str]:
    masked = item.sentence[:item.verb_start] + "[MASK]" + item.sentence[item.verb_end:]
    lines = [f"{masked}   (gold: {item.verb})"]
    for condition in CONDITIONS:
        if (item.item_id, condition) not in preds.index:
            continue
        p = preds.loc[(item.item_id, condition)]
        words = ", ".join(f"{w} {q:.2f}" for w, q in zip(p["predictions"], p["probs"]))
        who = f" ({p['scored_by']})" if p["scored_by"] != item.model else ""
        lines += textwrap.wrap(f"{'✓' if p['correct'] else '✗'} {condition}{who}, {p['hits']}/{len(p['pieces'])} "
                               f"piece{'s' if len(p['pieces']) != 1 else ''} hit: {words}", LINE_CHARS,
                               subsequent_indent="      ")
    return lines


def examples(result: StudyResult) -> Figure | None:
    """One row per example item of ``result.data["examples"]``: the full image with the subject's box, the
    subject-ablated image, and each condition's top-k words (✓ when at least half the verb's pieces hit)."""
    shown, per_item = result.data.get("examples"), result.data["per_item"]
    if shown is None or not len(shown):
        return None
    model = shown["model"].iloc[0]
    preds = per_item[per_item["model"] == model].set_index(["item_id", "condition"])
    texts = ["\n".join(_prediction_lines(item, preds)) for item in shown.itertuples()]
    heights = [max(2.3, 0.21 * (t.count("\n") + 1) + 0.2) for t in texts]   # inches: the images or the lines
    fig, axes = subplots(len(shown), 3, figsize=(COLUMN_IN, sum(heights)), squeeze=False,
                         gridspec_kw={"width_ratios": [1, 1, 2.15], "height_ratios": heights})
    for row, item, text in zip(axes, shown.itertuples(), texts):
        x, y, w, h = (v * item.image_size for v in item.subject_box)
        row[0].imshow(Image.open(item.full))
        row[0].add_patch(plt.Rectangle((x, y), w, h, fill=False, edgecolor="yellow", linewidth=2))
        row[0].set_title(textwrap.fill(item.sentence, TITLE_CHARS), fontsize=SMALL, loc="left")
        row[1].imshow(Image.open(item.ablated))
        row[1].set_title(f"subject ablated ({item.patches} patch{'es' if item.patches != 1 else ''})",
                         fontsize=SMALL, loc="left")
        row[2].text(0, 1, text, va="top", fontsize=SMALL, transform=row[2].transAxes)
        for ax in row:
            ax.axis("off")
    return fig


def data_text(facts: MaskingFacts, dataset: str) -> str:
    """The chapter's data paragraph: captions, images, boxes, and the captions not scored in every condition."""
    text = (f"**{facts.captions}** captions from `{dataset}` with the verb located ({facts.unlocated} more "
            f"whose verb could not be located were left out), **{facts.with_image}** with an image and "
            f"**{facts.with_box}** with a subject box ({facts.detected} boxes asked of a detector). "
            f"**{facts.in_every_condition}** captions were scored in every condition; the tables compare "
            f"only these, so every condition and every drop is on the same captions.")
    if facts.left_out:
        text += (f" The other {facts.left_out} (no image, no subject box or an unreadable image) are "
                 f"reported apart, in the rows marked \"not in every condition\".")
    if facts.text_prior is not None:
        fits = [sum(vocab.plausible(a, v, o) for v in vocab.VERBS) for a, _, o in vocab.PLAUSIBLE_TRIPLES]
        poses, places = vocab.verb_grid()
        text += (f"\n\nEvery toy caption is a transitive scene (\"a cat drops a bottle\"): one of "
                 f"{len(vocab.AGENTS)} agents, {len(vocab.VERBS)} verbs ({poses} poses × "
                 f"{places} places of the object) and {len(vocab.OBJECTS)} objects, the "
                 f"triple drawn uniformly among the plausible ones. Given the caption's subject and object the masked "
                 f"verb is one of {min(fits)} to {max(fits)} equally likely verbs, so a model reading the text alone "
                 f"can reach at most **{pct(facts.text_prior)}** top-{facts.k} accuracy; chance "
                 f"({facts.k} of the probe's {facts.verbs} verbs named at random) is {pct(facts.chance)}.")
    return text


def data_tables(result: StudyResult) -> list[tuple[pd.DataFrame, str]]:
    """(table, caption) for the data section: captions left out or not located (when any) and the first items."""
    out = []
    if result.facts.left_out:
        out.append((result.data["left_out"].head(20), "Captions not scored in every condition"))
    if result.facts.unlocated:
        out.append((result.data["unlocated"].head(20), "Captions whose verb was not located"))
    items = result.data["items"][["sentence", "verb", "verb_start", "verb_end", "subject_box"]].head()
    return [*out, (items, "The first items")]


def checks_caption(facts: MaskingFacts) -> str:
    """The lab's checks table caption: what chance and the text prior are (or why the lab did not run)."""
    if facts.lab:
        return facts.lab
    return (f"Knock-out and blind checks on the toy world, top-5 (the paper's k). The chance level here is what "
            f"the caption alone allows, {pct(facts.lab_text_prior)}: given its subject and object, 20–21 verbs "
            f"are equally likely (naming 5 of the probe's {facts.verbs} verbs at random gives "
            f"{pct(facts.lab_chance)}). toy-vilt-noverb's training images showed the verb their caption "
            f"names only by chance (each transitive scene was drawn as a verb picked at random among all 24, the "
            f"captioned one about 1 time in 24); its controls (the agents, objects "
            f"and poses it still sees) are in the verbs chapter, "
            f"and none is added here")


def claims_caption(facts: MaskingFacts) -> str:
    """The lab's claims table caption: which toy rows each claim compares (or why the lab did not run)."""
    if facts.lab:
        return facts.lab
    return (f"The paper's claims on the toy world, in order, at top-5 (the paper's k): (1) toy-vilt with the full "
            f"image vs toy-bert reading the text alone, with their paired difference on the same captions; (2) "
            f"toy-vilt with the full image vs with the subject's patches blanked, paired, decided by construction; "
            f"(3) toy-vilt's two heads on the same {facts.choice_pairs} verb pairs: its masked-LM head's choice "
            f"between the pair's two verbs vs its ITM head's choice between the pair's two sentences (chance 50% for "
            f"both), with their paired difference. The top-5 rows' chance level is what the caption alone allows, "
            f"{pct(facts.lab_text_prior)}, as in the checks (the study's tables above give "
            f"{pct(facts.lab_chance)}: 5 of the probe's verbs named at random)")


def show_head_choice(rows: pd.DataFrame) -> None:
    """Both heads of each model on the same verb pairs (rows of probe ``verb choice``): each head's accuracy, their
    paired difference and the discordant pairs, with McNemar's counts in the caption (:func:`discordant_counts`)."""
    if not len(rows):
        return
    cues = set(rows["subset"]) != {SUBSET}
    shown = table(rows, index="condition", columns=["model", "subset"] if cues else "model", with_n=True,
                  order={"condition": [MLM, ITM, DIFF, ONLY[MLM], ONLY[ITM]], "subset": [SUBSET]})
    show_table(shown, caption="Both heads of one model on the same verb pairs under the positive image: the masked-LM "
                              "head's choice between the two verbs, the ITM head's between the two sentences (chance "
                              "50% for both; a tie counts 1/2), their paired difference, and the pairs only one head "
                              f"gets right (discordant: {discordant_counts(rows[rows['subset'] == SUBSET])}); "
                              "95% intervals: a cluster bootstrap over the verbs table's draws (a verb pair with "
                              "its mirror)" + ("; every verb pair (verb), then the pairs told apart only by each "
                                              "cue" if cues else ""))


def discordant_counts(rows: pd.DataFrame) -> str:
    """McNemar's discordant counts per model from its ``discordant`` rows: "toy-vilt: the masked-LM head alone right
    on 39 of 210 pairs, the ITM head alone on 8"."""
    def only(model: str, head: str) -> pd.Series:
        return rows[(rows["model"] == model) & (rows["condition"] == ONLY[head])].iloc[0]
    return "; ".join(f"{m}: the masked-LM head alone right on {discordant_count(only(m, MLM))} of "
                     f"{int(only(m, MLM)['n'])} pairs, the ITM head alone on {discordant_count(only(m, ITM))}"
                     for m in dict.fromkeys(rows["model"]))


def rules_agree(rows: pd.DataFrame, metric: str = "accuracy") -> bool:
    """Whether the whole-word rows (``word_<metric>``) equal the paper's-rule rows (``<metric>``) number for number
    (value, interval and n, to 1e-12: the two rules' means may differ in the last bit) on every model, condition
    and subset: then a second table would only repeat the first (on the toy world every verb is one piece, and
    both rules agree on a one-piece verb)."""
    keys = ["probe", "model", "condition", "subset"]
    paper = rows[rows["metric"] == metric].set_index(keys)[["value", "ci_low", "ci_high", "n"]].sort_index()
    words = rows[rows["metric"] == f"word_{metric}"].set_index(keys)[["value", "ci_low", "ci_high", "n"]].sort_index()
    return (len(paper) > 0 and paper.index.equals(words.index)
            and bool(np.allclose(paper.to_numpy(float), words.to_numpy(float), rtol=0, atol=1e-12, equal_nan=True)))


def show_whole_words(rows: pd.DataFrame, k: int) -> None:
    """The top-k table by whole words (probekit's earlier rule), or one line saying it equals the paper's-rule
    table number for number (:func:`rules_agree`), instead of repeating it."""
    if rules_agree(rows):
        show_text(f"By whole words (probekit's earlier rule) every top-{k} number here equals the paper's rule above, "
                  "value, interval and n: every gold verb on these items is one piece, where the two rules agree.")
        return
    show_table(table(rows[(rows["metric"] == "word_accuracy") & (rows["subset"] == "all")], index="condition",
                     columns="model", with_n=True),
               caption=f"Top-{k} verb accuracy by whole words (probekit's earlier rule), ours")


def show_drops(rows: pd.DataFrame) -> None:
    """Each ablation's paired drop by the paper's rule, and by whole words where those differ (:func:`rules_agree`)."""
    same = rules_agree(rows, "accuracy_diff")
    metrics = ["accuracy_diff"] if same else ["accuracy_diff", "word_accuracy_diff"]
    show_table(table(rows[rows["metric"].isin(metrics)], index=["metric", "condition"], columns="model", with_n=True),
               caption="Drops, ours (percentage points; " + ("the paper's rule; by whole words the same numbers)"
                                                            if same else "the paper's rule and whole words)"))
