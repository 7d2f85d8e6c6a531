"""The scorers on a GPU: half precision agrees with float32, and full-size architectures' throughput.

1. For every transformers family, a tiny random model (``probekit.scorers.testing.save_tiny``) scores the same
   pairs on the CPU in float32 and on CUDA with the scorers' automatic half precision; prints the largest
   difference (a broken fp16 path shows as NaN or a large gap).
2. Full-size architectures built from their default configs (random weights: honest speed, never accuracy):
   CLIP ViT-B/32 (``CLIPConfig()``, 224 px) and ViLT-B/32 (``ViltConfig()``, 384 px): pairs/s of probekit's batched,
   deduplicated scoring on SVO-shaped items (each sentence with a positive and a negative image) and the share of
   wall time inside the model forward.

    PYTHONPATH=. python benchmarks/scoring_gpu.py [--pairs 4096] [--batch-size 64] [--num-workers 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from probekit.scorers import load_scorer
from probekit.scorers.testing import WORDS, save_tiny, word_tokenizer

FAMILIES = ("clip", "siglip", "vilt", "blip", "bridgetower", "flava")


def noise_images(folder: Path, n: int, size: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"{size}-{i}.png"
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(p)
        paths.append(str(p))
    return paths


def sentences(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 8)) for _ in range(n)]


def half_vs_float(tmp: Path) -> None:
    images = noise_images(tmp / "tiny-images", 16, 32)
    texts = sentences(16)
    print("family       | method      | max |cuda fp16 - cpu fp32|")
    for family in FAMILIES:
        ckpt = save_tiny(family, tmp / f"tiny-{family}")
        cpu = load_scorer(ckpt, family=family, device="cpu", cache_dir=False)
        gpu = load_scorer(ckpt, family=family, device="cuda", cache_dir=False)
        method = "match" if "match" in cpu.capabilities else "choose_text"
        if method == "match":
            a, b = cpu.match(images, texts), gpu.match(images, texts)
        else:
            cands = [[t, texts[(i + 1) % len(texts)]] for i, t in enumerate(texts)]
            a, b = cpu.choose_text(images, cands), gpu.choose_text(images, cands)
        print(f"{family:12s} | {method:11s} | {np.nanmax(np.abs(a - b)):.4f} (half={gpu.half}, nan={np.isnan(b).sum()})")


def full_size(tmp: Path, family: str, n_pairs: int, batch_size: int, num_workers: int) -> None:
    import transformers as T

    out = tmp / f"full-{family}"
    tok = word_tokenizer()
    if family == "clip":
        cfg = T.CLIPConfig(text_config={"eos_token_id": 3, "bos_token_id": 2, "pad_token_id": 0})
        model, proc, size = T.CLIPModel(cfg), T.CLIPImageProcessor(), 224
    else:
        model = T.ViltForImageAndTextRetrieval(T.ViltConfig())
        proc, size = T.ViltImageProcessor(), 384
    model.save_pretrained(out)
    tok.save_pretrained(out)
    proc.save_pretrained(out)
    n_images = max(n_pairs // 3, 8)  # SVO-Probes: ~48k pairs over ~14k images
    images = noise_images(tmp / f"images-{size}", n_images, size)
    texts = sentences(n_pairs // 2)
    rng = np.random.default_rng(0)
    pair_images = [images[i] for i in rng.integers(0, n_images, n_pairs)]
    pair_texts = [texts[i // 2] for i in range(n_pairs)]
    scorer = load_scorer(out, family=family, device="cuda", batch_size=batch_size, cache_dir=False,
                         num_workers=num_workers)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if family == "clip":
        scorer.choose_image([[pair_images[i], pair_images[i + 1]] for i in range(0, n_pairs, 2)], texts)
    else:
        scorer.match(pair_images, pair_texts)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(f"{family:5s} full size ({sum(p.numel() for p in model.parameters()) / 1e6:.0f} M params, {size} px, "
          f"half={scorer.half}): {n_pairs / wall:8.0f} pairs/s, {scorer.forward_seconds / wall:5.1%} of wall time "
          f"in forward ({n_pairs} pairs over {n_images} images, batch {batch_size}, {num_workers} workers)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-workers", type=int, default=8)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("scoring_gpu.py needs a CUDA device; benchmarks/scoring.py is the CPU benchmark")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    with tempfile.TemporaryDirectory() as tmp:
        half_vs_float(Path(tmp))
        for family in ("clip", "vilt"):
            full_size(Path(tmp), family, args.pairs, args.batch_size, args.num_workers)


if __name__ == "__main__":
    main()
