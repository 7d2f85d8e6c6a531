"""Does moving one pixel tensor per *pair* (not per distinct image) set a cross-encoder's end-to-end speed on a GPU?

probekit's loader workers preprocess each distinct image of a batch once, then repeat its rows so that the batch
carries one pixel tensor per pair (``probekit.images.prepare_unique``); the batch then goes through shared memory,
pinned memory and the copy to the GPU.  This times ViLT-B/32 (random weights, default config, fp16 autocast) on
the same SVO-shaped work (``--pairs-per-image`` pairs per image, batches of 64 pairs, pixels already preprocessed
at 384x512) fed three ways by a DataLoader with ``--workers`` workers and pinned memory:

* ``per pair``: what probekit does now (the rows repeated in the worker);
* ``distinct, repeated on the GPU``: each distinct image sent once, the rows repeated on the GPU;
* ``forward only``: the batches already on the GPU.

    PYTHONPATH=. python benchmarks/pair_transfer.py [--pairs 2048] [--workers 8] [--device cuda]

``--device cpu --pairs 64 --workers 0 --size 64`` runs the same code on the CPU as a smoke test (figures meaningless).
"""

from __future__ import annotations

import argparse
import time

import torch
import transformers as T
from torch.utils.data import DataLoader, Dataset


class Batches(Dataset):
    """Batch ``b`` of the work: (pixels, index) where ``pixels[index]`` are the batch's per-pair pixels."""

    def __init__(self, pairs: int, per_image: float, batch: int, size: tuple[int, int], repeat_in_worker: bool):
        self.batch, self.size, self.repeat = batch, size, repeat_in_worker
        self.image_of = [int(i / per_image) for i in range(pairs)]   # pairs sorted by image, as probekit does

    def __len__(self) -> int:
        return (len(self.image_of) + self.batch - 1) // self.batch

    def __getitem__(self, b: int):
        ids = self.image_of[b * self.batch:(b + 1) * self.batch]
        distinct = sorted(set(ids))
        gen = torch.Generator().manual_seed(b)
        pixels = torch.randn(len(distinct), 3, *self.size, generator=gen)
        index = torch.tensor([distinct.index(i) for i in ids])
        return (pixels[index], None) if self.repeat else (pixels, index)


def run(model, loader, device, texts: dict, ahead: list | None = None) -> tuple[float, int]:
    """Seconds and pairs for one pass: each batch moved to ``device`` (or taken from ``ahead``), then scored."""
    n, t = 0, time.perf_counter()
    for pixels, index in (ahead if ahead is not None else loader):
        pixels = pixels.to(device, non_blocking=True)
        if index is not None:
            pixels = pixels[index.to(device, non_blocking=True)]
        with torch.autocast(device.type, dtype=torch.float16, enabled=device.type == "cuda"), torch.no_grad():
            k = len(pixels)
            model(input_ids=texts["input_ids"][:k], attention_mask=texts["attention_mask"][:k], pixel_values=pixels,
                  pixel_mask=torch.ones(k, *pixels.shape[2:], dtype=torch.long, device=device))
        n += k
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=2048)
    parser.add_argument("--pairs-per-image", type=float, default=3.4)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--size", type=int, nargs=2, default=(384, 512), help="preprocessed height and width")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    device = torch.device(args.device)
    model = T.ViltForImageAndTextRetrieval(T.ViltConfig()).to(device).eval()
    texts = {"input_ids": torch.randint(1000, 2000, (args.batch, 12), device=device),
             "attention_mask": torch.ones(args.batch, 12, dtype=torch.long, device=device)}
    print(f"ViLT-B/32, {args.pairs} pairs, {args.pairs_per_image} per image, batch {args.batch}, "
          f"{args.workers} workers, pixels {tuple(args.size)}, {device}")
    for name, repeat in (("per pair", True), ("distinct, repeated on the GPU", False)):
        data = Batches(args.pairs, args.pairs_per_image, args.batch, tuple(args.size), repeat)
        loader = DataLoader(data, batch_size=None, num_workers=args.workers, pin_memory=device.type == "cuda",
                            persistent_workers=args.workers > 0, prefetch_factor=4 if args.workers else None)
        run(model, loader, device, texts)   # warm-up: workers started, kernels chosen
        seconds, n = run(model, loader, device, texts)
        print(f"| {name} | {n / seconds:,.0f} pairs/s |")
    ahead = [(p.to(device), None) for p, _ in Batches(args.pairs, args.pairs_per_image, args.batch,
                                                     tuple(args.size), True)]
    seconds, n = run(model, None, device, texts, ahead)
    print(f"| forward only | {n / seconds:,.0f} pairs/s |")


if __name__ == "__main__":
    main()
