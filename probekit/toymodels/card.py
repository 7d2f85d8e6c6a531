"""Write the toy zoo's model card (MODEL_CARD.md) and training curves (loss_curves.png) from training.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..toyworld.vocab import AGENTS, OBJECTS, POSES, SCENES, TYPICAL_SCENE_P, VERBS, prior_topk
from .budget import flags as budget_flags
from .build import MAX_TEXT, size_of, tokenizer
from .convergence import FLAT_WITHIN, PER_STEPS, cell, trends, unsettled
from .record import settings
from .zoo import CHECKPOINTS, NEXT_ZOO, ZOO, member as zoo_member

#: the training curve's held-out keys: (line style, chance level)
CURVE_KEYS = {"object": ("-", 0.5), "prednoun_pair": ("--", 0.25), "crop_predicate": ("-.", 0.5),
              "verb_choice": (":", 0.5), "masked_top1": ((0, (3, 1, 1, 1)), 1 / 24)}   # 24 transitive verbs
#: the held-out numbers shown in the card's table: (label, path into the held-out record)
SHOWN = [("object control", ("object_control_acc",)), ("pred-noun cropped pairs", ("prednoun_cropped", "pair_acc")),
         ("pred-noun cropped triplets, noun swaps", ("prednoun_cropped", "noun_triplet_acc")),
         ("pred-noun cropped triplets, predicate swaps", ("prednoun_cropped", "predicate_triplet_acc")),
         ("pred-noun full pairs", ("prednoun_full", "pair_acc")),
         ("pred-noun full triplets", ("prednoun_full", "triplet_acc")),
         ("verbs: verb-neg choice", ("verbs_image_choice", "verb")),
         ("verbs: subj-neg choice", ("verbs_image_choice", "subj")),
         ("verbs: obj-neg choice", ("verbs_image_choice", "obj")),
         ("verbs: ITM neg acc", ("verbs_itm", "neg")),
         ("masked verb top-5 (image)", ("masking_top5_with_image",)),
         ("masked verb top-1 (image)", ("masking_top1_with_image",)),
         ("masked verb top-5 (text)", ("masking_top5_text_only",)),
         ("masked verb top-1 (text)", ("masking_top1_text_only",)),
         ("hard: pred-noun full pairs, limbs alike", ("hard", "limbs_alike_pairs")),
         ("pred-noun full pairs, limbs differ", ("hard", "limbs_differ_pairs")),
         ("hard: verb-neg choice by the object's place", ("hard", "verb_by_place")),
         ("verb-neg choice by the pose", ("hard", "verb_by_pose"))]


def plot(record: dict, path: Path) -> None:
    """Training loss (top) and held-out curve (bottom) of every member, in the book's figure theme."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ..theme import CHANCE_STYLE, theme
    theme()
    models = list(record["models"])
    fig, axes = plt.subplots(2, len(models), figsize=(2.6 * len(models), 5.2), squeeze=False)
    for j, name in enumerate(models):
        h = record["models"][name]["history"]
        axes[0, j].plot(h["step"], h["loss"], lw=1)
        axes[0, j].set(title=name, yscale="log", xlabel="step", ylabel="training loss" if j == 0 else None)
        drawn = [k for k in CURVE_KEYS if any(k in p for p in h.get("probe") or [])]   # zoos trained before a key
        for key in drawn:                                                      # was added have none of it, or part
            axes[1, j].plot(h["probe_step"], [p.get(key, float("nan")) for p in h["probe"]],
                            linestyle=CURVE_KEYS[key][0], label=key)
        for chance in sorted({CURVE_KEYS[k][1] for k in drawn}):
            axes[1, j].axhline(chance, **CHANCE_STYLE)
        if not drawn:
            axes[1, j].set_axis_off()
            axes[1, j].text(0.5, 0.5, "no held-out curve", ha="center", va="center", fontsize=8,
                            transform=axes[1, j].transAxes)
            continue
        axes[1, j].set(ylim=(0, 1.02), xlabel="step", ylabel="held-out accuracy" if j == 0 else None)
        if j == 0:
            axes[1, j].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _get(record: Any, keys: tuple) -> str:
    for k in keys:
        if not isinstance(record, dict) or k not in record:
            return ""
        record = record[k]
    return f"{100 * record:.1f}"


