"""Shared pieces of the Hugging Face adapters: loading a tokenizer + image processor, tokenizing texts, and the
image processors' fast path (:func:`fast_pixels`: one stacked rescale + normalize when no resize is needed)."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import torch


@contextmanager
def transformers_bars_off():
    """transformers' own progress bars (loading, ``save_pretrained``'s shards) off for the block, as they were
    afterwards."""
    from transformers.utils import logging as hf_logging
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def from_pretrained(cls_name: str, source: str, revision: str | None = None, device=None):
    """``transformers.<cls_name>.from_pretrained(source)`` in eval mode; weights the checkpoint lacks are an error.

    transformers' own load report is silenced (weights of another head in the same checkpoint are expected);
    a head the checkpoint does not have would be randomly initialised, so that raises instead.
    """
    import transformers
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with transformers_bars_off():
            model, info = getattr(transformers, cls_name).from_pretrained(source, revision=revision,
                                                                            output_loading_info=True)
    finally:
        hf_logging.set_verbosity(level)
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
    """``processor(images=pils)``'s tensors named in ``keep``; through :func:`fast_pixels` where it applies.
    ``pils`` may also be (3, H, W) uint8 tensors: the processor then runs its torchvision pipeline on their device
    (with the values it gives the same images as PIL images on the CPU; see :mod:`probekit.scorers.pixels`)."""
    out = fast_pixels(processor, pils)
    if out is None:
        out = processor(images=pils, return_tensors="pt")
    return {k: v for k, v in out.items() if k in keep and isinstance(v, torch.Tensor)}


#: image processors whose preprocessing is TorchvisionBackend's own (resize -> centre crop -> fused rescale and
#: normalize), and ViLT's (shorter side to a multiple of size_divisor, then padding with a pixel mask)
_PLAIN = ("CLIPImageProcessor", "SiglipImageProcessor", "BlipImageProcessor")
_BACKEND_METHODS = ("_preprocess", "preprocess", "__call__", "process_image", "resize", "center_crop",
                    "rescale_and_normalize", "pad")


def _passthrough_size(proc) -> tuple[int, int] | None:
    """(height, width) of the RGB images that ``proc`` leaves the same size (no resize, crop or padding changes
    them, so its output is the rescaled and normalized pixels), or None where the fast path does not apply: a
    processor class or option it does not replicate."""
    try:
        from transformers.image_processing_backends import TorchvisionBackend
    except ImportError:
        return None
    cls, name = type(proc), type(proc).__name__
    if not (issubclass(cls, TorchvisionBackend) and cls.__module__.startswith("transformers.models.")
            and name in _PLAIN + ("ViltImageProcessor",)):
        return None
    replicated = {"resize", "_preprocess"} if name == "ViltImageProcessor" else set()  # read from ViLT's code
    if cls.__mro__[1] is not TorchvisionBackend or (set(_BACKEND_METHODS) & set(vars(cls))) - replicated:
        return None
    if not (proc.do_resize and proc.do_rescale and proc.do_normalize and proc.rescale_factor):
        return None
    if getattr(proc, "device", None) is not None or getattr(proc, "data_format", None) not in (None, "channels_first"):
        return None
    size = proc.size
    extra = (size.longest_edge, size.max_height, size.max_width, size.min_pixels, size.max_pixels)
    if any(v is not None for v in extra):
        return None
    if size.shortest_edge and size.height is None and size.width is None:
        target = (size.shortest_edge, size.shortest_edge)  # a square image: its shorter side is already that
    elif size.height and size.width and not size.shortest_edge:
        target = (size.height, size.width)
    else:
        return None
    if name == "ViltImageProcessor":
        if not size.shortest_edge or (proc.size_divisor and size.shortest_edge % proc.size_divisor):
            return None
        return target
    if proc.do_center_crop and proc.crop_size is None:
        return None
    crop = (proc.crop_size.height, proc.crop_size.width) if proc.do_center_crop else target
    if getattr(proc, "do_pad", None) or crop != target:
        return None
    return target


def fast_pixels(processor, pils: list) -> dict | None:
    """``processor(images=pils, return_tensors="pt")`` in one stacked tensor operation, equal to it bit for bit,
    when every image is an RGB PIL image of the size the processor leaves unchanged (see :func:`_passthrough_size`);
    None otherwise (the caller then runs the processor)."""
    from PIL import Image

    target = _passthrough_size(processor) if pils else None
    if target is None or not all(isinstance(p, Image.Image) and p.mode == "RGB" and p.size == target[::-1]
                                 for p in pils):
        return None
    import numpy as np

    stacked = torch.from_numpy(np.stack([np.asarray(p) for p in pils])).permute(0, 3, 1, 2).contiguous()
    mean, std = (tuple(v) if isinstance(v, list) else v for v in (processor.image_mean, processor.image_std))
    pixels = processor.rescale_and_normalize(stacked, processor.do_rescale, processor.rescale_factor,
                                             processor.do_normalize, mean, std)  # the processor's own arithmetic
    out = {"pixel_values": pixels}
    if type(processor).__name__ == "ViltImageProcessor" and processor.do_pad:
        out["pixel_mask"] = torch.ones((len(pils), *target), dtype=torch.int64)
    return out


def architectures(source: str, revision: str | None = None) -> list[str]:
    from transformers import AutoConfig

    return list(getattr(AutoConfig.from_pretrained(source, revision=revision), "architectures", None) or [])
