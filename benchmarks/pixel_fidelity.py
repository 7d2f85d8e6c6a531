"""Pixels of the device path against the CPU path on real photographs, emulated on the CPU (issue 63, item 2).

The photographs are scikit-image's (``skimage.data``: shipped with it, no download), re-encoded as JPEGs at
640x480 (one at 480x640).  For each Hugging Face family's image processor (its default settings, those of the paper
checkpoints' sizes), the device path as :mod:`probekit.scorers.pixels` runs it, with device='cpu': the JPEG decoded
by ``torchvision.io.decode_jpeg`` and the processor run on the uint8 tensors, against the CPU path: PIL decodes and
the same processor runs on the PIL images.  A second comparison is against the processor of transformers' PIL
backend on PIL images (the CPU path wherever transformers picks that backend, as it does for FLAVA with
torchvision < 0.27): what the device path would change if it ran the torchvision backend there instead of leaving
such a family to the loader.  open_clip is not here: its loader resizes with PIL on both paths (max |difference| 0
by construction, tests/test_device_pixels.py).  On CUDA, nvJPEG and the GPU's resize round differently:
``--device cuda`` measures by how much (benchmarks/gpu_checks.sh, part pixel_fidelity).

    pip install scikit-image        # only this script needs it
    PYTHONPATH=. python benchmarks/pixel_fidelity.py [--out DIR] [--device cuda]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers as T
from PIL import Image

from probekit import images as imgs
from probekit.scorers import hf, pixels

#: (skimage.data name, (width, height)) of the photographs
PHOTOS = [("astronaut", (640, 480)), ("chelsea", (640, 480)), ("coffee", (640, 480)), ("rocket", (640, 480)),
          ("hubble_deep_field", (640, 480)), ("immunohistochemistry", (640, 480)), ("retina", (480, 640)),
          ("camera", (640, 480))]
PROCESSORS = ["CLIPImageProcessor", "SiglipImageProcessor", "BlipImageProcessor", "ViltImageProcessor",
              "BridgeTowerImageProcessor", "FlavaImageProcessor"]
SEED, RESAMPLES = 0, 10_000


def write_photos(folder: Path) -> list[str]:
    """The photographs as JPEGs (quality 90; camera stays greyscale, as a greyscale JPEG)."""
    try:
        import skimage.data
    except ImportError:
        raise SystemExit("pixel_fidelity.py needs scikit-image for its photographs: pip install scikit-image")
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, size in PHOTOS:
        photo = Image.fromarray(getattr(skimage.data, name)()).resize(size, Image.BICUBIC)
        path = folder / f"{name}.jpg"
        photo.save(path, quality=90)
        paths.append(str(path))
    return paths


def device_path(paths: list[str], device: torch.device) -> list[torch.Tensor]:
    """(3, H, W) uint8 tensors on ``device`` as the device path hands them to the processor: torchvision's JPEG
    decoder (nvJPEG on CUDA)."""
    return pixels.decoded([imgs.load_encoded(p) for p in paths], device)


def differences(ref: torch.Tensor, got: torch.Tensor) -> tuple[float, np.ndarray]:
    """Largest |difference| over every value, and the mean |difference| of each photo."""
    gap = (ref.double() - got.double()).abs()
    return float(gap.max()), gap.flatten(1).mean(1).numpy()


def mean_ci(per_photo: np.ndarray) -> tuple[float, float, float]:
    """Mean of the photos' mean |difference| and its 95 % percentile bootstrap interval over photos."""
    rng = np.random.default_rng(SEED)
    means = per_photo[rng.integers(0, len(per_photo), (RESAMPLES, len(per_photo)))].mean(1)
    return float(per_photo.mean()), *map(float, np.percentile(means, [2.5, 97.5]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="folder for the JPEGs (default: a temporary one)")
    parser.add_argument("--device", default="cpu", help="where the device path runs (default cpu: the emulation)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_photos(Path(args.out or tmp))
        pils, tensors = [imgs.load_image(p) for p in paths], device_path(paths, torch.device(args.device))
        decoded = [(np.array(p).transpose(2, 0, 1).astype(int) - t.cpu().numpy()) for p, t in zip(pils, tensors)]
        print(f"JPEG decoding, torchvision against PIL ({len(paths)} photos, grey levels): max |difference| "
              f"{max(np.abs(d).max() for d in decoded)}, values that differ "
              f"{sum(int((d != 0).sum()) for d in decoded)} of {sum(d.size for d in decoded)}")
        print(f"device path on {args.device}; torch {torch.__version__}, transformers {T.__version__}; "
              f"{len(paths)} photos; normalised pixels "
              f"(max |difference| over every value; mean |difference| per photo, averaged, 95 % bootstrap CI over "
              f"photos, {RESAMPLES} resamples)")
        print("| processor | output (values compared) | device path vs CPU path, same processor: max | mean [95 % CI] "
              "| device path vs the PIL backend's processor: max | mean [95 % CI] |\n|---|---|---|---|---|---|")
        for name in PROCESSORS:
            fast, slow = getattr(T, name)(), getattr(T, f"{name}Pil")()
            got = hf.pixel_inputs(fast, tensors, keep=("pixel_values",))["pixel_values"].cpu()
            cells = []
            for proc in (fast, slow):
                ref = hf.pixel_inputs(proc, pils, keep=("pixel_values",))["pixel_values"]
                top, per_photo = differences(ref, got)
                mean, lo, hi = mean_ci(per_photo)
                cells.append(f"{top:.3g} | {mean:.2g} [{lo:.2g}, {hi:.2g}]")
            size = "x".join(map(str, got.shape[2:]))
            print(f"| {name} | {size} ({got.numel():,}) | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