def _hard_n(rec: dict) -> str:
    """The sentence that gives the hard sub-probes' item counts (larger sets than the other columns'), if scored."""
    hard = next((m["heldout"]["hard"] for m in rec["models"].values() if "hard" in m.get("heldout", {})), None)
    if hard is None:
        return ""
    return (f"The hard sub-probes and their easy parts have their own, larger item sets: predicate-noun pairs on the "
            f"full image whose two agents' limbs look alike (only the busts tell whose pose is whose; n = "
            f"{hard['limbs_alike_n']} pairs, chance 25%) or differ (n = {hard['limbs_differ_n']}), and verb negatives "
            f"told apart only by the object's place (n = {hard['verb_by_place_n']}, chance 50%, a tie counts half) "
            f"or only by the pose (n = {hard['verb_by_pose_n']}).\n\n")


def _curves(rec: dict) -> int:
    return sum(len(trends(m["history"], CURVE_KEYS)) for m in rec["models"].values())


def _not_flat(rec: dict) -> str:
    left = {n: unsettled(trends(m["history"], CURVE_KEYS)) for n, m in rec["models"].items()}
    names = [f"`{n}` ({', '.join(curves)})" for n, curves in left.items() if curves]
    if not names:
        return "Every member's curves were flat when its schedule ended."
    return (f"Not shown flat when the schedule ended, {sum(map(len, left.values()))} of {_curves(rec)} curves (so "
            "these members' numbers are this budget's, not a converged model's): " + ", ".join(names) + ".")


def _kept(t) -> str:
    """"4 of 5 checks compared keep their verdict" (a kind none of whose lines was compared is left out)."""
    from .seed_table import agreeing
    parts = [f"{same} of {n} {kind}s" for kind in ("claim", "check") for same, n in [agreeing(t, kind)] if n]
    return (" and ".join(parts) + " compared keep their verdict.") if parts else "No line is compared yet."


def _not_compared(t) -> str:
    """The sentence naming the lines not compared yet and the members they wait for ("" when every line was)."""
    left = t[t["agree"].isna()]
    if left.empty:
        return ""
    wanted = sorted({m.strip() for w in left["waits_for"] if isinstance(w, str) for m in w.split(",") if m.strip()})
    counts = left["kind"].value_counts()
    lines = " and ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind in ("claim", "check")
                         if (n := int(counts.get(kind, 0))))
    return f" Not compared yet: {lines}, which need {', '.join(f'`{m}`' for m in wanted)} retrained under that seed."


def _same(agree) -> str:
    import pandas as pd
    return "—" if pd.isna(agree) else "yes" if agree else "**no**"


def _shown(verdict, rows) -> str:
    """A zoo's cell: its verdict and the numbers it was decided from ("a vs b" for a claim read from two rows)."""
    from ..numbers import cell
    found = json.loads(rows) if isinstance(rows, str) and rows else []
    return f"{verdict}: {' vs '.join(cell(r, with_n=True, unit=True) for r in found)}" if found else str(verdict)


def seed_section(folder: Path) -> str:
    """The lab's verdicts under each retrained zoo, from ``folder/seed_table.SEEDS_FILE`` (empty when there is none)."""
    from .seed_table import ROWS, SEEDS_FILE, read, zoo_columns
    t = read(folder)
    if t is None:
        return ""
    zoos = zoo_columns(t)
    rows = [f"| {r['study']} | {r['kind']} | {r['what']} | "
            + " | ".join(_shown(r[z], r.get(z + ROWS)) for z in zoos) + f" | {_same(r['agree'])} |"
            for _, r in t.iterrows()]
    return f"""
## The lab's verdicts under another seed
Each zoo retrained from its seed and every study's lab re-run with the chapters' defaults:
`python -m probekit.studies.lab_seeds shipped DIR --out {SEEDS_FILE}` (DIR may hold only some members: a line is
compared once every member it needs is retrained there, in this run or an earlier one that wrote the file). A seed
reproduces a zoo only on the same device and thread count (CPU float reductions depend on the thread count); the
column names say where each zoo was trained. Each cell gives the verdict and the numbers it was decided from: a
check's row, a claim's paired difference (points), or a claim's two rows (the claim's first model first), with 95%
intervals.
The lines compared are the lab's claims and checks as they stood when the comparison was run, on the items the
chapters drew then (each cell's n): claims added to the lab since, and chapters whose items have changed since, are
not compared here (the summary page counts them).
{_kept(t)}{_not_compared(t)}

| study | kind | check or claim | {' | '.join(zoos)} | same |
|---|---|---|{'---|' * len(zoos)}---|
{chr(10).join(rows)}
"""


