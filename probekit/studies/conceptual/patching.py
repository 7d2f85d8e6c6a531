"""The patching sweep of the conceptual study (Schiappa et al. 2023, section 5): fine-tune a CLIP model once per
encoder setting, patch it at every α and evaluate each patched model on the probes and a held-out task.

Rows (probe ``patching``, model = the fine-tuned model, condition ``<encoders>, α = <a>``): Probe-R μ(c) and
accuracy per kind (subset ``probe-r <kind>``), Probe-C scores per split (``probe-c <split>``) and the held-out
task's top-k accuracy (``general``).  For every α > 0, paired differences from the original model over the same
items (metric ``<metric>_diff``, condition ``<encoders>, α = <a> − original``), the interval from a bootstrap of
the per-item differences; and at the largest α and at the paper's α (``PATCH_ALPHA``, 0.2) when swept, the text
encoder's fine-tune against the vision encoder's (condition ``text, α = 1 − vision, α = 1``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from probekit import shard
from probekit.metrics import conceptual as mc
from probekit.papers.conceptual import PATCH_ALPHA, patch_condition
from probekit.results import concat, frame, row
from probekit.scorers.base import Scorer
from probekit.scorers.hf import transformers_bars_off
from probekit.studies.conceptual import scores as cs, finetune as ft
from probekit.studies.conceptual import finetune_cache

ORIGINAL = "original"
#: encoder settings compared with each other over the same items (the paper: training the text encoder alone gives
#: the largest gain and the largest forgetting, the vision encoder alone the least drift)
ENCODER_PAIRS = (("text", "vision"),)
#: per-item columns compared between a patched model and the original, per task
_PAIRED = {"probe-r": (["item_id"], {"mu_c": "confidence", "acc": "correct"}),
           "probe-c": (["group_id"], {"mu_c": "confidence", "image": "image", "text": "text", "group": "group"}),
           "general": (["item_id"], {"top1": "top1", "top5": "top5"})}


def whole_groups(items: pd.DataFrame, limit: int | None, seed: int = 0) -> pd.DataFrame:
    """At most ``limit`` rows of ``items`` as whole groups (``group_id``: a Probe-R anchor's comparisons, a Probe-C
    group) drawn at random under ``seed``, kept in the table's order (at least one group); every row when ``limit``
    is None or not below their number.  A real probe's table is ordered (by relation, by source), so its head would
    not be a sample of it."""
    if not limit or len(items) <= limit:
        return items
    ids = items["group_id"].drop_duplicates().to_numpy()
    drawn = ids[np.random.default_rng(seed).permutation(len(ids))]
    sizes = items.groupby("group_id", sort=False).size().reindex(drawn).to_numpy()
    take = max(1, int(np.searchsorted(np.cumsum(sizes), limit, side="right")))
    return items[items["group_id"].isin(set(drawn[:take]))]


def imagenet_items(root: str | Path, limit: int | None = None, seed: int = 0) -> pd.DataFrame:
    """ImageNet validation images with readable class names, through ``torchvision.datasets.ImageNet``
    (``root`` holds ILSVRC2012_devkit_t12.tar.gz and the validation images as torchvision expects).  Prompts are
    "a photo of a {first class name}."."""
    from torchvision.datasets import ImageNet

    ds = ImageNet(str(root), split="val")
    names = [c[0] for c in ds.classes]
    keys: list[str] = []
    seen: dict[str, int] = {}
    for name in names:  # a few ImageNet names repeat ("crane", "maillot"): keep the classes apart
        seen[name] = seen.get(name, 0) + 1
        keys.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    rows = pd.DataFrame({"item_id": [str(i) for i in range(len(ds.samples))],
                         "image": [p for p, _ in ds.samples], "label": [keys[t] for _, t in ds.samples]})
    if limit is not None:
        rows = rows.iloc[np.sort(np.random.default_rng(seed).permutation(len(rows))[:limit])]
    rows = rows.reset_index(drop=True)
    rows.attrs["classes"] = keys
    rows.attrs["prompts"] = {k: f"a photo of a {n}." for k, n in zip(keys, names)}
    return rows


def general_task_items(task: str, data_dir: str | Path, imagenet_dir: str | Path | None = None,
                       limit: int | None = None, seed: int = 0
                       ) -> pd.DataFrame:
    """The held-out task of the patching sweep: ``"toy"`` (``classify.GENERAL_TASK``: which pair of objects is
    shown, in which scene; no attribute or predicate, so nothing the swap negatives train) or ``"imagenet"`` (the
    validation set under ``imagenet_dir``)."""
    if task == "imagenet":
        if not imagenet_dir:
            raise ValueError("general_task='imagenet' needs imagenet_dir: a folder with ILSVRC2012_devkit_t12.tar.gz "
                             "and the validation images, as torchvision.datasets.ImageNet expects")
        return imagenet_items(imagenet_dir, limit=limit, seed=seed)
    if task == "toy":
        from probekit.datasets import load_dataset

        return load_dataset("classify-pairs", "toy", data_dir=data_dir, limit=limit, seed=seed)
    raise ValueError(f"general_task={task!r}; valid: toy, imagenet")


def evaluate_clip(scorer: Scorer, probes: dict[str, pd.DataFrame], general: pd.DataFrame | None, seed: int = 0
                  ) -> dict[str, pd.DataFrame]:
    """One model's per-item scores on the sweep's tasks: ``{"probe-r": ..., "probe-c": ..., "general": ...}``."""
    scored = {}
    if probes.get("probe-r") is not None:
        scored["probe-r"] = cs.score_probe_r(scorer, probes["probe-r"])
    if probes.get("probe-c") is not None:
        scored["probe-c"] = cs.score_probe_c(scorer, probes["probe-c"])
    if general is not None:
        prompts = general.attrs.get("prompts") or mc.class_prompts(general.attrs["classes"])
        scored["general"] = cs.zero_shot_scores(scorer, general, prompts)
    return scored


def sweep_rows(scored: dict[str, pd.DataFrame], model: str, condition: str, seed: int = 0) -> pd.DataFrame:
    """The rows of one evaluated model (the numbers of the paper's Tables 2 and 10)."""
    fixed = dict(probe="patching", model=model, condition=condition)
    parts = []
    if "probe-r" in scored:
        s = scored["probe-r"].assign(_subset="probe-r " + scored["probe-r"]["kind"])
        parts.append(mc.probe_r_rows(s, seed, by={"subset": "_subset"}, **fixed))
    if "probe-c" in scored:
        s = scored["probe-c"].assign(_subset="probe-c " + scored["probe-c"]["split"])
        parts.append(mc.probe_c_rows(s, seed, by={"subset": "_subset"}, **fixed))
    if "general" in scored:
        parts.append(mc.zero_shot_rows(scored["general"], seed, **fixed))
    return concat(parts)


def paired_rows(patched: dict[str, pd.DataFrame], original: dict[str, pd.DataFrame], model: str,
                condition: str, seed: int = 0, probe: str = "patching", against: str = ORIGINAL) -> pd.DataFrame:
    """Patched minus original over the same items, per task (and kind / split) and metric (condition
    ``<condition> − <against>``; the lab compares two models of the zoo the same way, ``probe`` and ``against``
    naming them)."""
    out = []
    for task, (keys, metrics) in _PAIRED.items():
        if task not in patched or task not in original:
            continue
        both = patched[task].merge(original[task], on=keys, suffixes=("", "_orig"))
        group = {"probe-r": "kind", "probe-c": "split"}.get(task)
        for label, part in (both.groupby(group, sort=False) if group else [(None, both)]):
            subset = f"{task} {label}" if label is not None else task
            for metric, col in metrics.items():
                if col not in part:
                    continue
                diff = part[col].to_numpy(float) - part[f"{col}_orig"].to_numpy(float)
                out.append(row(study=mc.STUDY, probe=probe, model=model, condition=f"{condition} − {against}",
                               subset=subset, metric=f"{metric}_diff", chance=0.0,
                               **mc.summarize(diff, seed=seed, ids=part[keys[0]].to_numpy())))
    return frame(out)


def patch_sweep(model: str, triplets: pd.DataFrame, encoders: Sequence[str], alphas: Sequence[float],
                probes: dict[str, pd.DataFrame], general: pd.DataFrame | None, cache_root: str | Path, *,
                config: dict[str, Any] | None = None, device: str = "auto", batch_size: int = 32,
                cache_dir: str | None = None,
                seed: int = 0, finetune_seed: int | None = None, progress: bool = True
                ) -> tuple[pd.DataFrame, dict[str, Path]]:
    """Fine-tune ``model`` once per encoder setting (cached), patch it at every α and evaluate each patched
    model: (rows, the fine-tuned checkpoint of each encoder setting, whose ``finetune.json`` holds the losses).
    ``seed`` draws the bootstrap's resamples, ``finetune_seed`` (default ``seed``) the fine-tune's
    (:attr:`~probekit.studies.conceptual.finetune.FinetuneConfig.seed`): another fine-tuning seed, the same items.
    α = 0 is the original model, evaluated once.  The encoder settings of :data:`ENCODER_PAIRS` are also compared
    with each other at the sweep's largest α > 0 and at the paper's :data:`PATCH_ALPHA`, item by item (condition
    ``text, α = 1 − vision, α = 1``; :func:`compared_alphas`)."""
    from probekit.device import resolve_device
    from probekit.scorers import load_scorer

    ft.require_clip(model)
    train_device = str(resolve_device(device))
    original = evaluate_clip(load_scorer(model, device=device, batch_size=batch_size, cache_dir=cache_dir),
                             probes, general, seed)
    parts, checkpoints, kept, compared = [], {}, {}, compared_alphas(alphas)
    for enc, cfg in configs(config, encoders, seed if finetune_seed is None else finetune_seed).items():
        tuned = shard.rank_zero_first(lambda: finetune_cache.finetuned_cached(  # sharded: trained once, by rank 0
            model, triplets, cfg, Path(cache_root) / safe(model), device=train_device, progress=progress))
        checkpoints[enc] = tuned
        for alpha in alphas:
            condition = patch_condition(enc, alpha)
            if alpha == 0:
                parts.append(sweep_rows(original, model, condition, seed))
                continue
            path = shard.rank_zero_first(lambda: patched_model(model, tuned, alpha,
                                                                 finetune_cache.patch_path(tuned, alpha)))
            patched = load_scorer(str(path), family="clip", device=device, batch_size=batch_size, cache_dir=cache_dir)
            patched.label = f"{model} ({condition})"
            scored = evaluate_clip(patched, probes, general, seed)
            parts += [sweep_rows(scored, model, condition, seed), paired_rows(scored, original, model, condition, seed)]
            if alpha in compared:
                kept[enc, alpha] = scored
    for alpha in compared:
        for a, b in ENCODER_PAIRS:
            if (a, alpha) in kept and (b, alpha) in kept:
                parts.append(paired_rows(kept[a, alpha], kept[b, alpha], model, patch_condition(a, alpha), seed,
                                         against=patch_condition(b, alpha)))
    return concat(parts), checkpoints


def configs(config: dict[str, Any] | None, encoders: Sequence[str], finetune_seed: int) -> dict[str, ft.FinetuneConfig]:
    """The fine-tune of each encoder setting: ``config`` (FinetuneConfig's fields) with its encoders and seed."""
    return {enc: ft.FinetuneConfig(**{**(config or {}), "encoders": enc, "seed": finetune_seed}) for enc in encoders}


def compared_alphas(alphas: Sequence[float]) -> list[float]:
    """The α > 0 at which :data:`ENCODER_PAIRS` are compared item by item: the paper's :data:`PATCH_ALPHA` when
    swept, and the sweep's largest α (the most fine-tuned), in that order, once each."""
    swept = [a for a in alphas if a > 0]
    return list(dict.fromkeys([a for a in (PATCH_ALPHA, max(swept, default=0)) if a in swept]))


def safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-80:]


