"""The predicate-noun study's parameters (:mod:`probekit.parameters`): the chapter's parameters cell is written
from them."""

from __future__ import annotations

from dataclasses import dataclass

from probekit.parameters import MODELS, CommonParams, common, lab_zoo, param
from probekit.toyworld.sizes import DEFAULT_SIZE

#: the zoo's members trained with every kind of information (the noisy ones on looser captions), not knock-outs
TRAINED_MODELS = ("toy-vilt", "toy-vilt-hardneg", "toy-vilt-noisy", "toy-vilt-mismatch", "toy-clip",
                  "toy-clip-hardneg")
LAB_MODELS = (*TRAINED_MODELS, "toy-clip-unbound", "toy-vilt-unpaired", "toy-bert-blind")


@dataclass(frozen=True)
class Params(CommonParams):
    models: list[str] = common("models", ["toy-vilt", "toy-clip"], "registry names; ITM models are scored by "
                               "match probability, dual encoders by a softmax over the two sentences", ("choice",))
    dataset: str = common("dataset", "toy", 'a source registered for the "prednoun" probe: "toy" or "eval-set" '
                          '(Nikolaus et al. 2022)')
    limit: int | None = common("limit", None, "max triplets, whole pairs kept (None: all; the toy world's default "
                               f"is {DEFAULT_SIZE['prednoun']})")
    min_concept_count: int = param(10, "a noun, predicate or (target, distractor) tuple is shown when it occurs in "
                                   "at least this many triplets (the paper's 10)", bounds=(1, None))
    n_resamples: int = param(100, "bootstrap resamples for the per-concept standard deviation (the paper's 100)",
                             bounds=(1, None))
    perplexity_model: str = param("toy-bert", 'masked LM for the sentences\' pseudo-perplexity (confounds); '
                                  '"bert-base" in paper mode', ("fill_mask",), means=MODELS)
    clip_models: list[str] = param(["toy-clip"], "dual encoders compared on full images; paper mode: the open_clip "
                                   "checkpoints of the paper's Table 6", ("choice",), means=MODELS)
    min_tuple_count: int = param(5, "a (target, distractor) tuple is shown when it occurs in at least this many "
                                 "triplets (the authors' plotting code: 5)", bounds=(1, None))
    released_outputs: list[str] = param([], 'the authors\' released per-item outputs to re-analyse, by their folder '
                                        'name (e.g. "VILT", "CTRL_LXMERT"); downloaded at run time')
    lab_models: list[str] = lab_zoo(LAB_MODELS, "toy zoo scored on the same triplets (toy world only; [] to "
                                    "skip): knock-out, blind baseline and the paper's comparisons", ("choice",))
