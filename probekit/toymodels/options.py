"""The options of ``probekit train-toy`` (:func:`probekit.toymodels.train.main`)."""

from __future__ import annotations

import argparse

from . import build, loop
from .zoo import ALL, CHECKPOINTS, TABLES


def parser(description: str, steps: int) -> argparse.ArgumentParser:
    """``train-toy``'s argument parser; ``steps``: the budget's default steps per model."""
    p = argparse.ArgumentParser(prog="probekit train-toy", description=description)
    p.add_argument("--out", default=None, help=f"output directory (default: the shipped {CHECKPOINTS})")
    p.add_argument("--steps", type=int, default=None, help=f"optimiser steps per model (default {steps})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--zoo", default="shipped", choices=list(TABLES), help="the table --models is of (next: issue 54)")
    p.add_argument("--models", nargs="+", default=None, choices=list(ALL), help="default: all of --zoo's members")
    p.add_argument("--quick", action="store_true", help="a few minutes: small pool, few steps")
    p.add_argument("--pool", type=int, default=None, help="number of training images")
    p.add_argument("--size", default=build.DEFAULT_SIZE, choices=list(build.SIZES),
                   help=f"the models' widths and depths (default {build.DEFAULT_SIZE}, the shipped zoo's): "
                        + "; ".join(f"{k} width {z.width}, ViLT {z.layers} layers, CLIP towers and BERT "
                                    f"{z.tower_layers}" for k, z in build.SIZES.items())
                        + " (a smaller zoo is opt-in, benchmarks/README.md's recipe pilot)")
    p.add_argument("--schedule", default=None, choices=loop.SCHEDULES,
                   help="learning rate after the warm-up (default cosine, the shipped zoo's): cosine decay to the end, "
                        "or wsd (held at the peak, then a cosine over the last fifth)")
    p.add_argument("--warmup", type=float, default=None,
                   help="share of the steps the learning rate warms up over (default 0.08, the shipped zoo's)")
    p.add_argument("--precision", default=None, choices=loop.PRECISIONS,
                   help="fp32 (default, the shipped zoo's) or bf16 (each step under bfloat16 autocast)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--device", default="cpu", help="torch device to train on (cpu, cuda, mps; auto: the first there)")
    p.add_argument("--no-eval", action="store_true", help="skip the held-out evaluation")
    p.add_argument("--save-every", type=int, default=loop.SAVE_EVERY,
                   help=f"steps between resume files (default {loop.SAVE_EVERY})")
    p.add_argument("--jobs", type=int, default=1,
                   help="members trained at once, one process each (one per CPU core; several processes sharing one "
                        "GPU are slow, see benchmarks/README.md); default 1")
    p.add_argument("--batched", action="store_true",
                   help="train the members at once, one batched computation per trainer and vocabulary "
                        "(probekit.toymodels.batched; on the CPU the same curves and weights up to float rounding)")
    p.add_argument("--missing", action="store_true",
                   help="train only the members of --models that --out does not hold finished yet (a zoo built over "
                        "several runs: run the same command again; a member stopped mid-training resumes)")
    p.add_argument("--rescore", action="store_true",
                   help="train nothing: score the checkpoints in --out on the held-out split again, rewrite the card")
    return p
