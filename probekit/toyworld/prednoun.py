"""Toy predicate-noun dependencies: counter-balanced triplets (I1, S1, S2) / (I2, S2, S1).  Each image holds
two agents, so both nouns and both predicates are present, bound the other way round in the distractor; half
the images also hold an unrelated object.  The pairs are drawn in two strata: a share :data:`ALIKE_SHARE` of them
(every other pair) holds two kinds whose limbs look alike (``glyphs.same_limbs``: only the busts tell whose pose is
whose), the rest two kinds whose limbs differ, each kind drawn uniformly within its stratum; drawn uniformly instead
(``alike_share`` None), a fifth of the pairs would be look-alike ones, too few for the hard part's own n.  Both
images of a pair share one background, drawn uniformly: the training stream shows agents in their typical scenes,
so a background of the target's kind would name the noun.  Boxes are the squares around the agents' drawn
figures.  Beyond the schema, ``other_agent`` is the kind of the image's second agent (``limbs_alike`` reads it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .glyphs import same_limbs
from .items import frame, target_size
from .sample import agents_scene, choice, in_split, pose_caption, rng_for, toy_dir
from .scene import box, image_path
from .vocab import AGENTS, POSES, SCENES


#: the share of pairs drawn from kinds whose limbs look alike (:func:`make_items`): half, so that the book's default
#: 1600 triplets hold 400 pairs of each stratum
ALIKE_SHARE = 0.5


def agent_kinds(rng, alike: bool | None) -> tuple[str, str]:
    """Two different kinds: whose limbs look alike (``alike`` True), differ (False), or either (None, uniform: the
    draw the toy zoo's held-out set was scored with)."""
    if alike is None:
        n1, n2 = rng.choice(list(AGENTS), 2, replace=False)
        return str(n1), str(n2)
    n1 = choice(rng, AGENTS)
    others = [k for k in AGENTS if k != n1 and same_limbs(k, n1) == alike]
    return n1, choice(rng, others)


def make_items(data_dir: Path, limit: int | None, seed: int, split: str,
               alike_share: float | None = ALIKE_SHARE) -> pd.DataFrame:
    """``limit`` triplets (whole pairs), pair ``k`` from look-alike kinds when ``floor((k + 1) * alike_share)``
    exceeds ``floor(k * alike_share)`` (so the first m pairs hold ``floor(m * alike_share)`` of them), else from
    kinds whose limbs differ; ``alike_share`` None draws the two kinds uniformly (the toy zoo's held-out set)."""
    n = target_size("prednoun", limit)
    n += n % 2  # pairs stay whole
    rng = rng_for("prednoun", seed, split)
    folder = toy_dir(data_dir, "prednoun")
    rows: list[dict[str, Any]] = []
    pair = 0
    while len(rows) < n:
        n1, n2 = agent_kinds(rng, None if alike_share is None
                             else int((pair + 1) * alike_share) > int(pair * alike_share))
        p1, p2 = rng.choice(list(POSES), 2, replace=False)
        pos = choice(rng, ["subject", "object"])
        if pos == "subject":   # the noun differs: S1 = n1 p1, S2 = n2 p1
            s1, s2 = (n1, p1), (n2, p1)
            layouts = [[(n1, p1), (n2, p2)], [(n2, p1), (n1, p2)]]
        else:                  # the predicate differs: S1 = n1 p1, S2 = n1 p2
            s1, s2 = (n1, p1), (n1, p2)
            layouts = [[(n1, p1), (n2, p2)], [(n1, p2), (n2, p1)]]
        background = choice(rng, SCENES)   # one per pair: an agent's typical scene would name the target noun
        for j, (target, distractor) in enumerate([(s1, s2), (s2, s1)]):
            scene = in_split(lambda r: agents_scene(r, layouts[j], background, distractor=bool(r.random() < 0.5)),
                             rng, split)
            word_t, word_d = (target[0], distractor[0]) if pos == "subject" else (target[1], distractor[1])
            rows.append(dict(
                item_id=f"prednoun-{split}-{seed}-{pair:05d}-{j}", pair_id=f"prednoun-{split}-{seed}-{pair:05d}",
                image_id=scene.digest(), image=str(image_path(scene, folder)),
                sentence_target=pose_caption(*target), sentence_distractor=pose_caption(*distractor),
                sentence_target_alt=pose_caption(*target, alt=True),
                sentence_distractor_alt=pose_caption(*distractor, alt=True),
                target_box=box(scene, 0), distractor_box=box(scene, 1), subject=target[0], predicate="is", object=target[1],
                word_target=word_t, word_distractor=word_d, pos=pos, scene=scene.background,
                other_agent=layouts[j][1][0]))
        pair += 1
    return frame(rows, n)


#: the two labels of :func:`limbs_alike`
LIMBS_ALIKE, LIMBS_DIFFER = "limbs alike", "limbs differ"


def limbs_alike(items: pd.DataFrame) -> pd.Series:
    """Per item: whether its image's two agents are of kinds whose limbs look alike (:data:`LIMBS_ALIKE`, so only
    the busts tell whose pose is whose) or not (:data:`LIMBS_DIFFER`); the same for both items of a pair."""
    return pd.Series([LIMBS_ALIKE if same_limbs(a, b) else LIMBS_DIFFER
                      for a, b in zip(items["subject"], items["other_agent"])], index=items.index, dtype=object)


def limbs_only_accuracy(items: pd.DataFrame) -> dict[str, float]:
    """The best expected pair and triplet accuracy on ``items`` of a model that binds a pose to a kind by the
    colour of its limbs alone: every triplet whose two kinds wear different limbs, half of the others; every pair of
    the former, at best a coin flip's quarter of the others.  From the items' own share of look-alike kinds (the
    design's is 6 ordered pairs of kinds in 30; a draw of items holds about that many)."""
    alike = limbs_alike(items) == LIMBS_ALIKE
    pairs, triplets = float(alike.groupby(items["pair_id"]).first().mean()), float(alike.mean())
    return {"pair_accuracy": 1 - pairs + pairs / 4, "triplet_accuracy": 1 - triplets + triplets / 2}
