"""Shared pieces of the Hugging Face adapters: loading a tokenizer + image processor and tokenizing texts."""

from __future__ import annotations

import warnings

import torch


def from_pretrained(cls_name: str, source: str, revision: str | None = None, device=None):
    """``transformers.<cls_name>.from_pretrained(source)`` in eval mode; weights the checkpoint lacks are an error.

    transformers' own load report is silenced (weights of another head in the same checkpoint are expected);
    a head the checkpoint does not have would be randomly initialised, so that raises instead.
    """
    import transformers
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        model, info = getattr(transformers, cls_name).from_pretrained(source, revision=revision,
                                                                        output_loading_info=True)
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()
    missing = [k for k in info.get("missing_keys", []) if "position_ids" not in k]
    if missing:
        raise ValueError(f"{source} has no weights for {len(missing)} parameter(s) of {cls_name} (e.g. "
                         f"{missing[:3]}): that head would be random. Is this checkpoint of that kind? "
                         f"Pass capabilities=... naming only the heads it has.")
    if info.get("mismatched_keys"):
        warnings.warn(f"probekit: {source}: mismatched weights for {cls_name}: {info['mismatched_keys'][:3]}")
    model.eval()
    return model.to(device) if device is not None else model


def load_processors(source: str, revision: str | None = None, tokenizer: bool = True, image: bool = True):
    from transformers import AutoImageProcessor, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(source, revision=revision) if tokenizer else None
    proc = AutoImageProcessor.from_pretrained(source, revision=revision) if image else None
    return tok, proc


def max_text_length(tokenizer, config_limit: int | None) -> int:
    """The shorter of the tokenizer's and the model's position limits (toy tokenizers often leave theirs unset)."""
    limits = [n for n in (getattr(tokenizer, "model_max_length", None), config_limit) if n and n < 100_000]
    return min(limits) if limits else 512


def tokenize(tokenizer, texts: list[str], max_length: int, padding="longest", keep=None) -> dict:
    enc = tokenizer(texts, padding=padding, truncation=True, max_length=max_length, return_tensors="pt")
    return {k: v for k, v in enc.items() if keep is None or k in keep}


def image_size_of(processor) -> int | None:
    size = getattr(processor, "size", None) or {}
    if isinstance(size, int):
        return size
    size = dict(size)
    return size.get("shortest_edge") or size.get("height")


def pixel_inputs(processor, pils: list, keep=("pixel_values", "pixel_mask")) -> dict:
    out = processor(images=pils, return_tensors="pt")
    return {k: v for k, v in out.items() if k in keep and isinstance(v, torch.Tensor)}


def architectures(source: str, revision: str | None = None) -> list[str]:
    from transformers import AutoConfig

    return list(getattr(AutoConfig.from_pretrained(source, revision=revision), "architectures", None) or [])
