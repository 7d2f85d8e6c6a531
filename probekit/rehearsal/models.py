"""Tiny random-weight stand-ins for every model a profile names, where paper mode looks for the real ones.

* Hugging Face checkpoints: a tiny model of the same family with the real checkpoint's image processor settings
  (:data:`HUB`: input size, patch, resize divisor, mean and std) written into a hub cache under the same hub id
  (``models--ORG--NAME/snapshots/REV``), read with ``HF_HUB_OFFLINE=1``;
* open_clip ``ARCH:TAG``: a shrunken copy of ARCH's own config (same input size and patch, one layer) in a folder
  named by ``PROBEKIT_OPEN_CLIP_CONFIGS``, and the weights in the hub cache under the tag's ``hf_hub`` repository;
* the authors' ViLT checkpoint (``vilt-itm``): a file in their PyTorch Lightning layout, to be served at its URL.

A hub id the profile names that :data:`HUB` does not know is an error naming it: the rehearsal covers every model.

With ``full``, every stand-in has the real checkpoint's size instead (for timing, benchmarks/paper_time.py): ViT-B
and BERT-base layers in every transformer (ViT-L's for the checkpoints of :data:`LARGE`), the authors' ViLT at
ViT-B/32, open_clip's own architecture config.  Towers the real models make narrower or shallower (CLIP's 512-wide
text encoder, FLAVA's and BridgeTower's 6 cross-modal layers) are built at the same width and depth as the rest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import torch

from probekit.scorers import REGISTRY, model_spec
from probekit.scorers.hf import transformers_bars_off
from probekit.scorers.testing import save_tiny, tiny_open_clip_tag, vilt_authors_state, word_tokenizer

CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
_CLIP = {"image_mean": CLIP_MEAN, "image_std": CLIP_STD, "resample": 3}
_HALF = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "resample": 3}
#: hub id -> (family, input size, patch, image processor settings) of the real checkpoint
HUB: dict[str, tuple[str, Any, Any, dict[str, Any] | None]] = {
    "openai/clip-vit-base-patch32": ("clip", 224, 32, _CLIP),
    "openai/clip-vit-base-patch16": ("clip", 224, 16, _CLIP),
    "openai/clip-vit-large-patch14": ("clip", 224, 14, _CLIP),
    "openai/clip-vit-large-patch14-336": ("clip", 336, 14, _CLIP),
    "google/siglip-base-patch16-224": ("siglip", 224, 16, {"image_mean": [0.5] * 3, "image_std": [0.5] * 3}),
    "dandelin/vilt-b32-finetuned-coco": ("vilt", 384, 32, _HALF),
    "dandelin/vilt-b32-mlm": ("vilt", 384, 32, _HALF),
    "Salesforce/blip-itm-base-coco": ("blip", 384, 16, _CLIP),
    "Salesforce/blip-itm-large-coco": ("blip", 384, 16, _CLIP),
    "BridgeTower/bridgetower-base-itm-mlm": ("bridgetower", 288, 16, {**_CLIP, "size_divisor": 32}),
    "facebook/flava-full": ("flava", 224, 16, _CLIP),
    "bert-base-uncased": ("bert", 0, 0, {}),
    "google/owlvit-base-patch32": ("owlvit", 768, 32, _CLIP),
}
VILT_TEXT, VILT_HEADS = 32, 2
#: a full-size stand-in's layers: ViT-B / BERT-base, and ViT-L for the hub ids of LARGE
BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
LARGE = {repo: dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
         for repo in ("openai/clip-vit-large-patch14", "openai/clip-vit-large-patch14-336",
                      "Salesforce/blip-itm-large-coco")}
#: words the tiny tokenizers spell in two pieces, as BERT's splits a rare word, so that guided masking's rule for
#: verbs of several pieces runs
PIECES = {"throwing": "throw", "carrying": "carry"}


def vocabulary(texts) -> list[str]:
    """The tiny tokenizers' vocabulary: every word of ``texts`` (lower case), with the words of :data:`PIECES` in
    two pieces and a trailing full stop or comma as its own continuation piece."""
    import re

    words = {w for t in texts for w in re.findall(r"[a-z]+", t.lower())}
    return sorted((words - set(PIECES)) | set(PIECES.values())) + ["##ing", "##.", "##,", "."]


def snapshot(cache: Path, repo: str) -> Path:
    """The snapshot folder of ``repo`` in the hub cache ``cache`` (created, with ``refs/main``)."""
    rev = hashlib.sha1(repo.encode()).hexdigest()
    folder = Path(cache) / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(rev)
    return folder / "snapshots" / rev


def hub_model(cache: Path, repo: str, words, full: bool = False) -> Path:
    if repo not in HUB:
        raise KeyError(f"the rehearsal has no tiny stand-in for hub id {repo!r}: add its family and image processor "
                       f"settings to probekit.rehearsal.models.HUB")
    family, image, patch, processor = HUB[repo]
    sizes = {"image": image, "patch": patch} if image else {}
    dims = LARGE.get(repo, BASE) if full else None
    return save_tiny(family, snapshot(cache, repo), processor=processor, words=words, dims=dims, **sizes)


def open_clip_model(cache: Path, configs: Path, source: str, full: bool = False) -> None:
    """``ARCH:TAG``'s tiny (or ``full``) architecture in ``configs`` and its weights under the tag's hub repository."""
    repo, filename, state = tiny_open_clip_tag(source, configs, shrink=not full)
    folder = snapshot(cache, repo)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(state, folder / filename)


def vilt_checkpoint(path: Path, words, full: bool = False) -> None:
    """The authors' ``vilt_200k_mlm_itm.ckpt`` layout, random, sized for the tiny ``dandelin/vilt-b32-mlm`` (or
    ``full``: ViT-B/32)."""
    _, image, patch, _ = HUB["dandelin/vilt-b32-mlm"]
    size = (dict(hidden=BASE["hidden_size"], layers=BASE["num_hidden_layers"], mlp=BASE["intermediate_size"])
            if full else {})
    state = vilt_authors_state(len(word_tokenizer(words=words)), VILT_TEXT, patch, image // patch, **size)
    path.parent.mkdir(parents=True, exist_ok=True)
    heads = BASE["num_attention_heads"] if full else VILT_HEADS
    torch.save({"state_dict": state, "hyper_parameters": {"config": {"num_heads": heads}}}, path)


def model_names(params: dict[str, dict]) -> set[str]:
    """Every registry name in the chapters' parameter values (lists or single names)."""
    names = set()
    for values in params.values():
        for value in values.values():
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, str) and v in REGISTRY:
                    names.add(v)
    return names


def write_models(cache: Path, configs: Path, names, words, served_checkpoint, full: bool = False) -> None:
    """Stand-ins (tiny, or ``full`` size) for the models ``names`` (and what they load besides: the masking detector,
    ViLT's processors) in the hub cache ``cache`` and ``configs``; ``served_checkpoint(url, path)`` places a
    checkpoint to serve."""
    from probekit.scorers import vilt_original
    from probekit.studies.masking.study import DETECTOR

    hub = {vilt_original.PROCESSOR_SOURCE}
    for name in {*names, DETECTOR}:
        spec = model_spec(name)
        if spec.family == "open_clip":
            open_clip_model(cache, configs, spec.source, full)
        elif spec.family == "vilt-itm":
            vilt_checkpoint(served_checkpoint(spec.source), words, full)
        else:
            hub.add(spec.source)
    with transformers_bars_off():
        for repo in sorted(hub):
            hub_model(cache, repo, words, full)
