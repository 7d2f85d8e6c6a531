"""Write the toy models' model card (MODEL_CARD.md) and loss curves (loss_curves.png) from training.json."""

from __future__ import annotations

import json
from pathlib import Path

from .build import FFN, HEADS, LAYERS, MAX_TEXT, WIDTH
from .train import CHECKPOINTS

# seconds per optimiser step on 2 CPU cores (taskset -c 2,3, torch threads 2, batch 64), measured 2026-11-22
CPU_SECONDS_PER_STEP = {"toy-clip": 0.067, "toy-vilt": 0.107, "toy-bert": 0.031}


def plot(record: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, m in record["models"].items():
        axes[0].plot(m["history"]["step"], m["history"]["loss"], label=name)
        if m["history"]["probe"]:
            for key, style in (("object", "-"), ("prednoun_pair", "--")):
                axes[1].plot(m["history"]["probe_step"], [p[key] for p in m["history"]["probe"]], style,
                             label=f"{name}: {key}")
    axes[0].set(xlabel="step", ylabel="training loss", yscale="log", title="loss (mean over 25 steps)")
    axes[1].axhline(0.25, color="gray", lw=0.8)
    axes[1].set(xlabel="step", ylabel="held-out accuracy", ylim=(0, 1.02),
                title="held-out: object control, pred-noun pairs (chance .5/.25)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write(folder: Path = CHECKPOINTS) -> Path:
    rec = json.loads((folder / "training.json").read_text())
    plot(rec, folder / "loss_curves.png")
    b = rec["budget"]
    est = sum(CPU_SECONDS_PER_STEP[n] for n in rec["models"]) * b["steps"]
    rows = []
    for name, m in rec["models"].items():
        h = m.get("heldout", {})
        rows.append(f"| {name} | {m['wall_s']:.0f} s | {json.dumps(h)} |")
    size = sum(f.stat().st_size for f in folder.rglob("*.safetensors")) / 2**20
    text = f"""# Toy models (toy-clip, toy-vilt, toy-bert)

Small members of the real Hugging Face families, trained on the toy world (`probekit.toyworld`), loaded with
`from_pretrained(<this dir>/<name>)` plus `AutoTokenizer` / `AutoImageProcessor`, exactly like a hub id.

## Architecture
- images 64x64 RGB, patches 16 px (a 4x4 grid; every toy entity fills one grid cell); mean = std = 0.5.
- word-level tokenizer (PreTrainedTokenizerFast, lower-casing, 74 entries with [PAD] [UNK] [CLS] [SEP] [MASK]),
  at most {MAX_TEXT} tokens.
- `toy-clip`: `CLIPModel`, text and vision towers of width {WIDTH}, 3 layers, {HEADS} heads, MLP {FFN}, projection {WIDTH}.
- `toy-vilt`: one ViLT encoder (width {WIDTH}, {LAYERS} layers, {HEADS} heads, MLP {FFN}, `max_image_length=-1`) with both
  heads in one directory: `ViltForImageAndTextRetrieval` (ITM score = sigmoid of `rank_output`) and `ViltForMaskedLM`
  (loading either reports only the other head's keys as unexpected; no key is missing).
- `toy-bert`: `BertForMaskedLM`, width {WIDTH}, 3 layers, text only (the blind baseline and perplexity model).
- weights: float32 safetensors, {size:.1f} MB together.

## Data and training
Training stream: `probekit.toyworld.stream` (scenes from the training split only; mix {{svo, two agents with poses,
single object with attributes, single agent, several objects, crops of one entity}}; each caption has hard negatives:
subject/verb/object/attribute/scene swaps and binding swaps). Same data, steps and batch for all three models.

| setting | value |
|---|---|
| seed | {rec['seed']} |
| training images (pool) | {b['pool']} |
| steps per model / batch | {b['steps']} / {b['batch']} |
| learning rate (clip / vilt / bert) | {b['lr_clip']} / {b['lr_vilt']} / {b['lr_bert']}, linear warm-up over {b['warmup']:.0%} of steps, cosine decay to 10% |
| ViLT ITM batch | half positives, half negatives; a negative is a hard negative with p = {b['hard_negative_p']} |
| MLM masking | {b['mlm_prob']:.0%} of word tokens, at least one per caption |
| CLIP loss | symmetric InfoNCE; each caption's hard negative added to the texts (image -> 2B texts) |

Reproduce: `probekit train-toy` (or `python -m probekit.toymodels.train`); `--device cuda` on a GPU.
These checkpoints: {rec.get('note', rec.get('device'))}.
Wall time per model there: see the table. On 2 CPU cores (measured per step: {CPU_SECONDS_PER_STEP} s) the
same budget takes about {est / 60:.0f} min plus rendering the pool and the held-out probes (~3 min).

## Held-out scores (evaluation split of the toy world; never seen in training)
`object_control_acc`: a single object image, "a <object>" vs "a <other object>" (chance 0.5).
`prednoun_cropped` / `prednoun_full`: predicate-noun triplets cropped to the target box / on the full image
(triplet chance 0.5, pair chance 0.25). `verbs_image_choice`: positive vs negative image for an SVO sentence;
`verbs_itm`: ITM accuracy at 0.5 on positives and negatives. `masking_top5_*`: verb recovered in the top 5.

| model | wall time | held-out |
|---|---|---|
{chr(10).join(rows)}

![loss curves and held-out curve](loss_curves.png)
"""
    path = folder / "MODEL_CARD.md"
    path.write_text(text)
    return path


if __name__ == "__main__":
    print(write())
