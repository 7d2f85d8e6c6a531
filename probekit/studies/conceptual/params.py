"""The conceptual study's parameters (:mod:`probekit.parameters`): the chapter's parameters cell is written from
them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probekit.parameters import MODELS, PATH, CommonParams, common, lab_zoo, param

FILLERS = ["black", "gray", "noise", "scene"]
LAB_MODELS = ("toy-clip", "toy-clip-hardneg", "toy-clip-scenealways", "toy-clip-noattr", "toy-vilt", "toy-bert-blind")


@dataclass(frozen=True)
class Params(CommonParams):
    models: list[str] = common("models", ["toy-vilt", "toy-clip"], "registry names", ("compatibility",))
    dataset: str = common("dataset", "toy", '"toy": the toy world for Probe-R/C/B; "paper": the authors\' releases '
                          '(probe-r, -c, -b)')
    limit: int | None = common("limit", None, "max items per probe (None = the toy chapter sizes, or the whole "
                               "release)")
    fillers: list[str] = param(FILLERS, "Probe-B background fillers")
    finetune_model: str = param("toy-clip", 'a CLIP registry name to fine-tune and patch ("" = skip)', means=MODELS)
    finetune_encoders: list[str] = param(["text", "vision", "both"], "which encoders are trained (the paper's T, V, "
                                         "VT)")
    finetune_steps: int = param(625, "optimiser steps: 40 epochs of 2,000 triplets (the authors': 40)",
                                bounds=(1, None))
    finetune_batch: int = param(128, "triplets per step (the authors': 128; weights cached by settings)",
                                bounds=(2, None))
    finetune_lr: float = param(0.0001, "a tenth of toy-clip's pre-training peak (the authors: 1e-3, SGD)",
                               bounds=(0.0, 1.0))
    finetune_optimizer: str = param("adamw", '"adamw" (toy default) or "sgd" (the authors\' choice)')
    finetune_seeds: int = param(5, "fine-tuning seeds (seed, seed + 1, ...): the sweep's rows and fine-tune claims "
                                "pooled over them (5 shipped)", bounds=(1, None))
    finetune_triplets: int = param(1000, "toy training triplets of each kind (predicate, attribute swaps)",
                                   bounds=(1, None))
    alphas: list[float] = param([0.0, 0.2, 0.5, 1.0], "patching weights a: theta(a) is (1-a) theta_orig + a "
                                "theta_ft (0.2: the paper's)")
    finetune_eval_limit: int = param(660, "sweep: held-out images; max Probe-R/C items (random whole groups)",
                                     bounds=(1, None))
    general_task: str = param("toy", "held-out task: toy objects and scene, or imagenet")
    imagenet_dir: str | None = param(None, "ImageNet root for the imagenet task (torchvision layout)", means=PATH)
    train_data: Any = param(None, "RelComp-style triplets (image, caption, negative_caption[, negative_image]); "
                            "None: toy")
    lab_models: list[str] = lab_zoo(LAB_MODELS, "toy zoo for the lab sections ([]: skip)", ("compatibility",))