def write(folder: Path = CHECKPOINTS) -> Path:
    rec = json.loads((folder / "training.json").read_text())
    plot(rec, folder / "loss_curves.png")
    z = size_of(settings(rec)["size"])
    size_flag = (f" --size {rec['size']}" if "size" in rec else "") + budget_flags(rec.get("budget", {}))
    added = [m for m in rec["models"] if m not in ZOO]   # members of the next zoo shipped beside the zoo's own
    if added and all(m in NEXT_ZOO for m in rec["models"]):
        size_flag += " --zoo next"
    elif added:
        size_flag += f"` and, for {', '.join(f'`{m}`' for m in added)} (the next zoo's), `probekit train-toy " \
                     f"--seed {rec['seed']}{size_flag} --zoo next --models {' '.join(added)}"
    b = rec["budget"]
    recipes, scores = [], []
    for name, m in rec["models"].items():
        member = zoo_member(name)
        recipes.append(f"| `{name}` | {member.trainer} | {'swaps' if member.hard_negatives else 'in-batch/random'} | "
                       f"{member.recipe.describe()} | {member.parent or '—'} | {member.factor} | "
                       f"{m['wall_s']:.0f} s | {cell(trends(m['history'], CURVE_KEYS))} |")
        h = m.get("heldout", {})
        scores.append(f"| `{name}` | " + " | ".join(_get(h, keys) for _, keys in SHOWN) + " |")
    size = sum(f.stat().st_size for f in folder.rglob("*.safetensors")) / 2**20
    trained_min = sum(m["wall_s"] for m in rec["models"].values()) / 60
    text = f"""# The toy model zoo

Small members of the real Hugging Face families, trained on the toy world (`probekit.toyworld`) with one factor
changed at a time, and loaded with `from_pretrained(<this dir>/<name>)` plus `AutoTokenizer` /
`AutoImageProcessor`, exactly like a hub id (registry names `toy-*`).

## The world
{len(AGENTS)} agents, {len(POSES)} intransitive poses, {len(VERBS)} transitive verbs (a pose plus where the object is), \
{len(OBJECTS)} objects, colour/size/pattern attributes with antonyms, {len(SCENES)} scenes, distractor objects; \
64x64 images on a 4x4 grid of 16-px cells. An object fills one cell; an agent stands in two, its bust (head and \
torso in its kind's colour and size) over its limbs (the pose, in a colour its kind shares with one other kind), \
so that the limbs bind a pose to a pair of kinds and only the bust in the patch above tells the two apart. A \
training image's background is its object's (or agent's) typical scene with p = {TYPICAL_SCENE_P}; a two-agent \
image takes either agent's, so that the scene does not tell which of the two the caption names. Triples are \
drawn uniformly among the plausible ones, so a masked verb's best text-only top-5 is \
{100 * prior_topk(5):.1f}% (chance {100 * 5 / len(VERBS):.1f}%).

## Architecture
- images 64x64 RGB, patches 16 px; mean = std = 0.5.
- word-level tokenizer (PreTrainedTokenizerFast, lower-casing, {len(tokenizer())} entries with [PAD] [UNK] [CLS] [SEP] [MASK]),
  at most {MAX_TEXT} tokens.
- CLIP: `CLIPModel`, text and vision towers of width {z.width}, {z.tower_layers} layers, {z.heads} heads, MLP {z.ffn}, projection {z.width}.
- ViLT: one encoder (width {z.width}, {z.layers} layers, {z.heads} heads, MLP {z.ffn}, `max_image_length=-1`) with both heads in
  one directory: `ViltForImageAndTextRetrieval` (ITM score = sigmoid of `rank_output`) and `ViltForMaskedLM`.
- BERT: `BertForMaskedLM`, width {z.width}, {z.tower_layers} layers, text only (blind baseline, perplexity; `toy-bert-blind` is the
  same checkpoint answering image-text questions from the text alone).
- weights: float32 safetensors, {size:.1f} MB together.

## Recipes (same stream draws, steps and batch for every model)
| model | trainer | negatives | training stream | parent | the one factor | wall time | held-out curves over the last third of training |
|---|---|---|---|---|---|---|---|
{chr(10).join(recipes)}

The last column fits a line to each held-out curve (the figure below) over the last third of training: its slope in
points per {PER_STEPS:,} steps with a 95% CI. A curve is "flat" when its CI lies within ±{FLAT_WITHIN:g} points (another
{PER_STEPS:,} steps would move it by less than half the CI of a held-out number at n = 200), "rising" or "falling"
when its CI excludes 0 and is not that narrow, "not resolved" otherwise; only the curves not shown flat are named.
The probes score the same items every time, so the CI measures how steadily a curve moved. {_not_flat(rec)}

| setting | value |
|---|---|
| seed | {rec['seed']} |
| training images (pool per recipe) | {b['pool']} |
| steps per model / batch | {b['steps']} / {b['batch']} |
| learning rate (clip / vilt / bert) | {b['lr_clip']} / {b['lr_vilt']} / {b['lr_bert']}, linear warm-up over {b['warmup']:.0%} of steps, cosine decay to 10% |
| ViLT ITM batch | half positives, half negatives; with swaps, a negative is a one-slot swap with p = {b['hard_negative_p']} |
| ViLT MLM batch | a second draw of {b['batch']} captions with their images (ViLT computes MLM on every pair of its batch) |
| MLM masking (ViLT, BERT) | {b['mlm_prob']:.0%} of word tokens, at least one per caption |
| CLIP loss | symmetric InfoNCE over the batch; with swaps, each caption's swap added to the texts (image -> 2B texts) |
| device | {rec.get('device')}, {rec.get('threads')} torch thread{'' if rec.get('threads') == 1 else 's'}; {trained_min:.0f} min of training, summed over the members (a resumed member's segments included) |

Reproduce: `probekit train-toy --seed {rec['seed']}{size_flag}` (or `python -m probekit.toymodels.train`); `--device cuda` on a GPU;
`--jobs N` trains N members at once, one process each (one per core, not several sharing a GPU, where ten at once
took about 1 s per ViLT step; logs in `<out>/<member>.log`); `--models` retrains a subset, and runs with disjoint
`--models` may share one `--out`; an
interrupted run names the `--models` to run again, and a member stopped mid-training resumes from its last resume file;
`--missing` trains only the members `--out` does not hold finished yet (a zoo built over several runs: repeat the command);
`--out DIR` and `PROBEKIT_TOY_CHECKPOINTS=DIR` run the book on another zoo.

## Held-out scores (%; evaluation split of the toy world, never seen in training; n = 200 items per probe)
| model | {' | '.join(label for label, _ in SHOWN)} |
|---|{'---|' * len(SHOWN)}
{chr(10).join(scores)}

{_hard_n(rec)}The split columns are parts of their probe: the cropped triplets divide into those whose two sentences differ in
the noun and those that differ in the predicate (about half each; chance 50%), the SVO rows into subject, verb and
object negatives (a quarter, a half and a quarter: each verb negative comes with its mirror; chance 50%).

![training loss and held-out curves](loss_curves.png)
{seed_section(folder)}"""
    path = folder / "MODEL_CARD.md"
    path.write_text(text)
    return path


if __name__ == "__main__":
    print(write())
