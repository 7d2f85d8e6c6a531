"""The verbs study's parameters (:mod:`probekit.parameters`): the chapter's parameters cell is written from them."""

from __future__ import annotations

from dataclasses import dataclass

from probekit.parameters import CommonParams, common, lab_zoo, param

ANSWERS = ("threshold", "choice")   # what each model must answer: an ITM head is thresholded, else it chooses
LAB_MODELS = ("toy-vilt", "toy-vilt-hardneg", "toy-vilt-noisy", "toy-vilt-mismatch", "toy-vilt-noverb",
              "toy-clip-hardneg", "toy-clip-noverb", "toy-bert-blind")


@dataclass(frozen=True)
class Params(CommonParams):
    models: list[str] = common("models", ["toy-vilt", "toy-clip"], "registry names; ITM models are thresholded, "
                               "dual encoders choose between two images", ANSWERS)
    dataset: str = common("dataset", "toy", 'a source registered for the "verbs" probe: "toy" or "svo-probes" '
                          '(Hendricks & Nematzadeh 2021)')
    limit: int | None = common("limit", None, "max sentence x negative-image rows (None = all; the toy default is "
                               "small)")
    threshold: float = param(0.5, "an ITM pair is predicted a match when its probability is >= threshold (the "
                             "paper's 0.5)", bounds=(0.0, 1.0))
    min_triplet_negatives: int = param(30, "Table 6 keeps SVO triplets with at least this many negative images (the "
                                       "paper's 30)", bounds=(0, None))
    top_k: int = param(10, "how many hardest and easiest verbs to list (the paper's Table 6 lists 10 each)",
                       bounds=(1, None))
    n_resamples: int = param(1000, "bootstrap resamples for the 95% intervals", bounds=(1, None))
    lab_models: list[str] = lab_zoo(LAB_MODELS, "toy lab (toy world only; [] = skip)", ANSWERS)
