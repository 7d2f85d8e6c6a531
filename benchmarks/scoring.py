"""Scoring throughput: a naive loop (one pair per forward, as the papers' released code does) vs probekit.

On the same SVO-shaped toy items (sentence, positive image, negative image) and the same model, prints pairs/s of
both, their ratio, the share of probekit's wall time spent inside the model forward, and the largest difference
between the two sets of scores (they must agree).  Targets on CPU: dual encoder >= 5x, cross-encoder >= 2x, >= 85%
of wall time in the forward.

    PYTHONPATH=. python benchmarks/scoring.py [--rows 1000] [--num-workers 1] [--dual toy-clip] [--cross toy-vilt]

Models are registry names or ``family:path`` (e.g. ``vilt:/tmp/ckpt``).  Scores are not cached here (cold run).
Both sides get a warm-up first (two pairs; for probekit, through the scorer, which starts its loader workers once
per scorer, as a chapter that scores several probes does).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time

import numpy as np
import torch
import transformers
from PIL import Image

from probekit.datasets import load_dataset
from probekit.images import load_image
from probekit.scorers import load_scorer


def scorer_for(spec: str, batch_size: int, num_workers: int):
    family, _, path = spec.partition(":") if ":" in spec and not spec.startswith("toy") else ("", "", spec)
    if family:
        return load_scorer(path, family=family, device="cpu", cache_dir=False, batch_size=batch_size,
                           num_workers=num_workers)
    return load_scorer(spec, device="cpu", cache_dir=False, batch_size=batch_size, num_workers=num_workers)


def naive_dual(s, images, texts):
    """One (image, text) pair per forward through the full model, as in the papers' evaluation scripts."""
    out, fwd = [], 0.0
    for im, t in zip(images, texts):
        pix = s.image_processor(images=load_image(im), return_tensors="pt")["pixel_values"]
        tok = s.tokenizer([t], return_tensors="pt", truncation=True, max_length=s.max_length)
        t0 = time.perf_counter()
        with torch.no_grad():
            logit = s.model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"],
                            pixel_values=pix).logits_per_image[0, 0]
        fwd += time.perf_counter() - t0
        out.append(float(logit))
    return np.array(out), fwd


def naive_cross(s, images, texts):
    out, fwd = [], 0.0
    for im, t in zip(images, texts):
        inputs = dict(s.image_processor(images=load_image(im), return_tensors="pt"))
        inputs.update(s.tokenizer([t], return_tensors="pt", truncation=True, max_length=s.max_length))
        t0 = time.perf_counter()
        with torch.no_grad():
            p = s._match_probs(inputs)[0]
        fwd += time.perf_counter() - t0
        out.append(float(p))
    return np.array(out), fwd


def report(kind, n_pairs, naive_s, naive_fwd, pk_s, pk_fwd, diff, target):
    ratio = naive_s / pk_s
    print(f"{kind:14s} naive {n_pairs / naive_s:8.1f} pairs/s ({100 * naive_fwd / naive_s:4.1f}% in forward) | "
          f"probekit {n_pairs / pk_s:8.1f} pairs/s ({100 * pk_fwd / pk_s:4.1f}% in forward) | "
          f"ratio {ratio:5.1f}x (target >= {target}x) | max |diff| {diff:.2e}")
    return ratio, pk_fwd / pk_s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1000, help="SVO rows (each gives a positive and a negative pair)")
    ap.add_argument("--dual", default="toy-clip")
    ap.add_argument("--cross", default="toy-vilt")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--num-workers", type=int, default=1, help="DataLoader workers decoding images beside the forward")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data-dir", default=None, help="where the toy images are written (default: a temp dir)")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    os.environ.setdefault("PROBEKIT_PROGRESS", "0")
    print(f"{datetime.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}")
    data_dir = a.data_dir or tempfile.mkdtemp(prefix="probekit-bench-")
    items = load_dataset("verbs", data_dir=data_dir, limit=a.rows)
    sentences = list(items["sentence"])
    images = list(items["pos_image"]) + list(items["neg_image"])
    texts = sentences + sentences
    n = len(images)
    blank = Image.new("RGB", (64, 64), (127, 127, 127))
    print(f"{len(items)} SVO rows -> {n} pairs over {len(set(images))} images and {len(set(texts))} sentences; "
          f"{a.threads} thread(s), batch size {a.batch_size}, {a.num_workers} loader workers")

    s = scorer_for(a.dual, a.batch_size, a.num_workers)
    naive_dual(s, images[:2], texts[:2])  # warm-up
    s.choose_image([[blank, blank]], ["a warm-up"])  # images no timed item has: nothing cached for the run
    s.forward_seconds = 0.0
    t0 = time.perf_counter()
    logits, naive_fwd = naive_dual(s, images, texts)
    naive_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    choice = s.choose_image([[p, q] for p, q in zip(items["pos_image"], items["neg_image"])], sentences)
    pk_s = time.perf_counter() - t0
    naive_choice = np.exp(logits[: len(items)]) / (np.exp(logits[: len(items)]) + np.exp(logits[len(items):]))
    report(f"dual {s.name.split('/')[-1]}", n, naive_s, naive_fwd, pk_s, s.forward_seconds,
           float(np.abs(choice[:, 0] - naive_choice).max()), 5)

    s = scorer_for(a.cross, a.batch_size, a.num_workers)
    naive_cross(s, images[:2], texts[:2])
    s.match([blank], ["a warm-up"])
    s.forward_seconds = 0.0
    t0 = time.perf_counter()
    probs, naive_fwd = naive_cross(s, images, texts)
    naive_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pk = s.match(images, texts)
    pk_s = time.perf_counter() - t0
    report(f"cross {s.name.split('/')[-1]}", n, naive_s, naive_fwd, pk_s, s.forward_seconds,
           float(np.abs(pk - probs).max()), 2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
