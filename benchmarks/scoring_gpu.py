"""The scorers on a GPU: mixed precision agrees with float32, and every paper family's full-size throughput.

1. The toy models (toy-clip, toy-vilt, toy-bert) score the same items on the CPU in float32 and on CUDA under the
   scorers' default autocast (fp16; ``--half bf16`` for bfloat16); prints the largest difference (target <= 1e-2).
2. Every paper family at full size, built from the default config of the real architecture with random weights
   (speed needs no weights: never read accuracy from these): ViLT-B/32 at 384 px, BLIP ITM base and large,
   BridgeTower base, FLAVA full, CLIP ViT-B/32 and ViT-L/14-336, open_clip RN50.  For each, on SVO-shaped items
   (each sentence with a positive and a negative image; ~3.4 pairs per image, as SVO-Probes' 48k pairs over ~14k
   images): pairs/s end to end through probekit (decode, preprocess, batch, forward), pairs/s of the forward alone
   on the same work preloaded on the GPU, their ratio (target >= 0.8), peak GPU memory, the projected wall
   time of each paper chapter, and the largest difference between the pixels the model gets on this path and the
   processor's on the CPU (``--device-pixels``: ``auto``, the scorers' default, preprocesses on the GPU on CUDA,
   ``off`` in the loader workers as on the CPU; see probekit/scorers/pixels.py).

    PYTHONPATH=. python benchmarks/scoring_gpu.py [--pairs 4096] [--batch-size 64] [--num-workers 8] [--only clip-b32]
                                                  [--device-pixels auto|on|off]

``--device cpu --pairs 16 --only clip-b32`` runs the same code on the CPU as a smoke test (figures meaningless).
"""

from __future__ import annotations

import argparse
import datetime
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import transformers as T
from PIL import Image

from probekit.datasets import load_dataset
from probekit.device import autocast
from probekit import images as imgs
from probekit.images import load_image
from probekit.scorers import load_scorer
from probekit.scorers.testing import WORDS, word_tokenizer

#: pairs each paper chapter scores per model (the issue's figure for SVO-Probes)
CHAPTER_PAIRS = {"SVO-Probes (verbs)": 48_000}

CLIP_L14_336 = dict(projection_dim=768, text_config=dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12),
                    vision_config=dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                                       num_attention_heads=16, patch_size=14, image_size=336))
BLIP_LARGE = dict(vision_config=dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                                     num_attention_heads=16), text_config=dict(encoder_hidden_size=1024))


def _clip(cfg=None):
    cfg = dict(cfg or {})
    cfg["text_config"] = dict(cfg.get("text_config", {}), eos_token_id=3, bos_token_id=2, pad_token_id=0)
    size = cfg.get("vision_config", {}).get("image_size", 224)
    model = T.CLIPModel(T.CLIPConfig(**cfg))
    return [model], T.CLIPImageProcessor(size={"shortest_edge": size}, crop_size={"height": size, "width": size})


#: name -> (family, builder of (models, image processor), capabilities)
FULL = {
    "vilt-b32-384": ("vilt", lambda: ([T.ViltForImageAndTextRetrieval(T.ViltConfig())],
                                      T.ViltImageProcessor(size={"shortest_edge": 384})), ["match"]),
    "blip-itm-base": ("blip", lambda: ([T.BlipForImageTextRetrieval(T.BlipConfig())], T.BlipImageProcessor()),
                      ["match"]),
    "blip-itm-large": ("blip", lambda: ([T.BlipForImageTextRetrieval(T.BlipConfig(**BLIP_LARGE))],
                                        T.BlipImageProcessor()), ["match"]),
    "bridgetower-base": ("bridgetower", lambda: ([T.BridgeTowerForImageAndTextRetrieval(T.BridgeTowerConfig())],
                                                 T.BridgeTowerImageProcessor()), ["match"]),
    "flava-full": ("flava", lambda: ([T.FlavaForPreTraining(T.FlavaConfig())], T.FlavaImageProcessor()), ["match"]),
    "clip-b32": ("clip", _clip, None),
    "clip-l14-336": ("clip", lambda: _clip(CLIP_L14_336), None),
    "openclip-rn50": ("open_clip", None, None),
}


