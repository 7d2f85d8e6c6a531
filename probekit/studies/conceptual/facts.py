"""What the conceptual chapter states (``StudyResult.facts`` of :mod:`probekit.studies.conceptual.study`), one typed
field each: a misspelt field is an AttributeError in a unit test (tests/test_facts.py), not on the executed page."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConceptualFacts:
    """The data's counts, the heads, the fillers, what the fine-tuning ran (the sweep's fields: None when it did not
    run) and what the lab ran."""

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
    triplets: int | None = None      # the sweep's: training triplets, batch, held-out task and its size, probes
    finetune_batch: int | None = None
    general_items: int | None = None
    sweep_probe_r: int | None = None
    sweep_probe_c: int | None = None
    general_task: str | None = None
    toy_train_data: bool | None = None
    real_eval_data: bool | None = None
    finetune_seeds: list[int] | None = None   # the fine-tuning seeds the sweep's rows are pooled over
