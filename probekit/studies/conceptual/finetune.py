"""Fine-tune CLIP on swap negatives and patch it back towards the original (the paper's section 5).

Training (Schiappa et al. 2023, "CLIP Patched"): a Hugging Face ``CLIPModel`` is trained on triplets
(image x, its caption p, the same caption with the predicate or the attribute swapped p̄) with

* an ITM-style triplet loss, the mean of two instances on cosine similarities with a margin: anchor x,
  positive p, negative p̄; and anchor p (the caption), positive x, negative another image (the other image
  of a Probe-C-style pair when there is one, else the next image in the batch);
* a contrastive loss as in CLIP: symmetric cross-entropy over the batch, where the image-to-text side also
  sees every swap negative p̄ as an extra wrong caption.

Only the chosen encoders (``"text"``, ``"vision"`` or ``"both"``, the paper's T, V and VT) receive gradients;
the optimiser is SGD with momentum and a cosine schedule (the authors: lr 1e-3, momentum 0.9, weight decay 1e-4).

Patching (Ilharco et al. 2022; :func:`probekit.studies.conceptual.patching.patched_model`): θ(α) = (1 − α)·θ_orig
+ α·θ_ft, written as a ``save_pretrained`` directory so the ordinary scorer loads it; α = 0 is the original model, α = 1 the fine-tuned one.  Fine-tuned and patched
weights are cached on disk (:mod:`probekit.studies.conceptual.finetune_cache`) under a key of the base checkpoint, the
settings and the training data, so a re-run trains nothing.  Models are loaded through the scorer registry
(``load_scorer``): the model, tokenizer and image processor a :class:`~probekit.scorers.hf_clip.ClipScorer`
holds are the ones trained here.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

import numpy as np
import pandas as pd
import torch

from probekit.scorers.hf import transformers_bars_off

if TYPE_CHECKING:
    from probekit.scorers.hf_clip import ClipScorer

ENCODERS = ("text", "vision", "both")


@dataclass(frozen=True)
class FinetuneConfig:
    encoders: str = "both"
    steps: int = 60
    batch_size: int = 32
    lr: float = 1e-3
    momentum: float = 0.9
    weight_decay: float = 1e-4
    margin: float = 0.2
    itm_weight: float = 1.0
    contrastive_weight: float = 1.0
    optimizer: str = "sgd"      # "sgd" (the authors') or "adamw"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.optimizer not in ("sgd", "adamw"):
            raise ValueError(f"optimizer={self.optimizer!r}; valid: sgd, adamw")
        if self.encoders not in ENCODERS:
            raise ValueError(f"encoders={self.encoders!r}; valid: {', '.join(ENCODERS)}")
        if self.steps < 1 or self.batch_size < 2:
            raise ValueError("steps must be >= 1 and batch_size >= 2")


# ------------------------------------------------------------------------------------------ training data
def swap_triplets(probe_r: pd.DataFrame | None = None, probe_c: pd.DataFrame | None = None,
                  per_kind: int | None = None) -> pd.DataFrame:
    """RelComp-style triplets from item tables in the Probe-R / Probe-C schemas (use ``split="train"``
    tables, disjoint from the evaluation items): columns image, caption, negative_caption, negative_image.

    As RelComp, only predicate swaps and attribute (antonym) swaps: Probe-R's anchor image with its relation
    prompt vs the predicate swap; Probe-C's composition groups, each image with its caption vs the other caption
    and the other image as the hard negative image.  Subject and object swaps are not RelComp negatives.
    ``per_kind`` keeps the first ``per_kind`` predicate swaps and the first ``per_kind`` composition triplets (group
    by group, two per group), about as many of each kind as RelComp holds (71,011 predicate and 78,155 composition
    swaps)."""
    parts = []
    if probe_r is not None and len(probe_r):
        r = probe_r[probe_r["kind"] == "predicate_swap"]
        r = r.head(per_kind) if per_kind is not None else r
        parts.append(pd.DataFrame({"image": r["image"], "caption": r["correct_prompt"],
                                   "negative_caption": r["wrong_prompt"], "negative_image": None}))
    if probe_c is not None and len(probe_c):
        groups = probe_c[probe_c["split"] == "composition"].reset_index(drop=True)
        both = pd.concat([pd.DataFrame({"image": groups[f"image_{a}"], "caption": groups[f"caption_{a}"],
                                        "negative_caption": groups[f"caption_{b}"],
                                        "negative_image": groups[f"image_{b}"]}) for a, b in ((0, 1), (1, 0))])
        both = both.sort_index(kind="stable")   # group by group: a group's two triplets side by side
        parts.append(both.head(per_kind) if per_kind is not None else both)
    if not parts:
        raise ValueError("no training items: pass a Probe-R and/or a Probe-C table")
    out = pd.concat(parts, ignore_index=True)
    out = out[out["image"].notna()].reset_index(drop=True)
    out["image"] = out["image"].astype(str)
    return out


def load_triplets(path: str | Path) -> pd.DataFrame:
    """Triplets from a CSV/parquet file (e.g. the paper's RelComp rebuilt by the user) with columns image,
    caption, negative_caption and optionally negative_image."""
    path = Path(path)
    table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    missing = [c for c in ("image", "caption", "negative_caption") if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; a triplet file needs image, caption, "
                         "negative_caption (and optionally negative_image)")
    if "negative_image" not in table.columns:
        table["negative_image"] = None
    return table


# ------------------------------------------------------------------------------------------------ model
def require_clip(name: str | Path) -> None:
    """Raises unless ``name`` resolves (:func:`probekit.scorers.model_spec`: a registry name, a checkpoint
    directory or hub id, ``clip:SOURCE``) to a Hugging Face CLIPModel, the one family fine-tuned here."""
    from probekit.scorers import REGISTRY, model_spec

    spec = model_spec(str(name))
    if spec.family != "clip":
        clip_models = [n for n, s in REGISTRY.items() if s.family == "clip"]
        raise ValueError(f"{name!r} is a {spec.family} model; fine-tuning needs a Hugging Face CLIPModel: "
                         f"{', '.join(clip_models)}, or a CLIP checkpoint directory or hub id")


def load_clip(name_or_path: str | Path, device: str = "cpu") -> ClipScorer:
    """The :class:`~probekit.scorers.hf_clip.ClipScorer` of a CLIP model by any name :func:`require_clip` accepts
    (no score cache): its ``model``, ``tokenizer`` and ``image_processor`` are trained here."""
    from probekit.scorers import load_scorer

    require_clip(name_or_path)
    return cast("ClipScorer", load_scorer(str(name_or_path), device=device, cache_dir=False))  # require_clip: a CLIP


def _trainable(model: Any, encoders: str) -> list[torch.nn.Parameter]:  # model: a ClipScorer's CLIPModel
    parts = {"text": [model.text_model, model.text_projection],
             "vision": [model.vision_model, model.visual_projection]}
    chosen = parts["text"] + parts["vision"] if encoders == "both" else parts[encoders]
    for p in model.parameters():
        p.requires_grad_(False)
    params = [p for m in chosen for p in m.parameters()]
    for p in params:
        p.requires_grad_(True)
    return params


def swap_losses(img: torch.Tensor, txt: torch.Tensor, txt_neg: torch.Tensor, img_neg: torch.Tensor,
                logit_scale: torch.Tensor, margin: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(ITM triplet loss, contrastive loss) of one batch of L2-normalised embeddings (B, D) each."""
    pos = (img * txt).sum(-1)
    itm_text = torch.relu(margin - pos + (img * txt_neg).sum(-1)).mean()
    itm_image = torch.relu(margin - pos + (txt * img_neg).sum(-1)).mean()
    itm = (itm_text + itm_image) / 2
    target = torch.arange(len(img), device=img.device)
    i2t = logit_scale * img @ torch.cat([txt, txt_neg]).T
    t2i = logit_scale * txt @ img.T
    contrastive = (torch.nn.functional.cross_entropy(i2t, target)
                   + torch.nn.functional.cross_entropy(t2i, target)) / 2
    return itm, contrastive


def _memo(compute: Callable[[list[str]], Any], keep: int | None = None) -> Callable[[Sequence[str]], torch.Tensor]:
    """``compute`` (keys → one row per key) run once per new key; its rows kept for later calls while at most
    ``keep`` keys are kept (None: no bound)."""
    memo: dict[str, torch.Tensor] = {}

    def lookup(keys: Sequence[str]) -> torch.Tensor:
        todo = [k for k in dict.fromkeys(keys) if k not in memo]
        fresh = dict(zip(todo, compute(todo))) if todo else {}
        if keep is None or len(memo) + len(fresh) <= keep:
            memo.update(fresh)
        return torch.stack([fresh[k] if k in fresh else memo[k] for k in keys])
    return lookup


def finetune_clip(base: str | Path, triplets: pd.DataFrame, config: FinetuneConfig, out_dir: str | Path,
                  device: str = "cpu", progress: bool = True) -> Path:
    """Fine-tune the CLIP model ``base`` (registry name, hub id or directory) on ``triplets``; save it (with the
    base's tokenizer and image processor and a ``finetune.json`` of settings and losses) in ``out_dir``."""
    from PIL import Image

    from probekit.progress import bar as tqdm, record
    from probekit.scorers.hf_clip import pooled_features

    torch.manual_seed(config.seed)
    scorer = load_clip(base, device)
    model, tokenizer, processor = scorer.model, scorer.tokenizer, scorer.image_processor
    model.to(device).train()
    params = _trainable(model, config.encoders)
    opt: torch.optim.Optimizer
    if config.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    else:
        opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=config.steps)
    rng = np.random.default_rng(config.seed)
    grad_v, grad_t = config.encoders in ("vision", "both"), config.encoders in ("text", "both")
    fixed = {t: not getattr(model.config, f"{t}_config").attention_dropout for t in ("vision", "text")}
    # preprocessed images, kept up to a bound (the toy world fits whole); none when each image is encoded once
    pixels = _memo(lambda paths: processor(images=[Image.open(p).convert("RGB") for p in paths],
                                           return_tensors="pt")["pixel_values"],
                   keep=20000 if grad_v or not fixed["vision"] else 0)

    def embed_images(paths: Sequence[str], grad: bool) -> torch.Tensor:
        with torch.set_grad_enabled(grad):
            x = pooled_features(model.get_image_features(pixel_values=pixels(paths).to(device)))
        return torch.nn.functional.normalize(x, dim=-1)

    def embed_texts(texts: Sequence[str], grad: bool) -> torch.Tensor:
        tok = tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt").to(device)
        with torch.set_grad_enabled(grad):
            x = pooled_features(model.get_text_features(input_ids=tok["input_ids"],
                                                        attention_mask=tok["attention_mask"]))
        return torch.nn.functional.normalize(x, dim=-1)

    def encoder(embed: Callable[[Sequence[str], bool], torch.Tensor], trained: bool,
                tower: str) -> Callable[[Sequence[str]], torch.Tensor]:
        if trained or not fixed[tower]:
            return lambda keys: embed(keys, trained)
        # not trained, no dropout (CLIP has no batch statistics): one embedding per input throughout, so each image
        # or caption is encoded the first time a batch draws it
        return _memo(lambda keys: embed(keys, False))

    images, texts = encoder(embed_images, grad_v, "vision"), encoder(embed_texts, grad_t, "text")
    scale = model.logit_scale.exp().detach()
    history, started = [], []
    bar = tqdm(range(config.steps), desc=f"fine-tune CLIP ({config.encoders})", disable=not progress)
    for _ in bar:
        batch = triplets.iloc[rng.choice(len(triplets), size=min(config.batch_size, len(triplets)),
                                         replace=False)]
        b = len(batch)
        neg_paths = batch["negative_image"].tolist()
        idx = [k for k, p in enumerate(neg_paths) if isinstance(p, str) and p != ""]
        pics = images(batch["image"].tolist() + [neg_paths[k] for k in idx])   # one forward pass per encoder
        img, img_neg = pics[:b], pics[:b].roll(1, dims=0)
        if idx:
            img_neg = img_neg.clone()
            img_neg[idx] = pics[b:]
        words = texts(batch["caption"].tolist() + batch["negative_caption"].tolist())
        txt, txt_neg = words[:b], words[b:]
        itm, con = swap_losses(img, txt, txt_neg, img_neg, scale, config.margin)
        loss = config.itm_weight * itm + config.contrastive_weight * con
        opt.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
        opt.step()
        sched.step()
        history.append({"itm": itm.item(), "contrastive": con.item(), "loss": loss.item()})
        bar.set_postfix(loss=f"{loss.item():.3f}")
        started.append(time.perf_counter())
    # the steps after the first (which pays for the first kernels and preprocessing) and their seconds
    record(model=f"fine-tune {base} ({config.encoders})", job="step", batch=config.batch_size,
           items=len(started) - 1, seconds=started[-1] - started[0] if started else 0.0)
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with transformers_bars_off():   # the shards' bar: nothing to wait for
        model.eval().to("cpu").save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    processor.save_pretrained(tmp)
    (tmp / "finetune.json").write_text(json.dumps({"base": str(base), "config": dataclasses.asdict(config),
                                                   "history": history}, indent=1))
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
    return out_dir