def noise_images(folder: Path, n: int, size: int, seed: int = 0) -> list[str]:
    """JPEGs of noise at a photo-like size (decoding is part of the measured work)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"{size}-{i}.jpg"
        Image.fromarray(rng.integers(0, 256, (size, size * 4 // 3, 3), dtype=np.uint8)).save(p, quality=90)
        paths.append(str(p))
    return paths


def sentences(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 8)) for _ in range(n)]


def save_full(name: str, out: Path) -> Path:
    family, build, _ = FULL[name]
    out.mkdir(parents=True, exist_ok=True)
    if family == "open_clip":
        import open_clip

        cfg = open_clip.get_model_config("RN50")
        (out / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg, "preprocess_cfg": {}}))
        torch.save(open_clip.CLIP(**cfg).state_dict(), out / "open_clip_pytorch_model.bin")
        return out
    models, proc = build()
    models[0].save_pretrained(out)
    word_tokenizer("<mask>" if family == "bridgetower" else "[MASK]", max_length=40).save_pretrained(out)
    proc.save_pretrained(out)
    return out


def toy_precision(device: str, half) -> None:
    """Largest |mixed precision on ``device`` - float32 on CPU| of the toy models' scores, on the toy world's own SVO
    items (on noise images the toy ViLT's match is about 2e-5 everywhere, so a difference there says nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        items = load_dataset("verbs", data_dir=tmp, limit=32)
        texts, pos, neg = list(items["sentence"]), list(items["pos_image"]), list(items["neg_image"])
        masked = [" ".join(w if i != 2 else "[MASK]" for i, w in enumerate(t.split())) for t in texts]  # the verb
        for name in ("toy-clip", "toy-vilt", "toy-bert"):
            outs = []
            for dev, h in (("cpu", False), (device, half)):
                s = load_scorer(name, device=dev, cache_dir=False, half=h)
                torch.manual_seed(0)
                if name == "toy-clip":
                    outs.append(s.choose_image([[p, q] for p, q in zip(pos, neg)], texts))
                elif name == "toy-vilt":
                    outs.append(s.match(pos + neg, texts + texts))
                else:
                    outs.append(np.array([[p for _, p in r[0]] for r in s.fill_mask(masked, k=1)]))
            print(f"{name:9s} max |{s.precision} on {device} - fp32 on cpu| = {np.abs(outs[1] - outs[0]).max():.2e} "
                  f"(scores {outs[0].min():.2g} to {outs[0].max():.2g})")


def forward_only(scorer, pair_images: list, texts: list) -> float:
    """Seconds of the forwards alone for the work probekit does, inputs on the device.  Each kind of batch is
    preprocessed once and run as many times as the work has such batches (the cost of a forward does not depend on
    the pixels; preprocessing thousands of full-size photos serially would take longer than the forwards)."""
    dual = "similarity" in scorer.capabilities
    bs, dev = scorer.batch_size, scorer.device
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    if dual:  # every distinct image and text once
        uniq, utexts = list(dict.fromkeys(pair_images)), list(dict.fromkeys(texts))
        batches = [(scorer._embed_images, scorer._image_inputs(loaded(scorer, uniq[:bs])), len(uniq) / bs),
                   (scorer._embed_texts, scorer._tokenize(utexts[:bs]), len(utexts) / bs)]
    else:  # every distinct pair once
        pairs = list(dict.fromkeys(zip(pair_images, texts)))
        batches = [(scorer._match_probs, scorer._prepare_pairs(loaded(scorer, [p for p, _ in pairs[:bs]]),
                                                                [t for _, t in pairs[:bs]]), len(pairs) / bs)]
    batches = [(fn, scorer._device_inputs(imgs.to_device(inputs, dev)), max(round(n), 1)) for fn, inputs, n in batches]
    sync()
    t0 = time.perf_counter()
    for fn, inputs, n in batches:
        for _ in range(n):
            with torch.inference_mode(), autocast(dev, scorer.precision):
                fn(inputs)
    sync()
    return time.perf_counter() - t0


def loaded(scorer, paths: list[str]) -> list:
    """The images as the scorer's loader reads them (one object per distinct file)."""
    load = imgs.load_encoded if scorer.device_pixels and scorer.decode_on_device else load_image
    memo: dict = {}
    return [memo[p] if p in memo else memo.setdefault(p, load(p)) for p in paths]


def pixel_gap(scorer, paths: list[str]) -> float:
    """Largest |pixel the model gets on the scorer's path - the processor's on the CPU| over ``paths``."""
    cpu = scorer._prepare_images([load_image(p) for p in paths])["pixel_values"]
    here = scorer._device_inputs(imgs.to_device(scorer._image_inputs(loaded(scorer, paths)), scorer.device))
    return float((here["pixel_values"].float().cpu() - cpu.float()).abs().max())


def full_size(tmp: Path, name: str, images: list[str], n_pairs: int, batch_size: int, num_workers: int, device: str,
              half, device_pixels) -> dict:
    """One row of the table: ``name`` scores ``n_pairs`` SVO-shaped pairs over ``images``."""
    family, _, caps = FULL[name]
    ckpt = save_full(name, tmp / name)
    n_images = len(images)
    texts = sentences(n_pairs // 2)
    rng = np.random.default_rng(0)
    pair_images = [images[i] for i in rng.integers(0, n_images, n_pairs)]
    pair_texts = [texts[i // 2] for i in range(n_pairs)]
    scorer = load_scorer(ckpt, family=family, device=device, batch_size=batch_size, cache_dir=False,
                         num_workers=num_workers, capabilities=caps, half=half, device_pixels=device_pixels)
    if scorer.device_pixels_note:   # device pixels asked for, but its processor cannot run on the device
        print(f"{name}: {scorer.device_pixels_note}", flush=True)
    cuda = scorer.device.type == "cuda"
    dual = "similarity" in scorer.capabilities
    run = ((lambda: scorer.choose_image([[pair_images[i], pair_images[i + 1]] for i in range(0, n_pairs, 2)], texts))
           if dual else (lambda: scorer.match(pair_images, pair_texts)))
    scorer.match([images[0]], ["a warm-up"]) if not dual else scorer.similarity([images[0]], ["a warm-up"])
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    run()
    if cuda:
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan")
    fwd = forward_only(scorer, pair_images, pair_texts)
    row = dict(model=name, params_m=sum(p.numel() for p in scorer.model.parameters()) / 1e6,
               image_px=scorer.image_size, precision=scorer.precision, e2e=n_pairs / wall, forward=n_pairs / fwd,
               peak_gib=peak, pixel_gap=pixel_gap(scorer, images[:8]),
               **{chapter: pairs / (n_pairs / wall) for chapter, pairs in CHAPTER_PAIRS.items()})
    row["ratio"] = row["e2e"] / row["forward"]
    print(f"| {name} | {row['params_m']:.0f} | {row['image_px']} | {row['precision']} | "
          f"{'device' if scorer.device_pixels else 'workers'} | {row['e2e']:.0f} | {row['forward']:.0f} | "
          f"{row['ratio']:.2f} | {peak:.1f} | {row['pixel_gap']:.1e} | "
          + " | ".join(f"{row[c] / 60:.1f} min" for c in CHAPTER_PAIRS) + " |", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-workers", type=int, default=8)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--half", default=None, help="None (fp16 on CUDA), bf16, or False")
    parser.add_argument("--only", nargs="*", default=list(FULL), choices=list(FULL))
    parser.add_argument("--device-pixels", default="auto", choices=["auto", "on", "off"],
                        help="where images are preprocessed: auto (the default: on the GPU on CUDA), on, off")
    parser.add_argument("--skip-toy", action="store_true", help="skip part 1 (mixed precision of the toy models)")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("scoring_gpu.py needs a CUDA device; benchmarks/scoring.py is the CPU benchmark")
    dev = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"{datetime.date.today()}, {dev}, torch {torch.__version__}, transformers {T.__version__}; "
          f"{args.pairs} pairs, batch {args.batch_size}, {args.num_workers} loader workers")
    half = {"False": False, "None": None}.get(args.half, args.half)
    if not args.skip_toy:
        toy_precision(args.device, half)
    print("| model | M params | px | precision | preprocessing | pairs/s end to end | pairs/s forward only | ratio | "
          "peak GiB | max pixel diff vs CPU | " + " | ".join(CHAPTER_PAIRS) + " |")
    print("|" + "---|" * (10 + len(CHAPTER_PAIRS)))
    device_pixels = {"auto": None, "on": True, "off": False}[args.device_pixels]
    with tempfile.TemporaryDirectory() as tmp:
        images = noise_images(Path(tmp) / "images", max(args.pairs * 14 // 48, 8), 480)   # ~3.4 pairs per image
        for name in args.only:
            full_size(Path(tmp), name, images, args.pairs, args.batch_size, args.num_workers, args.device, half,
                      device_pixels)


if __name__ == "__main__":
    main()
