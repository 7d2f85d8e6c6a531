"""A scorer's image inputs: prepared in the loader, finished on the model's device.

By default (the CPU path) the loader workers decode and preprocess every image with the family's processor
(its ``_prepare_images``), and a batch carries each distinct image's pixels once
(:func:`probekit.images.prepare_unique`); the rows are repeated for its pairs on the device
(:func:`probekit.images.expand_rows`), which gives the same values as repeating them in the worker.

With ``device_pixels`` (``load_scorer(..., device_pixels=True)``; the default on CUDA for the families that have
it, off elsewhere) the workers do no resizing: each distinct image travels once, as a JPEG's bytes (RGB and
greyscale JPEGs, see :func:`probekit.images.load_encoded`) or as uint8 pixels (other files and in-memory images,
decoded by PIL as on the CPU path), in a list under ``IMAGES`` that stays in (pinned) host memory.  On the device,
:func:`decoded` decodes the batch's JPEGs in one ``torchvision.io.decode_jpeg`` call (nvJPEG on CUDA), the family's
``_device_images`` resizes and normalises them there as tensor ops (an HF image processor given tensors runs its
torchvision pipeline on their device), and the rows are repeated for the pairs.  The path is taken only where
the family's ``_device_images`` gives pixels on the model's device for a uint8 image there, tried once at load: an
HF processor of transformers' PIL backend (FLAVA's by default with torchvision < 0.27) turns tensors into numpy
arrays, which fails on CUDA, so its images are preprocessed by the loader, and ``device_pixels_note`` (a line of
the verbs chapter's coverage table) says so.

Equality with the CPU path, measured on CPU tensors (tests/test_device_pixels.py; tolerance 1e-3 per pixel):
torchvision's JPEG decoder gives PIL's pixels, and the CLIP, SigLIP, BLIP, ViLT, BridgeTower and FLAVA processors
give the same values from uint8 tensors as from PIL images: max |difference| 0.  open_clip resizes with PIL's
bicubic filter, which torch's bicubic resize does not reproduce (measured on 224 px outputs: one grey level, 0.015
after normalising, on smooth images; up to 0.29 when enlarging noise), so for open_clip the workers still resize
and crop with PIL, and only the conversion to float and the normalisation run on the device (max |difference| 0).
On CUDA, nvJPEG and the GPU's resize kernels round differently from the CPU's; benchmarks/gpu_checks.sh measures
how much on a GPU.
"""

from __future__ import annotations

from typing import Any, Callable, cast

import torch

from probekit import images as imgs

#: the key of a batch's distinct images, as JPEG bytes or uint8 pixels, on the device path
IMAGES = "images"


class DevicePixels:
    """The image side of :class:`probekit.scorers.base.Scorer`; expects ``device``, ``name``, ``family`` and the
    hooks ``_prepare_images`` and ``_tokenize``."""
    #: whether the family's ``_device_images`` takes uint8 tensors (off for plugins unless they say so)
    pixels_on_device: bool = False
    #: whether its JPEGs may travel undecoded (False where the workers must still resize with PIL)
    decode_on_device: bool = True
    device_pixels: bool = False
    #: why the device path was not taken where it would have been ("" where it was, or was not asked for)
    device_pixels_note: str = ""
    # what the Scorer sets (declared here for the type checker; nothing is set on the class)
    device: torch.device
    name: str
    family: str
    preprocessing: str
    _prepare_images: Callable[[list[Any]], dict[str, Any]]
    _tokenize: Callable[[list[str]], dict[str, Any]]

    def _resolve_device_pixels(self, asked: bool | None) -> bool:
        """``device_pixels``: as asked, or (None) on where the model is on CUDA and the family has the path; in
        both cases only where the family's ``_device_images`` runs on a tensor of the model's device (checked here,
        :meth:`_device_refusal`): otherwise the loader preprocesses, and ``device_pixels_note`` says why."""
        if asked and not self.pixels_on_device:
            raise ValueError(f"{self.name} ({self.family}): preprocessing on the device is not available for this "
                             f"family; drop device_pixels=True")
        if not (asked or (asked is None and self.pixels_on_device and self.device.type == "cuda")):
            return False
        self.device_pixels_note = self._device_refusal()
        return not self.device_pixels_note

    def _device_refusal(self) -> str:
        """"" where ``_device_images`` of one uint8 image on the model's device gives pixels on that device; else
        why not, in one line (an HF image processor of the PIL backend converts tensors to numpy, which fails on a
        CUDA tensor: transformers picks that backend for FLAVA where torchvision < 0.27)."""
        probe = torch.zeros((3, 48, 64), dtype=torch.uint8, device=self.device)
        try:
            out = [v for v in self._device_images([probe]).values() if isinstance(v, torch.Tensor)]
        except Exception as e:  # any failure means the path is not taken; the note says which
            why = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:100]}"
        else:
            places = sorted({v.device.type for v in out})
            why = "" if places == [self.device.type] else f"its pixels came back on {', '.join(places) or 'nothing'}"
        return why and (f"images preprocessed in the loader: {self.preprocessing or self.family} does not run on "
                        f"{self.device.type} tensors ({why})")

    def _image_inputs(self, pils: list) -> dict:
        """A batch's image inputs as the loader makes them: the processor's pixels, or ``IMAGES``."""
        if not self.device_pixels:
            return self._prepare_images(pils)
        return {IMAGES: [p if isinstance(p, torch.Tensor) else self._uint8_pixels(p) for p in pils]}

    def _uint8_pixels(self, pil) -> torch.Tensor:
        """(3, H, W) uint8 pixels of a decoded RGB image, as the workers hand it to the device."""
        from torchvision.transforms.functional import pil_to_tensor
        return pil_to_tensor(pil)

    def _device_images(self, images: list[torch.Tensor]) -> dict:
        """The processor's pixels of (3, H, W) uint8 images already on the device."""
        return self._prepare_images(images)

    def _prepare_pairs(self, pils: list, texts: list) -> dict:
        inputs = self._tokenize(list(texts))
        inputs.update(imgs.prepare_unique(self._image_inputs, pils))
        return inputs

    def _prepare_only_images(self, pils: list, _extras: list) -> dict:
        return self._image_inputs(pils)

    def _device_inputs(self, inputs: dict) -> dict:
        """A batch moved to the device, finished there: images decoded and preprocessed (``IMAGES``), and each
        image's rows repeated for its items."""
        if IMAGES in inputs:
            inputs = dict(inputs)
            inputs.update(self._device_images(decoded(inputs.pop(IMAGES), self.device)))
        return imgs.expand_rows(inputs)


def decoded(images: list[torch.Tensor], device: torch.device) -> list[torch.Tensor]:
    """(3, H, W) uint8 images on ``device``: JPEG bytes (1-D) decoded there in one call (on the CPU for a device
    other than CUDA, then moved), uint8 pixels moved."""
    from torchvision.io import ImageReadMode, decode_jpeg

    out = [None if x.dim() == 1 else x.to(device, non_blocking=x.is_pinned()) for x in images]
    jpegs = [i for i, x in enumerate(images) if x.dim() == 1]
    if jpegs:
        where = device if device.type == "cuda" else torch.device("cpu")
        pixels = decode_jpeg([images[i] for i in jpegs], mode=ImageReadMode.RGB, device=where)
        for i, x in zip(jpegs, pixels):
            out[i] = x.to(device)
    return cast(list[torch.Tensor], out)  # every None was a JPEG, decoded above
