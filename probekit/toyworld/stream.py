"""The toy models' training data: captioned images of the training split, each with hard negative captions.

Every example is an image (64x64 RGB, uint8), its caption and negatives labelled by what they change:
``subject``/``verb``/``object``/``attribute``/``scene`` swaps, and ``binding`` swaps, where the wrong caption names
a noun and a predicate that are both in the image but belong to different agents.  The mix of scene kinds is
``KINDS``; crops of one entity resized to the full image (what a chapter's "cropped" condition shows the model)
are part of it.  Scenes come from the training split only (``Scene.split``), so every probe item of the
evaluation split is unseen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from .sample import (agents_scene, choice, in_split, np_, object_caption, objects_scene, pose_caption, random_object,
                     sample_svo, svo_caption, svo_scene)
from .scene import render
from .vocab import AGENTS, ANTONYMS, IMAGE_SIZE, OBJECTS, POSES, SCENES, VERBS

KINDS = {"svo": 0.32, "pose_pair": 0.22, "object": 0.14, "agent": 0.08, "objects": 0.1, "crop": 0.14}


@dataclass
class Example:
    image: np.ndarray                    # (64, 64, 3) uint8
    caption: str
    negatives: list[tuple[str, str]]     # (caption, what it swaps)


def _others(seq, x):
    return [y for y in seq if y != x]


def _svo(rng) -> tuple:
    s, v, o = sample_svo(rng)
    scene = in_split(lambda r: svo_scene(r, s, v, o, distractor=bool(r.random() < 0.3)), rng, "train")
    prog = bool(rng.random() < 0.5)
    colour = scene.entities[1].colour if rng.random() < 0.3 else None
    cap = lambda s_, v_, o_, c_=colour: svo_caption(s_, v_, o_, prog, c_)
    negs = [(cap(choice(rng, _others(AGENTS, s)), v, o), "subject"),
            (cap(s, choice(rng, _others(VERBS, v)), o), "verb"),
            (cap(s, v, choice(rng, _others(OBJECTS, o))), "object")]
    if colour:
        negs.append((cap(s, v, o, ANTONYMS[colour]), "attribute"))
    return scene, cap(s, v, o), negs


def _pose_pair(rng, crop: bool = False) -> tuple:
    n1, n2 = rng.choice(list(AGENTS), 2, replace=False)
    p1, p2 = rng.choice(list(POSES), 2, replace=False)
    scene = in_split(lambda r: agents_scene(r, [(n1, p1), (n2, p2)]), rng, "train")
    alt = bool(rng.random() < 0.3)
    negs = [(pose_caption(n2, p1, alt), "binding"), (pose_caption(n1, p2, alt), "binding"),
            (pose_caption(choice(rng, _others(AGENTS, n1)), p1, alt), "subject"),
            (pose_caption(n1, choice(rng, _others(POSES, p1)), alt), "verb")]
    return scene, pose_caption(n1, p1, alt), negs


def _object(rng) -> tuple:
    e = random_object(rng)
    scene = in_split(lambda r: objects_scene(r, [e]), rng, "train")
    which = tuple(w for w in ("colour", "size", "pattern") if rng.random() < (0.7 if w == "colour" else 0.35))
    wrong_name = e.__class__(**{**e.__dict__, "name": choice(rng, _others(OBJECTS, e.name))})
    negs = [(object_caption(wrong_name, which), "object")]
    for w in which:
        flipped = e.__class__(**{**e.__dict__, w: ANTONYMS[getattr(e, w)]})
        negs.append((object_caption(flipped, which), "attribute"))
    return scene, object_caption(e, which), negs


def _agent(rng) -> tuple:
    n, p = choice(rng, AGENTS), choice(rng, POSES)
    scene = in_split(lambda r: agents_scene(r, [(n, p)]), rng, "train")
    if rng.random() < 0.5:
        return scene, np_(n), [(np_(choice(rng, _others(AGENTS, n))), "subject")]
    return scene, pose_caption(n, p), [(pose_caption(choice(rng, _others(AGENTS, n)), p), "subject"),
                                       (pose_caption(n, choice(rng, _others(POSES, p))), "verb")]


def _objects(rng) -> tuple:
    names = list(rng.choice(OBJECTS, int(rng.integers(2, 4)), replace=False))
    scene = in_split(lambda r: objects_scene(r, names), rng, "train")
    absent = choice(rng, [o for o in OBJECTS if o not in names])
    shown = list(rng.permutation(names))[:2]
    cap = " and ".join(np_(o) for o in shown)
    negs = [(" and ".join(np_(o) for o in [shown[0], absent]), "object")]
    if rng.random() < 0.4:
        wrong = choice(rng, _others(SCENES, scene.background))
        negs.append((f"{cap} in the {wrong}", "scene"))
        cap = f"{cap} in the {scene.background}"
    return scene, cap, negs


def _crop(rng) -> tuple:
    """One entity cropped out of a scene and resized to the full image, as the chapters' cropped condition does."""
    if rng.random() < 0.6:
        scene, cap, negs = _pose_pair(rng)
        entity = scene.entities[0]
    else:
        e = random_object(rng)
        scene = in_split(lambda r: objects_scene(r, [e, random_object(r)]), rng, "train")
        _, cap, negs = _object_caption_only(rng, e)
        entity = scene.entities[0]
    return scene, cap, negs, entity


def _object_caption_only(rng, e):
    which = ("colour",) if rng.random() < 0.7 else ()
    wrong = e.__class__(**{**e.__dict__, "name": choice(rng, _others(OBJECTS, e.name))})
    negs = [(object_caption(wrong, which), "object")]
    if which:
        negs.append((object_caption(e.__class__(**{**e.__dict__, "colour": ANTONYMS[e.colour]}), which), "attribute"))
    return None, object_caption(e, which), negs


_MAKERS = {"svo": _svo, "pose_pair": _pose_pair, "object": _object, "agent": _agent, "objects": _objects}


def example(rng: np.random.Generator) -> Example:
    kind = choice(rng, KINDS, list(KINDS.values()))
    if kind == "crop":
        scene, cap, negs, entity = _crop(rng)
        img, _ = render(scene)
        x, y, w, h = (v * IMAGE_SIZE for v in entity.box())
        img = img.crop((x, y, x + w, y + h)).resize((IMAGE_SIZE, IMAGE_SIZE), Image.BICUBIC)
    else:
        scene, cap, negs = _MAKERS[kind](rng)
        img, _ = render(scene)
    negs = [(c, k) for c, k in negs if c != cap]
    return Example(np.asarray(img.convert("RGB"), dtype=np.uint8), cap, negs)


def pool(n: int, seed: int = 0, progress: bool = False) -> list[Example]:
    """``n`` training examples, deterministic under ``seed``."""
    rng = np.random.default_rng([int(seed), 7919])
    it = range(n)
    if progress:
        from ..progress import bar as tqdm
        it = tqdm(it, desc="toy training images", unit="img")
    return [example(rng) for _ in it]
