"""The guided-masking chapter's own figure (example images with the subject's box, the subject-ablated input the
model saw, and the top-k predictions with probabilities under every condition) and its data paragraph."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from PIL import Image

from probekit.results import StudyResult

CONDITIONS = ("full image", "subject ablated", "image ablated", "text only")


def _prediction_lines(item, preds: pd.DataFrame) -> list[str]:
    masked = item.sentence[:item.verb_start] + "[MASK]" + item.sentence[item.verb_end:]
    lines = [f"{masked}   (gold: {item.verb})"]
    for condition in CONDITIONS:
        if (item.item_id, condition) not in preds.index:
            continue
        p = preds.loc[(item.item_id, condition)]
        words = ", ".join(f"{w} {q:.2f}" for w, q in zip(p["predictions"], p["probs"]))
        who = f" ({p['scored_by']})" if p["scored_by"] != item.model else ""
        lines.append(f"{'✓' if p['correct'] else '✗'} {condition}{who}, {p['hits']}/{len(p['pieces'])} "
                     f"piece{'s' if len(p['pieces']) != 1 else ''} hit: {words}")
    return lines


def examples(result: StudyResult):
    """One row per example item of ``result.data["examples"]``: the full image with the subject's box, the
    subject-ablated image, and each condition's top-k words (✓ when at least half the verb's pieces hit)."""
    shown, per_item = result.data.get("examples"), result.data["per_item"]
    if shown is None or not len(shown):
        return None
    model = shown["model"].iloc[0]
    preds = per_item[per_item["model"] == model].set_index(["item_id", "condition"])
    fig, axes = plt.subplots(len(shown), 3, figsize=(11, 2.5 * len(shown)), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 1, 2.2]})
    for row, item in zip(axes, shown.itertuples()):
        x, y, w, h = (v * item.image_size for v in item.subject_box)
        row[0].imshow(Image.open(item.full))
        row[0].add_patch(plt.Rectangle((x, y), w, h, fill=False, edgecolor="yellow", linewidth=2))
        row[0].set_title(item.sentence, fontsize=9, loc="left")
        row[1].imshow(Image.open(item.ablated))
        row[1].set_title(f"subject ablated ({item.patches} patch{'es' if item.patches != 1 else ''})", fontsize=9)
        row[2].text(0, 0.95, "\n".join(_prediction_lines(item, preds)), va="top", fontsize=8.5,
                    family="monospace", wrap=True)
        for ax in row:
            ax.axis("off")
    fig.tight_layout()
    return fig


def data_text(facts: dict, dataset: str) -> str:
    """The chapter's data paragraph: captions, images, boxes, and the captions not scored in every condition."""
    text = (f"**{facts['captions']}** captions from `{dataset}` with the verb located ({facts['unlocated']} more "
            f"whose verb could not be located were left out), **{facts['with_image']}** with an image and "
            f"**{facts['with_box']}** with a subject box ({facts['detected']} boxes asked of a detector). "
            f"**{facts['in_every_condition']}** captions were scored in every condition; the tables compare "
            f"only these, so every condition and every drop is on the same captions.")
    if facts["left_out"]:
        text += (f" The other {facts['left_out']} (no image, no subject box or an unreadable image) are "
                 f"reported apart, in the rows marked \"not in every condition\".")
    return text
