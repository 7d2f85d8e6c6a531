"""The guided-masking study's parameters (:mod:`probekit.parameters`): the chapter's parameters cell is written
from them."""

from __future__ import annotations

from dataclasses import dataclass

from probekit.parameters import Parameters, param

ANSWERS = ("fill_mask", "threshold")   # the masking probe asks a fill_mask head, the ITM contrast a match head
LAB_MODELS = ("toy-vilt", "toy-vilt-hardneg", "toy-vilt-noisy", "toy-vilt-noverb", "toy-bert")


@dataclass(frozen=True)
class Params(Parameters):
    models: list[str] = param(["toy-vilt"], "registry names; those with a fill_mask head answer the masking probe, "
                              "those with a match head the ITM contrast, those with both the two heads' verb choice",
                              ANSWERS)
    dataset: str = param("toy", 'a source registered for the "masking" probe: "toy", "svo-probes", "v-coco"')
    data_dir: str | None = param(None, "None -> probekit.datasets.default_data_dir()")
    limit: int | None = param(None, "max captions (None = all, 600 on the toy world)")
    seed: int = param(0)
    device: str = param("auto")
    batch_size: int = param(32)
    cache_dir: str | None = param(None, "None -> default score cache")
    k: int = param(5, "a caption is correct when the gold verb lemma is among the top-k lemmas")
    mlm_models: list[str] | None = param(None, "None -> every model in `models` with a fill_mask head",
                                         ("fill_mask",))
    itm_models: list[str] | None = param(None, "None -> every model in `models` with an image-text-matching head",
                                         ("threshold",))
    text_model: str = param("toy-bert", 'text-only masked LM (the blind baseline); "bert-base" in paper mode',
                            ("fill_mask",))
    n_examples: int = param(4, "images shown with their top-k predictions")
    lab_models: list[str] = param(list(LAB_MODELS), "the toy zoo scored for the lab sections (toy world only; [] = no "
                                  "lab)", ANSWERS)
