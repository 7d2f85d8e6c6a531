"""Toy guided masking: captions of subject-verb-object scenes whose verb position and subject box are known
exactly.  Triples are drawn uniformly among the plausible ones, so given the caption's subject and object the
masked verb is one of 20-21 equally likely verbs: a text-only model can reach ``vocab.prior_topk(k)`` at best
(24.8% for k = 5; chance k / 24 = 20.8%)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .items import frame, target_size
from .sample import in_split, rng_for, sample_svo, svo_caption, svo_scene, toy_dir
from .scene import image_path, tight_box
from .vocab import VERBS


def make_items(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    n = target_size("masking", limit)
    rng = rng_for("masking", seed, split)
    folder = toy_dir(data_dir, "masking")
    rows = []
    for k in range(n):
        progressive = bool(rng.random() < 0.5)
        s, v, o = sample_svo(rng)
        scene = in_split(lambda r: svo_scene(r, s, v, o, distractor=True), rng, split)
        sentence, verb = svo_caption(s, v, o, progressive), VERBS[v]
        surface = verb.ing if progressive else verb.third
        start = sentence.index(f" {surface}") + 1
        rows.append(dict(item_id=f"masking-{split}-{seed}-{k:05d}", image_id=scene.digest(),
                         image=str(image_path(scene, folder)), sentence=sentence, verb=verb.lemma,
                         verb_start=start, verb_end=start + len(surface), subject_box=tight_box(scene, 0),
                         subject=s))
    return frame(rows, n)
