"""open_clip dual encoders: any architecture with any pretrained tag, an ``hf-hub:`` repo, or local weights.

Sources (``load_scorer(source, family="open_clip", ...)``):
* ``"ARCH:TAG"`` (e.g. ``"RN50:yfcc15m"``): a built-in architecture and pretrained tag (downloaded by open_clip
  into ``weights_dir`` on first use; paper mode only).
* a directory: open_clip's local-dir layout (``open_clip_config.json`` with ``model_cfg`` and ``preprocess_cfg``,
  plus the weights); both the architecture and the preprocessing come from that config.
* a weights file: needs ``arch="ViT-B-32"`` (a built-in architecture); its preprocessing is the architecture
  default (OpenAI mean/std, resize 'shortest') unless ``image_mean``/``image_std``/``image_resize_mode`` are
  given, and a warning says so, because the wrong normalisation silently degrades scores.
Loading a directory or file never touches the network (pretrained tower weights are switched off).
similarity: ``logit_scale`` x cosine of ``encode_image``/``encode_text`` (+ ``logit_bias`` for SigLIP-style models).
With ``device_pixels`` the loader runs the transforms before ``ToTensor`` (PIL's resize and crop: torch's bicubic
resize differs from PIL's, see :mod:`probekit.scorers.pixels`) and the device the rest (to float, normalise).
"""

from __future__ import annotations

import json
import os
import warnings

import torch
import torch.nn.functional as F

from probekit.scorers.base import Scorer


#: a folder of open_clip architecture configs (``ARCH.json``) that add to, or replace, open_clip's own (the offline
#: rehearsal's tiny architectures, :mod:`probekit.rehearsal.models`, or your own)
CONFIGS = "PROBEKIT_OPEN_CLIP_CONFIGS"


class OpenClipScorer(Scorer):
    family = "open_clip"
    choice_head = "similarity"
    decode_on_device = False

    def _load(self, source, arch=None, pretrained=None, image_mean=None, image_std=None, image_resize_mode=None,
              weights_dir=None, **options):
        import open_clip

        if options:
            raise TypeError(f"unknown open_clip option(s): {', '.join(options)}")
        if os.environ.get(CONFIGS):
            open_clip.add_model_config(os.environ[CONFIGS])
        pre = {k: v for k, v in (("image_mean", image_mean), ("image_std", image_std),
                                 ("image_resize_mode", image_resize_mode)) if v is not None}
        if os.path.isdir(source):
            model_name, pretrained = f"local-dir:{os.path.abspath(source)}", None
        elif os.path.isfile(source):
            if not arch:
                raise ValueError(f"open_clip weights file {source}: pass arch=... (one of open_clip.list_models(), "
                                 f"e.g. 'ViT-B-32') so the architecture and its preprocessing are explicit")
            model_name, pretrained = arch, os.path.abspath(source)
            if not {"image_mean", "image_std"} <= pre.keys():
                warnings.warn(f"probekit: {source} loaded with the default preprocessing of {arch} (mean/std of "
                              f"its config); pass image_mean=/image_std= if the weights were trained otherwise")
        elif source.startswith("hf-hub:"):
            model_name, pretrained = source, None
        else:
            model_name, _, tag = source.partition(":")
            model_name, pretrained = arch or model_name, pretrained or tag or None
            if pretrained is None:
                raise ValueError(f"open_clip source {source!r} names no pretrained tag: use 'ARCH:TAG', e.g. "
                                 f"'ViT-B-32:openai' (tags: open_clip.list_pretrained())")
        # a tag trained with QuickGELU (OpenAI's, and others) on an architecture whose config has GELU: open_clip
        # only warns and builds GELU, which silently changes every activation of the checkpoint
        tag = open_clip.get_pretrained_cfg(model_name, pretrained) if isinstance(pretrained, str) else {}
        self.model, _, self.preprocess = open_clip.create_model_and_transforms(
            model_name, pretrained=pretrained, device=self.device, cache_dir=weights_dir, pretrained_image=False,
            pretrained_text=False, force_quick_gelu=bool(tag.get("quick_gelu")), **pre)
        self.model.eval()
        self.loaded_from, self.load_settings = self._identity(model_name, pretrained, weights_dir, pre)
        steps = list(self.preprocess.transforms)
        cut = next((i for i, t in enumerate(steps) if type(t).__name__ in ("ToTensor", "MaybeToTensor")), None)
        self.pixels_on_device = cut is not None
        self._pil_steps, self._tensor_steps = (steps[:cut], steps[cut + 1:]) if cut is not None else (steps, [])
        self.tokenizer = open_clip.get_tokenizer(model_name, cache_dir=weights_dir)
        self.open_clip_name = (model_name, pretrained)
        visual = self.model.visual
        cfg = getattr(visual, "preprocess_cfg", {}) or {}
        self.preprocessing = (f"open_clip {model_name}: resize {cfg.get('resize_mode', 'shortest')} to "
                              f"{cfg.get('size', getattr(visual, 'image_size', '?'))}, mean {cfg.get('mean')}, "
                              f"std {cfg.get('std')}")
        size, patch = getattr(visual, "image_size", None), getattr(visual, "patch_size", None)
        self.image_size = size[0] if isinstance(size, (tuple, list)) else size
        self.patch_size = patch[0] if isinstance(patch, (tuple, list)) else patch

    @staticmethod
    def _identity(model_name, pretrained, weights_dir, pre) -> tuple[tuple[str, ...], str]:
        """(files the weights came from, the architecture config and preprocessing they were built with): a local
        directory; a weights file (``ARCH:/path`` or ``arch=``); a pretrained tag's file in open_clip's download
        cache (looked up after loading, so it is there); an ``hf-hub:`` repository by its name only."""
        import open_clip

        if model_name.startswith("local-dir:"):
            return (model_name.partition(":")[2],), json.dumps(pre, sort_keys=True)
        settings = json.dumps([open_clip.get_model_config(model_name), pre], sort_keys=True, default=str)
        if isinstance(pretrained, str) and os.path.isfile(pretrained):
            return (pretrained,), settings
        if isinstance(pretrained, str):
            path = open_clip.pretrained.download_pretrained(open_clip.get_pretrained_cfg(model_name, pretrained),
                                                            cache_dir=weights_dir)
            return ((path,) if path and os.path.isfile(path) else ()), settings
        return (), settings

    def _prepare_images(self, pils):
        return {"pixel_values": torch.stack([self.preprocess(p) for p in pils])}

    def _uint8_pixels(self, pil):
        for step in self._pil_steps:
            pil = step(pil)
        return super()._uint8_pixels(pil)

    def _device_images(self, images):
        pixels = torch.stack(images).to(torch.float32).div(255)  # ToTensor's arithmetic
        for step in self._tensor_steps:
            pixels = step(pixels)
        return {"pixel_values": pixels}

    def _tokenize(self, texts):
        return {"input_ids": self.tokenizer(texts)}

    def _embed_images(self, inputs):
        return F.normalize(self.model.encode_image(inputs["pixel_values"]).float(), dim=-1)

    def _embed_texts(self, inputs):
        return F.normalize(self.model.encode_text(inputs["input_ids"]).float(), dim=-1)

    def _logit_scale_bias(self):
        bias = getattr(self.model, "logit_bias", None)
        return float(self.model.logit_scale.detach().exp()), (float(bias.detach()) if bias is not None else 0.0)
