"""The toy model zoo: every model's trainer, training stream and the one factor it changes from its parent."""

from __future__ import annotations

from dataclasses import dataclass

from ..scorers.registry import TOY_CHECKPOINTS as CHECKPOINTS  # the shipped zoo's folder
from ..toyworld import stream


@dataclass(frozen=True)
class Member:
    """One model of the zoo: its trainer, its training stream and what it differs in from its parent."""
    trainer: str                     # "clip", "vilt" or "bert"
    recipe: stream.Recipe = stream.Recipe()
    hard_negatives: bool = False     # clip: add each caption's swap to the texts; vilt: ITM negatives are swaps
    parent: str | None = None        # the model it differs from in one factor
    factor: str = ""                 # that factor, in words


ZOO = {
    "toy-clip": Member("clip", factor="dual encoder, symmetric InfoNCE over in-batch negatives only (how CLIP "
                                      "is trained)"),
    "toy-clip-hardneg": Member("clip", hard_negatives=True, parent="toy-clip",
                               factor="each caption's one-slot swap added to the texts as a hard negative"),
    "toy-clip-unbound": Member("clip", stream.Recipe(unbound=True), True, "toy-clip-hardneg",
                               factor="knock-out: two-agent captions do not say which noun goes with which predicate"),
    "toy-clip-noverb": Member("clip", stream.Recipe(hide_verbs=True), True, "toy-clip-hardneg",
                              factor="knock-out: transitive scenes drawn as a random verb, not the captioned one"),
    "toy-vilt": Member("vilt", factor="single-stream cross-encoder, ITM with random negatives + MLM (how ViLT is "
                                      "pretrained)"),
    "toy-vilt-hardneg": Member("vilt", hard_negatives=True, parent="toy-vilt",
                               factor="ITM negatives are mostly one-slot swaps of the caption (p = 0.85)"),
    "toy-vilt-noisy": Member("vilt", stream.Recipe(noisy=0.3, noisy_swaps=True), parent="toy-vilt",
                             factor="30% of captions loosely related (a one-slot swap of their own, taught as a "
                                    "match) or wrong (another scene's)"),
    "toy-vilt-mismatch": Member("vilt", stream.Recipe(noisy=0.3), parent="toy-vilt",
                                factor="30% of captions wrong (another scene's), never a swap of their own"),
    "toy-vilt-noverb": Member("vilt", stream.Recipe(hide_verbs=True), True, "toy-vilt-hardneg",
                              factor="knock-out: transitive scenes drawn as a random verb, not the captioned one"),
    "toy-bert": Member("bert", factor="text only (blind baseline, perplexity)"),
}
MODELS = tuple(ZOO)
