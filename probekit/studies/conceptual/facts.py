"""What the conceptual chapter states (``StudyResult.facts`` of :mod:`probekit.studies.conceptual.study`), one typed
field each: a misspelt field is an AttributeError in a unit test (tests/test_facts.py), not on the executed page.

The study builds :class:`ConceptualFacts` in one call from its data, with what the patching sweep ran on
(:class:`SweepFacts`, :mod:`probekit.studies.conceptual.sweep`) where it ran."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConceptualFacts:
    """The data's counts, the heads, the fillers, what the fine-tuning ran (``sweep``: None when it did not run) and
    what the lab ran."""

    dataset: str                     # "toy world" or "the authors' release"
    probe_r_items: int               # Probe-R comparisons
    probe_r_groups: int
    probe_c_groups: int
    probe_b_images: int
    probe_b_single: int              # ... in the single-object split
    unreadable: dict[str, int]       # probe -> unreadable images, left out
    heads: dict[str, str]
    fillers: list[str]               # the fillers used
    fillers_left_out: list[str]      # ... and those left out for want of scene images
    no_unrelated_scene: list[str]
    empty_masks: list[str]           # Probe-B items with an empty object mask, left out
    probe_r_kinds: list[str]
    categories: list[str]            # our Probe-C composition categories
    finetune_requested: bool
    finetune_skipped: str            # why the fine-tuning was not run ("" when it was, or was not asked for)
    general_fallback: str            # why the held-out task is not ImageNet ("" when it is)
    finetuned: bool
    paper_categories: list[str]      # the paper's Table 6 categories that ours share
    lab: str                         # what the lab ran, or why it did not
    sweep: SweepFacts | None = None  # what the patching sweep ran on, None where it did not run


@dataclass(frozen=True)
class SweepFacts:
    """What the patching sweep ran on (:attr:`ConceptualFacts.sweep`)."""

    triplets: int                    # training triplets
    finetune_batch: int              # triplets per step, as finetune_clip draws them (at most ``triplets``)
    general_items: int               # the held-out task's images
    sweep_probe_r: int               # Probe-R comparisons the sweep is evaluated on
    sweep_probe_c: int               # ... and Probe-C groups
    general_task: str                # the held-out task, in words
    toy_train_data: bool             # trained on the toy world's triplets (no ``train_data``)
    real_eval_data: bool             # evaluated on the authors' release
    finetune_seeds: list[int]        # the fine-tuning seeds the sweep's rows are pooled over

