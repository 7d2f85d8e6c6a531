"""The predicate-noun study's parameters (:mod:`probekit.parameters`): the chapter's parameters cell is written
from them."""

from __future__ import annotations

from dataclasses import dataclass

from probekit.parameters import Parameters, param

#: the zoo's members trained with every kind of information (the noisy ones on looser captions), not knock-outs
TRAINED_MODELS = ("toy-vilt", "toy-vilt-hardneg", "toy-vilt-noisy", "toy-vilt-mismatch", "toy-clip",
                  "toy-clip-hardneg")
LAB_MODELS = (*TRAINED_MODELS, "toy-clip-unbound", "toy-vilt-unpaired", "toy-bert-blind")


@dataclass(frozen=True)
class Params(Parameters):
    models: list[str] = param(["toy-vilt", "toy-clip"], "registry names; ITM models are scored by match "
                              "probability, dual encoders by a softmax over the two sentences", ("choice",))
    dataset: str = param("toy", 'a source registered for the "prednoun" probe: "toy" or "eval-set" (Nikolaus et '
                         'al. 2022)')
    data_dir: str | None = param(None, "None -> probekit.datasets.default_data_dir()")
    limit: int | None = param(None, "max triplets, whole pairs kept (None: all; the toy world's default is 1600)")
    seed: int = param(0)
    device: str = param("auto")
    batch_size: int = param(32)
    cache_dir: str | None = param(None, "None -> default score cache")
    min_concept_count: int = param(10, "a noun, predicate or (target, distractor) tuple is shown when it occurs in "
                                   "at least this many triplets (the paper's 10)")
    n_resamples: int = param(100, "bootstrap resamples for the per-concept standard deviation (the paper's 100)")
    perplexity_model: str = param("toy-bert", 'masked LM for the sentences\' pseudo-perplexity (confounds); '
                                  '"bert-base" in paper mode', ("fill_mask",))
    clip_models: list[str] = param(["toy-clip"], "dual encoders compared on full images; paper mode: the open_clip "
                                   "checkpoints of the paper's Table 6", ("choice",))
    min_tuple_count: int = param(5, "a (target, distractor) tuple is shown when it occurs in at least this many "
                                 "triplets (the authors' plotting code: 5)")
    released_outputs: list[str] = param([], 'the authors\' released per-item outputs to re-analyse, by their folder '
                                        'name (e.g. "VILT", "CTRL_LXMERT"); downloaded at run time')
    lab_models: list[str] = param(list(LAB_MODELS), "toy zoo scored on the same triplets (toy world only; [] to skip): "
                                  "knock-out, blind baseline and the paper's comparisons", ("choice",))