_PROCESSOR_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json",
                    "merges.txt", "vocab.txt", "preprocessor_config.json", "processor_config.json")


def interpolate(theta_orig: dict[str, torch.Tensor], theta_ft: dict[str, torch.Tensor],
                alpha: float) -> dict[str, torch.Tensor]:
    """θ(α) = (1 − α)·θ_orig + α·θ_ft for every floating tensor (others are taken from θ_orig)."""
    if set(theta_orig) != set(theta_ft):
        diff = sorted(set(theta_orig) ^ set(theta_ft))[:5]
        raise ValueError(f"the two state dicts hold different tensors (e.g. {diff}); patch a model with its "
                         "own fine-tuned copy")
    out: dict[str, torch.Tensor] = {}
    for k, a in theta_orig.items():
        b = theta_ft[k]
        out[k] = (1 - alpha) * a + alpha * b if torch.is_floating_point(a) else a.clone()
    return out


def patched_model(base: str | Path, finetuned: str | Path, alpha: float, out_dir: str | Path) -> Path:
    """Write the patched model θ(α) of ``base`` and ``finetuned`` (registry names, directories or hub ids) to
    ``out_dir``
    (reused when present) and return it."""
    out_dir = Path(out_dir)
    if (out_dir / "config.json").exists():
        return out_dir
    orig, tuned = ft.load_clip(base).model, ft.load_clip(finetuned).model
    orig.load_state_dict(interpolate(orig.state_dict(), tuned.state_dict(), alpha))
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with transformers_bars_off():
        orig.save_pretrained(tmp)
    for name in _PROCESSOR_FILES:
        if (Path(finetuned) / name).exists():
            shutil.copy(Path(finetuned) / name, tmp / name)
    tmp.rename(out_dir)
    return out_dir
