"""What a toy zoo is trained with: the budget every member shares (``probekit train-toy``'s settings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

@dataclass
class Budget:
    steps: int = 30000         # optimiser steps per model
    batch: int = 64
    pool: int = 60000          # training images rendered once per recipe (same draws for every model)
    lr_vilt: float = 5e-4
    lr_clip: float = 1e-3
    lr_bert: float = 1e-3
    warmup: float = 0.08       # share of steps
    mlm_prob: float = 0.2
    hard_negative_p: float = 0.85   # ViLT with hard_negatives: share of ITM negatives that are swaps
    eval_every: int = 500      # steps between held-out probes of the curve (0: never)
    schedule: str = "cosine"   # learning rate after the warm-up: "cosine" to the end, or "wsd" (held, then decayed)
    decay: float = 0.2         # "wsd": share of steps of the final decay
    precision: str = "fp32"    # "bf16": each step under bfloat16 autocast (about 1.4x faster on a CPU with AVX512-BF16)


QUICK = dict(steps=300, pool=3000, eval_every=100)


def make(quick: bool = False, steps: int | None = None, **overrides) -> Budget:
    """The budget of a run: the defaults, :data:`QUICK`'s when ``quick``, then ``overrides`` and ``steps``."""
    return Budget(**{**(QUICK if quick else {}), **overrides, **({"steps": steps} if steps else {})})

_DEFAULTS = {f.name: f.default for f in fields(Budget)}
#: budget settings added after zoos were trained, at the value those zoos used: a budget records them only when it
#: differs (so the shipped zoo's record and resume files still match a run of its settings)
LATER = {k: _DEFAULTS[k] for k in ("schedule", "decay", "precision")}


def recorded(budget: Budget) -> dict:
    """The budget as a zoo's record and resume files state it (:data:`LATER` settings only where not the default)."""
    return {k: v for k, v in asdict(budget).items() if k not in LATER or v != LATER[k]}


#: train-toy's option for each budget setting it sets
FLAGS = {"steps": "--steps", "pool": "--pool", "warmup": "--warmup", "schedule": "--schedule",
         "precision": "--precision"}


def flags(budget: dict) -> str:
    """The train-toy options that give a recorded ``budget`` where it differs from :class:`Budget`'s defaults."""
    return "".join(f" {flag} {budget[k]}" for k, flag in FLAGS.items() if k in budget and budget[k] != _DEFAULTS[k])
