"""The guided-masking study's parameters (:mod:`probekit.parameters`): the chapter's parameters cell is written
from them."""

from __future__ import annotations

from dataclasses import dataclass

from probekit.parameters import MODELS, CommonParams, common, lab_zoo, param
from probekit.toyworld.sizes import DEFAULT_SIZE

ANSWERS = ("fill_mask", "threshold")   # the masking probe asks a fill_mask head, the ITM contrast a match head
LAB_MODELS = ("toy-vilt", "toy-vilt-hardneg", "toy-vilt-noisy", "toy-vilt-noverb", "toy-bert")


@dataclass(frozen=True)
class Params(CommonParams):
    models: list[str] = common("models", ["toy-vilt"], "registry names; those with a fill_mask head answer the "
                               "masking probe, those with a match head the ITM contrast, those with both the two "
                               "heads' verb choice", ANSWERS)
    dataset: str = common("dataset", "toy", 'a source registered for the "masking" probe: "toy", "svo-probes", '
                          '"v-coco"')
    limit: int | None = common("limit", None, f"max captions (None = all, {DEFAULT_SIZE['masking']} on the toy "
                               "world)")
    k: int = param(5, "a caption is correct when the gold verb lemma is among the top-k lemmas", bounds=(1, None))
    mlm_models: list[str] | None = param(None, "None -> every model in `models` with a fill_mask head",
                                         ("fill_mask",), means=MODELS)
    itm_models: list[str] | None = param(None, "None -> every model in `models` with an image-text-matching head",
                                         ("threshold",), means=MODELS)
    text_model: str = param("toy-bert", 'text-only masked LM (the blind baseline); "bert-base" in paper mode',
                            ("fill_mask",), means=MODELS)
    n_examples: int = param(4, "images shown with their top-k predictions", bounds=(0, None))
    lab_models: list[str] = lab_zoo(LAB_MODELS, "the toy zoo scored for the lab sections (toy world only; [] = "
                                    "no lab)", ANSWERS)
