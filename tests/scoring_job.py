"""A real scoring job for the interruption and concurrency tests: score pairs ``start..stop`` of a fixed set with
a toy model into a score cache, optionally slowed down per batch so that a test can signal it mid-scoring.

    python tests/scoring_job.py MODEL CACHE_DIR IMAGES_DIR START STOP [--delay S] [--out FILE.npy]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from pictures import random_pngs

N_IMAGES = 12


def make_images(folder: Path) -> list[str]:
    """``N_IMAGES`` small random PNGs (the same every time)."""
    return random_pngs(folder, N_IMAGES)


def pairs(images: list[str], start: int, stop: int) -> tuple[list[str], list[str]]:
    return ([images[i % len(images)] for i in range(start, stop)],
            [f"a dog holding ball number {i}" for i in range(start, stop)])


def score(scorer, images, texts) -> np.ndarray:
    return scorer.match(images, texts) if "match" in scorer.capabilities else scorer.similarity(images, texts)


def slowed(scorer, delay: float) -> None:
    """Sleep ``delay`` seconds before each forward of the scorer (match, or image and text embeddings)."""
    for name in ("_match_probs", "_embed_images", "_embed_texts"):
        fn = getattr(scorer, name, None)
        if fn is not None:
            def wrapped(inputs, fn=fn):
                time.sleep(delay)
                return fn(inputs)
            setattr(scorer, name, wrapped)


def main() -> None:
    from probekit.scorers import load_scorer

    parser = argparse.ArgumentParser()
    for name in ("model", "cache", "images"):
        parser.add_argument(name)
    parser.add_argument("start", type=int)
    parser.add_argument("stop", type=int)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    torch.set_num_threads(1)
    scorer = load_scorer(args.model, device="cpu", cache_dir=args.cache, batch_size=4)
    slowed(scorer, args.delay)
    print("scoring", flush=True)
    out = score(scorer, *pairs(make_images(Path(args.images)), args.start, args.stop))
    if args.out:
        np.save(args.out, out)


if __name__ == "__main__":
    main()
