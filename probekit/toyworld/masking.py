"""Toy guided masking: captions whose verb position and subject box are known exactly.  Most scenes are
subject-verb-object scenes; some show a single agent in a pose ("a dog is jumping")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .items import frame, target_size
from .sample import (agents_scene, choice, in_split, pose_caption, rng_for, sample_svo, svo_caption, svo_scene,
                     toy_dir)
from .scene import image_path
from .vocab import AGENTS, POSES, VERBS


def make_items(data_dir: Path, limit: int | None, seed: int, split: str) -> pd.DataFrame:
    n = target_size("masking", limit)
    rng = rng_for("masking", seed, split)
    folder = toy_dir(data_dir, "masking")
    rows = []
    for k in range(n):
        progressive = bool(rng.random() < 0.5)
        if rng.random() < 0.7:
            s, v, o = sample_svo(rng)
            scene = in_split(lambda r: svo_scene(r, s, v, o, distractor=bool(r.random() < 0.3)), rng, split)
            sentence, verb = svo_caption(s, v, o, progressive), VERBS[v]
        else:
            s, p = choice(rng, AGENTS), choice(rng, POSES)
            scene = in_split(lambda r: agents_scene(r, [(s, p)]), rng, split)
            sentence, verb = pose_caption(s, p, alt=not progressive), POSES[p]
        surface = verb.ing if progressive else verb.third
        start = sentence.index(f" {surface}") + 1
        rows.append(dict(item_id=f"masking-{split}-{seed}-{k:05d}", image_id=scene.digest(),
                         image=str(image_path(scene, folder)), sentence=sentence, verb=verb.lemma,
                         verb_start=start, verb_end=start + len(surface), subject_box=scene.entities[0].box(),
                         subject=s))
    return frame(rows, n)
