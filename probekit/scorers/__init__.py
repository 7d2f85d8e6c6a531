"""Scorers: one interface over contrastive, ITM and masked-LM models.

>>> from probekit.scorers import load_scorer, MASK
>>> s = load_scorer("toy-vilt")                 # a registry name ...
>>> s = load_scorer("/path/to/ckpt")            # ... a checkpoint directory or hub id (family from its config)
>>> s = load_scorer("vilt:my-org/my-vilt")      # ... FAMILY:SOURCE, or open_clip "RN50:yfcc15m" (see resolve)
>>> s.match(images, texts); s.similarity(images, texts); s.fill_mask([f"a dog {MASK} a ball"], images)
>>> s.token_logprobs(["a dog holding a ball"], images)    # log P(true token) of each token, masked alone
>>> load_scorer("owlvit-b32").detect(images, ["dog"])    # one (x, y, w, h) box or None per (image, query)

``REGISTRY`` / ``list_models()`` is the table of named models (family, checkpoint, capabilities, head and
normalisation, papers); ``FAMILIES`` maps each family to its adapter module, imported only when used.
"""

from __future__ import annotations

import dataclasses
import difflib
import os

from probekit import shard
from probekit.scorers.base import MASK, CapabilityError, Scorer
from probekit.scorers.heads import can_answer, head_for
from probekit.scorers.registry import FAMILIES, FAMILY_CAPABILITIES, FAMILY_HEADS, REGISTRY, ModelSpec, adapter, \
    families, family_head, list_models, resolve_source
from probekit.scorers.resolve import UnknownModelError, model_spec


def _adapter(family: str) -> type[Scorer]:
    known = families()
    if family not in known:
        near = difflib.get_close_matches(family, known, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
        raise UnknownModelError(f"unknown model family {family!r}{hint}; families: {', '.join(known)} (more come "
                                f"from packages declaring a 'probekit.scorers' entry point)")
    return adapter(family)


def load_scorer(name_or_path: str | os.PathLike, family: str | None = None, device: str = "auto",
                batch_size: int = 32, cache_dir=None, num_workers: int = 0, *, capabilities=None,
                half: bool | None = None, revision: str | None = None, device_pixels: bool | None = None,
                **options) -> Scorer:
    """Load a model by any name :func:`~probekit.scorers.resolve.model_spec` resolves (registry name, checkpoint
    directory, hub id, ``FAMILY:SOURCE``, open_clip ``ARCH:TAG``), or a hub id / local checkpoint with an explicit
    ``family`` (no detection).

    cache_dir: where scores persist (parquet); None -> ``$PROBEKIT_CACHE`` or ~/.cache/probekit/scores;
      False -> no on-disk cache.
    num_workers: DataLoader worker processes decoding and preprocessing images.
    capabilities: restrict/declare what an unregistered checkpoint can do (default: what its heads allow).
    half: fp16 autocast (default: on CUDA only).  revision: hub revision (part of the cache fingerprint).
    device_pixels: decode JPEGs and preprocess images on the model's device, each distinct image of a batch sent
      once (default: on CUDA for the families that have it; see :mod:`probekit.scorers.pixels`).
    options: family-specific, e.g. open_clip ``arch=``, ``pretrained=``, ``image_mean=``, ``image_std=``.
    """
    name = os.fspath(name_or_path)
    spec = REGISTRY.get(name)
    if spec is not None and family not in (None, spec.family):
        raise ValueError(f"{name!r} is a registered {spec.family} model; drop family={family!r} or pass a path")
    if spec is None and family is not None:
        spec = ModelSpec(name, family, name, ())
    elif spec is None:
        spec = model_spec(name)
    adapter = _adapter(spec.family)
    if capabilities:
        spec = dataclasses.replace(spec, capabilities=tuple(capabilities))
    opts = {**spec.options, **options}
    scorer = shard.rank_zero_first(lambda: adapter(  # sharded: a download or conversion made once, by rank 0
        spec.name, resolve_source(spec.source), spec.capabilities or None, device=device, batch_size=batch_size,
        cache_dir=cache_dir, num_workers=num_workers, half=half, revision=revision, head=family_head(spec.family),
        options=opts, device_pixels=device_pixels))
    scorer.match_calibrated = spec.calibrated  # type: ignore[attr-defined]  # set here only, read by head_for
    return scorer


__all__ = ["load_scorer", "model_spec", "list_models", "MASK", "CapabilityError", "UnknownModelError", "REGISTRY", "FAMILIES",
           "FAMILY_CAPABILITIES", "Scorer", "ModelSpec", "head_for", "can_answer"]
