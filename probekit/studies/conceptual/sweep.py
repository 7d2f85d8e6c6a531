"""The conceptual chapter's patching sweep as the study runs it (Ilharco et al.'s patching, the paper's Table 2):
what it can honestly run (:func:`sweep_plan`), its triplets, held-out task and evaluation items, its rows pooled over
the fine-tuning seeds (:mod:`probekit.studies.conceptual.finetune_seeds`), its training history and the facts the
page states of it (:class:`~probekit.studies.conceptual.facts.SweepFacts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, NamedTuple

import pandas as pd

from probekit.papers.conceptual import parse_condition
from probekit.studies.conceptual import finetune, finetune_cache, finetune_seeds, patching
from probekit.studies.conceptual.facts import SweepFacts
from probekit.studies.conceptual.finetune_seeds import SeedRows
from probekit.studies.conceptual.params import Params
from probekit.toyworld import classify

#: toy train-split items loaded per fine-tuning triplet of each kind: a Probe-R group holds one predicate swap among
#: about 3.4 items (subject swaps and subject-only images), and every other Probe-C group is a composition group
#: giving two triplets
TRAIN_ITEMS = {"probe-r": 4, "probe-c": 1}


class Swept(NamedTuple):
    """The sweep's rows (pooled over the fine-tuning seeds), training history (the first seed's), facts and each
    pooled row's per-seed rows."""

    rows: pd.DataFrame
    history: pd.DataFrame
    facts: SweepFacts
    each: SeedRows


def sweep_plan(dataset: str, train_data: str | None, general_task: str, imagenet_dir: str | None) -> dict[str, Any]:
    """What the patching sweep can honestly run: ``skip`` (why it cannot: the authors' evaluation data without a
    RelComp-style training file would train a real CLIP on toy triplets) and ``general_task`` with ``fallback``
    (why ImageNet was asked for but the toy task is used: no ``imagenet_dir``)."""
    plan = {"skip": "", "general_task": general_task, "fallback": ""}
    if dataset != "toy" and not train_data:
        plan["skip"] = ("No RelComp-style training file (`train_data`): the paper's fine-tuning is not run on the "
                        "toy world's triplets beside the authors' evaluation data")
    if general_task == "imagenet" and not imagenet_dir:
        plan["general_task"] = "toy"
        plan["fallback"] = ("ImageNet was asked for as the held-out task but `imagenet_dir` is not set: the "
                            f"{classify.GENERAL_TASK} stands in for it, so the forgetting measured here is not the "
                            "paper's ImageNet accuracy")
    return plan


def sweep(load: Callable[..., pd.DataFrame], root: Path, items_r: pd.DataFrame, items_c: pd.DataFrame, p: Params,
          general_task: str) -> Swept:
    """The patching sweep on the chapter's items (``load`` loads a probe's split, ``general_task`` as
    :func:`sweep_plan` settled it)."""
    seed = p.seed
    if p.train_data:
        triplets = finetune.load_triplets(p.train_data)
    else:  # the toy world's train split (disjoint from the evaluation items): finetune_triplets of each kind
        n = p.finetune_triplets
        triplets = finetune.swap_triplets(load("probe-r", "train", "toy", TRAIN_ITEMS["probe-r"] * n),
                                          load("probe-c", "train", "toy", TRAIN_ITEMS["probe-c"] * n), per_kind=n)
    n_eval = p.finetune_eval_limit
    general = patching.general_task_items(general_task, root, p.imagenet_dir, seed=seed, limit=n_eval or p.limit)
    probes = {"probe-r": patching.whole_groups(items_r, n_eval, seed),
              "probe-c": patching.whole_groups(items_c, n_eval, seed)}
    config = {"steps": p.finetune_steps, "batch_size": p.finetune_batch, "lr": p.finetune_lr,
              "optimizer": p.finetune_optimizer}

    def one_seed(fseed: int) -> tuple[pd.DataFrame, dict[str, Path]]:
        # one fine-tuning seed's sweep on the same items; a bar per fine-tune, on the terminal
        return patching.patch_sweep(
            p.finetune_model, triplets, list(p.finetune_encoders), list(p.alphas), probes, general,
            root / "finetune", config=config, device=p.device, batch_size=p.batch_size, cache_dir=p.cache_dir,
            seed=seed, finetune_seed=fseed)

    def key(fseed: int) -> str:
        return finetune_seeds.sweep_key(p.finetune_model, triplets,
                                        patching.configs(config, list(p.finetune_encoders), fseed), list(p.alphas),
                                        {**probes, "general": general}, seed)

    fseeds = finetune_seeds.seeds(seed, p.finetune_seeds)
    rows, checkpoints, each = finetune_seeds.pooled_sweep(one_seed, fseeds, key,
                                                          root / "finetune" / patching.safe(p.finetune_model))
    history = pd.concat([finetune_cache.training_history(path).rename_axis("step").reset_index().assign(encoders=enc)
                         for enc, path in checkpoints.items()], ignore_index=True)
    batch, = {finetune_cache.trained_config(path)["batch_size"] for path in checkpoints.values()}   # one config
    facts = SweepFacts(triplets=len(triplets), finetune_batch=min(batch, len(triplets)),   # as finetune_clip draws
                       general_items=len(general), sweep_probe_r=len(probes["probe-r"]),
                       sweep_probe_c=len(probes["probe-c"]),
                       general_task="ImageNet" if general_task == "imagenet" else classify.GENERAL_TASK,
                       toy_train_data=not p.train_data, real_eval_data=p.dataset != "toy", finetune_seeds=fseeds)
    return Swept(rows, history, facts, each)


def with_alpha(rows: pd.DataFrame) -> pd.DataFrame:
    """Patching rows with their ``encoders`` and ``alpha`` as columns (for the α-sweep figure)."""
    keep = rows[~rows["condition"].str.contains("−") & rows["condition"].str.contains("α")]
    parsed = [parse_condition(c) for c in keep["condition"]]
    return keep.assign(encoders=[p[0] for p in parsed], alpha=[p[1] for p in parsed])
