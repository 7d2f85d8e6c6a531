"""One registry of probes (item tables) for every study, real releases and toy world alike.

Every loader has the signature ``fn(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame``
and returns the item table of its probe in the schema documented in ``SCHEMAS``; the toy generators and the
real loaders of one probe return the same columns, so a chapter never knows which one it reads.  Image
columns hold paths to image files on disk.  Entries are module paths, imported only when used; installed
packages add sources through the ``probekit.datasets`` entry point (:mod:`probekit.plugins`).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from probekit import shard
from probekit.registry import load


@dataclass(frozen=True)
class DatasetSpec:
    probe: str
    source: str  # "toy" or the name of a real release
    loader: str  # "module:function" (:func:`probekit.registry.load`)
    description: str


_SPECS = [
    DatasetSpec("verbs", "toy", "probekit.toyworld.svo:make_items",
                "toy world: sentences with positive and subject-/verb-/object-negative images"),
    DatasetSpec("verbs", "svo-probes", "probekit.data.svo:load_svo_probes",
                "SVO-Probes (Hendricks & Nematzadeh 2021), svo_probes.csv and its image URLs"),
    DatasetSpec("prednoun", "toy", "probekit.toyworld.prednoun:make_items",
                "toy world: counter-balanced triplets with visual distractors"),
    DatasetSpec("prednoun", "eval-set", "probekit.data.prednoun:load_eval_set",
                "Nikolaus et al. 2022 eval_set.json on Open Images"),
    DatasetSpec("masking", "toy", "probekit.toyworld.masking:make_items",
                "toy world: captions with the verb's position and the subject's box"),
    DatasetSpec("masking", "svo-probes", "probekit.data.masking:load_svo_masking",
                "positive pairs of SVO-Probes with the verb located by lemma"),
    DatasetSpec("masking", "v-coco", "probekit.data.vcoco:load_vcoco_masking",
                "V-COCO (Gupta & Malik 2015): COCO val2014 captions of its verb-annotated people"),
    DatasetSpec("probe-r", "toy", "probekit.toyworld.conceptual:make_probe_r",
                "toy world: relation prompts vs predicate/subject swaps, subject-only images"),
    DatasetSpec("probe-r", "probe-r", "probekit.data.conceptual:load_probe_r",
                "Schiappa et al. 2023 Probe-R on Visual Genome"),
    DatasetSpec("probe-c", "toy", "probekit.toyworld.conceptual:make_probe_c",
                "toy world: attribute-antonym and object swaps as 2x2 groups"),
    DatasetSpec("probe-c", "probe-c", "probekit.data.conceptual:load_probe_c",
                "Schiappa et al. 2023 Probe-C on COCO val2014"),
    DatasetSpec("probe-b", "toy", "probekit.toyworld.conceptual:make_probe_b",
                "toy world: scenes with exact object masks for background removal"),
    DatasetSpec("probe-b", "probe-b", "probekit.data.background:load_probe_b",
                "Schiappa et al. 2023 Probe-B on COCO with segmentation masks"),
    DatasetSpec("classify", "toy", "probekit.toyworld.classify:make_items",
                "toy world: single-object classification (the zoo's object control)"),
    DatasetSpec("classify-pairs", "toy", "probekit.toyworld.classify:make_pair_items",
                "toy world: which two objects are shown, in which scene (the fine-tuning's held-out general "
                "task)"),
]
DATASETS = {(s.probe, s.source): s for s in _SPECS}

SCHEMAS = {
    "verbs": ["item_id", "sentence", "pos_triplet", "neg_triplet", "pos_image_id", "neg_image_id",
              "pos_image", "neg_image", "subj_neg", "verb_neg", "obj_neg", "verb"],
    "prednoun": ["item_id", "pair_id", "image_id", "image", "sentence_target", "sentence_distractor",
                 "sentence_target_alt", "sentence_distractor_alt", "target_box", "distractor_box",
                 "subject", "predicate", "object", "word_target", "word_distractor", "pos"],
    "masking": ["item_id", "image_id", "image", "sentence", "verb", "verb_start", "verb_end", "subject_box"],
    "probe-r": ["item_id", "group_id", "image", "correct_prompt", "wrong_prompt", "kind"],
    "probe-c": ["group_id", "split", "category", "image_0", "image_1", "caption_0", "caption_1"],
    "probe-b": ["item_id", "image", "mask", "labels", "single_object", "target"],
    "classify": ["item_id", "image", "label"],
    "classify-pairs": ["item_id", "image", "label"],
}


def default_data_dir() -> Path:
    """Where datasets, downloaded images and generated toy images live: ``$PROBEKIT_DATA`` or ~/.cache/probekit."""
    return Path(os.environ.get("PROBEKIT_DATA", Path.home() / ".cache" / "probekit" / "data"))


def _plugged() -> dict[tuple[str, str], DatasetSpec]:
    """(probe, source) -> spec of every probe source installed packages declare under the ``probekit.datasets``
    entry point, named ``"probe:source"`` (:mod:`probekit.plugins`)."""
    from probekit.plugins import DATASETS as GROUP, plugins
    found = {}
    for name, value in plugins(GROUP).items():
        probe, _, source = name.partition(":")
        if probe in SCHEMAS and source and (probe, source) not in DATASETS:
            found[probe, source] = DatasetSpec(probe, source, value, f"plugin {value}")
    return found


def dataset_specs() -> dict[tuple[str, str], DatasetSpec]:
    """Every probe source: the built-in ones and those installed packages add (a built-in name wins)."""
    return {**DATASETS, **_plugged()}


def sources(probe: str) -> list[str]:
    return [source for p, source in dataset_specs() if p == probe]


def load_dataset(probe: str, source: str = "toy", *, data_dir: str | os.PathLike | None = None,
                 limit: int | None = None, seed: int = 0, split: str = "eval") -> pd.DataFrame:
    """Load the item table of ``probe`` from ``source``, checked against the probe's schema."""
    if probe not in SCHEMAS:
        raise ValueError(f"unknown probe {probe!r}; valid probes: {', '.join(SCHEMAS)}")
    spec = dataset_specs().get((probe, source))
    if spec is None:
        valid = sources(probe)
        near = difflib.get_close_matches(source, valid, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"unknown dataset {source!r} for probe {probe!r}{hint}; valid: {', '.join(valid)}")
    fn = load(spec.loader)
    root = Path(data_dir) if data_dir else default_data_dir()
    items = shard.rank_zero_first(lambda: fn(root, limit, seed, split))  # files made once, by rank 0 (sharded)
    missing = [c for c in SCHEMAS[probe] if c not in items.columns]
    if missing:
        raise ValueError(f"{spec.loader} returned no column(s) {missing} for probe {probe!r}")
    return items
